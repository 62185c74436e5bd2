public import AudioIO
public import ProofkitCore
internal import ProofkitSystem
import Synchronization

/// One thing that happened while listening, in the order it happened.
public enum ListeningEvent: Sendable {
    /// A block of captured audio (mono S16 at the capture rate).
    case audio(AudioChunk)
    /// A transcript line from the recogniser, a transcript file or stdin.
    case transcript(String)
    /// The recogniser died or disconnected and was restarted quietly (the count so far).
    case recognizerRestarted(Int)
    /// The recogniser died too often and was given up; listening goes on voice-only.
    case recognizerGaveUp
}

/// Merges a running capture with a transcript source into one ordered stream of events, and feeds
/// the captured audio to an external recogniser when there is one.
///
/// The consumer decides when to stop (``stop()``); capture also stops after `maxSeconds` of audio
/// (counted in captured frames, so an unpaced virtual microphone stops at the same point in its
/// audio as a real one would).
public final class LiveListening: Sendable {
    /// Events in order; ends when capture ends (``stop()``, `maxSeconds`, or a device error,
    /// which is then in ``failure``).
    public let events: AsyncStream<ListeningEvent>
    private let capture: CaptureStream
    private let recognizer: ExternalRecognizer?
    private let failureBox = ErrorSlot()

    /// Starts listening.
    /// - Parameters:
    ///   - capture: a started capture (see `MicrophoneCapture.start()`).
    ///   - recognizer: an external recogniser to feed and read, or `nil`.
    ///   - transcriptLines: other transcript lines (a file or stdin), or `nil`.
    ///   - maxSeconds: audio seconds after which capture stops, default 300.
    /// - Throws: `.runtimeUnavailable` when the recogniser cannot be started.
    public init(
        capture: CaptureStream, recognizer: ExternalRecognizer? = nil,
        transcriptLines: AsyncStream<String>? = nil, maxSeconds: Double = 300
    ) throws(ProofkitError) {
        self.capture = capture
        self.recognizer = recognizer
        // Bounded: a device not paced in real time (PROOFKIT_ALSA_CONFIG) can deliver audio faster
        // than the proof consumes it (Silero in a debug build); the relay then waits for the
        // consumer (see `deliver`) instead of filling memory, and a stop ends within the buffer.
        let (events, continuation) = AsyncStream<ListeningEvent>.makeStream(
            bufferingPolicy: .bufferingOldest(Self.bufferedEvents))
        self.events = events
        try recognizer?.start()
        let failureBox = self.failureBox
        // Transcript sources still running; when capture ends they get a moment to finish, so
        // that the last words of a recogniser or a transcript file are not lost.
        let openSources = TaskCounter()
        if let recognizer {
            openSources.add()
            Task.detached {
                defer { openSources.remove() }
                var restarts = 0
                for await line in recognizer.lines {
                    let now = recognizer.restarts
                    if now > restarts {
                        restarts = now
                        await Self.deliver(.recognizerRestarted(now), to: continuation)
                    }
                    await Self.deliver(.transcript(line), to: continuation)
                }
                if recognizer.hasGivenUp { await Self.deliver(.recognizerGaveUp, to: continuation) }
            }
        }
        if let transcriptLines {
            openSources.add()
            Task.detached {
                defer { openSources.remove() }
                for await line in transcriptLines { await Self.deliver(.transcript(line), to: continuation) }
            }
        }
        Task.detached {
            do throws(ProofkitError) {
                for try await chunk in capture {
                    recognizer?.send(chunk.littleEndianBytes)
                    await Self.deliver(.audio(chunk), to: continuation)
                    if chunk.endSeconds >= maxSeconds { break }
                }
            } catch {
                failureBox.set(error)
            }
            capture.stop()
            if let recognizer { await recognizer.finish(timeout: .seconds(2)) }
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: .seconds(2))
            while openSources.count > 0 && clock.now < deadline {
                try? await Task.sleep(for: .milliseconds(5))
            }
            continuation.finish()
        }
    }

    /// Events the consumer may fall behind by before the relays wait for it: 256 (25 s of audio in
    /// 100 ms chunks; a live consumer keeps up with a real microphone by far).
    static let bufferedEvents = 256

    /// Yields `event`, waiting while the buffer is full (the consumer is ``bufferedEvents``
    /// behind); returns at once when the consumer has gone.
    static func deliver(_ event: ListeningEvent, to continuation: AsyncStream<ListeningEvent>.Continuation) async {
        while true {
            switch continuation.yield(event) {
            case .dropped: try? await Task.sleep(for: .milliseconds(2))
            default: return
            }
        }
    }

    /// Stops capture; ``events`` ends shortly after (the recogniser gets up to 2 s for its last lines).
    public func stop() { capture.stop() }

    /// The device error that ended capture, if one did.
    public var failure: ProofkitError? { failureBox.get() }

    /// Capture counters (frames, dropped chunks, overruns).
    public var statistics: CaptureStatistics { capture.statistics }
}

/// A count of running tasks.
final class TaskCounter: Sendable {
    private let value = Atomic<Int>(0)
    func add() { value.add(1, ordering: .relaxed) }
    func remove() { value.subtract(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}

/// A write-once error slot shared between the capture task and the consumer.
final class ErrorSlot: Sendable {
    private let value = Mutex<ProofkitError?>(nil)
    func set(_ error: ProofkitError) { value.withLock { $0 = error } }
    func get() -> ProofkitError? { value.withLock { $0 } }
}

/// Reads lines from a file descriptor (a transcript file, or stdin for `-`) on a dedicated
/// thread, as an `AsyncStream`. The stream ends at end of file.
/// - Parameter path: a file path, or `"-"` for stdin.
/// - Throws: `.notFound` / `.io` when the file cannot be opened.
public func transcriptLines(from path: String) throws(ProofkitError) -> AsyncStream<String> {
    let fd: Int32
    switch path == "-" ? .success(0) : POSIX.open(path, .readOnly) {
    case .success(let value): fd = value
    case .failure(let errno):
        throw ProofkitError(
            errno.isNotFound ? .notFound : .io, "cannot read the transcript: \(errno)",
            operation: "open", underlying: errno.code, path: path)
    }
    let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .unbounded)
    runOnDedicatedThread {
        forEachLine(of: fd) { continuation.yield($0) }
        if fd != 0 { POSIX.closeDescriptor(fd) }
        continuation.finish()
    }
    return stream
}
