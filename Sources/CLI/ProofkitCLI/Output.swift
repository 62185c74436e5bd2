public import ProofkitCore
internal import ProofkitSystem
import Synchronization

/// Where a command writes: stdout for results, stderr for diagnostics and progress.
/// Injected so that tests can capture both in process.
public struct CommandIO: Sendable {
    /// Writes text to stdout as given (no newline added).
    public var writeOut: @Sendable (String) -> Void
    /// Writes text to stderr as given (no newline added).
    public var writeErr: @Sendable (String) -> Void
    /// Whether stdout is a terminal (colour, live redraw).
    public var isStdoutTerminal: Bool
    /// Whether stderr is a terminal (progress bars are drawn only then).
    public var isStderrTerminal: Bool
    /// The process environment (e.g. `PROOFKIT_ORT_LIBRARY`).
    ///
    /// For ``standard`` it is read from the process when a command first asks, not at start-up:
    /// most verbs never need it, and building the dictionary costs start-up time. Values are
    /// ``FilePath`` strings (``POSIX/environment()``): one that is not UTF-8 (a Latin-1 folder in
    /// `PROOFKIT_MODELS`) still names its file.
    public var environment: [String: String] {
        get { readEnvironment() }
        set { readEnvironment = { newValue } }
    }
    private var readEnvironment: @Sendable () -> [String: String]
    /// The name a command's own error lines start with (`proofkit NAME:`), when it runs for
    /// another (`alarm prove` running the photo proof); `nil`: the command's own name.
    public var commandName: String? = nil

    public init(
        writeOut: @escaping @Sendable (String) -> Void,
        writeErr: @escaping @Sendable (String) -> Void,
        isStdoutTerminal: Bool = false, isStderrTerminal: Bool = false,
        environment: [String: String] = [:]
    ) {
        self.writeOut = writeOut
        self.writeErr = writeErr
        self.isStdoutTerminal = isStdoutTerminal
        self.isStderrTerminal = isStderrTerminal
        self.readEnvironment = { environment }
    }

    /// Prints one line to stdout.
    public func print(_ line: String) { writeOut(line + "\n") }
    /// Prints one line to stderr.
    public func printError(_ line: String) { writeErr(line + "\n") }
    /// Prints one JSON object on its own line to stdout.
    public func printJSON(_ value: JSONValue) { writeOut(value.serialized + "\n") }

    /// The same streams with stdout dropped (a step whose own report would break one JSON object).
    public var discardingOutput: CommandIO {
        var io = self
        io.writeOut = { _ in }
        return io
    }

    /// The real process streams.
    public static var standard: CommandIO {
        var io = CommandIO(
            writeOut: { writeAll(fd: 1, $0) }, writeErr: { writeAll(fd: 2, $0) },
            isStdoutTerminal: POSIX.isTerminal(1), isStderrTerminal: POSIX.isTerminal(2))
        io.readEnvironment = { withHome(POSIX.environment()) }
        return io
    }
}

/// `environment` with `HOME` taken from the user database when it is unset or not an absolute
/// path, as a login sets it: a command run by cron, `env -i` or a unit without `User=` then finds
/// the same alarm store, du'a texts and cache as from the user's shell, not `/root`'s.
func withHome(_ environment: [String: String]) -> [String: String] {
    guard !(environment["HOME"]?.hasPrefix("/") ?? false), let home = POSIX.homeFolderOfEffectiveUser() else {
        return environment
    }
    var filled = environment
    filled["HOME"] = home
    return filled
}

/// Writes all of `text` to `fd`, retrying on EINTR and short writes. A closed pipe (EPIPE: a
/// reader such as `head` that has seen enough) is dropped; any other failure to write stdout (a
/// full disk, `/dev/full`, an I/O error) is kept in ``standardOutputFailure``, so that the
/// command does not end with 0 when its results were lost.
func writeAll(fd: Int32, _ text: String) {
    guard let errno = POSIX.writeAll(fd, Array(text.utf8)), fd == 1, errno != .brokenPipe else { return }
    standardOutputFailure.withLock { first in first = first ?? errno }
}

/// The first failure to write stdout other than a closed pipe, if any (see ``writeAll(fd:_:)``).
let standardOutputFailure = Mutex<Errno?>(nil)

/// What ``standardOutputFailure`` holds.
var standardOutputFailed: Errno? { standardOutputFailure.withLock { $0 } }

/// A one-line progress bar on stderr, drawn only when stderr is a terminal.
public struct ProgressBar {
    let io: CommandIO
    let label: String
    let total: Int
    var lastDrawn = -1

    /// - Parameters:
    ///   - label: shown before the bar.
    ///   - total: the number of steps (at least 1).
    public init(io: CommandIO, label: String, total: Int) {
        self.io = io
        self.label = label
        self.total = max(1, total)
    }

    /// Redraws the bar at `done` steps (cheap when nothing visible changed).
    public mutating func update(_ done: Int, detail: String = "") {
        guard io.isStderrTerminal else { return }
        let width = 30
        let filled = min(width, done * width / total)
        let percent = min(100, done * 100 / total)
        guard percent != lastDrawn || !detail.isEmpty else { return }
        lastDrawn = percent
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        io.writeErr("\r\(label) [\(bar)] \(percent)% \(detail)\u{1B}[K")
    }

    /// Clears the bar's line.
    public func finish() {
        guard io.isStderrTerminal else { return }
        io.writeErr("\r\u{1B}[K")
    }
}

/// A ``ProgressBar`` for work whose length comes with its first report (as `PoseVideoLines.run`'s
/// `progress` gives it): the first value is the total (0: unknown, nothing is drawn), later values
/// the steps done.
final class ReportedProgress {
    private let io: CommandIO
    private let label: String
    private var bar: ProgressBar?
    private var total = 0

    init(io: CommandIO, label: String) {
        self.io = io
        self.label = label
    }

    /// The total on the first call, then the steps done.
    func report(_ value: Int) {
        guard bar != nil else {
            total = value
            bar = ProgressBar(io: io, label: label, total: value)
            return
        }
        if total > 0 { bar!.update(value) }
    }

    /// Clears the bar's line.
    func finish() { bar?.finish() }
}
