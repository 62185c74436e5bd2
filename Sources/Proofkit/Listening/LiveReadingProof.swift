import AudioIO
public import ProofkitCore

/// The reading proof live from a microphone: what `proofkit voice --live` runs. It opens the
/// capture device, the optional recording, the recogniser (built-in, an external command, or
/// transcript lines) and the proof session, then drives the proof from what is heard.
///
/// ```swift
/// let live = try LiveReadingProof(configuration: configuration, options: options, whisper: whisper)
/// let summary = live.run { update in show(update) }   // blocks until listening ends
/// if let failure = live.captureFailure ?? summary.failure { throw failure }
/// for line in try live.finishTranscriber() { show(live.process(transcript: line, at: summary.heardSeconds)) }
/// let result = live.finish()
/// try live.commitRecording()
/// ```
///
/// Threads: ``run(_:)`` consumes the audio on a thread of its own (never Swift's cooperative
/// pool), where the blocking work happens: the recording's libsndfile writes and the Silero runs.
/// The built-in recogniser transcribes on another thread of its own (``WhisperLiveTranscriber``).
/// ``stop()`` may be called from any thread (a signal handler's queue).
///
/// `@unchecked Sendable`: the session and the recording are used only by the consuming task
/// during ``run(_:)``, and by the caller before and after it (``run(_:)`` blocks until the task
/// has finished, which orders these).
public final class LiveReadingProof: @unchecked Sendable {
    /// Where and how to listen.
    public struct Options: Sendable {
        /// The ALSA capture device (default "default").
        public var device = "default"
        /// The devices: the machine's, or those of `PROOFKIT_ALSA_CONFIG` (default the machine's).
        /// Virtual devices are not paced in real time: capture then waits for the proof instead
        /// of dropping audio.
        public var soundDevices = SoundDevices.machine
        /// Stop after this many seconds of audio, in seconds (default 120).
        public var maxSeconds = 120.0
        /// Keep what was heard in this file (16 kHz mono 16-bit WAV, written atomically by
        /// ``commitRecording()``), or `nil` (default).
        public var recordPath: String?
        /// An external recogniser run through `/bin/sh` (audio on its stdin, transcript lines on
        /// its stdout), or `nil` (default).
        public var recognizerCommand: String?
        /// Transcript lines from this file (`"-"`: stdin), or `nil` (default).
        public var transcriptFile: String?
        /// The Silero model file, or `nil` to look for it (see ``ReadingProofSession``).
        public var sileroModelPath: String?
        /// When Silero may be replaced by the energy gate (default: when both were asked for).
        public var fallback = VoiceDetectionFallback.bothOnly
        /// Deliver the captured audio no faster than real time (default `false`): the alarm
        /// service listens by the clock, so a virtual microphone plays as a real one would.
        public var pacedByClock = false
        /// Keep the last ``keptSeconds`` of audio heard in memory (default `false`), so that a
        /// reading the live recogniser rejects can be judged again as a recording
        /// (``conclude(heardSeconds:forcedScore:asRecordingWhenRejected:)``). Never written.
        public var keepsAudio = false
        /// How much audio ``keepsAudio`` keeps, in seconds (default 300: the recording path's
        /// limit on what the recogniser is given).
        public var keptSeconds = 300.0

        public init() {}
    }

    /// One thing that happened while listening, with the proof's events it caused.
    public enum Update: Sendable {
        /// Captured audio up to `endSeconds` was judged (no events when it could not be: the
        /// failure ends listening and is in ``ListeningSummary/failure``).
        case audio(endSeconds: Double, events: [ReadingProofEvent])
        /// A transcript line, heard at `seconds` of audio, and what it changed.
        case transcript(String, seconds: Double, events: [ReadingProofEvent])
        /// The external recogniser was restarted (the count so far).
        case recognizerRestarted(Int)
        /// The external recogniser died too often; listening goes on voice-only.
        case recognizerGaveUp
    }

    /// What ``run(_:)`` saw.
    public struct ListeningSummary: Sendable {
        /// Seconds of audio heard.
        public var heardSeconds: Double = 0
        /// The error that ended listening early (the recording or the Silero model failed).
        public var failure: ProofkitError?
    }

    private let state: LiveState
    private let listening: LiveListening
    private let recognizer: ExternalRecognizer?
    private let live: WhisperLiveTranscriber?
    private let whisper: WhisperRecognizer?
    private let configuration: ReadingProofConfiguration
    private let options: Options

    /// The capture's sample rate, in Hz (16000).
    public let sampleRate: Int

    /// Opens everything that can fail before listening starts, in this order: the proof session
    /// (Silero), the recording, the capture device, the recogniser, the transcript file. Capture
    /// starts here.
    /// - Parameters:
    ///   - configuration: the proof's settings.
    ///   - options: see ``Options``.
    ///   - whisper: the built-in recogniser, or `nil`.
    /// - Throws: `ProofkitError`: `.runtimeUnavailable` (device missing or busy, Silero or the
    ///   external recogniser unavailable: its program not installed is checked first), `.modelInvalid`, `.io` (the recording cannot be
    ///   started), `.notFound` (transcript file).
    public init(
        configuration: ReadingProofConfiguration, options: Options, whisper: WhisperRecognizer?
    ) throws(ProofkitError) {
        // A recogniser command whose program is not installed is refused before anything opens.
        if let command = options.recognizerCommand { try ExternalRecognizer.checkInstalled(command: command) }
        let state = LiveState(
            session: try ReadingProofSession(
                configuration: configuration, sileroModelPath: options.sileroModelPath, fallback: options.fallback),
            keptSamples: options.keepsAudio ? Int(max(0, options.keptSeconds) * 16_000) : 0)
        if let record = options.recordPath {
            state.writer = try AudioFileWriter(path: record, container: .wav, sampleRate: 16_000, channels: 1)
        }
        let alsa = options.soundDevices.configuration
        let capture = try MicrophoneCapture(
            device: options.device, configuration: alsa, overflow: alsa == nil ? .dropOldest : .waitForConsumer,
            pacedByClock: options.pacedByClock)
        sampleRate = capture.sampleRate
        let stream = capture.start()
        let recognizer = options.recognizerCommand.map { ExternalRecognizer(command: $0) }
        let live = whisper.map { WhisperLiveTranscriber(recognizer: $0) }
        let lines =
            try options.transcriptFile.map { (path) throws(ProofkitError) in
                try transcriptLines(from: path)
            } ?? live?.lines
        listening = try LiveListening(
            capture: stream, recognizer: recognizer, transcriptLines: lines, maxSeconds: options.maxSeconds)
        self.state = state
        self.recognizer = recognizer
        self.live = live
        self.whisper = whisper
        self.configuration = configuration
        self.options = options
    }

    /// The proof being driven (its configuration says the voice detection actually in use).
    public var proof: ReadingProof { state.session.proof }

    /// Why Silero was replaced by the energy gate, or `nil`.
    public var fallbackReason: String? { state.session.fallbackReason }

    /// Whether the built-in recogniser listens.
    public var usesWhisper: Bool { live != nil }

    /// Ends listening (as Ctrl-C does): ``run(_:)`` returns shortly after; the verdict can still
    /// be given and the recording kept.
    public func stop() { listening.stop() }

    /// Listens until capture ends (``Options/maxSeconds``, ``stop()``, or a device error, then
    /// in ``captureFailure``), judging the audio and the transcript lines as they
    /// come; `observe` is called with each ``Update``, in order, on the listening thread.
    /// Blocks the calling thread (call it from a thread that may block, not from a task).
    public func run(_ observe: @escaping @Sendable (Update) -> Void) -> ListeningSummary {
        DedicatedThreadExecutor.runBlocking { [self] in await consume(observe) }
    }

    private func consume(_ observe: @Sendable (Update) -> Void) async -> ListeningSummary {
        var summary = ListeningSummary()
        var voiced = false
        for await event in listening.events {
            switch event {
            case .audio(let chunk):
                summary.heardSeconds = chunk.endSeconds
                var proofEvents: [ReadingProofEvent] = []
                do throws(ProofkitError) {
                    try state.record(chunk.samples)
                    let samples = chunk.floatSamples
                    state.keep(samples)
                    proofEvents = try state.session.process(audio: samples)
                    if let live {
                        let before = voiced
                        var lookBack = 0.0
                        for proofEvent in proofEvents {
                            if case .voiceStarted(let start) = proofEvent {
                                voiced = true
                                lookBack = max(0, chunk.startSeconds - start)
                            }
                            if case .voiceStopped = proofEvent { voiced = false }
                        }
                        live.append(samples, voiced: before || voiced, lookBack: lookBack)
                    }
                } catch {
                    if summary.failure == nil { summary.failure = error }
                    listening.stop()
                }
                observe(.audio(endSeconds: chunk.endSeconds, events: proofEvents))
            case .transcript(let line):
                let t = summary.heardSeconds
                observe(.transcript(line, seconds: t, events: state.session.process(transcript: line, at: t)))
            case .recognizerRestarted(let count):
                observe(.recognizerRestarted(count))
            case .recognizerGaveUp:
                observe(.recognizerGaveUp)
            }
        }
        return summary
    }

    /// The device error that ended capture, if one did (after ``run(_:)``).
    public var captureFailure: ProofkitError? { listening.failure }

    /// After ``run(_:)``: the built-in recogniser's last words: the final text of each window
    /// (the voice heard since its last run included); a line sent just before listening ended
    /// may not have been read.
    /// - Parameter transcribingRest: transcribe the voice heard since the last run (default
    ///   `true`); `false` only waits for a run under way (see
    ///   ``WhisperLiveTranscriber/finish(transcribingRest:)``), for a proof that already passed.
    /// - Returns: the lines, to be given to ``process(transcript:at:)``; empty without the
    ///   built-in recogniser.
    /// - Throws: the recogniser's failure.
    public func finishTranscriber(transcribingRest: Bool = true) throws(ProofkitError) -> [String] {
        try live?.finish(transcribingRest: transcribingRest).lines ?? []
    }

    /// After ``finishTranscriber(transcribingRest:)``: the built-in recogniser's span forced score
    /// of `text` over the voiced audio of every window (the same evidence a recording's proof
    /// uses).
    /// - Returns: the pooled score, or `nil` without the built-in recogniser or when nothing was
    ///   transcribed.
    /// - Throws: the recogniser's failure.
    public func spanScore(of text: String) throws(ProofkitError) -> SpanScore? {
        try live?.spanScore(of: text)
    }

    /// Gives the proof a transcript line heard at `seconds` of audio.
    /// - Returns: the proof's events.
    public func process(transcript line: String, at seconds: Double) -> [ReadingProofEvent] {
        state.session.process(transcript: line, at: seconds)
    }

    /// A line the built-in recogniser gave when listening ended, and the proof's events it caused.
    public struct FinalLine: Sendable {
        /// The window's final text.
        public var text: String
        /// What it changed in the proof.
        public var events: [ReadingProofEvent]
    }

    /// How a live reading ended: what `voice --live` prints and the alarm's hands-free listener
    /// decides by.
    public struct Conclusion: Sendable {
        /// The built-in recogniser's last words (empty without it), in order.
        public var finalLines: [FinalLine]
        /// The verdict, with everything the proof measured.
        public var result: ReadingProofResult
        /// What was heard, once: the recogniser's final windows, or the current transcript of a
        /// streaming recogniser's lines.
        public var heardText: String
        /// The built-in recogniser's evidence for the forced score, when its rule was applied.
        public var recognition: RecognizedReading?
        /// Whether the forced score turned a rejection into the acceptance.
        public var acceptedByForcedScore: Bool
        /// Whether the live verdict was a rejection and the recording path, run again on the
        /// audio kept (``Options/keepsAudio``), accepted: ``result``, ``heardText`` and
        /// ``recognition`` are then the recording path's.
        public var acceptedAsRecording = false
    }

    /// After ``run(_:)``: gives the proof the recogniser's last words, then applies the forced
    /// score `rule` (as a recording's proof does: the text's span forced score over the voiced
    /// audio) when the built-in recogniser listened.
    ///
    /// A proof that already passed while listening is concluded at once: the recogniser does not
    /// transcribe the last words again, and the forced score (which can only turn a rejection into
    /// an acceptance) is not computed, so the alarm stops when the key words were heard, not a
    /// recogniser run or two later (3.2 s on a 2-core x86 after a 22.8 s du'a, several times that
    /// on a Pi). ``Conclusion/finalLines`` then holds the windows' last texts already heard, and
    /// ``Conclusion/recognition`` is `nil`.
    ///
    /// The live recogniser cuts its windows as the voice comes, so a long reading can come out
    /// worse than the same audio read from a file (a first window decoded as the basmala alone).
    /// With `asRecordingWhenRejected`, a rejection is judged once more by the recording path
    /// (``ReadingProofRecording/run(samples:configuration:sileroModelPath:fallback:maxRecognizedSeconds:recognize:forcedScoreRule:)``:
    /// its gate, whole-reading windows, forced score and matcher) on the audio kept, and its
    /// acceptance stands.
    /// - Parameters:
    ///   - heardSeconds: the audio heard, in seconds (``ListeningSummary/heardSeconds``).
    ///   - rule: the forced-score rule, or `nil` for the key words alone.
    ///   - asRecordingWhenRejected: judge a rejection again as a recording (default `false`;
    ///     needs ``Options/keepsAudio`` and the built-in recogniser, and is skipped otherwise).
    /// - Returns: the verdict and what decided it.
    /// - Throws: the recogniser's failure.
    public func conclude(
        heardSeconds: Double, forcedScore rule: ForcedScoreRule?, asRecordingWhenRejected: Bool = false
    ) throws(ProofkitError) -> Conclusion {
        let alreadyAccepted = finish().match.verdict.isAccepted
        let lines = try finishTranscriber(transcribingRest: !alreadyAccepted)
        let finalLines = lines.map { FinalLine(text: $0, events: process(transcript: $0, at: heardSeconds)) }
        var result = finish()
        let heardText = (usesWhisper ? lines : ReadingProof.currentTranscript(result.transcript)).joined(separator: " ")
        var recognition: RecognizedReading?
        var byForcedScore = false
        if usesWhisper, let rule, !alreadyAccepted {
            let span = try spanScore(of: proof.configuration.text.text)
            let heard = RecognizedReading(
                transcript: heardText, span: span, seconds: heardSeconds, elapsedSeconds: 0)
            recognition = heard
            let before = result.match.verdict.isAccepted
            result.match = rule.accepting(result.match, recognition: heard)
            byForcedScore = !before && result.match.verdict.isAccepted
        }
        var conclusion = Conclusion(
            finalLines: finalLines, result: result, heardText: heardText, recognition: recognition,
            acceptedByForcedScore: byForcedScore)
        if asRecordingWhenRejected, !result.match.verdict.isAccepted,
            let outcome = try judgeKeptAudio(forcedScore: rule), outcome.result.match.verdict.isAccepted
        {
            conclusion.result = outcome.result
            conclusion.heardText = outcome.recognition?.transcript ?? heardText
            conclusion.recognition = outcome.recognition
            conclusion.acceptedByForcedScore = outcome.result.match.rule == .forcedScore
            conclusion.acceptedAsRecording = true
        }
        return conclusion
    }

    /// Voice heard before the first voiced segment that is kept for the recording path's judgement,
    /// in seconds: 0.2. A reading judged as a recording starts there, as a recording made on purpose
    /// does: a long lead of silence shifts Whisper's 30 s windows, and on 70hm of the du'a
    /// recordings a 0.5-1 s lead made the first window decode only the basmala and skip to the next
    /// (leads of 0 to 0.32 s did not). Chosen after seeing 70hm (half A of the evaluation).
    public static let keptLeadSeconds = 0.2

    /// After ``run(_:)``: the audio kept (``Options/keepsAudio``) judged as a recording, with the
    /// built-in recogniser, from ``keptLeadSeconds`` before the first voice in it to its end.
    /// - Parameter rule: the forced-score rule, or `nil` for the key words alone.
    /// - Returns: the outcome, or `nil` when no audio was kept or the built-in recogniser does
    ///   not listen.
    /// - Throws: the proof session's and the recogniser's failures.
    public func judgeKeptAudio(forcedScore rule: ForcedScoreRule?) throws(ProofkitError)
        -> ReadingProofRecording.Outcome?
    {
        guard let whisper, !state.kept.isEmpty else { return nil }
        let rate = Double(configuration.gate.sampleRate)
        let (audio, first) = state.keptAudio()
        let keptStart = Double(first) / rate
        let onset = finish().gate.segments.first { $0.end > keptStart }.map { max(keptStart, $0.start) } ?? keptStart
        let skip = min(audio.count, max(0, Int(((onset - Self.keptLeadSeconds - keptStart) * rate).rounded())))
        return try ReadingProofRecording.run(
            samples: Array(audio[skip...]), configuration: configuration, sileroModelPath: options.sileroModelPath,
            fallback: options.fallback, maxRecognizedSeconds: options.keptSeconds,
            recognize: ReadingProofRecording.wholeReadingRecognizer { whisper },
            forcedScoreRule: rule)
    }

    /// The verdict, with everything the proof measured.
    public func finish() -> ReadingProofResult {
        state.session.proof.finish()
    }

    /// Writes the recording (``Options/recordPath``) into place, atomically; nothing without one.
    /// - Throws: `.io` when it cannot be written (no file appears).
    public func commitRecording() throws(ProofkitError) {
        try state.commitRecording()
    }

    /// Captured chunks dropped because the proof fell behind.
    public var droppedChunks: Int { listening.statistics.droppedChunks }

    /// Capture overruns the device reported.
    public var overruns: Int { listening.statistics.overruns }

    /// Restarts of the external recogniser (0 without one).
    public var recognizerRestarts: Int { recognizer?.restarts ?? 0 }
}

/// The proof session and the recorder of a live run, shared with the consuming task.
///
/// `@unchecked Sendable`: created before listening, then used only by the one consuming task,
/// then read after it has finished (`runBlocking` orders these).
final class LiveState: @unchecked Sendable {
    var session: ReadingProofSession
    var writer: AudioFileWriter?
    /// The last `keptLimit` samples heard (up to twice that between trims), or nothing.
    private(set) var kept: [Float] = []
    /// Samples heard before `kept[0]`.
    private var dropped = 0
    let keptLimit: Int

    init(session: consuming ReadingProofSession, keptSamples: Int) {
        self.session = session
        keptLimit = keptSamples
    }

    /// Keeps `samples` (the oldest are let go past the limit; trimmed in halves, so the cost per
    /// sample stays constant).
    func keep(_ samples: [Float]) {
        guard keptLimit > 0 else { return }
        kept += samples
        if kept.count > 2 * keptLimit {
            dropped += kept.count - keptLimit
            kept.removeFirst(kept.count - keptLimit)
        }
    }

    /// The audio kept (at most the limit, the newest), and the index in the audio heard of its
    /// first sample.
    func keptAudio() -> (samples: [Float], first: Int) {
        let excess = max(0, kept.count - keptLimit)
        return (Array(kept[excess...]), dropped + excess)
    }

    func record(_ samples: [Int16]) throws(ProofkitError) {
        guard var file = writer.take() else { return }
        var failure: ProofkitError?
        do throws(ProofkitError) { try file.write(samples) } catch { failure = error }
        writer = consume file
        if let failure { throw failure }
    }

    func commitRecording() throws(ProofkitError) {
        guard let file = writer.take() else { return }
        try file.commit()
    }
}
