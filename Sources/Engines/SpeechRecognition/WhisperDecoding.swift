public import ProofkitCore

/// The model behind the decoding loop: a Whisper encoder and a decoder with a token cache.
///
/// The loop (``WhisperTranscriber``) only asks for logits; how they are computed is the model's
/// business: proofkit's ONNX Runtime adapter (`WhisperRecognizer` in the facade), or a phone
/// app's own runtime. A phone app that uses its platform recogniser instead implements
/// ``SpeechRecognizing`` directly.
///
/// Calls come from one thread at a time.
public protocol WhisperStepModel: AnyObject {
    /// Size of the output vocabulary (51865 for the multilingual models).
    var vocabularySize: Int { get }
    /// Most token positions the decoder has (448).
    var maxPositions: Int { get }
    /// Encodes one 30 s window and clears the token cache: later ``logits(appending:)`` calls
    /// attend to this window.
    /// - Parameter melWindow: `80 * 3000` values, bin-major (``LogMelSpectrogram/window(startingAt:length:)``).
    /// - Throws: the runtime's errors.
    func encode(melWindow: [Float]) throws(ProofkitError)
    /// Clears the token cache; the encoded window stays.
    func resetTokens()
    /// Feeds `tokens` after those already in the cache and returns the logits that follow each
    /// of them: `tokens.count` rows of ``vocabularySize`` values, row `i` predicting the token
    /// after `tokens[i]`.
    /// - Throws: the runtime's errors; `.invalidArgument` past ``maxPositions``.
    func logits(appending tokens: [Int]) throws(ProofkitError) -> [[Float]]
}

/// Anything that turns 16 kHz speech into text: the Whisper loop here, or a phone's platform
/// recogniser.
public protocol SpeechRecognizing: AnyObject {
    /// Transcribes mono 16 kHz samples.
    /// - Throws: the recogniser's errors; `.invalidArgument` for input over its length limit.
    func transcribe(samples: [Float]) throws(ProofkitError) -> Transcription
}

/// Why the decoding of one window stopped.
public enum WindowStop: String, Sendable, Equatable {
    /// The model wrote `<|endoftext|>`.
    case endOfText
    /// The window's token cap was reached.
    case tokenCap
    /// The same group of tokens came back too often in a row (a loop); the repeats were dropped.
    case repetition
    /// The model said there is no speech (no-speech probability over the threshold and a low
    /// mean log-probability): nothing was kept.
    case noSpeech
    /// The window holds no audio worth decoding (silence before the gate): not run.
    case skipped
}

/// What one 30 s window gave.
public struct WindowTranscript: Sendable, Equatable {
    /// Start of the window, in seconds of the input.
    public var startSeconds: Double
    /// The text tokens kept.
    public var tokens: [Int]
    /// The text of ``tokens``.
    public var text: String
    /// Mean log-probability of the kept tokens (natural log; 0 when none).
    public var meanLogProbability: Double
    /// Probability of `<|nospeech|>` right after `<|startoftranscript|>`.
    public var noSpeechProbability: Double
    /// Why decoding stopped.
    public var stop: WindowStop
}

/// A whole transcription.
public struct Transcription: Sendable, Equatable {
    /// The windows' texts joined with single spaces, trimmed.
    public var text: String
    /// Each window, in order.
    public var windows: [WindowTranscript]
    /// Seconds of audio transcribed.
    public var seconds: Double
    /// Decoder steps run (tokens fed after the prompts), for bounding work.
    public var decoderSteps: Int
}

/// The log-probabilities a model gives a known text: one decoder pass over the prompt and the
/// text's tokens (forced decoding).
public struct ForcedScore: Sendable, Equatable {
    /// The text's tokens (with a leading space, as Whisper writes them), then `<|endoftext|>`.
    public var tokens: [Int]
    /// The natural-log probability of each token given the ones before it.
    public var logProbabilities: [Double]
    /// Mean of ``logProbabilities`` (0 for no tokens). Around -0.3 for a text that was read,
    /// below -2 for a different text.
    public var meanLogProbability: Double
    /// The window the score came from (the best one when the audio has several), in seconds.
    public var windowStartSeconds: Double

    /// Makes a score; ``meanLogProbability`` is the mean of `logProbabilities` (0 when empty).
    public init(tokens: [Int], logProbabilities: [Double], windowStartSeconds: Double = 0) {
        self.tokens = tokens
        self.logProbabilities = logProbabilities
        meanLogProbability =
            logProbabilities.isEmpty ? 0 : logProbabilities.reduce(0, +) / Double(logProbabilities.count)
        self.windowStartSeconds = windowStartSeconds
    }
}

/// A text's forced score beside the model's own transcript's, in the same window.
public struct TextScore: Sendable, Equatable {
    /// The text's score.
    public var text: ForcedScore
    /// The forced score of the greedy transcript's tokens in the window ``text`` came from, or
    /// `nil` when the model wrote nothing there.
    public var transcript: ForcedScore?

    /// Makes a pair.
    public init(text: ForcedScore, transcript: ForcedScore?) {
        self.text = text
        self.transcript = transcript
    }
}

/// Settings of the greedy decoding loop. Defaults: Arabic transcription without timestamps.
public struct WhisperDecodingOptions: Sendable, Equatable {
    /// Language token content without the brackets, e.g. `"ar"`. Default `"ar"`.
    public var language: String
    /// Most tokens written per 30 s window (guards against run-away loops). Default 224 (half the
    /// decoder's 448 positions, Whisper's own cap).
    public var maxTokensPerWindow: Int
    /// A group of 1...``repetitionMaxLength`` tokens repeated this many times in a row ends the
    /// window and the repeats after the first are dropped. Default 4 (a du'a's "three times" is
    /// kept).
    public var repetitionLimit: Int
    /// The longest token group checked for repetition. Default 24.
    public var repetitionMaxLength: Int
    /// Tokens never written (from the model's `config.json` `suppress_ids`, with the task and
    /// other special tokens added by the loop).
    public var suppressTokens: [Int]
    /// Tokens not written as the first token (`suppress_ids_begin`: the blank and
    /// `<|endoftext|>`).
    public var suppressAtBegin: [Int]
    /// No-speech rule (Whisper's): a window whose `<|nospeech|>` probability is above this and
    /// whose mean log-probability is below ``logProbabilityThreshold`` is empty. Default 0.6.
    public var noSpeechThreshold: Double
    /// See ``noSpeechThreshold``. Default -1.
    public var logProbabilityThreshold: Double
    /// Most 30 s windows one input may have (bounds the work on long input). Default 10 (5 min).
    public var maxWindows: Int

    /// Creates options; every parameter has the documented default.
    public init(
        language: String = "ar", maxTokensPerWindow: Int = 224, repetitionLimit: Int = 4,
        repetitionMaxLength: Int = 24, suppressTokens: [Int] = [], suppressAtBegin: [Int] = [220, 50257],
        noSpeechThreshold: Double = 0.6, logProbabilityThreshold: Double = -1, maxWindows: Int = 10
    ) {
        self.language = language
        self.maxTokensPerWindow = maxTokensPerWindow
        self.repetitionLimit = repetitionLimit
        self.repetitionMaxLength = repetitionMaxLength
        self.suppressTokens = suppressTokens
        self.suppressAtBegin = suppressAtBegin
        self.noSpeechThreshold = noSpeechThreshold
        self.logProbabilityThreshold = logProbabilityThreshold
        self.maxWindows = maxWindows
    }

    /// Reads `suppress_ids` and `suppress_ids_begin` from the model's `config.json` (the file
    /// the CTranslate2 conversion writes), keeping the other settings.
    /// - Throws: `.decodeFailed` when it is not JSON, `.modelInvalid` without those arrays.
    public mutating func readModelConfiguration(json: [UInt8]) throws(ProofkitError) {
        let root = try JSONReader.parse(bytes: json)
        guard let suppress = root["suppress_ids"]?.array?.compactMap(\.integer),
            let begin = root["suppress_ids_begin"]?.array?.compactMap(\.integer)
        else {
            throw ProofkitError(.modelInvalid, "the Whisper config.json has no suppress_ids / suppress_ids_begin")
        }
        suppressTokens = suppress
        suppressAtBegin = begin
    }
}

/// Whisper's greedy decoding over 30 s windows, over any ``WhisperStepModel``.
///
/// For each window: the prompt `<|startoftranscript|> <|ar|> <|transcribe|> <|notimestamps|>`,
/// then the most likely token at each step, with the suppressed tokens (and, at the first step,
/// the blank and `<|endoftext|>`) masked out, until `<|endoftext|>`, the token cap, or a loop
/// (``WhisperDecodingOptions/repetitionLimit``). No temperature fallback, no beam: the work per
/// window is bounded by the cap. Windows are cut every 30 s and their texts joined.
public final class WhisperTranscriber: SpeechRecognizing {
    /// The model.
    public let model: any WhisperStepModel
    /// The tokenizer.
    public let tokenizer: WhisperTokenizer
    /// The settings.
    public let options: WhisperDecodingOptions
    /// The prompt tokens.
    public let prompt: [Int]
    /// `<|endoftext|>`.
    public let endOfText: Int
    /// `<|nospeech|>` (or `<|nocaptions|>` in older vocabularies), when the vocabulary has it.
    public let noSpeech: Int?

    private let suppressMask: [Bool]
    private let beginMask: [Bool]

    /// Sets up the loop.
    /// - Throws: `.modelInvalid` when the tokenizer lacks the prompt's special tokens or the
    ///   language.
    public init(model: any WhisperStepModel, tokenizer: WhisperTokenizer, options: WhisperDecodingOptions = .init())
        throws(ProofkitError)
    {
        func special(_ content: String) throws(ProofkitError) -> Int {
            guard let id = tokenizer.specialID(content) else {
                throw ProofkitError(.modelInvalid, "the Whisper tokenizer has no \(content) token")
            }
            return id
        }
        let start = try special("<|startoftranscript|>")
        let language = try special("<|\(options.language)|>")
        let transcribe = try special("<|transcribe|>")
        let noTimestamps = try special("<|notimestamps|>")
        endOfText = try special("<|endoftext|>")
        noSpeech = tokenizer.specialID("<|nospeech|>") ?? tokenizer.specialID("<|nocaptions|>")
        prompt = [start, language, transcribe, noTimestamps]
        self.model = model
        self.tokenizer = tokenizer
        self.options = options
        // As CTranslate2 and faster-whisper: the config's suppress_ids (which hold the
        // start-of-transcript, task and no-speech tokens) at every step; anything else that is not
        // text (a timestamp) is dropped from the text when decoded.
        var mask = [Bool](repeating: false, count: model.vocabularySize)
        for id in options.suppressTokens where mask.indices.contains(id) { mask[id] = true }
        suppressMask = mask
        var begin = mask
        for id in options.suppressAtBegin where begin.indices.contains(id) { begin[id] = true }
        beginMask = begin
    }

    /// Transcribes mono 16 kHz samples, 30 s window by window.
    /// - Throws: `.invalidArgument` when the input is longer than
    ///   ``WhisperDecodingOptions/maxWindows`` windows (nothing is run); the model's errors.
    public func transcribe(samples: [Float]) throws(ProofkitError) -> Transcription {
        try checkLength(samples.count)
        return try transcribe(features: WhisperFeatures.logMel(of: samples))
    }

    /// Transcribes a spectrogram made by ``WhisperFeatures/logMel(of:padding:)``.
    /// - Throws: as ``transcribe(samples:)``.
    public func transcribe(features: LogMelSpectrogram) throws(ProofkitError) -> Transcription {
        try transcribe(features: features) { (_: WindowTranscript) throws(ProofkitError) in }
    }

    /// ``transcribe(features:)``, calling `afterWindow` with each window's transcript right after
    /// it is decoded, while the model still holds the window's encoding.
    func transcribe(
        features: LogMelSpectrogram, afterWindow: (WindowTranscript) throws(ProofkitError) -> Void
    ) throws(ProofkitError) -> Transcription {
        let windowCount = Self.windowCount(contentFrames: features.contentFrames)
        try checkLength(features.contentFrames * WhisperFeatures.hopLength)
        var windows: [WindowTranscript] = []
        var steps = 0
        for index in 0..<windowCount {
            let start = index * WhisperFeatures.windowFrames
            try model.encode(melWindow: features.window(startingAt: start))
            var window = try decodeWindow(steps: &steps)
            window.startSeconds = Double(start) / 100
            try afterWindow(window)
            windows.append(window)
        }
        let text = windows.map(\.text).map(Self.trimmed).filter { !$0.isEmpty }.joined(separator: " ")
        return Transcription(
            text: text, windows: windows, seconds: Double(features.contentFrames) / 100, decoderSteps: steps)
    }

    /// Windows needed for `contentFrames` frames (at least 1).
    static func windowCount(contentFrames: Int) -> Int {
        max(1, (contentFrames + WhisperFeatures.windowFrames - 1) / WhisperFeatures.windowFrames)
    }

    private func checkLength(_ samples: Int) throws(ProofkitError) {
        let windows = Self.windowCount(contentFrames: samples / WhisperFeatures.hopLength)
        guard windows <= options.maxWindows else {
            let minutes = Double(options.maxWindows) / 2
            throw ProofkitError(
                .invalidArgument,
                "the audio is \(Self.format(Double(samples) / 16_000)) s long; the recogniser transcribes at most \(Self.format(minutes * 60)) s (\(options.maxWindows) windows of 30 s)"
            )
        }
    }

    /// Greedy decoding of the window the model has encoded.
    private func decodeWindow(steps: inout Int) throws(ProofkitError) -> WindowTranscript {
        model.resetTokens()
        let promptRows = try model.logits(appending: prompt)
        var noSpeechProbability = 0.0
        if let noSpeech, let first = promptRows.first {
            noSpeechProbability = exponential(Self.logSoftmax(first, at: noSpeech))
        }
        guard var row = promptRows.last else {
            throw ProofkitError(.internal, "the Whisper decoder returned no logits for the prompt")
        }
        let cap = min(options.maxTokensPerWindow, model.maxPositions - prompt.count - 1)
        var written: [Int] = []
        var logProbabilities: [Double] = []
        var stop = WindowStop.tokenCap
        while written.count < cap {
            let mask = written.isEmpty ? beginMask : suppressMask
            let token = Self.argmax(row, masked: mask)
            if token == endOfText {
                stop = .endOfText
                break
            }
            logProbabilities.append(Self.logSoftmax(row, at: token, masked: mask))
            written.append(token)
            if let keep = Self.repetitionCut(
                written, limit: options.repetitionLimit, maxLength: options.repetitionMaxLength)
            {
                written.removeLast(written.count - keep)
                logProbabilities.removeLast(logProbabilities.count - keep)
                stop = .repetition
                break
            }
            guard written.count < cap else { break }
            steps += 1
            guard let next = try model.logits(appending: [token]).last else {
                throw ProofkitError(.internal, "the Whisper decoder returned no logits")
            }
            row = next
        }
        let mean = logProbabilities.isEmpty ? 0 : logProbabilities.reduce(0, +) / Double(logProbabilities.count)
        if noSpeechProbability > options.noSpeechThreshold && mean < options.logProbabilityThreshold {
            return WindowTranscript(
                startSeconds: 0, tokens: [], text: "", meanLogProbability: mean,
                noSpeechProbability: noSpeechProbability, stop: .noSpeech)
        }
        return WindowTranscript(
            startSeconds: 0, tokens: written, text: tokenizer.decode(written), meanLogProbability: mean,
            noSpeechProbability: noSpeechProbability, stop: stop)
    }

    /// Scores a known text against the audio: one decoder pass over the prompt, the text's
    /// tokens (`" " + text`) and `<|endoftext|>` per window; the best window's score is returned.
    /// - Parameters:
    ///   - text: the text, as written (harakat may be kept; Whisper rarely writes them, so
    ///     callers usually pass the text without them).
    ///   - samples: mono 16 kHz audio.
    /// - Returns: per-token log-probabilities and their mean; `nil` when the text has no tokens
    ///   or is too long for one window's positions.
    /// - Throws: as ``transcribe(samples:)``.
    public func score(text: String, samples: [Float]) throws(ProofkitError) -> ForcedScore? {
        try checkLength(samples.count)
        return try score(text: text, features: WhisperFeatures.logMel(of: samples))
    }

    /// ``score(text:samples:)`` on a spectrogram already computed.
    public func score(text: String, features: LogMelSpectrogram) throws(ProofkitError) -> ForcedScore? {
        try scores(texts: [text], features: features, transcription: nil)[0]?.text
    }

    /// Scores several texts on one spectrogram, each window encoded once, and beside each text
    /// the forced score of the model's own transcript in the same window (the reference of
    /// ``ForcedScoreRule``).
    /// - Parameters:
    ///   - texts: the texts, as for ``score(text:samples:)``.
    ///   - features: the spectrogram ``transcribe(features:)`` was given.
    ///   - transcription: that transcription (its windows' tokens are scored), or `nil`.
    /// - Returns: one entry per text: the best window's score of the text and of the transcript
    ///   there (`nil` when that window's transcript is empty); `nil` for a text with no tokens or
    ///   too long for a window.
    /// - Throws: the model's errors; `.invalidArgument` over the length limit.
    public func scores(texts: [String], features: LogMelSpectrogram, transcription: Transcription?)
        throws(ProofkitError) -> [TextScore?]
    {
        try checkLength(features.contentFrames * WhisperFeatures.hopLength)
        let tokenLists = texts.map { tokenizer.encode(" " + Self.trimmed($0)) + [endOfText] }
        var best = [TextScore?](repeating: nil, count: texts.count)
        for index in 0..<Self.windowCount(contentFrames: features.contentFrames) {
            let start = index * WhisperFeatures.windowFrames
            let startSeconds = Double(start) / 100
            try model.encode(melWindow: features.window(startingAt: start))
            var reference: ForcedScore?
            if let windows = transcription?.windows, windows.indices.contains(index), !windows[index].tokens.isEmpty,
                prompt.count + windows[index].tokens.count + 1 <= model.maxPositions
            {
                reference = try forcedScore(tokens: windows[index].tokens + [endOfText], windowStart: startSeconds)
            }
            for (i, tokens) in tokenLists.enumerated()
            where tokens.count > 1 && prompt.count + tokens.count <= model.maxPositions {
                let score = try forcedScore(tokens: tokens, windowStart: startSeconds)
                if best[i] == nil || score.meanLogProbability > best[i]!.text.meanLogProbability {
                    best[i] = TextScore(text: score, transcript: reference)
                }
            }
        }
        return best
    }

    /// Forced decoding of `tokens` on the window the model has encoded.
    func forcedScore(tokens: [Int], windowStart: Double) throws(ProofkitError) -> ForcedScore {
        model.resetTokens()
        let rows = try model.logits(appending: prompt + tokens.dropLast())
        var logProbabilities: [Double] = []
        for (offset, token) in tokens.enumerated() {
            let row = rows[prompt.count - 1 + offset]
            logProbabilities.append(Self.logSoftmax(row, at: token))
        }
        return ForcedScore(tokens: tokens, logProbabilities: logProbabilities, windowStartSeconds: windowStart)
    }

    // MARK: Pure helpers

    /// The index of the largest value not masked out.
    static func argmax(_ row: [Float], masked: [Bool]) -> Int {
        var best = -Float.infinity
        var index = 0
        for i in row.indices where !(i < masked.count && masked[i]) && row[i] > best {
            best = row[i]
            index = i
        }
        return index
    }

    /// `log softmax(row)[index]`, over the values not masked out (all when `masked` is empty).
    static func logSoftmax(_ row: [Float], at index: Int, masked: [Bool] = []) -> Double {
        var unmasked = row
        for i in unmasked.indices where i < masked.count && masked[i] { unmasked[i] = -.infinity }
        let (maximum, logSum) = logSumExp(unmasked)
        return Double(row[index] - maximum) - logSum
    }

    /// The row's largest value, and the log of the sum over the row of e^(value - largest), the
    /// differences taken in Float as the values are and the exponentials summed in Double, eight
    /// at a time (``exponential(_:)-(SIMD8<Double>)``): about 0.18 ms for Whisper's 51,865-token
    /// row, where a scalar exponential per value took 1 ms. -infinity values count as 0.
    static func logSumExp(_ row: [Float]) -> (maximum: Float, logSum: Double) {
        let values = row.span
        // Eight values at a time; the lanes past the end are -infinity.
        func lanes(at start: Int) -> SIMD8<Float> {
            if start + 8 <= values.count {
                return SIMD8(
                    values[start], values[start + 1], values[start + 2], values[start + 3], values[start + 4],
                    values[start + 5], values[start + 6], values[start + 7])
            }
            var lanes = SIMD8<Float>(repeating: -.infinity)
            for lane in 0..<(values.count - start) { lanes[lane] = values[start + lane] }
            return lanes
        }
        var maxima = SIMD8<Float>(repeating: -.infinity)
        for start in stride(from: 0, to: values.count, by: 8) {
            let value = lanes(at: start)
            maxima.replace(with: value, where: value .> maxima)
        }
        let maximum = maxima.max()
        var sums = SIMD8<Double>()
        for start in stride(from: 0, to: values.count, by: 8) {
            let d = lanes(at: start) - maximum
            sums += exponential(
                SIMD8(
                    Double(d[0]), Double(d[1]), Double(d[2]), Double(d[3]), Double(d[4]), Double(d[5]),
                    Double(d[6]), Double(d[7])))
        }
        return (maximum, logarithm(sums.sum()))
    }

    /// When `tokens` ends with a group of 1...`maxLength` tokens repeated `limit` times in a row,
    /// the count to keep (everything up to and including the group's first copy); else `nil`.
    public static func repetitionCut(_ tokens: [Int], limit: Int, maxLength: Int) -> Int? {
        guard limit >= 2 else { return nil }
        for length in 1...max(1, maxLength) {
            let span = length * limit
            guard span <= tokens.count else { break }
            let tail = tokens.count - length
            var repeated = true
            for copy in 1..<limit where repeated {
                let other = tail - copy * length
                for i in 0..<length where tokens[tail + i] != tokens[other + i] {
                    repeated = false
                    break
                }
            }
            if repeated { return tokens.count - span + length }
        }
        return nil
    }

    static func trimmed(_ text: String) -> String {
        var scalars = Substring(text)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }

    static func format(_ value: Double) -> String {
        let tenths = Int(value * 10 + 0.5)
        return tenths % 10 == 0 ? String(tenths / 10) : "\(tenths / 10).\(tenths % 10)"
    }
}

/// The forced-score rule: whether the model finds a text about as likely, given the audio, as
/// what it wrote itself — evidence that the text was read, beside the key words.
///
/// The forced score of a text alone (its mean log-probability per token) depends on the voice,
/// the recording and the text's length; so it is compared with the forced score of the model's own
/// greedy transcript of the same window (a likelihood ratio per token). A text that was read
/// scores close to the transcript (the model's spelling differs from the text's in places); a
/// different text scores far below it.
///
/// proofkit applies it to a ``SpanScore``: in each window, the words of the text that the
/// transcript aligns to are scored (so narration or instructions in a texts file that nobody
/// reads aloud, and the parts of a long text in other windows, do not count against it), and
/// those words must cover at least ``minimumCoverage`` of the text. Pure.
public struct ForcedScoreRule: Sendable, Equatable {
    /// The default ``margin``, in nats per token (natural-log probability): the text may score at
    /// most this much below the transcript. Chosen on half A (even ids) of the 92 recordings of
    /// `../shared/data/dua_audio` (for the whole-text score, and kept for the span score: on A the
    /// own-text ratios it gains reach -1.30, the other texts' are -1.34 and below); see
    /// `Benchmarks/whisper_dua_eval.md` for half B.
    public static let defaultMargin = 1.4
    /// The default ``minimumTokens``: spans shorter than this (with the `<|endoftext|>` of each
    /// window) never pass by the forced score (a short text is likely under any audio).
    public static let defaultMinimumTokens = 8
    /// The default ``minimumCoverage``: the scored words must be at least this share of the
    /// text's words (0.15: below the least an own text needed on half A, 0.19, a hadith whose
    /// reader says only the three words of its dhikr).
    public static let defaultMinimumCoverage = 0.15

    /// How far below the transcript's mean log-probability the text's may be, in nats per token
    /// (≥ 0). Default ``defaultMargin``.
    public var margin: Double
    /// The fewest tokens a text (or its scored span) needs for the rule to apply. Default
    /// ``defaultMinimumTokens``.
    public var minimumTokens: Int
    /// The least share (0...1) of the text's words a span score must cover. Default
    /// ``defaultMinimumCoverage``.
    public var minimumCoverage: Double

    /// Creates the rule; every parameter has the documented default.
    public init(
        margin: Double = ForcedScoreRule.defaultMargin, minimumTokens: Int = ForcedScoreRule.defaultMinimumTokens,
        minimumCoverage: Double = ForcedScoreRule.defaultMinimumCoverage
    ) {
        self.margin = margin
        self.minimumTokens = minimumTokens
        self.minimumCoverage = minimumCoverage
    }

    /// The text's mean log-probability minus the transcript's (nats per token; 0 or less when the
    /// transcript is more likely), or `nil` when either is missing or the transcript is empty.
    public static func ratio(text: ForcedScore?, transcript: ForcedScore?) -> Double? {
        guard let text, let transcript, transcript.tokens.count > 1 else { return nil }
        return text.meanLogProbability - transcript.meanLogProbability
    }

    /// The ratio of a span score (its parts' tokens pooled), or `nil` without parts.
    public static func ratio(_ score: SpanScore?) -> Double? {
        guard let score else { return nil }
        return ratio(text: score.text, transcript: score.transcript)
    }

    /// Whether the text passes: both scores known, the transcript not empty, the text at least
    /// ``minimumTokens`` long, and its mean log-probability within ``margin`` of the transcript's.
    public func passes(text: ForcedScore?, transcript: ForcedScore?) -> Bool {
        guard let text, let ratio = Self.ratio(text: text, transcript: transcript) else { return false }
        return text.tokens.count >= minimumTokens && ratio >= -margin
    }

    /// Whether a span score passes: ``passes(text:transcript:)`` on its pooled parts, and its
    /// spans cover at least ``minimumCoverage`` of the text's words.
    public func passes(_ score: SpanScore?) -> Bool {
        guard let score, score.coverage >= minimumCoverage else { return false }
        return passes(text: score.text, transcript: score.transcript)
    }
}
