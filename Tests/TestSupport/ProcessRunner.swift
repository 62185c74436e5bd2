public import Foundation

/// What a finished child process produced.
public struct ProcessResult: Sendable {
    /// Exit status (or 128 + signal number when killed by a signal).
    public var status: Int32
    /// Everything written to stdout.
    public var stdout: String
    /// Everything written to stderr.
    public var stderr: String
    /// stdout as raw bytes.
    public var stdoutData: Data
    /// Non-empty stderr lines.
    public var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
}

/// Runs `executable` with `arguments`, feeding `stdin` and draining both pipes before waiting
/// (so large output cannot deadlock), and returns its status and output.
/// - Parameters:
///   - environment: extra variables merged over the current environment.
///   - currentDirectory: working directory, default the current one.
public func runProcess(
    _ executable: String, _ arguments: [String], stdin: Data? = nil,
    environment: [String: String] = [:], currentDirectory: String? = nil
) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    // Children that load ONNX Runtime (Python references, peers) must not write its telemetry
    // cache either: proofkit's own loader turns it off, Python's onnxruntime needs the variable.
    var childEnvironment = ProcessInfo.processInfo.environment
    childEnvironment["ORT_DISABLE_TELEMETRY"] = "1"
    process.environment = childEnvironment.merging(environment) { _, new in new }
    if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
    let outPipe = Pipe()
    let errPipe = Pipe()
    let inPipe = Pipe()
    process.standardOutput = outPipe
    process.standardError = errPipe
    process.standardInput = inPipe
    try process.run()
    let out = PipeDrain(outPipe.fileHandleForReading)
    let err = PipeDrain(errPipe.fileHandleForReading)
    if let stdin {
        // A child may stop reading before the end (squat - ends at its target): its closed pipe
        // must fail this write (EPIPE), not end the whole test process with SIGPIPE.
        ignoreBrokenPipes
        try? inPipe.fileHandleForWriting.write(contentsOf: stdin)
    }
    try? inPipe.fileHandleForWriting.close()
    let outData = out.wait()
    let errData = err.wait()
    process.waitUntilExit()
    let status =
        process.terminationReason == .uncaughtSignal
        ? 128 + process.terminationStatus : process.terminationStatus
    return ProcessResult(
        status: status, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData, as: UTF8.self), stdoutData: outData)
}

/// Reads a pipe to its end on a thread of its own.
///
/// Not on `DispatchQueue.global()`: that pool has about one thread per core, and a blocking read
/// holds one for the child's whole life. In the full suite (2 cores, many tests running children
/// at once) a short child's output then waited seconds for a free thread: `proofkit alarm add`
/// returned to its test 5.5-6.5 s after it was called, after the alarm it booked had already rung,
/// and the alarm tests that watch the speaker on a schedule failed (AlarmEndToEndTests'
/// stopThenBackup, in 3 of 7 full runs).
private final class PipeDrain: @unchecked Sendable {  // `data` is written once, before `done` is signalled
    private let done = DispatchSemaphore(value: 0)
    private var data = Data()

    init(_ handle: FileHandle) {
        let thread = Thread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
        thread.start()
    }

    /// Everything the pipe carried, once its writers have all closed it.
    func wait() -> Data {
        done.wait()
        return data
    }
}

extension TestEnvironment {
    /// The `proofkit` binary that the same build as these tests produced: `PROOFKIT_TEST_BINARY`
    /// when set, else `proofkit` beside the running test bundle (`.build/debug/` after `swift build
    /// --build-tests`, `.build/release/` after `swift build -c release --build-tests`), so a test
    /// never runs a binary of another configuration or an older build.
    public static let proofkitBinary: String = {
        if let path = ProcessInfo.processInfo.environment["PROOFKIT_TEST_BINARY"], !path.isEmpty { return path }
        // The test bundle is an executable on Linux (`.build/<triple>/<configuration>/*.xctest`).
        let bundle = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let beside = bundle.deletingLastPathComponent().appendingPathComponent("proofkit").path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        return packageRoot.appendingPathComponent(".build/debug/proofkit").path
    }()

    /// Whether the `proofkit` binary has been built.
    public static var hasProofkitBinary: Bool {
        FileManager.default.isExecutableFile(atPath: proofkitBinary)
    }

    /// Runs the built `proofkit` with `arguments`.
    public static func runProofkit(
        _ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:],
        currentDirectory: String? = nil
    ) throws -> ProcessResult {
        try runProcess(
            proofkitBinary, arguments, stdin: stdin, environment: environment,
            currentDirectory: currentDirectory)
    }

}

/// Ignores SIGPIPE in the test process, once: a write to a child's closed pipe then fails with
/// EPIPE instead of killing every test.
private let ignoreBrokenPipes: Void = { _ = signal(SIGPIPE, SIG_IGN) }()
