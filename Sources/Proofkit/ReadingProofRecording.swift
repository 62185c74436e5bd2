import AudioDSP
import AudioIO
public import DuaMatching
public import ProofkitCore
public import SpeechRecognition
import VoiceGate

/// The reading proof over a recording: decode any format `AudioFileReader` reads, mix
/// to mono, resample to the gate's rate with ``SincResampler``, and run a ``ReadingProofSession``.
public enum ReadingProofRecording {
    /// What a run over a recording found.
    public struct Outcome: Sendable {
        /// The proof's result (verdict, voiced seconds and segments, floor, track).
        public var result: ReadingProofResult
        /// The recording's format, from its header.
        public var format: AudioFileFormat
        /// Decoded audio, in seconds.
        public var decodedSeconds: Double
        /// Why Silero was not used (wanted but not installed), or `nil`.
        public var fallbackReason: String?
        /// The detection mode actually used.
        public var voiceDetection: VoiceDetectionMode
        /// What the reading needed, in voiced seconds (reading time, or twice it with a recogniser).
        public var neededSeconds: Double
        /// What the built-in recogniser heard, when one ran (see `recognize` in ``run(path:configuration:sileroModelPath:transcript:fallback:maxRecognizedSeconds:recognize:forcedScoreRule:)``).
        public var recognition: RecognizedReading?
    }

    /// A recording opened and checked before anything else is loaded: the file exists, is read
    /// once (a FIFO or stdin is copied aside, bounded), its header decodes and declares a
    /// playable rate and channel count. Open it before loading models, so that a bad input is
    /// refused at once; it is read once, by ``run(recording:configuration:sileroModelPath:transcript:fallback:maxRecognizedSeconds:recognize:forcedScoreRule:)``
    /// or ``forEachMonoChunk(recording:sampleRate:chunkFrames:_:)``.
    ///
    /// `@unchecked Sendable`: its reader is taken out once, by the one caller that reads it.
    public final class Recording: @unchecked Sendable {
        /// The path as given (for messages).
        public let path: String
        /// The format its header declares.
        public let format: AudioFileFormat
        fileprivate var reader: AudioFileReader?

        /// Opens and checks `path`.
        /// - Throws: the reader's errors naming `path` (`.notFound` 66, `.io` 74, `.decodeFailed`
        ///   65 for no audio or a rate outside 8-384 kHz, `.unsupportedFormat` 65,
        ///   `.runtimeUnavailable` 69 when libsndfile is missing).
        public init(path: String) throws(ProofkitError) {
            let reader = try AudioFileReader(path: path)
            try reader.format.requirePlayable(path: path)
            self.path = path
            self.format = reader.format
            self.reader = consume reader
        }
    }

    /// Decodes `path` to mono at `sampleRate`, in chunks, in bounded memory.
    /// - Parameters:
    ///   - path: any file `AudioFileReader` reads (WAV, FLAC, MP3, OGG, CAF, AIFF...).
    ///   - sampleRate: the output rate in Hz, default 16 000.
    ///   - chunkFrames: input frames decoded per step, default 8192.
    ///   - body: called with each chunk of mono samples in -1...1 at `sampleRate`.
    /// - Returns: the file's format.
    /// - Throws: the reader's errors (`.notFound`, `.decodeFailed`, `.unsupportedFormat`, `.io`),
    ///   and whatever `body` throws.
    @discardableResult
    public static func forEachMonoChunk(
        path: String, sampleRate: Int = 16_000, chunkFrames: Int = 8192,
        _ body: (_ samples: [Float]) throws(ProofkitError) -> Void
    ) throws(ProofkitError) -> AudioFileFormat {
        try forEachMonoChunk(recording: Recording(path: path), sampleRate: sampleRate, chunkFrames: chunkFrames, body)
    }

    /// Decodes an opened ``Recording`` to mono at `sampleRate`, in chunks, in bounded memory, as
    /// ``forEachMonoChunk(path:sampleRate:chunkFrames:_:)`` does a path.
    /// - Throws: `.invalidArgument` when the recording was already read; the reader's errors and
    ///   whatever `body` throws.
    @discardableResult
    public static func forEachMonoChunk(
        recording: Recording, sampleRate: Int = 16_000, chunkFrames: Int = 8192,
        _ body: (_ samples: [Float]) throws(ProofkitError) -> Void
    ) throws(ProofkitError) -> AudioFileFormat {
        guard var reader = recording.reader.take() else {
            throw ProofkitError(.invalidArgument, "the recording was already read", path: recording.path)
        }
        let format = reader.format
        let channels = format.channels
        var resampler: SincResampler? =
            format.sampleRate == sampleRate
            ? nil : SincResampler(inputRate: format.sampleRate, outputRate: sampleRate, channels: 1)
        var buffer = [Float](repeating: 0, count: chunkFrames * channels)
        while true {
            let frames = try reader.read(into: &buffer, maxFrames: chunkFrames)
            if frames == 0 { break }
            var mono =
                channels == 1
                ? Array(buffer[..<frames])
                : SignalMath.mixToMono(Array(buffer[..<(frames * channels)]), channels: channels)
            if resampler != nil { mono = resampler!.process(mono) }
            if !mono.isEmpty { try body(mono) }
        }
        if resampler != nil {
            let tail = resampler!.finish()
            if !tail.isEmpty { try body(tail) }
        }
        reader.close()
        return format
    }

    /// Runs the reading proof over a recording.
    /// - Parameters:
    ///   - path: the recording (any format the reader reads; any rate and channel count).
    ///   - configuration: text, gate, recogniser use and detection mode (its gate rate is the
    ///     rate the audio is resampled to).
    ///   - sileroModelPath: the Silero model for the Silero modes (see
    ///     ``ReadingProofSession/sileroModelPath(environment:)``).
    ///   - transcript: transcript lines (e.g. a recogniser's output for this recording), applied
    ///     after the audio, at its end time.
    ///   - fallback: when a missing Silero falls back to the energy gate (see
    ///     ``VoiceDetectionFallback``); default ``VoiceDetectionFallback/bothOnly``.
    ///   - maxRecognizedSeconds: the most audio handed to `recognize` (its start), default 300 s:
    ///     the recogniser's work stays bounded whatever the recording's length.
    ///   - recognize: a recogniser for the whole recording (mono samples at the gate's rate, the
    ///     text), e.g. the built-in Whisper; it runs after the audio, only when the gate heard
    ///     voice (silence is rejected without it), and its transcript is fed to the proof.
    ///   - forcedScoreRule: when the key words do not accept, the recogniser's forced scores may
    ///     (see `ForcedScoreRule.accepting(_:recognition:)`); `nil` turns this off. Default
    ///     `ForcedScoreRule.recordingDefault`.
    /// - Returns: the outcome.
    /// - Throws: the reader's errors, and ``ReadingProofSession``'s.
    public static func run(
        path: String, configuration: ReadingProofConfiguration, sileroModelPath: String?, transcript: [String] = [],
        fallback: VoiceDetectionFallback = .bothOnly, maxRecognizedSeconds: Double = 300,
        recognize: ((_ samples: [Float], _ text: DuaText) throws(ProofkitError) -> RecognizedReading)? = nil,
        forcedScoreRule: ForcedScoreRule? = ForcedScoreRule.recordingDefault
    ) throws(ProofkitError) -> Outcome {
        try run(
            recording: Recording(path: path), configuration: configuration, sileroModelPath: sileroModelPath,
            transcript: transcript, fallback: fallback, maxRecognizedSeconds: maxRecognizedSeconds,
            recognize: recognize,
            forcedScoreRule: forcedScoreRule)
    }

    /// Runs the reading proof over a recording opened (and checked) beforehand, as
    /// ``run(path:configuration:sileroModelPath:transcript:fallback:maxRecognizedSeconds:recognize:forcedScoreRule:)``
    /// does a path. Open the ``Recording`` before loading a recogniser, so a bad input costs nothing.
    public static func run(
        recording: Recording, configuration: ReadingProofConfiguration, sileroModelPath: String?,
        transcript: [String] = [], fallback: VoiceDetectionFallback = .bothOnly, maxRecognizedSeconds: Double = 300,
        recognize: ((_ samples: [Float], _ text: DuaText) throws(ProofkitError) -> RecognizedReading)? = nil,
        forcedScoreRule: ForcedScoreRule? = ForcedScoreRule.recordingDefault
    ) throws(ProofkitError) -> Outcome {
        var format: AudioFileFormat?
        var outcome = try judge(
            configuration: configuration, sileroModelPath: sileroModelPath, transcript: transcript, fallback: fallback,
            maxRecognizedSeconds: maxRecognizedSeconds, recognize: recognize, forcedScoreRule: forcedScoreRule
        ) { (body: ([Float]) throws(ProofkitError) -> Void) throws(ProofkitError) in
            format = try forEachMonoChunk(recording: recording, sampleRate: configuration.gate.sampleRate, body)
        }
        outcome.format = format ?? recording.format
        return outcome
    }

    /// Runs the reading proof over mono audio already at the gate's rate and held in memory (a
    /// live reading kept for a second judgement): the same gate, recogniser, forced score and
    /// matcher as a recording, fed in chunks of 8192 samples as a decoded file is.
    /// - Parameters:
    ///   - samples: mono samples in -1...1 at `configuration.gate.sampleRate` (16 000 Hz).
    ///   - configuration: text, gate, recogniser use and detection mode.
    ///   - sileroModelPath: the Silero model for the Silero modes, or `nil`.
    ///   - fallback: when a missing Silero falls back to the energy gate; default
    ///     ``VoiceDetectionFallback/bothOnly``.
    ///   - maxRecognizedSeconds: the most audio handed to `recognize` (its start), default 300 s.
    ///   - recognize: a recogniser for the whole reading (see ``wholeReadingRecognizer(_:)``); it
    ///     runs only when the gate heard voice.
    ///   - forcedScoreRule: the forced-score rule beside the key words, or `nil`; default
    ///     `ForcedScoreRule.recordingDefault`.
    /// - Returns: the outcome; its ``Outcome/format`` describes the samples (container
    ///   `"memory"`, one channel, 32-bit float).
    /// - Throws: ``ReadingProofSession``'s errors and whatever `recognize` throws.
    public static func run(
        samples: [Float], configuration: ReadingProofConfiguration, sileroModelPath: String?,
        fallback: VoiceDetectionFallback = .bothOnly, maxRecognizedSeconds: Double = 300,
        recognize: ((_ samples: [Float], _ text: DuaText) throws(ProofkitError) -> RecognizedReading)? = nil,
        forcedScoreRule: ForcedScoreRule? = ForcedScoreRule.recordingDefault
    ) throws(ProofkitError) -> Outcome {
        var outcome = try judge(
            configuration: configuration, sileroModelPath: sileroModelPath, transcript: [], fallback: fallback,
            maxRecognizedSeconds: maxRecognizedSeconds, recognize: recognize, forcedScoreRule: forcedScoreRule
        ) { (body: ([Float]) throws(ProofkitError) -> Void) throws(ProofkitError) in
            var start = 0
            while start < samples.count {
                let end = min(samples.count, start + 8192)
                try body(Array(samples[start..<end]))
                start = end
            }
        }
        outcome.format = AudioFileFormat(
            sampleRate: configuration.gate.sampleRate, channels: 1, headerFrameCount: samples.count,
            container: .other("memory"), majorFormatName: "RAW", subtypeName: "FLOAT", isSeekable: true)
        return outcome
    }

    /// The whole-recording recogniser of the built-in Whisper: transcribes the samples and scores
    /// the text by spans over the same encoder passes (what `proofkit voice REC` runs).
    /// - Parameter whisper: the loaded recogniser, or a ``WhisperRecognizer/Loading`` to wait for
    ///   (its wait counts in `RecognizedReading.elapsedSeconds`).
    /// - Returns: a `recognize` closure for ``run(samples:configuration:sileroModelPath:fallback:maxRecognizedSeconds:recognize:forcedScoreRule:)``
    ///   and the recording runs; it throws the recogniser's errors.
    public static func wholeReadingRecognizer(
        _ whisper: @escaping @Sendable () throws(ProofkitError) -> WhisperRecognizer
    ) -> (_ samples: [Float], _ text: DuaText) throws(ProofkitError) -> RecognizedReading {
        { (samples: [Float], text: DuaText) throws(ProofkitError) in
            let clock = ContinuousClock()
            let start = clock.now
            let recognizer = try whisper()
            let features = WhisperFeatures.logMel(of: samples)
            let (transcription, spans) = try recognizer.transcribeScoringSpans(texts: [text.text], features: features)
            return RecognizedReading(
                transcript: transcription.text, span: spans[0], seconds: transcription.seconds,
                elapsedSeconds: (clock.now - start).seconds)
        }
    }

    /// The recording path's work once audio comes: `feed` hands each mono chunk at the gate's
    /// rate to the body it is given. ``Outcome/format`` is left for the caller to set.
    private static func judge(
        configuration: ReadingProofConfiguration, sileroModelPath: String?, transcript: [String],
        fallback: VoiceDetectionFallback, maxRecognizedSeconds: Double,
        recognize: ((_ samples: [Float], _ text: DuaText) throws(ProofkitError) -> RecognizedReading)?,
        forcedScoreRule: ForcedScoreRule?,
        feed: (_ body: ([Float]) throws(ProofkitError) -> Void) throws(ProofkitError) -> Void
    ) throws(ProofkitError) -> Outcome {
        var session = try ReadingProofSession(
            configuration: configuration, sileroModelPath: sileroModelPath, fallback: fallback)
        var samples = 0
        var kept: [Float] = []
        let keepLimit = recognize == nil ? 0 : Int(maxRecognizedSeconds * Double(configuration.gate.sampleRate))
        try feed { (chunk: [Float]) throws(ProofkitError) in
            samples += chunk.count
            if kept.count < keepLimit { kept += chunk.prefix(keepLimit - kept.count) }
            _ = try session.process(audio: chunk)
        }
        var (_, result) = try session.finish()
        var recognition: RecognizedReading?
        if let recognize {
            if result.gate.voicedSeconds > 0 {
                let heard = try recognize(kept, configuration.text)
                recognition = heard
                if !heard.transcript.isEmpty { _ = session.process(transcript: heard.transcript) }
            } else {
                recognition = RecognizedReading(
                    transcript: "", score: nil, seconds: 0, elapsedSeconds: 0,
                    skippedReason: "no voice was heard, so the recogniser did not run")
            }
            result = session.proof.finish()
            if let forcedScoreRule, let recognition {
                result.match = forcedScoreRule.accepting(result.match, recognition: recognition)
            }
        }
        if !transcript.isEmpty {
            for line in transcript { _ = session.process(transcript: line) }
            result = session.proof.finish()
        }
        let proof = session.proof
        let rate = configuration.gate.sampleRate
        return Outcome(
            result: result,
            format: AudioFileFormat(
                sampleRate: rate, channels: 1, headerFrameCount: nil, container: .other("memory"),
                majorFormatName: "RAW", subtypeName: "FLOAT", isSeekable: false),
            decodedSeconds: Double(samples) / Double(rate),
            fallbackReason: session.fallbackReason, voiceDetection: proof.configuration.voiceDetection,
            neededSeconds: proof.neededSeconds, recognition: recognition)
    }
}
