#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
internal import CProofkitShims

/// Child processes started with `posix_spawn`, without Foundation's `Process` (so the `proofkit`
/// binary does not link the full Foundation and CoreFoundation's start-up work).
///
/// Two users: ``ExternalRecognizer`` (a long-running recogniser fed through pipes, via
/// ``spawn(_:arguments:stdin:stdout:stderr:resetsSignals:)``), and the one-shot children of the
/// benchmark and the demo (via ``run(_:arguments:stdout:stderr:)``, which captures the output).
/// The child gets this process's environment (`environ`) and current folder.
enum ChildProcess {
    /// What a standard stream of the child is connected to.
    enum Stream {
        /// The parent's own stream.
        case inherit
        /// `/dev/null`.
        case null
        /// This file descriptor (the write end of a pipe for stdout, the read end for stdin).
        case descriptor(Int32)
    }

    /// How a child ended.
    enum Termination: Equatable {
        /// It exited with this status.
        case exited(Int32)
        /// It was killed by this signal.
        case signalled(Int32)
    }

    /// A finished one-shot child.
    struct Completed {
        /// How it ended.
        var termination: Termination
        /// Its stdout, when captured (else empty).
        var stdout: [UInt8]
        /// Its stderr, when captured (else empty).
        var stderr: [UInt8]
    }

    /// A failed system call while starting a child.
    struct Failure: Error, CustomStringConvertible {
        /// The C function, e.g. `"posix_spawn"`.
        var operation: String
        /// Its `errno`.
        var errno: Int32
        /// `strerror(errno)`, e.g. "No such file or directory".
        var description: String { String(cString: strerror(errno)) }
    }

    /// Starts `executable` (a path; no `PATH` search) with `arguments` (without `argv[0]`, which
    /// is `executable`), and returns its process id; the caller reaps it (``wait(_:)``).
    /// - Parameters:
    ///   - stdin, stdout, stderr: what the child's streams are connected to.
    ///   - resetsSignals: give the child the default action for every signal and an empty signal
    ///     mask, as Foundation's `Process` does (default true), so that a signal this process
    ///     ignores (SIGPIPE, see ``ExternalRecognizer/start()``) is not ignored by the child too.
    /// - Throws: ``Failure`` when `posix_spawn` fails (e.g. `ENOENT` for a missing executable).
    /// Calls `posix_spawn`.
    static func spawn(
        _ executable: String, arguments: [String], stdin: Stream, stdout: Stream, stderr: Stream,
        resetsSignals: Bool = true
    ) throws(Failure) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .inherit: break
            case .null: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .descriptor(let fd): posix_spawn_file_actions_adddup2(&actions, fd, target)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        if resetsSignals {
            var all = sigset_t()
            var none = sigset_t()
            sigfillset(&all)
            sigemptyset(&none)
            posix_spawnattr_setsigdefault(&attributes, &all)
            posix_spawnattr_setsigmask(&attributes, &none)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        }
        var cArguments = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, &cArguments, environ)
        guard status == 0 else { throw Failure(operation: "posix_spawn", errno: status) }
        return pid
    }

    /// Waits for the child `pid` to end (retrying on `EINTR`).
    /// Calls `waitpid`.
    static func wait(_ pid: pid_t) -> Termination {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return .exited(-1) }  // not our child (already reaped): nothing to report
        }
        // WIFEXITED/WEXITSTATUS/WTERMSIG are macros Swift does not import.
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
    }

    /// A pipe whose two ends are close-on-exec (so that no child inherits them by accident; `dup2`
    /// in ``spawn(_:arguments:stdin:stdout:stderr:resetsSignals:)`` clears the flag on the copy).
    /// - Returns: (read end, write end).
    /// Calls `pipe` and `fcntl`.
    static func makePipe() throws(Failure) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw Failure(operation: "pipe", errno: errno) }
        for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (ends[0], ends[1])
    }

    /// Runs `executable arguments...` to its end with stdin from `/dev/null`, capturing stdout
    /// and stderr as asked (both pipes are drained together, so a child that fills one while we
    /// read the other cannot block).
    /// - Parameters:
    ///   - stdout, stderr: `true` to capture the stream, `false` to send it to `/dev/null`.
    /// - Returns: how it ended and what it printed.
    /// - Throws: ``Failure`` when it cannot be started.
    ///   - forwardsTerminationSignals: while the child runs, SIGTERM, SIGINT and SIGHUP sent to
    ///     this process are passed on to the child first, then end this process as they would
    ///     have (default false), so that killing the parent does not orphan the child.
    static func run(
        _ executable: String, arguments: [String], stdout captureOut: Bool, stderr captureErr: Bool,
        forwardsTerminationSignals: Bool = false
    ) throws(Failure) -> Completed {
        var outPipe: (read: Int32, write: Int32)?
        var errPipe: (read: Int32, write: Int32)?
        do throws(Failure) {
            if captureOut { outPipe = try makePipe() }
            if captureErr { errPipe = try makePipe() }
        } catch {
            for fd in [outPipe?.read, outPipe?.write, errPipe?.read, errPipe?.write] { if let fd { close(fd) } }
            throw error
        }
        let pid: pid_t
        do throws(Failure) {
            pid = try spawn(
                executable, arguments: arguments, stdin: .null,
                stdout: outPipe.map { .descriptor($0.write) } ?? .null,
                stderr: errPipe.map { .descriptor($0.write) } ?? .null)
        } catch {
            for fd in [outPipe?.read, outPipe?.write, errPipe?.read, errPipe?.write] { if let fd { close(fd) } }
            throw error
        }
        if forwardsTerminationSignals { proofkit_forward_termination_signals(pid) }
        defer { if forwardsTerminationSignals { proofkit_forward_termination_signals(0) } }
        for fd in [outPipe?.write, errPipe?.write] { if let fd { close(fd) } }
        let outputs = drain([outPipe?.read, errPipe?.read].compactMap { $0 })
        var index = 0
        var completed = Completed(termination: .exited(0), stdout: [], stderr: [])
        if captureOut { completed.stdout = outputs[index]; index += 1 }
        if captureErr { completed.stderr = outputs[index] }
        completed.termination = wait(pid)
        return completed
    }

    /// Asks the kernel to kill this process (SIGKILL) when its parent ends, for a child that
    /// must not outlive the process that waits for its result (Linux `PR_SET_PDEATHSIG`).
    /// - Returns: `false` when the parent is already gone. Calls `prctl` (through
    ///   `proofkit_set_parent_death_signal`), `getppid`.
    static func dieWithParent() -> Bool {
        proofkit_set_parent_death_signal(SIGKILL) != -1
    }

    /// Reads every descriptor to its end at once (with `poll`), then closes them.
    /// - Returns: the bytes read from each, in the order given.
    /// Calls `poll` and `read`.
    private static func drain(_ descriptors: [Int32]) -> [[UInt8]] {
        var outputs = [[UInt8]](repeating: [], count: descriptors.count)
        var open = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var owners = Array(descriptors.indices)
        var chunk = [UInt8](repeating: 0, count: 65536)
        while !open.isEmpty {
            let ready = poll(&open, nfds_t(open.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            var finished: [Int] = []
            for slot in open.indices where open[slot].revents != 0 {
                let n = chunk.withUnsafeMutableBytes { read(open[slot].fd, $0.baseAddress, $0.count) }
                if n > 0 {
                    outputs[owners[slot]] += chunk[0..<n]
                } else if n == 0 || errno != EINTR {
                    finished.append(slot)
                }
            }
            for slot in finished.reversed() {
                close(open[slot].fd)
                open.remove(at: slot)
                owners.remove(at: slot)
            }
        }
        for entry in open { close(entry.fd) }
        return outputs
    }
}
