public import ProofkitCore
internal import ProofkitSystem
public import SquatCounting

// Reading the lines of `proofkit squat`'s pose JSON Lines input (and `alarm prove --squat`'s): one fixed buffer, a file read
// exactly as stdin, lines capped at ``PoseLineReader/maximumLineLength`` (so `squat - < /dev/zero`
// ends at once with an error and memory stays bounded whatever the input's length or what
// `st_size` says). Each line is decoded by SquatCounting's `PoseLineDecoder`.

/// Reads lines from a file descriptor through one fixed buffer: a file exactly as stdin, each
/// line handed over as soon as it is complete (a live stream), the last line without a newline
/// too. Memory is the buffer, whatever the input's length.
public enum PoseLineReader {
    /// The longest line accepted, in bytes (a pose line is a few hundred; 33 named MediaPipe
    /// landmarks with long numbers stay under 4 KiB). 1 MiB.
    public static let maximumLineLength = 1 << 20
    /// Bytes read at once.
    public static let chunk = 1 << 16

    /// Calls `body` with each line (without its newline).
    /// - Throws: `ProofkitError` `.decodeFailed` for a line longer than the maximum (naming
    ///   its number), `.io` for a read error; or what `body` throws.
    public static func forEachLine(
        fd: Int32, name: String, deadline: Double? = nil, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void
    ) throws {
        do {
            try POSIX.forEachLine(fd, maximumLineLength: maximumLineLength, chunk: chunk, deadline: deadline, body)
        } catch LineReadFailure.read(let errno) {
            throw ProofkitError(.io, "cannot read: \(errno)", operation: "read", underlying: errno.code, path: name)
        } catch LineReadFailure.lineTooLong(let lineNumber) {
            throw ProofkitError(
                .decodeFailed,
                "line \(lineNumber) is longer than \(maximumLineLength / 1024 / 1024) MiB (a pose line is a few hundred bytes)",
                path: name)
        }
    }

    /// Opens `path` for reading (a regular file, a FIFO, `/dev/stdin`, ...), once, as `check` and
    /// `trim` do (`POSIX.openInput(_:what:)`): a FIFO whose writer sends nothing is given up after
    /// 10 s instead of waiting forever.
    /// - Throws: `ProofkitError` `.notFound` (missing, or a folder) or `.io` (cannot open; no writer).
    public static func openInput(_ path: String) throws(ProofkitError) -> Int32 {
        try POSIX.openInput(path, what: "pose file").fd
    }
}

/// Squats counted from pose JSON Lines (`proofkit pose --json`'s format, read by SquatCounting's
/// `PoseLineDecoder`), as `proofkit squat POSES` and `alarm prove --squat POSES` count them.
///
/// A live stream (stdin) hands each event over as it happens and ends when the workout is done;
/// a file's events are handed over only once every line was read and decoded, so that bad input
/// gives no partial output.
public struct PoseLineCounting: Sendable {
    /// The counter (its configuration, and the result so far).
    public private(set) var counter: SquatRepCounter
    /// Frames decoded so far.
    public private(set) var frames = 0
    /// Whether events are handed over as they happen.
    public let live: Bool
    /// The input's name in messages (`stdin`, a file's display name).
    public let name: String
    private var decoder = PoseLineDecoder()
    private var waiting: [SquatEvent] = []
    /// Events handed over so far that were reps.
    public private(set) var repsReported = 0

    /// - Parameters:
    ///   - counter: a fresh counter with the settings to count by.
    ///   - name: the input's name in messages.
    ///   - live: hand events over as they happen (a stream), or after the last line (a file).
    public init(counter: SquatRepCounter, name: String, live: Bool) {
        self.counter = counter
        self.name = name
        self.live = live
    }

    /// Takes one line (without its newline; blank lines are skipped).
    /// - Parameters:
    ///   - line: the line's bytes.
    ///   - onEvent: each event handed over now (live: the frame's; a file: none until ``finish(path:whenEmpty:onEvent:)``).
    /// - Returns: whether the workout is done (live only: the stream may end there).
    /// - Throws: ``ProofkitError`` `.decodeFailed` naming the input and the line.
    public mutating func take(_ line: UnsafeBufferPointer<UInt8>, onEvent: (SquatEvent) -> Void)
        throws(ProofkitError) -> Bool
    {
        let frame: PoseFrame?
        do throws(ProofkitError) {
            frame = try decoder.decode(line.span)
        } catch {
            throw error.at(path: name)
        }
        guard let frame else { return false }
        frames += 1
        let events = counter.process(frame)
        guard live else {
            waiting += events
            return false
        }
        for event in events { hand(event, onEvent) }
        return events.contains { if case .workoutCompleted = $0 { true } else { false } }
    }

    /// Reads every line of `fd` (a file) or, live, until the workout is done, the input ends or
    /// `deadline` passes.
    /// - Parameters:
    ///   - fd: the input, open for reading (not closed here).
    ///   - deadline: for a live stream, when to stop waiting (monotonic seconds, `POSIX.monotonicSeconds()`), or `nil`.
    ///   - onEvent: each event, as ``take(_:onEvent:)`` hands it over.
    /// - Returns: whether the deadline ended the stream.
    /// - Throws: ``ProofkitError``: `.decodeFailed` (a bad or too long line), `.io` (a read error).
    public mutating func read(fd: Int32, deadline: Double?, onEvent: (SquatEvent) -> Void) throws(ProofkitError)
        -> Bool
    {
        struct WorkoutDone: Error {}
        do {
            try PoseLineReader.forEachLine(fd: fd, name: name, deadline: deadline) { line in
                if try take(line, onEvent: onEvent) { throw WorkoutDone() }
            }
        } catch is WorkoutDone {
        } catch LineReadFailure.timedOut {
            return true
        } catch let error as ProofkitError {
            throw error
        } catch {
            throw ProofkitError(.io, "cannot read: \(error)", path: name)
        }
        return false
    }

    /// Counts every frame of a video, through the very lines `proofkit pose VIDEO --json` prints
    /// (``PoseVideoLines``), so that counting from a video equals counting from its pose lines.
    /// - Parameters:
    ///   - path: the video.
    ///   - estimator: the pose models.
    ///   - progress: ``PoseVideoLines/run(path:estimator:joints:offset:progress:each:)``'s.
    ///   - onEvent: as ``take(_:onEvent:)`` hands events over.
    /// - Returns: where the frames ended early, or `nil`.
    /// - Throws: ``ProofkitError``: the video's (65, 66, 69, 74), the models', a line's.
    public mutating func read(
        videoAt path: String, estimator: PoseEstimator, progress: (Int) -> Void = { _ in },
        onEvent: (SquatEvent) -> Void
    ) throws(ProofkitError) -> String? {
        do {
            return try PoseVideoLines.run(
                path: path, estimator: estimator, joints: PoseVideoLines.reported(all: false), progress: progress
            ) { _, line in
                let bytes = Array(line.serialized.utf8)
                _ = try bytes.withUnsafeBufferPointer { try take($0, onEvent: onEvent) }
            }
        } catch let error as ProofkitError {
            throw error
        } catch {
            throw ProofkitError(.io, "\(error)", path: path)
        }
    }

    /// After the last line: a file's events are handed over (a live stream's were already), and
    /// the result, with the reps `finish` decided at the end of the input handed over too.
    /// - Parameters:
    ///   - path: the input's path, named in the error.
    ///   - whenEmpty: the error's message when a file had no pose frame.
    ///   - onEvent: each event handed over now.
    /// - Returns: the result.
    /// - Throws: ``ProofkitError`` `.decodeFailed` when a file had no pose frame.
    public mutating func finish(
        path: String, whenEmpty: String = "no pose frames in the file", onEvent: (SquatEvent) -> Void
    ) throws(ProofkitError) -> SquatResult {
        if !live {
            guard frames > 0 else { throw ProofkitError(.decodeFailed, whenEmpty, path: path) }
            for event in waiting { hand(event, onEvent) }
            waiting = []
        }
        let result = counter.finish()
        for rep in result.reps.dropFirst(repsReported) { hand(.rep(rep), onEvent) }
        return result
    }

    private mutating func hand(_ event: SquatEvent, _ onEvent: (SquatEvent) -> Void) {
        if case .rep = event { repsReported += 1 }
        onEvent(event)
    }
}
