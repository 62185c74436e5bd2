import Proofkit
import ProofkitCore

/// `proofkit voice`'s JSON: the result fields shared by the live `end` event and a recording's object.
/// The reading proof's JSON fields, shared by `voice` (a recording and live) and `transcribe`.
enum VoiceResultJSON {
    /// The result fields shared by the live `end` event and a recording's object.
    static func resultFields(
        _ result: ReadingProofResult, mode: VoiceDetectionMode, fallback: String?, needed: Double
    ) -> [String: JSONValue] {
        let text = result.match
        var reason: String?
        if case .rejected(let why) = text.verdict { reason = why.detail }
        let heard = Set(result.heardKeyWords.map(\.index))
        let keyWords = result.heardKeyWords
        return [
            "vad": .string(mode.rawValue), "vad_fallback": JSONValue(fallback),
            "vad_veto": .bool(result.likeSpeechSegments != nil),
            "voiced_seconds": .rounded(result.gate.voicedSeconds, places: 3),
            "voiced_segments": segmentsJSON(result.gate.segments),
            "silero_segments": result.decidedBy.usesSilero ? segmentsJSON(result.sileroSegments) : .null,
            "silero_likeness": result.sileroSegmentLikeness.map { .array($0.map { .rounded(Double($0), places: 3) }) }
                ?? .null,
            "veto_segments": result.likeSpeechSegments.map(segmentsJSON) ?? .null,
            "periodic_segments": result.decidedBy == .silero ? .null : segmentsJSON(result.periodicSegments),
            "noise_floor_dbfs": .rounded(Double(result.gate.finalFloorDecibels), places: 1),
            "needed_seconds": .rounded(needed, places: 3),
            "key_words": .array(
                result.keyWordTexts.indices.map {
                    ["word": .string(result.keyWordTexts[$0]), "heard": .bool(heard.contains($0))]
                }),
            "heard_key_words": .array(keyWords.map { .string($0.word) }),
            "heard": .array(keyWords.map { .string($0.word) }),
            "required_key_words": .int(text.required),
            "verdict": .string(text.verdict.name), "rule": .string(text.rule.rawValue), "reason": JSONValue(reason),
            "text": .string(result.text.name),
        ]
    }

    /// `[[START, END], ...]` in seconds, to the millisecond.
    static func segmentsJSON(_ segments: [VoicedSegment]) -> JSONValue {
        .array(segments.map { .array([.rounded($0.start, places: 3), .rounded($0.end, places: 3)]) })
    }

    /// `{"mean_log_prob": X, "tokens": N, "transcript_mean_log_prob": Y|null, "ratio": X-Y|null,
    /// "coverage": C|null, "span": WORDS|null, "passes": BOOL, "rule_on": BOOL}` or null.
    static func forcedScoreJSON(_ recognition: RecognizedReading?, rule: ForcedScoreRule?)
        -> JSONValue
    {
        guard let recognition, let score = recognition.score else { return .null }
        let ratio = ForcedScoreRule.ratio(text: score, transcript: recognition.transcriptScore)
        return [
            "mean_log_prob": .rounded(score.meanLogProbability, places: 3), "tokens": .int(score.tokens.count),
            "transcript_mean_log_prob": recognition.transcriptScore.map { .rounded($0.meanLogProbability, places: 3) }
                ?? .null,
            "ratio": ratio.map { .rounded($0, places: 3) } ?? .null,
            "coverage": recognition.span.map { .rounded($0.coverage, places: 3) } ?? .null,
            "windows": .int(recognition.span?.parts.count ?? 1),
            "passes": .bool((rule ?? ForcedScoreRule()).passes(recognition)),
            "rule_on": .bool(rule != nil),
        ]
    }
}

extension ReadingProofResult {
    /// The text's key words as written, in order.
    var keyWordTexts: [String] { text.keyWords.map(\.word) }
}
