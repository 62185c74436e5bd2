import AudioIO
import Dispatch
public import ProofkitCore
internal import ProofkitSystem
public import SpeechRecognition
import Synchronization

/// The built-in recogniser, live: the voiced audio is collected as the person reads, and the
/// current 30 s window is transcribed again every ``interval`` seconds of new voiced audio (and
/// when voice stops), on a dedicated thread (never Swift's cooperative pool), so that words show
/// within about two seconds of being said. Each new transcript of the window is one line of
/// ``lines``; a window that is full (30 s of voice) is transcribed a last time and a new one
/// starts.
///
/// Voiced audio: the caller says, chunk by chunk, whether the voice gate hears voice, and how far
/// back a run that just started began (the gate decides after the onset); the audio from 0.3 s
/// before that (at least 0.5 s, at most 4 s; before the first run, all of the last 4 s, as the
/// gate is still learning the room) and 0.5 s after voice stops are kept too.
/// Work is bounded: one window at a time, at most one run per ``interval`` of new voice, and
/// runs that fall behind are merged (only the latest audio is transcribed).
///
/// Thread contract: ``append(_:voiced:lookBack:)`` and ``finish(transcribingRest:)`` from one
/// thread (the consumer).
public final class WhisperLiveTranscriber: Sendable {
    /// Transcript lines, in order (each is the current window's whole text). Ends after
    /// ``finish(transcribingRest:)``.
    public let lines: AsyncStream<String>
    /// Seconds of new voiced audio between runs. Default 1.2.
    public let interval: Double

    private let continuation: AsyncStream<String>.Continuation
    private let recognizer: WhisperRecognizer
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    private struct State {
        var window: [Float] = []
        var preroll: [Float] = []
        var full: [[Float]] = []
        var newSamples = 0
        var hangover = 0
        var wasVoiced = false
        var everVoiced = false
        var voiceStopped = false
        var finishing = false
        /// Set by ``finish(transcribingRest:)`` with `false`: no run after the one under way.
        var skipsRest = false
        var lastLine = ""
        /// The last text of each full window, and of the current one.
        var windowTexts: [String] = []
        var currentText = ""
        /// The audio and last transcription of each full window, and of the current one (for the
        /// forced score at the end).
        var windowRuns: [(audio: [Float], transcription: Transcription)] = []
        var currentRun: (audio: [Float], transcription: Transcription)?
        var runs = 0
        var failure: ProofkitError?
    }

    static let rate = WhisperFeatures.sampleRate
    static let prerollSamples = rate * 4
    static let minimumPreroll = rate / 2
    static let hangoverSamples = rate / 2

    /// Starts the transcriber's thread.
    /// - Parameters:
    ///   - recognizer: the loaded recogniser (used only by this transcriber's thread from now on).
    ///   - interval: seconds of new voiced audio between runs, default 1.2.
    public init(recognizer: WhisperRecognizer, interval: Double = 1.2) {
        self.recognizer = recognizer
        self.interval = interval
        (lines, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .unbounded)
        runOnDedicatedThread { [self] in self.loop() }
    }

    /// Adds captured audio.
    /// - Parameters:
    ///   - samples: mono samples in -1...1 at 16 kHz.
    ///   - voiced: whether the voice gate hears voice in this chunk.
    ///   - lookBack: when voice has just started, how many seconds before this chunk it really
    ///     began (the gate reports a run's true start after it decides); that much of the audio
    ///     before the chunk (at most 4 s) is kept too, plus 0.3 s.
    public func append(_ samples: [Float], voiced: Bool, lookBack: Double = 0) {
        let shouldWake: Bool = state.withLock { state in
            var keep: [Float] = []
            if voiced {
                if !state.wasVoiced {
                    // The first run takes everything before it (up to 4 s): while the gate learns
                    // the room, speech from the first moment is not yet called voice.
                    let wanted =
                        state.everVoiced
                        ? max(Self.minimumPreroll, Int((lookBack + 0.3) * Double(Self.rate))) : Self.prerollSamples
                    keep = Array(state.preroll.suffix(wanted))
                    state.everVoiced = true
                }
                keep += samples
                state.hangover = Self.hangoverSamples
                state.preroll = []
            } else if state.hangover > 0 {
                let take = min(state.hangover, samples.count)
                keep = Array(samples.prefix(take))
                state.hangover -= take
                if state.hangover == 0 { state.voiceStopped = true }
            } else {
                state.preroll = Array((state.preroll + samples).suffix(Self.prerollSamples))
            }
            state.wasVoiced = voiced
            guard !keep.isEmpty else { return state.voiceStopped }
            let room = WhisperFeatures.windowSamples - state.window.count
            state.window += keep.prefix(room)
            state.newSamples += min(room, keep.count)
            if keep.count >= room {
                state.full.append(state.window)
                state.window = Array(keep.dropFirst(room))
                state.newSamples = state.window.count
            }
            return !state.full.isEmpty || Double(state.newSamples) >= interval * Double(Self.rate) || state.voiceStopped
        }
        if shouldWake { wake.signal() }
    }

    /// Transcribes what is left (unless told not to), waits for it, and ends ``lines``.
    /// - Parameter transcribingRest: run the recogniser once more on the voice heard since its
    ///   last run, and on a full window not yet transcribed (default `true`). With `false`, only a
    ///   run already under way is waited for: for a reading that has already passed, where the
    ///   last words cannot change the verdict and a final run (seconds on a Pi) would only keep
    ///   the alarm ringing.
    /// - Returns: the final text of every window transcribed (a line sent on ``lines`` near the
    ///   end may not have been read before the caller stopped reading: feed these again; key
    ///   words count once), and how many runs were made.
    /// - Throws: the first recogniser failure, if any.
    public func finish(transcribingRest: Bool = true) throws(ProofkitError) -> (lines: [String], runs: Int) {
        state.withLock {
            $0.finishing = true
            $0.skipsRest = !transcribingRest
        }
        wake.signal()
        done.wait()
        let (texts, runs, failure) = state.withLock { ($0.windowTexts + [$0.currentText], $0.runs, $0.failure) }
        if let failure { throw failure }
        return (texts.filter { !$0.isEmpty }, runs)
    }

    /// The span forced score of `text` over the voiced audio heard, after
    /// ``finish(transcribingRest:)``: each 30 s window of voice is scored against its last
    /// transcription (see ``WhisperRecognizer/spanScores(texts:features:transcription:)``), and
    /// the windows joined; the same rule as a recording's then judges it. Runs on the caller's
    /// thread (the transcriber's own thread has ended); `nil` before
    /// ``finish(transcribingRest:)`` or when nothing was heard.
    /// - Parameter text: the text as written.
    /// - Throws: the recogniser's errors.
    public func spanScore(of text: String) throws(ProofkitError) -> SpanScore? {
        let runs: [(audio: [Float], transcription: Transcription)]? = state.withLock { state in
            guard state.finishing else { return nil }
            return state.windowRuns + (state.currentRun.map { [$0] } ?? [])
        }
        guard let runs, !runs.isEmpty else { return nil }
        var total: SpanScore?
        for run in runs where !run.transcription.text.isEmpty {
            let features = WhisperFeatures.logMel(of: run.audio)
            let score = try recognizer.spanScores(texts: [text], features: features, transcription: run.transcription)[
                0]
            total = total.map { $0.appending(score) } ?? score
        }
        return total
    }

    private func loop() {
        while true {
            _ = wake.wait(timeout: .now() + .milliseconds(250))
            let job: (audio: [Float], isLast: Bool, isFull: Bool)? = state.withLock { state in
                if state.skipsRest { return ([], true, false) }  // set only with `finishing`
                if let first = state.full.first {
                    state.full.removeFirst()
                    return (first, false, true)
                }
                let due =
                    state.newSamples > 0
                    && (state.finishing || state.voiceStopped
                        || Double(state.newSamples) >= interval * Double(Self.rate))
                if due {
                    state.newSamples = 0
                    state.voiceStopped = false
                    return (state.window, state.finishing, false)
                }
                return state.finishing ? ([], true, false) : nil
            }
            guard let job else { continue }
            if !job.audio.isEmpty && job.audio.count >= Self.rate / 4 {
                do throws(ProofkitError) {
                    let transcription = try recognizer.transcribe(samples: job.audio)
                    let text = transcription.text
                    let isNew: Bool = state.withLock { state in
                        state.runs += 1
                        if job.isFull {
                            state.windowTexts.append(text)
                            state.windowRuns.append((job.audio, transcription))
                            state.currentText = ""
                            state.currentRun = nil
                        } else {
                            state.currentText = text
                            state.currentRun = (job.audio, transcription)
                        }
                        guard !text.isEmpty, text != state.lastLine else { return false }
                        state.lastLine = text
                        return true
                    }
                    if isNew && !job.isLast { continuation.yield(text) }
                } catch {
                    state.withLock { if $0.failure == nil { $0.failure = error } }
                }
            }
            if job.isLast && state.withLock({ $0.skipsRest || ($0.full.isEmpty && $0.newSamples == 0) }) { break }
        }
        continuation.finish()
        done.signal()
    }
}
