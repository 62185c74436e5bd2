import Foundation
import ProofkitCore
import TestSupport
import Testing

@testable import SpeechRecognition

@Suite("Span forced scoring")
struct SpanScoringTests {
    static func letters(_ text: String) -> [Unicode.Scalar] { Array(text.unicodeScalars.filter { $0 != " " }) }
    static func words(_ text: String) -> [[Unicode.Scalar]] {
        text.split(separator: " ").map { Array($0.unicodeScalars) }
    }

    @Test("the transcript aligns to the words it was read from, whatever the narration around them")
    func alignsInTheMiddle() throws {
        let text = Self.words("قال رسول الله من قال سبحان الله وبحمده في يوم ميه مره")
        let span = try #require(TextSpanAligner.align(transcript: Self.letters("سبحان الله وبحمده"), text: text))
        #expect(span.firstWord == 5 && span.endWord == 8)
        #expect(span.edits == 0)
        #expect(span.transcriptLetters == 15)
    }

    @Test("merged and split words, and a letter misheard, still find the span")
    func mergedSplitMisheard() throws {
        let text = Self.words("اللهم باسمك اموت واحيا")
        // "بس مك" for "باسمك" (split, alef dropped), "واحيا" merged with the word before.
        let span = try #require(TextSpanAligner.align(transcript: Self.letters("اللهم بس مك اموتواحيا"), text: text))
        #expect(span.firstWord == 0 && span.endWord == 4)
        #expect(span.edits == 1)
        let misheard = try #require(TextSpanAligner.align(transcript: Self.letters("اموت وازيا"), text: text))
        #expect(misheard.firstWord == 2 && misheard.endWord == 4 && misheard.edits == 1)
    }

    @Test("an empty transcript or text gives no span")
    func empty() {
        #expect(TextSpanAligner.align(transcript: [], text: Self.words("الحمد لله")) == nil)
        #expect(TextSpanAligner.align(transcript: Self.letters("الحمد"), text: []) == nil)
    }

    @Test("the alignment costs what an independent edit distance says (random strings)")
    func matchesBruteForce() throws {
        var generator = SplitMix64(seed: 12)
        let alphabet = Array("ابتحد".unicodeScalars)
        for _ in 0..<300 {
            let text = (0..<Int.random(in: 1...5, using: &generator)).map { _ in
                (0..<Int.random(in: 1...4, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            }
            let transcript = (0..<Int.random(in: 1...6, using: &generator)).map { _ in
                alphabet.randomElement(using: &generator)!
            }
            let span = try #require(TextSpanAligner.align(transcript: transcript, text: text))
            // Brute force: the least edit distance from the transcript to any substring of the
            // text's letters (the empty one included).
            let flat = text.flatMap { $0 }
            var best = Int.max
            for a in 0...flat.count {
                for b in a...flat.count { best = min(best, Self.editDistance(transcript, Array(flat[a..<b]))) }
            }
            #expect(span.edits == best)
            #expect(span.firstWord <= span.endWord && span.endWord <= text.count)
        }
    }

    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        var row = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var next = [i] + [Int](repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                next[j] = min(row[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1), row[j] + 1, next[j - 1] + 1)
            }
            row = next
        }
        return a.isEmpty ? b.count : row[b.count]
    }

    static func part(_ first: Int, _ end: Int, text: [Double], transcript: [Double]) -> SpanPart {
        SpanPart(
            span: TextSpan(firstWord: first, endWord: end, edits: 0, transcriptLetters: 10),
            text: ForcedScore(tokens: Array(0..<text.count), logProbabilities: text),
            transcript: ForcedScore(tokens: Array(0..<transcript.count), logProbabilities: transcript))
    }

    @Test("a span score pools its windows' tokens, counts covered words once, and the rule needs the coverage")
    func poolingAndCoverage() throws {
        let first = Self.part(
            0, 6, text: Array(repeating: -0.5, count: 6), transcript: Array(repeating: -0.2, count: 6))
        let second = Self.part(
            4, 10, text: Array(repeating: -1.1, count: 12), transcript: Array(repeating: -0.2, count: 4))
        let score = SpanScore(parts: [first], wordCount: 20).appending(SpanScore(parts: [second], wordCount: 20))
        #expect(score.coveredWords == 10)
        #expect(abs(score.coverage - 0.5) < 1e-12)
        let text = try #require(score.text)
        #expect(text.tokens.count == 18)
        // (6 × -0.5 + 12 × -1.1) / 18 - (-0.2): pooled by tokens, not averaged by window.
        #expect(abs((ForcedScoreRule.ratio(score) ?? 9) - (-16.2 / 18 + 0.2)) < 1e-12)
        #expect(ForcedScoreRule(margin: 1, minimumTokens: 8, minimumCoverage: 0.5).passes(score))
        #expect(!ForcedScoreRule(margin: 1, minimumTokens: 8, minimumCoverage: 0.51).passes(score))
        #expect(!ForcedScoreRule(margin: 0.6, minimumTokens: 8, minimumCoverage: 0).passes(score))
        #expect(!ForcedScoreRule(margin: 1, minimumTokens: 19, minimumCoverage: 0).passes(score))
        #expect(!ForcedScoreRule().passes(SpanScore(parts: [], wordCount: 5)))
        #expect(!ForcedScoreRule().passes(nil))
    }

    @Test(
        "spanScores scores only the words the transcript aligns to, and the transcript once per window",
        .enabled(
            if: whisperModelFile("whisper_tokenizer.json") != nil,
            "whisper_tokenizer.json is not built (bash .ci/setup)"))
    func spanScoresIgnoreNarration() throws {
        let tokenizer = try DecodingLoopTests.tokenizer()
        let words = tokenizer.encode(" الحمد لله رب العالمين")
        let model = TableModel(saying: words)
        let transcriber = try WhisperTranscriber(model: model, tokenizer: tokenizer)
        let features = WhisperFeatures.logMel(of: DecodingLoopTests.speech)
        let transcription = try transcriber.transcribe(features: features)
        model.fed = []
        func spoken(_ text: String) -> SpokenText {
            let split = text.split(separator: " ").map(String.init)
            return SpokenText(words: split, letters: split.map { Array($0.unicodeScalars) })
        }
        let narrated = spoken("قال رسول الله يقول الحمد لله رب العالمين ثلاث مرات")
        let other = spoken("سبحان ربي العظيم وبحمده")
        let scores = try transcriber.spanScores(
            texts: [narrated, other], features: features, transcription: transcription,
            letters: { Array($0.unicodeScalars.filter { $0 != " " }) })
        // The transcript once, then each span.
        #expect(model.fed.count == 1 + scores.filter { !$0.parts.isEmpty }.count)
        let own = scores[0]
        #expect(own.parts.count == 1)
        #expect(own.parts[0].span.firstWord == 4 && own.parts[0].span.endWord == 8)
        #expect(own.parts[0].text.tokens == words + [50257])
        #expect(abs(ForcedScoreRule.ratio(own) ?? 9) < 1e-9)
        #expect(abs(own.coverage - 0.4) < 1e-12)
        #expect(ForcedScoreRule(minimumTokens: 1).passes(own))
        #expect(!ForcedScoreRule(minimumTokens: 1).passes(scores[1]))
    }

    @Test(
        "over two windows, spanScores encodes the last window first (the one the transcription left) and gives the parts in window order",
        .enabled(
            if: whisperModelFile("whisper_tokenizer.json") != nil,
            "whisper_tokenizer.json is not built (bash .ci/setup)"))
    func spanScoresTwoWindows() throws {
        let tokenizer = try DecodingLoopTests.tokenizer()
        let words = tokenizer.encode(" الحمد لله رب العالمين")
        let model = RecordingEncodes(saying: words)
        let transcriber = try WhisperTranscriber(model: model, tokenizer: tokenizer)
        let speech = (0..<(40 * 16_000)).map { Float(0.3 * Foundation.sin(Double($0) * 0.3)) }
        let features = WhisperFeatures.logMel(of: speech)
        let transcription = try transcriber.transcribe(features: features)
        #expect(transcription.windows.map(\.startSeconds) == [0, 30])
        model.encoded = []
        let text = SpokenText(
            words: ["الحمد", "لله", "رب", "العالمين"],
            letters: ["الحمد", "لله", "رب", "العالمين"].map { Array($0.unicodeScalars) })
        let scores = try transcriber.spanScores(
            texts: [text], features: features, transcription: transcription,
            letters: { Array($0.unicodeScalars.filter { $0 != " " }) })
        #expect(model.encoded == [features.window(startingAt: 3000), features.window(startingAt: 0)])
        #expect(scores[0].parts.map(\.text.windowStartSeconds) == [0, 30])
        #expect(scores[0].parts.map(\.transcript.windowStartSeconds) == [0, 30])
    }

    @Test(
        "transcribeScoringSpans gives transcribe then spanScores' results, encoding each window once",
        .enabled(
            if: whisperModelFile("whisper_tokenizer.json") != nil,
            "whisper_tokenizer.json is not built (bash .ci/setup)"))
    func transcribeScoringSpansInOnePass() throws {
        let tokenizer = try DecodingLoopTests.tokenizer()
        let words = tokenizer.encode(" الحمد لله رب العالمين")
        let speech = (0..<(70 * 16_000)).map { Float(0.3 * Foundation.sin(Double($0) * 0.3)) }
        let features = WhisperFeatures.logMel(of: speech)
        let texts = [["قال", "الحمد", "لله", "رب", "العالمين"], ["سبحان", "ربي"]].map {
            SpokenText(words: $0, letters: $0.map { Array($0.unicodeScalars) })
        }
        let letters = { (text: String) in Array(text.unicodeScalars.filter { $0 != " " }) }
        let separate = try WhisperTranscriber(model: RecordingEncodes(saying: words), tokenizer: tokenizer)
        let transcription = try separate.transcribe(features: features)
        let spans = try separate.spanScores(
            texts: texts, features: features, transcription: transcription, letters: letters)
        let model = RecordingEncodes(saying: words)
        let onePass = try WhisperTranscriber(model: model, tokenizer: tokenizer)
        let both = try onePass.transcribeScoringSpans(texts: texts, features: features, letters: letters)
        #expect(both.transcription == transcription)
        #expect(both.spans == spans)
        #expect(both.spans[0].parts.count == 3)
        #expect(model.encoded == [0, 3000, 6000].map { features.window(startingAt: $0) })
    }
}

/// A ``TableModel`` that keeps each window it is asked to encode.
final class RecordingEncodes: WhisperStepModel {
    let table: TableModel
    var encoded: [[Float]] = []
    init(saying words: [Int]) { table = TableModel(saying: words) }
    var vocabularySize: Int { table.vocabularySize }
    var maxPositions: Int { table.maxPositions }
    func encode(melWindow: [Float]) throws(ProofkitError) {
        encoded.append(melWindow)
        try table.encode(melWindow: melWindow)
    }
    func resetTokens() { table.resetTokens() }
    func logits(appending tokens: [Int]) throws(ProofkitError) -> [[Float]] { try table.logits(appending: tokens) }
}
