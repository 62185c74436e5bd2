// proofkit's own C helpers, for what Swift cannot express directly, and the loader that the C
// library modules (CALSA, CSndFile, CTurboJPEG, CPNG) share. Every symbol is prefixed proofkit_
// and says why it exists.
#ifndef PROOFKIT_SHIMS_H
#define PROOFKIT_SHIMS_H

// MARK: C libraries loaded on first use (dlopen)

#include <stddef.h>
#include <stdint.h>

/// One C library that proofkit loads at run time instead of linking it, so that a command pays
/// for mapping and resolving a library (and the libraries it needs in turn) only when it uses
/// it. Each of CALSA, CSndFile, CTurboJPEG and CPNG defines one with `PROOFKIT_LIBRARY_DEFINE`,
/// over a table of the functions proofkit calls, typed from the library's own header.
///
/// Why C: dlopen and dlsym, and a table typed with `__typeof__` from the real prototypes, so that
/// every call through it is checked by the compiler as a direct call would be. The first load is
/// serialised by one mutex (shared by all libraries); later calls read one atomic flag.
typedef struct proofkit_library {
    const char *soname;          ///< the file dlopen loads, e.g. "libasound.so.2"
    const char *package;         ///< the Debian package that provides it, e.g. "libasound2"
    const char *const *names;    ///< the functions, in table order
    size_t count;                ///< how many: the table is `count` function pointers
    void *table;                 ///< the typed table, filled by a successful load
    void (*loaded)(const void *table);  ///< run once right after a successful load, or NULL
    int state;                   ///< 0 not tried, 1 loaded, -1 failed (read and set atomically)
    char failure[400];           ///< why the load failed, one line (when `state` is -1)
} proofkit_library;

/// The function table of `library`, loaded on the first call: dlopen(`soname`,
/// RTLD_NOW | RTLD_LOCAL), then dlsym of every name. Thread-safe; the first call's outcome is
/// kept for the life of the process, and the library is never unloaded.
///
/// With a non-NULL `soname`, that file is loaded instead, into a new table, leaving `library`'s
/// own state alone (for tests: a missing or wrong file must give the right message). The file
/// stays loaded and the table is never freed, so use it in tests only.
///
/// - Returns: the table, or NULL when the file cannot be loaded or lacks one of the functions;
///   then `proofkit_library_failure()` says why.
const void *proofkit_library_load(proofkit_library *library, const char *soname);

/// Why the calling thread's last `proofkit_library_load` returned NULL, in one line: the soname,
/// dlerror's reason, and the Debian package to install.
const char *proofkit_library_failure(void);

/// Declares the table `proofkit_<prefix>_api`, one `__typeof__(f) *f` field for each function
/// `f` listed by the X-macro `FUNCTIONS`, and `proofkit_<prefix>_library()`, its descriptor.
#define PROOFKIT_LIBRARY_FIELD(function) __typeof__(function) *function;
#define PROOFKIT_LIBRARY_DECLARE(prefix, FUNCTIONS)                                                \
    typedef struct proofkit_##prefix##_api {                                                       \
        FUNCTIONS(PROOFKIT_LIBRARY_FIELD)                                                          \
    } proofkit_##prefix##_api;                                                                     \
    proofkit_library *proofkit_##prefix##_library(void);

/// Defines (in the module's C file) what `PROOFKIT_LIBRARY_DECLARE` declared: the names, the
/// table and the descriptor, with the soname, the Debian package and an optional `loaded` hook.
#define PROOFKIT_LIBRARY_NAME(function) #function,
#define PROOFKIT_LIBRARY_DEFINE(prefix, SONAME, PACKAGE, FUNCTIONS, LOADED)                        \
    static const char *const proofkit_##prefix##_names[] = {FUNCTIONS(PROOFKIT_LIBRARY_NAME)};     \
    static proofkit_##prefix##_api proofkit_##prefix##_table;                                      \
    _Static_assert(sizeof(proofkit_##prefix##_api) == sizeof proofkit_##prefix##_names /          \
                                                           sizeof(char *) * sizeof(void (*)(void)), \
                   "one pointer-sized slot per name, no padding");                                 \
    static proofkit_library proofkit_##prefix##_descriptor = {                                     \
        SONAME, PACKAGE, proofkit_##prefix##_names, sizeof proofkit_##prefix##_names / sizeof(char *), \
        &proofkit_##prefix##_table, LOADED, 0, ""};                                                \
    proofkit_library *proofkit_##prefix##_library(void) { return &proofkit_##prefix##_descriptor; }

// MARK: SHA-256 with the CPU's SHA instructions

/// 1 when this CPU has the x86 SHA extensions (with SSSE3 and SSE4.1), else 0 (and always 0 on
/// other architectures).
///
/// Why C: proofkit hashes every model file before loading it (5 to 18 MB, on every run of
/// `proofkit mat`); the SHA instructions do it about 5x faster than portable code, and Swift
/// cannot emit them. `Inference.SHA256` uses this when available and its Swift code otherwise.
int proofkit_sha256_hardware_available(void);

/// Compresses `blocks` 64-byte blocks at `data` into `state` (the eight FIPS 180-4 words, A
/// first). Call only when `proofkit_sha256_hardware_available()` is 1.
void proofkit_sha256_hardware_blocks(uint32_t *state, const uint8_t *data, size_t blocks);

// MARK: 16-bit PCM levels

/// The exact sum of the squares of `count` 16-bit samples, and the lowest and highest sample
/// (both 0 when `count` is 0; the extremes start from 0, so `lowest <= 0 <= highest`).
///
/// Why C: `proofkit check` (and `trim`, which checks what it wrote) measures every sample of a
/// sound; SSE2's 16-bit multiply-add does eight squares in one instruction, which Swift's SIMD
/// types cannot express (they widen to floats first, about 4x slower here). Elsewhere a plain
/// loop that the compiler vectorises.
void proofkit_pcm16_measure(const int16_t *samples, size_t count, uint64_t *sum_of_squares,
                            int16_t *lowest, int16_t *highest);

// MARK: POSIX file I/O

/// Starts writing the dirty pages of `fd` to the disk, without waiting for them
/// (Linux `sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE)`); a no-op elsewhere. Durability
/// still needs `fdatasync`/`fsync` afterwards: this only gets the disk busy earlier, so that the
/// final sync waits less. Returns 0 or an errno.
///
/// Why C: glibc declares `sync_file_range` only under `_GNU_SOURCE`, which Swift's Glibc module
/// does not define.
int proofkit_posix_start_writeback(int fd);


/// Opens a new anonymous file for reading and writing: `O_TMPFILE` in `folder` (Linux; no name,
/// so nothing is left on the disk even after SIGKILL), else `memfd_create`. Returns the
/// descriptor (close-on-exec) or -1 with `errno` set.
///
/// Why C: `O_TMPFILE` and `memfd_create` are GNU extensions, hidden from Swift's Glibc module.
int proofkit_posix_open_anonymous(const char *folder);

/// `mkostemp(name_template, O_CLOEXEC)`: creates a new file (mode 0600) from a template ending in
/// `XXXXXX`, which is filled in, and opens it close-on-exec, so no child spawned meanwhile
/// inherits it. Returns the descriptor or -1 with `errno` set.
///
/// Why C: `mkostemp` is a GNU extension, hidden from Swift's Glibc module.
int proofkit_posix_make_temporary(char *name_template);

/// `open(path, O_PATH | O_CLOEXEC)` (Linux; elsewhere `O_RDONLY`): a descriptor that names the
/// file without opening it for reading or writing (so a FIFO or device is not touched).
/// Returns the descriptor or -1 with `errno` set.
///
/// Why C: `O_PATH` is a GNU extension, hidden from Swift's Glibc module.
int proofkit_posix_open_path(const char *path);

/// `ioctl(fd, request, argument)`: a device request whose argument is one struct the driver reads
/// and/or fills (a V4L2 `VIDIOC_*`). Returns ioctl's value, or -1 with `errno` set.
///
/// Why C: `ioctl` is variadic, which Swift does not import.
int proofkit_posix_ioctl(int fd, unsigned long request, void *argument);

// MARK: Child processes

/// `pipe2(ends, O_CLOEXEC)`: a pipe whose ends are close-on-exec from the start, so that no child
/// another thread spawns meanwhile inherits them. Returns 0, or -1 with `errno` set.
///
/// Why C: `pipe2` is a GNU extension, hidden from Swift's Glibc module.
int proofkit_make_pipe(int ends[2]);

/// Adds to `actions` the closing of every descriptor from `lowest` up in the child
/// (`posix_spawn_file_actions_addclosefrom_np`, glibc 2.34 and later). Returns 0 or an errno
/// (`ENOSYS` where the C library lacks it).
///
/// Why C: it is a GNU extension, hidden from Swift's Glibc module.
int proofkit_spawn_close_from(void *actions, int lowest);

/// Asks the kernel to send `signal` to this process when its parent thread exits
/// (Linux `prctl(PR_SET_PDEATHSIG)`; a no-op elsewhere). Returns 0, or -1 when the parent is
/// already gone (this process was re-parented before the call), or an errno.
///
/// Why C: `prctl` is variadic, which Swift does not import.
int proofkit_set_parent_death_signal(int signal);

/// While `child` > 0, SIGTERM, SIGINT and SIGHUP sent to this process are forwarded to `child`
/// first; then this process takes the signal's default action (it ends, as it would have).
/// `child` 0 stops forwarding. The handlers are installed on the first call.
///
/// Why C: the handler must be async-signal-safe (a `sig_atomic_t`, `kill`, `raise`).
void proofkit_forward_termination_signals(int child);

// MARK: Linux timers and socket credentials (the alarm service)

/// A timerfd on CLOCK_REALTIME (close-on-exec, non-blocking), or -errno.
///
/// Why C: glibc's <sys/timerfd.h> and <sys/eventfd.h> are not in Swift's Glibc module.
int proofkit_alarm_timer_create(void);

/// Arms `fd` to fire once at the absolute wall-clock instant `seconds`.`nanoseconds` since
/// 1970, with TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, so that a read fails with ECANCELED
/// when someone sets the clock (a jump, NTP step, resume). Returns 0 or -errno.
int proofkit_alarm_timer_set(int fd, int64_t seconds, int64_t nanoseconds);

/// Reads the timer: 1 when it fired, 0 when not, -ECANCELED when the clock was set, else -errno.
int proofkit_alarm_timer_read(int fd);

/// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (and the threads it starts later) and
/// returns a signalfd (close-on-exec, non-blocking) that reads them, or -errno: a service then
/// ends cleanly from its poll loop. Why C: `signalfd` and its struct are not in Swift's Glibc module.
int proofkit_termination_signals_create(void);

/// Reads one signal from a descriptor of proofkit_termination_signals_create: its number, or 0.
int proofkit_termination_signal_read(int fd);

/// An eventfd (close-on-exec, non-blocking), or -errno: a wake-up another thread can write.
int proofkit_event_create(void);

/// The uid and pid of the process at the other end of a connected Unix socket (SO_PEERCRED).
/// Returns 0 or -errno.
///
/// Why C: `struct ucred` is declared only under `_GNU_SOURCE`, which Swift's Glibc does not define.
int proofkit_peer_uid(int fd, uint32_t *uid, int32_t *pid);

/// Returns the C heap's free memory to the system (glibc `malloc_trim(0)`; a no-op elsewhere).
///
/// Why C: `malloc_trim` is declared in <malloc.h>, which Swift's Glibc module does not include.
void proofkit_heap_trim(void);

#endif
