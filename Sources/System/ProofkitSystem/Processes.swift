// Child processes (posix_spawn, PR_SET_PDEATHSIG) and the C heap, built on POSIX+Calls.swift's
// wrappers (no libc here).

// MARK: Child processes

/// Child processes started with `posix_spawn`, without Foundation's `Process` (so the `proofkit`
/// binary does not link the full Foundation). The child gets this process's environment
/// (`environ`) and current folder.
package enum ChildProcess {
    /// What a standard stream of the child is connected to.
    package enum Stream {
        /// The parent's own stream.
        case inherit
        /// `/dev/null`.
        case null
        /// This file descriptor (the write end of a pipe for stdout, the read end for stdin).
        case descriptor(Int32)
    }

    /// How a child ended.
    package enum Termination: Equatable, Sendable {
        /// It exited with this status.
        case exited(Int32)
        /// It was killed by this signal.
        case signalled(Int32)
    }

    /// A finished one-shot child.
    package struct Completed {
        /// How it ended.
        package var termination: Termination
        /// Its stdout, when captured (else empty).
        package var stdout: [UInt8]
        /// Its stderr, when captured (else empty).
        package var stderr: [UInt8]
    }

    /// A failed system call while starting a child.
    package struct Failure: Error, CustomStringConvertible {
        /// The C function, e.g. `"posix_spawn"`.
        package var operation: String
        /// Its errno.
        package var errno: Errno
        /// `strerror`'s text, e.g. "No such file or directory".
        package var description: String { errno.description }
    }

    /// Starts `executable` (a path; no `PATH` search) with `arguments` (without `argv[0]`, which
    /// is `executable`), and returns its process id; the caller reaps it (``wait(_:)``).
    /// - Parameters:
    ///   - stdin, stdout, stderr: what the child's streams are connected to.
    ///   - resetsSignals: give the child the default action for every signal and an empty signal
    ///     mask, as Foundation's `Process` does (default true), so that a signal this process
    ///     ignores (SIGPIPE) is not ignored by the child too.
    /// - Throws: ``Failure`` when `posix_spawn` fails (e.g. `ENOENT` for a missing executable).
    ///   Calls `posix_spawn`.
    package static func spawn(
        _ executable: String, arguments: [String], stdin: Stream, stdout: Stream, stderr: Stream,
        resetsSignals: Bool = true
    ) throws(Failure) -> Int32 {
        let started = POSIX.spawn(
            executable, arguments: [executable] + arguments, streams: [stdin, stdout, stderr],
            resetsSignals: resetsSignals)
        switch started {
        case .success(let pid): return pid
        case .failure(let errno): throw Failure(operation: "posix_spawn", errno: errno)
        }
    }

    /// Waits for the child `pid` to end (retrying on `EINTR`). Calls `waitpid`.
    package static func wait(_ pid: Int32) -> Termination {
        guard case .success(let status) = POSIX.waitForChild(pid) else {
            return .exited(-1)  // not our child (already reaped): nothing to report
        }
        // WIFEXITED/WEXITSTATUS/WTERMSIG are macros Swift does not import.
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
    }

    /// Sends SIGKILL to `pid`. Calls `kill`.
    package static func kill(_ pid: Int32) {
        POSIX.send(.kill, to: pid)
    }

    /// A pipe whose two ends are close-on-exec (so that no child inherits them by accident; `dup2`
    /// in ``spawn(_:arguments:stdin:stdout:stderr:resetsSignals:)`` clears the flag on the copy).
    /// - Returns: (read end, write end). Calls `pipe2`.
    package static func makePipe() throws(Failure) -> (read: Int32, write: Int32) {
        switch POSIX.makePipe() {
        case .success(let ends): return ends
        case .failure(let errno): throw Failure(operation: "pipe", errno: errno)
        }
    }

    /// Ignores SIGPIPE in this process, so that a write to a pipe whose reader is gone fails with
    /// `EPIPE` instead of ending the process. Calls `signal`.
    package static func ignoreBrokenPipes() {
        POSIX.setIgnored(.brokenPipe, true)
    }

    /// Runs `executable arguments...` to its end with stdin from `/dev/null`, capturing stdout
    /// and stderr as asked (both pipes are drained together, so a child that fills one while we
    /// read the other cannot block).
    /// - Parameters:
    ///   - stdout, stderr: `true` to capture the stream, `false` to send it to `/dev/null`.
    ///   - forwardsTerminationSignals: while the child runs, SIGTERM, SIGINT and SIGHUP sent to
    ///     this process are passed on to the child first, then end this process as they would
    ///     have (default false), so that killing the parent does not orphan the child.
    /// - Returns: how it ended and what it printed.
    /// - Throws: ``Failure`` when it cannot be started.
    package static func run(
        _ executable: String, arguments: [String], stdout captureOut: Bool, stderr captureErr: Bool,
        forwardsTerminationSignals: Bool = false
    ) throws(Failure) -> Completed {
        var outPipe: (read: Int32, write: Int32)?
        var errPipe: (read: Int32, write: Int32)?
        let closeAll = {
            for fd in [outPipe?.read, outPipe?.write, errPipe?.read, errPipe?.write] {
                if let fd { POSIX.closeDescriptor(fd) }
            }
        }
        let pid: Int32
        do throws(Failure) {
            if captureOut { outPipe = try makePipe() }
            if captureErr { errPipe = try makePipe() }
            pid = try spawn(
                executable, arguments: arguments, stdin: .null,
                stdout: outPipe.map { .descriptor($0.write) } ?? .null,
                stderr: errPipe.map { .descriptor($0.write) } ?? .null)
        } catch {
            closeAll()
            throw error
        }
        if forwardsTerminationSignals { POSIX.forwardTerminationSignals(to: pid) }
        defer { if forwardsTerminationSignals { POSIX.forwardTerminationSignals(to: 0) } }
        for fd in [outPipe?.write, errPipe?.write] { if let fd { POSIX.closeDescriptor(fd) } }
        let outputs = drain([outPipe?.read, errPipe?.read].compactMap { $0 })
        var index = 0
        var completed = Completed(termination: .exited(0), stdout: [], stderr: [])
        if captureOut {
            completed.stdout = outputs[index]
            index += 1
        }
        if captureErr { completed.stderr = outputs[index] }
        completed.termination = wait(pid)
        return completed
    }

    /// Asks the kernel to kill this process (SIGKILL) when its parent ends, for a child that
    /// must not outlive the process that waits for its result (Linux `PR_SET_PDEATHSIG`).
    /// - Returns: `false` when the parent is already gone. Calls `proofkit_set_parent_death_signal`.
    package static func dieWithParent() -> Bool {
        POSIX.setParentDeathSignal(.kill)
    }

    /// Reads every descriptor to its end at once (with `poll`), then closes them.
    /// - Returns: the bytes read from each, in the order given. Calls `poll`, `read`, `close`.
    private static func drain(_ descriptors: [Int32]) -> [[UInt8]] {
        var outputs = [[UInt8]](repeating: [], count: descriptors.count)
        var open = descriptors
        var owners = Array(descriptors.indices)
        var chunk = [UInt8](repeating: 0, count: 65536)
        while !open.isEmpty {
            guard let ready = try? POSIX.waitReadable(open, milliseconds: -1) else { break }
            var finished: [Int] = []
            for slot in open.indices where ready[slot] {
                switch chunk.withUnsafeMutableBytes({ POSIX.read(open[slot], into: $0) }) {
                case .success(let n) where n > 0: outputs[owners[slot]] += chunk[0..<n]
                default: finished.append(slot)
                }
            }
            for slot in finished.reversed() {
                POSIX.closeDescriptor(open[slot])
                open.remove(at: slot)
                owners.remove(at: slot)
            }
        }
        for fd in open { POSIX.closeDescriptor(fd) }
        return outputs
    }
}

/// The C heap of this process.
package enum ProcessHeap {
    /// Gives the C heap's free memory back to the system (`malloc_trim(0)`, glibc). ONNX Runtime
    /// without its arena frees a run's working memory with `free`, but glibc keeps freed blocks of
    /// up to 32 MB in its heaps for reuse (its mmap threshold grows with the blocks it has freed),
    /// so the process would keep the largest run's working memory for good. About a millisecond.
    package static func returnFreedMemory() {
        POSIX.trimHeap()
    }
}
