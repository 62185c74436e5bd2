import Proofkit
import Testing

@testable import ProofkitCLI

/// Issue 34: a du'a rejected as the waking du'a printed "the words heard cover 8 of the text's
/// 9", which reads like a near pass. The line now says first whether the forced score passes,
/// and why not in plain words.
@Suite("voice: the forced-score line says plainly whether it passes")
struct ForcedScoreLineTests {
    /// A reading whose 9-word text is scored over words 0..<8, at `textLogProbability` per token
    /// against the transcript's -0.5.
    func reading(textLogProbability: Double) -> RecognizedReading {
        let part = SpanPart(
            span: TextSpan(firstWord: 0, endWord: 8, edits: 2, transcriptLetters: 40),
            text: ForcedScore(tokens: Array(0..<20), logProbabilities: Array(repeating: textLogProbability, count: 20)),
            transcript: ForcedScore(tokens: Array(0..<20), logProbabilities: Array(repeating: -0.5, count: 20)))
        return RecognizedReading(
            transcript: "words", span: SpanScore(parts: [part], wordCount: 9), seconds: 5, elapsedSeconds: 1)
    }

    @Test(
        "another du'a's reading: 'does not pass' with the reason, and no '8 of the text's 9' that reads as a near pass")
    func rejectedSaysWhy() throws {
        let line = try #require(VoiceCommand.forcedScoreLine(reading(textLogProbability: -2), rule: ForcedScoreRule()))
        #expect(
            line.hasPrefix("forced score: does not pass: the recogniser finds this text far less likely"), "\(line)")
        #expect(line.contains("-1.50 per token; -1.4 or more passes"), "\(line)")
        #expect(line.contains("this text was not what was read"))
        #expect(!line.contains("8 of the text's 9"), "\(line)")
    }

    @Test("a passing score says it passes; too little of the text heard is named; --no-forced-score says so")
    func passesAndOtherReasons() throws {
        let passing = try #require(
            VoiceCommand.forcedScoreLine(reading(textLogProbability: -0.9), rule: ForcedScoreRule()))
        #expect(passing.hasPrefix("forced score: passes: "), "\(passing)")
        let strict = ForcedScoreRule(minimumCoverage: 0.95)
        let partial = try #require(VoiceCommand.forcedScoreLine(reading(textLogProbability: -0.9), rule: strict))
        #expect(partial.hasPrefix("forced score: does not pass: "), "\(partial)")
        #expect(partial.contains("only 8 of the text's 9 words (95% needed)"), "\(partial)")
        let off = try #require(VoiceCommand.forcedScoreLine(reading(textLogProbability: -2), rule: nil))
        #expect(off.contains("not used: --no-forced-score"), "\(off)")
    }
}
