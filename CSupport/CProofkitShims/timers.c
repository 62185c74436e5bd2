// Linux timers and socket credentials for the alarm service (`proofkit alarm run`).
// SO_PEERCRED's struct ucred is declared only with _GNU_SOURCE, before any include.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CProofkitShims.h"

#include <errno.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#endif

int proofkit_alarm_timer_create(void) {
#if defined(__linux__)
    int fd = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK);
    return fd < 0 ? -errno : fd;
#else
    return -ENOSYS;
#endif
}

int proofkit_alarm_timer_set(int fd, int64_t seconds, int64_t nanoseconds) {
#if defined(__linux__)
    struct itimerspec spec = {{0, 0}, {(time_t)seconds, (long)nanoseconds}};
    return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &spec, NULL) == 0 ? 0 : -errno;
#else
    (void)fd; (void)seconds; (void)nanoseconds;
    return -ENOSYS;
#endif
}

int proofkit_alarm_timer_read(int fd) {
    uint64_t expirations = 0;
    ssize_t got = read(fd, &expirations, sizeof expirations);
    if (got == (ssize_t)sizeof expirations) return expirations > 0 ? 1 : 0;
    return -errno;  // ECANCELED: the clock was set; EAGAIN: nothing yet
}

int proofkit_termination_signals_create(void) {
#if defined(__linux__)
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    int failed = pthread_sigmask(SIG_BLOCK, &set, NULL);
    if (failed != 0) return -failed;
    int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    return fd < 0 ? -errno : fd;
#else
    return -ENOSYS;
#endif
}

int proofkit_termination_signal_read(int fd) {
#if defined(__linux__)
    struct signalfd_siginfo info;
    ssize_t got = read(fd, &info, sizeof info);
    return got == (ssize_t)sizeof info ? (int)info.ssi_signo : 0;
#else
    return 0;
#endif
}

int proofkit_event_create(void) {
#if defined(__linux__)
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return fd < 0 ? -errno : fd;
#else
    return -ENOSYS;
#endif
}

int proofkit_peer_uid(int fd, uint32_t *uid, int32_t *pid) {
#if defined(__linux__)
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -errno;
    *uid = credentials.uid;
    *pid = credentials.pid;
    return 0;
#else
    (void)fd; (void)uid; (void)pid;
    return -ENOSYS;
#endif
}
