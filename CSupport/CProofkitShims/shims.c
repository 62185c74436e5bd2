// sync_file_range is a GNU extension: declared only with _GNU_SOURCE, before any include.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CProofkitShims.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

// MARK: POSIX file I/O

int proofkit_posix_ioctl(int fd, unsigned long request, void *argument) {
    return ioctl(fd, request, argument);
}

int proofkit_posix_start_writeback(int fd) {
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) == 0 ? 0 : errno;
#else
    (void)fd;
    return 0;
#endif
}

int proofkit_posix_open_anonymous(const char *folder) {
#if defined(__linux__)
    int fd = open(folder, O_RDWR | O_CLOEXEC | O_TMPFILE, 0600);
    if (fd >= 0) return fd;
    return memfd_create("proofkit-stream", MFD_CLOEXEC);
#else
    (void)folder;
    errno = ENOTSUP;
    return -1;
#endif
}

int proofkit_posix_open_path(const char *path) {
#if defined(__linux__)
    return open(path, O_PATH | O_CLOEXEC);
#else
    return open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
#endif
}

int proofkit_posix_make_temporary(char *name_template) {
    return mkostemp(name_template, O_CLOEXEC);
}

// MARK: Child processes

#include <signal.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include <spawn.h>

int proofkit_make_pipe(int ends[2]) {
    return pipe2(ends, O_CLOEXEC);
}

int proofkit_spawn_close_from(void *actions, int lowest) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    return posix_spawn_file_actions_addclosefrom_np((posix_spawn_file_actions_t *)actions, lowest);
#else
    (void)actions;
    (void)lowest;
    return ENOSYS;
#endif
}

int proofkit_set_parent_death_signal(int signal) {
#if defined(__linux__)
    pid_t parent = getppid();
    if (prctl(PR_SET_PDEATHSIG, signal) != 0) return errno;
    // The parent may have died before prctl: then we were re-parented (to init or a
    // subreaper) and no signal will come.
    if (parent == 1 || getppid() != parent) return -1;
    return 0;
#else
    (void)signal;
    return 0;
#endif
}

static volatile sig_atomic_t proofkit_forwarded_child = 0;

static void proofkit_forward_handler(int signal) {
    int saved = errno;
    pid_t child = (pid_t)proofkit_forwarded_child;
    if (child > 0) kill(child, signal);
    // Then end as the signal would have ended us.
    struct sigaction fallback;
    sigemptyset(&fallback.sa_mask);
    fallback.sa_flags = 0;
    fallback.sa_handler = SIG_DFL;
    sigaction(signal, &fallback, NULL);
    raise(signal);
    errno = saved;
}

void proofkit_forward_termination_signals(int child) {
    static int installed = 0;
    proofkit_forwarded_child = child;
    if (installed || child <= 0) return;
    installed = 1;
    const int signals[] = {SIGTERM, SIGINT, SIGHUP};
    for (unsigned i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        struct sigaction action;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESTART;
        action.sa_handler = proofkit_forward_handler;
        sigaction(signals[i], &action, NULL);
    }
}

#if defined(__GLIBC__)
#include <malloc.h>
#endif

void proofkit_heap_trim(void) {
#if defined(__GLIBC__)
    (void)malloc_trim(0);
#endif
}
