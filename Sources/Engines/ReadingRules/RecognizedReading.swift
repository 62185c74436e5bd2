public import DuaMatching
import ProofkitCore
public import SpeechRecognition

// What a recogniser made of a reading, and the forced-score rule that can accept it beside the key
// words: the reading proof's rule for a recording, pure (the facade runs the recogniser).

/// What a recogniser made of a recording.
public struct RecognizedReading: Sendable {
    /// The transcript (empty when nothing was heard).
    public var transcript: String
    /// The forced score of the text, when it was computed (with ``span``: the scored words of
    /// every window pooled).
    public var score: ForcedScore?
    /// The forced score of the recogniser's own transcript where ``score`` came from (the
    /// reference of `ForcedScoreRule`), when computed.
    public var transcriptScore: ForcedScore?
    /// The span forced score (`SpanScore`) that ``score`` and
    /// ``transcriptScore`` pool, when the text was scored by spans.
    public var span: SpanScore?
    /// Seconds of audio given to the recogniser (at most the limit).
    public var seconds: Double
    /// Wall-clock seconds the recogniser took (loading included).
    public var elapsedSeconds: Double
    /// Why the recogniser did not run (no voice at all), or `nil`.
    public var skippedReason: String?

    /// Makes a result.
    public init(
        transcript: String, score: ForcedScore?, transcriptScore: ForcedScore? = nil, seconds: Double,
        elapsedSeconds: Double, skippedReason: String? = nil
    ) {
        self.transcript = transcript
        self.score = score
        self.transcriptScore = transcriptScore
        self.seconds = seconds
        self.elapsedSeconds = elapsedSeconds
        self.skippedReason = skippedReason
    }

    /// Makes a result from a span score (``score`` and ``transcriptScore`` are its pooled
    /// parts).
    public init(transcript: String, span: SpanScore?, seconds: Double, elapsedSeconds: Double) {
        self.transcript = transcript
        self.span = span
        score = span?.text
        transcriptScore = span?.transcript
        self.seconds = seconds
        self.elapsedSeconds = elapsedSeconds
    }
}

extension ForcedScoreRule {
    /// The forced-score rule a recording's proof uses by default beside the key words (`nil`
    /// would leave the key words alone to decide). On by default since the span score met the
    /// own-text target on the held-out half (`Benchmarks/whisper_dua_eval.md`).
    public static let recordingDefault: ForcedScoreRule? = ForcedScoreRule()

    /// Whether this rule passes what the recogniser heard: the span score when there is one, else
    /// the text's and transcript's forced scores.
    public func passes(_ recognition: RecognizedReading) -> Bool {
        if let span = recognition.span { return passes(span) }
        return passes(text: recognition.score, transcript: recognition.transcriptScore)
    }

    /// The key words' verdict, or an acceptance by the forced score when the key words rejected
    /// and this rule passes the recognition's text and transcript scores. Pure.
    /// - Parameters:
    ///   - match: the key-word verdict (`DuaMatcher`).
    ///   - recognition: what the recogniser heard, with its forced scores.
    /// - Returns: `match` unchanged when it accepted or the rule does not pass; else `match`
    ///   accepted with `DuaRule.forcedScore` (its score the ratio, nats per token).
    public func accepting(_ match: DuaMatchResult, recognition: RecognizedReading) -> DuaMatchResult {
        guard !match.verdict.isAccepted, passes(recognition),
            let ratio = ForcedScoreRule.ratio(text: recognition.score, transcript: recognition.transcriptScore)
        else { return match }
        var accepted = match
        accepted.verdict = .accepted(score: ratio)
        accepted.rule = .forcedScore
        return accepted
    }
}
