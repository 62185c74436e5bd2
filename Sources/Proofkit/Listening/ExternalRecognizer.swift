import AudioIO
public import ProofkitCore
internal import ProofkitSystem
import Synchronization

/// Any external speech recogniser, run as a child process: proofkit writes the captured audio
/// (16 kHz mono S16_LE, headerless) to its stdin and reads transcript lines from its stdout.
///
/// When the recogniser dies or closes its stdout mid-way (Android's `ERROR_CLIENT` 11 is the known
/// case for recogniser services), it is restarted quietly, up to `maxRestarts` times; the lines
/// already read stay in ``lines`` (the caller keeps the text heard so far). Its stderr goes to
/// `/dev/null` so it cannot disturb proofkit's terminal UI. The command runs through `/bin/sh -c`.
///
/// Writes never block the audio path: the stdin pipe is non-blocking, and audio that does not fit
/// (a recogniser that stopped reading) or arrives while it restarts is dropped and counted.
///
/// Thread contract: ``send(_:)`` from one thread at a time; ``lines`` has a single consumer.
public final class ExternalRecognizer: Sendable {
    /// The shell command.
    public let command: String
    /// How many restarts are allowed before the recogniser is given up (default 8).
    public let maxRestarts: Int
    /// Transcript lines (trimmed, non-empty) in order, across restarts. Ends after ``finish(timeout:)``,
    /// or when the recogniser died more than `maxRestarts` times.
    public let lines: AsyncStream<String>

    private let continuation: AsyncStream<String>.Continuation
    private let state = Mutex(State())

    private struct State {
        var pid: Int32 = 0
        var stdinFD: Int32 = -1
        var restarts = 0
        var droppedBytes = 0
        var isFinishing = false
        var hasGivenUp = false
        var generation = 0
    }

    /// Creates a recogniser; nothing runs until ``start()``.
    /// - Parameters:
    ///   - command: a shell command line, e.g. `"vosk-transcriber --lang ar"`.
    ///   - maxRestarts: restarts allowed after unexpected exits, default 8.
    public init(command: String, maxRestarts: Int = 8) {
        self.command = command
        self.maxRestarts = maxRestarts
        (lines, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .unbounded)
    }

    /// How many times the recogniser was restarted so far.
    public var restarts: Int { state.withLock { $0.restarts } }

    /// Audio bytes dropped because the recogniser was not reading or was restarting.
    public var droppedBytes: Int { state.withLock { $0.droppedBytes } }

    /// Whether the recogniser died more often than allowed and was given up.
    public var hasGivenUp: Bool { state.withLock { $0.hasGivenUp } }

    /// Starts the recogniser.
    /// - Throws: `.runtimeUnavailable` when the process cannot be started (no `/bin/sh`, no
    ///   processes left). A command that does not exist starts a shell that exits at once; that
    ///   shows as restarts and finally ``hasGivenUp``.
    /// Calls `posix_spawn`.
    public func start() throws(ProofkitError) {
        // A recogniser that dies while we write must not kill proofkit with SIGPIPE.
        ChildProcess.ignoreBrokenPipes()
        try spawn()
    }

    /// Writes audio to the recogniser's stdin without blocking; what does not fit is dropped.
    /// - Parameter bytes: 16 kHz mono S16_LE audio.
    public func send(_ bytes: [UInt8]) {
        state.withLock { state in
            guard state.stdinFD >= 0 else {
                state.droppedBytes += bytes.count
                return
            }
            // EAGAIN (full) or EPIPE (dying) ends the write: the rest is dropped.
            var written = 0
            _ = bytes.withUnsafeBytes { POSIX.writeAll(state.stdinFD, $0, written: &written) }
            state.droppedBytes += bytes.count - written
        }
    }

    /// Closes the recogniser's stdin (end of audio), waits up to `timeout` for its last lines and
    /// its exit, then ends ``lines``. A recogniser still running after that is killed.
    /// - Parameter timeout: default 5 s.
    public func finish(timeout: Duration = .seconds(5)) async {
        let pid: Int32 = state.withLock { state in
            state.isFinishing = true
            if state.stdinFD >= 0 { POSIX.closeDescriptor(state.stdinFD) }
            state.stdinFD = -1
            return state.pid
        }
        guard pid > 0 else {
            continuation.finish()
            return
        }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while clock.now < deadline {
            if state.withLock({ $0.pid }) == 0 { return }  // the reader reaped it and finished
            try? await Task.sleep(for: .milliseconds(10))
        }
        ChildProcess.kill(pid)
    }

    private func spawn() throws(ProofkitError) {
        let toChild: (read: Int32, write: Int32)
        let fromChild: (read: Int32, write: Int32)
        do throws(ChildProcess.Failure) {
            toChild = try ChildProcess.makePipe()
        } catch {
            throw spawnError(error)
        }
        do throws(ChildProcess.Failure) {
            fromChild = try ChildProcess.makePipe()
        } catch {
            POSIX.closeDescriptor(toChild.read)
            POSIX.closeDescriptor(toChild.write)
            throw spawnError(error)
        }
        // The child keeps this process's signal dispositions (SIGPIPE ignored, as before).
        let spawned: Result<Int32, ChildProcess.Failure> = Result { () throws(ChildProcess.Failure) in
            try ChildProcess.spawn(
                "/bin/sh", arguments: ["-c", command], stdin: .descriptor(toChild.read),
                stdout: .descriptor(fromChild.write), stderr: .null, resetsSignals: false)
        }
        POSIX.closeDescriptor(toChild.read)
        POSIX.closeDescriptor(fromChild.write)
        let pid: Int32
        switch spawned {
        case .success(let value): pid = value
        case .failure(let error):
            POSIX.closeDescriptor(toChild.write)
            POSIX.closeDescriptor(fromChild.read)
            throw spawnError(error)
        }
        POSIX.setNonBlocking(toChild.write, true)
        let generation = state.withLock { state in
            state.pid = pid
            state.stdinFD = toChild.write
            state.generation += 1
            return state.generation
        }
        let readFD = fromChild.read
        let childPID = pid
        runOnDedicatedThread { [self] in self.readLines(fd: readFD, pid: childPID, generation: generation) }
    }

    /// The reader thread of one child: yields its lines, then reaps it and restarts it if it
    /// ended while audio was still coming.
    private func readLines(fd: Int32, pid: Int32, generation: Int) {
        forEachLine(of: fd) { emit($0) }
        POSIX.closeDescriptor(fd)
        _ = ChildProcess.wait(pid)
        let restart: Bool = state.withLock { state in
            guard state.generation == generation else { return false }
            if state.stdinFD >= 0 { POSIX.closeDescriptor(state.stdinFD) }
            state.stdinFD = -1
            state.pid = 0
            if state.isFinishing { return false }
            if state.restarts >= maxRestarts {
                state.hasGivenUp = true
                return false
            }
            state.restarts += 1
            return true
        }
        if restart, (try? spawn()) != nil { return }
        if restart { state.withLock { $0.hasGivenUp = true } }
        continuation.finish()
    }

    private func emit(_ line: String) {
        continuation.yield(line)
    }

    /// Checks that the program a recogniser command starts is installed, so that a missing one is
    /// a clear error before listening instead of a child that exits 127 and a proof "rejected"
    /// with no word heard. The program is the command's first word after any `NAME=value`
    /// assignments (quotes removed), looked for in `PATH` unless it contains a `/`. A command that
    /// starts with shell syntax (a builtin such as `exec`, a `$` expansion, a subshell) is not
    /// checked: the shell resolves it.
    /// - Parameters:
    ///   - command: the command line run by `/bin/sh -c`.
    ///   - path: the search path; `nil` (the default) is this process's `PATH` (what the shell
    ///     child inherits).
    /// - Throws: `.runtimeUnavailable` (exit 69) naming the program.
    public static func checkInstalled(
        command: String, path: String? = nil
    ) throws(ProofkitError) {
        guard let program = program(of: command) else { return }
        let path = path ?? POSIX.environmentValue("PATH")
        let found: Bool
        if program.contains("/") {
            found = POSIX.isExecutableFile(program)
        } else {
            let folders = (path ?? "/usr/bin:/bin").split(separator: ":", omittingEmptySubsequences: false)
            found = folders.contains { POSIX.isExecutableFile(($0.isEmpty ? "." : String($0)) + "/" + program) }
        }
        if !found {
            throw ProofkitError(
                .runtimeUnavailable,
                "the recogniser command '\(command)' runs '\(program)', which is not installed"
                    + (program.contains("/") ? " (no such executable file)" : " (not found in PATH)"))
        }
    }

    /// The program `command` starts, or `nil` when the shell must resolve it (see ``checkInstalled(command:path:)``).
    static func program(of command: String) -> String? {
        let shellWords: Set<String> = [
            "exec", "command", "eval", "builtin", "if", "while", "until", "for", "case", "time", "!", "{", "(", ".",
            "source", "cd", "set", "export", "trap", "ulimit", "umask",
        ]
        var rest = Substring(command)
        while true {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "\n" }
            var word = ""
            var quote: Character?
            while let character = rest.first {
                if let open = quote {
                    rest.removeFirst()
                    if character == open { quote = nil } else { word.append(character) }
                } else if character == "'" || character == "\"" {
                    rest.removeFirst()
                    quote = character
                } else if " \t\n;&|<>()".contains(character) {
                    break
                } else {
                    if "$`\\*?[~".contains(character) { return nil }  // expansions: the shell's to resolve
                    rest.removeFirst()
                    word.append(character)
                }
            }
            if quote != nil || word.isEmpty { return nil }
            // `NAME=value` before the program sets its environment; the program follows.
            if let equals = word.firstIndex(of: "="),
                word[..<equals].allSatisfy({ $0 == "_" || $0.isLetter || $0.isNumber }),
                equals != word.startIndex
            {
                continue
            }
            return shellWords.contains(word) ? nil : word
        }
    }

    private func spawnError(_ failure: ChildProcess.Failure) -> ProofkitError {
        ProofkitError(
            .runtimeUnavailable, "cannot start the recogniser '\(command)': \(failure)",
            operation: failure.operation, underlying: failure.errno.code)
    }
}

/// Reads `fd` to its end and calls `body` with each non-empty line, whitespace-trimmed (a last
/// line without a newline counts). Blocks: call it on a dedicated thread. Does not close `fd`.
/// A recogniser's line is a sentence or two: a line over ``maximumTranscriptLineLength`` bytes
/// is dropped (memory stays bounded whatever the child prints; the pipe is still drained). A read
/// error ends the reading.
func forEachLine(of fd: Int32, _ body: (String) -> Void) {
    try? POSIX.forEachLine(fd, maximumLineLength: maximumTranscriptLineLength, skipsLongLines: true, chunk: 4096) {
        bytes in
        let line = String(decoding: bytes, as: UTF8.self).trimmingSpacesAndNewlines()
        if !line.isEmpty { body(line) }
    }
}

/// The longest transcript line a recogniser may print, in bytes: 1 MiB.
let maximumTranscriptLineLength = 1 << 20
