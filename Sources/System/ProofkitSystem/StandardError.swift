// Silencing standard error around a C library that prints to it, built on POSIX+Calls.swift's
// wrappers (no libc here).
import Synchronization

extension POSIX {
    /// Runs `body` with file descriptor 2 pointed at /dev/null, then restores it (libmpg123 inside
    /// libsndfile prints warnings straight to stderr, which would break one-line diagnostics).
    /// Other threads' stderr is dropped too for the duration, so keep `body` short; overlapping
    /// calls are counted under a lock and stderr comes back when the last one ends.
    /// - Throws: what `body` throws (stderr is restored first). Calls `dup`, `open`, `dup2`, `close`.
    ///
    /// Inlinable, so that each caller gets a copy specialised to its result type: a generic call
    /// across modules would instantiate the metadata of `T` at run time (for a `Result<_, E>`, a
    /// scan of every protocol conformance in the binary to find `E: Error`).
    @inlinable
    package static func withStandardErrorSilenced<T: ~Copyable, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        beginStandardErrorSilence()
        defer { endStandardErrorSilence() }
        return try body()
    }

    /// The first half of ``withStandardErrorSilenced(_:)``: points descriptor 2 at /dev/null
    /// (unless an overlapping call already has). Calls `fcntl(F_DUPFD_CLOEXEC)`, `open`, `dup2`,
    /// `close`.
    package static func beginStandardErrorSilence() {
        silencing.withLock { state in
            if state.depth == 0 {
                let saved = duplicate(2)
                let null = try? open("/dev/null", .writeOnly).get()
                if saved != nil, let null { duplicate(null, onto: 2) }
                if let null { closeDescriptor(null) }
                state.saved = saved ?? -1
            }
            state.depth += 1
        }
    }

    /// The second half of ``withStandardErrorSilenced(_:)``: restores descriptor 2 when the last
    /// overlapping call ends. Calls `dup2`, `close`.
    package static func endStandardErrorSilence() {
        silencing.withLock { state in
            state.depth -= 1
            if state.depth == 0 && state.saved >= 0 {
                duplicate(state.saved, onto: 2)
                closeDescriptor(state.saved)
                state.saved = -1
            }
        }
    }

    private static let silencing = Mutex(SilencingState())

    private struct SilencingState {
        var depth = 0
        var saved: Int32 = -1
    }
}
