import Foundation
import ProofkitCore
import TestSupport
import Testing

@testable import SpeechRecognition

/// A Whisper file from the models build: `$PROOFKIT_MODELS/NAME`, else `Models/generated/NAME`.
func whisperModelFile(_ name: String) -> String? {
    var folders: [String] = []
    if let explicit = ProcessInfo.processInfo.environment["PROOFKIT_MODELS"], !explicit.isEmpty {
        folders.append(explicit)
    }
    folders.append(TestEnvironment.packageRoot.appendingPathComponent("Models/generated").path)
    for folder in folders where FileManager.default.fileExists(atPath: folder + "/" + name) {
        return folder + "/" + name
    }
    return nil
}

@Suite("Whisper log-mel front end")
struct LogMelTests {
    @Test("the mixed-radix FFT equals a direct DFT", arguments: [400, 60, 8, 25, 1024])
    func fftMatchesDFT(length: Int) {
        var generator = SyntheticAudio.Generator(seed: UInt64(length))
        let inputReal = (0..<length).map { _ in Double(generator.uniform()) }
        let inputImaginary = (0..<length).map { _ in Double(generator.uniform()) }
        var real = inputReal
        var imaginary = inputImaginary
        var fft = MixedRadixFFT(length: length)
        fft.transform(real: &real, imaginary: &imaginary)
        for k in 0..<length {
            var sumReal = 0.0
            var sumImaginary = 0.0
            for n in 0..<length {
                let angle = -2 * Double.pi * Double(k * n) / Double(length)
                sumReal += inputReal[n] * Foundation.cos(angle) - inputImaginary[n] * Foundation.sin(angle)
                sumImaginary += inputReal[n] * Foundation.sin(angle) + inputImaginary[n] * Foundation.cos(angle)
            }
            #expect(abs(real[k] - sumReal) < 1e-9 && abs(imaginary[k] - sumImaginary) < 1e-9, "bin \(k)")
        }
    }

    @Test("the engine's own cosine, log and exp agree with libm")
    func elementaryFunctions() {
        for x in stride(from: -20.0, through: 20.0, by: 0.37) {
            #expect(abs(SpeechRecognition.cosine(x) - Foundation.cos(x)) < 1e-12)
            #expect(abs(exponential(x) - Foundation.exp(x)) <= 1e-13 * Foundation.exp(x))
        }
        for x in [1e-10, 1e-3, 0.5, 1, 2, 3.7, 1000, 1e12] {
            #expect(abs(logarithm(x) - Foundation.log(x)) < 1e-12 * max(1, abs(Foundation.log(x))))
        }
    }

    @Test("the eight-lane exp agrees with libm to 2 ulp, subnormals included, and keeps 0 and NaN")
    func vectorExponential() {
        var worst = 0.0
        for x in stride(from: -707.9, through: 709.7, by: 0.0137) {
            let arguments = [x, x / 3, -x / 7, x * 1e-9, -x, x / 2, 0.5 - x / 1000, x * 0.999]
            let lanes = exponential(SIMD8(arguments))
            for (lane, argument) in arguments.enumerated() {
                let exact = Foundation.exp(argument)
                if exact >= Double.leastNormalMagnitude {
                    worst = max(worst, abs(lanes[lane] - exact) / exact)
                } else {
                    #expect(abs(lanes[lane] - exact) <= 2 * exact.ulp, "e^\(argument)")
                }
            }
        }
        #expect(worst <= 2 * Double.ulpOfOne, "largest relative error \(worst)")
        // Subnormal results, within 2 of the smallest steps, and the ends.
        let small: [Double] = [-709, -720, -740, -745.1, -708.5, -744, -730, -711]
        let smallLanes = exponential(SIMD8(small))
        for (lane, argument) in small.enumerated() {
            #expect(
                abs(smallLanes[lane] - Foundation.exp(argument)) <= 2 * Foundation.exp(argument).ulp, "e^\(argument)")
        }
        let ends = exponential(SIMD8(-.infinity, -800, .nan, 0, 709.78, -745.3, 1, -1))
        #expect(ends[0] == 0 && ends[1] == 0 && ends[2].isNaN && ends[3] == 1 && ends[5] == 0)
        #expect(abs(ends[4] - Foundation.exp(709.78)) <= 2 * Foundation.exp(709.78).ulp)
    }

    @Test(
        "log softmax of a Whisper-sized row agrees with a direct sum in Double, masked or not",
        arguments: [0, 7, 51_864])
    func logSoftmaxAgrees(index: Int) {
        var generator = SplitMix64(seed: UInt64(index) + 11)
        let row = (0..<51_865).map { _ in Float.random(in: -12...18, using: &generator) }
        let masked = (0..<51_865).map { $0 % 5 == 1 && $0 != index }
        for mask in [[], masked] {
            let isMasked = { (i: Int) in !mask.isEmpty && mask[i] }
            let maximum = row.indices.filter { !isMasked($0) }.map { row[$0] }.max()!
            let sum = row.indices.filter { !isMasked($0) }.reduce(0.0) {
                $0 + Foundation.exp(Double(row[$1] - maximum))
            }
            let direct = Double(row[index] - maximum) - Foundation.log(sum)
            let fast = WhisperTranscriber.logSoftmax(row, at: index, masked: mask)
            #expect(abs(fast - direct) <= 1e-12, "mask \(mask.isEmpty ? "none" : "every fifth"): \(fast) vs \(direct)")
        }
        // A row whose length is not a multiple of 4 (the last lanes are padding) and one value.
        #expect(abs(WhisperTranscriber.logSoftmax([1, 2, 3, 4, 5], at: 4) - (-0.451_914_395_937_593)) < 1e-12)
        #expect(WhisperTranscriber.logSoftmax([3], at: 0) == 0)
    }

    @Test("the periodic Hann window is numpy.hanning(401)[:-1]")
    func hannWindow() {
        let window = WhisperFeatures.hannWindow
        #expect(window.count == 400)
        #expect(window[0] == 0)
        #expect(abs(window[200] - 1) < 1e-7)
        // Periodic: symmetric about 200, not about 199.5.
        for n in 1..<200 { #expect(abs(window[n] - window[400 - n]) < 1e-6) }
    }

    @Test("each Slaney-normalised mel filter has unit area in Hz, and the centres follow the Slaney scale")
    func filterArea() {
        let columns = 201
        let filters = WhisperFeatures.melFilters
        #expect(filters.count == 80 * columns)
        for bin in 0..<80 {
            let row = filters[(bin * columns)..<((bin + 1) * columns)]
            #expect(row.allSatisfy { $0 >= 0 })
            let nonzero = row.filter { $0 > 0 }.count
            // The triangles are sampled every 40 Hz: the area is exact only when they are wide.
            if nonzero >= 12 {
                let area = row.reduce(0) { $0 + Double($1) } * 40
                #expect(abs(area - 1) < 0.03, "filter \(bin): area \(area)")
            }
        }
        // Linear below 1 kHz (200/3 Hz per mel), logarithmic above; the top edge is 8 kHz.
        let centres = WhisperFeatures.melCentres
        #expect(abs(WhisperFeatures.hzToMel(1000) - 15) < 1e-12)
        #expect(abs(WhisperFeatures.melToHz(WhisperFeatures.hzToMel(5000)) - 5000) < 1e-9)
        #expect(centres.first! > 20 && centres.first! < 40)
        #expect(centres.last! > 7000 && centres.last! < 8000)
        #expect(zip(centres, centres.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test(
        "a pure tone's energy lands in the mel bin centred nearest its frequency",
        arguments: [300.0, 1000.0, 2500.0, 6000.0])
    func pureTone(frequency: Double) {
        let samples = (0..<16_000).map { Float(0.5 * Foundation.sin(2 * Double.pi * frequency * Double($0) / 16_000)) }
        let features = WhisperFeatures.logMel(of: samples)
        #expect(features.bins == 80)
        #expect(features.frames == 101)  // (16000 + 160) / 160
        #expect(features.contentFrames == 100)
        var energy = [Double](repeating: 0, count: 80)
        for bin in 0..<80 { for frame in 10..<90 { energy[bin] += Double(features[bin, frame]) } }
        let loudest = energy.indices.max { energy[$0] < energy[$1] }!
        let centres = WhisperFeatures.melCentres
        let nearest = centres.indices.min { abs(centres[$0] - frequency) < abs(centres[$1] - frequency) }!
        #expect(abs(loudest - nearest) <= 1, "tone \(frequency) Hz: loudest bin \(loudest), nearest centre \(nearest)")
        // Whisper's scaling: the maximum is (log10(max) + 4) / 4 and nothing is below max - 2.
        let maximum = features.values.max()!
        #expect(features.values.min()! >= maximum - 2 - 1e-6)
    }

    @Test("silence is the floor everywhere, and windows are padded with 0")
    func silence() {
        let features = WhisperFeatures.logMel(of: [Float](repeating: 0, count: 4800))
        #expect(features.frames == 31)
        #expect(features.values.allSatisfy { abs($0 - (-10 + 4) / 4) < 1e-6 })
        let window = features.window(startingAt: 0)
        #expect(window.count == 80 * 3000)
        #expect(window[0] == features[0, 0])
        #expect(window[29] == features[0, 29])
        #expect(features.contentFrames == 30)
        #expect(window[30] == 0 && window[2999] == 0 && window[3000] == features[1, 0])
    }

    @Test(
        "the front end matches faster-whisper's numpy FeatureExtractor (whisper_mel_reference.json)",
        .enabled(
            if: whisperModelFile("whisper_mel_reference.json") != nil,
            "whisper_mel_reference.json is not built (bash .ci/setup)"))
    func reference() throws {
        let path = try #require(whisperModelFile("whisper_mel_reference.json"))
        let root = try JSONReader.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        let signalPath = try #require(whisperModelFile("whisper_mel_reference_signal.f32"))
        let raw = try Data(contentsOf: URL(fileURLWithPath: signalPath))
        let bytes = [UInt8](raw)
        var signal: [Float] = []
        for offset in stride(from: 0, to: bytes.count - 3, by: 4) {
            var bits = UInt32(bytes[offset])
            bits |= UInt32(bytes[offset + 1]) << 8
            bits |= UInt32(bytes[offset + 2]) << 16
            bits |= UInt32(bytes[offset + 3]) << 24
            signal.append(Float(bitPattern: bits))
        }
        #expect(signal.count == root["samples"]?.integer)
        let rowsNode = root["log_mel"]
        let expectedRows = try #require(rowsNode?.array)
        let expected = expectedRows.map { $0.array!.compactMap(\.number) }
        let features = WhisperFeatures.logMel(of: signal)
        #expect(expected.count == 80)
        #expect(features.contentFrames == root["frames"]?.integer)
        let frames = features.contentFrames
        var worst = 0.0
        for bin in 0..<80 {
            for frame in 0..<frames { worst = max(worst, abs(Double(features[bin, frame]) - expected[bin][frame])) }
        }
        // The filterbank itself, against librosa's (the build's).
        if let filterRows = root["mel_filters"]?.array {
            var worstFilter = 0.0
            for (bin, row) in filterRows.enumerated() {
                for (k, value) in (row.array ?? []).enumerated() {
                    worstFilter = max(
                        worstFilter, abs(Double(WhisperFeatures.melFilters[bin * 201 + k]) - (value.number ?? .nan)))
                }
            }
            #expect(worstFilter < 1e-7, "largest filter difference \(worstFilter)")
        }
        #expect(worst < 1e-4, "largest difference \(worst)")
    }
}

@Suite("Whisper tokenizer")
struct TokenizerTests {
    @Test("GPT-2's pre-tokenizer splits as its regular expression does")
    func preTokenizer() {
        #expect(WhisperTokenizer.preTokenize("Hello world's  test") == ["Hello", " world", "'s", " ", " test"])
        #expect(
            WhisperTokenizer.preTokenize(" الْحَمْدُ لِلَّهِ") == [
                " ال", "ْ", "ح", "َ", "م", "ْ", "د", "ُ", " ل", "ِ", "ل", "َّ", "ه", "ِ",
            ])
        #expect(WhisperTokenizer.preTokenize("a1 23!? x  ") == ["a", "1", " 23", "!?", " x", "  "])
        #expect(WhisperTokenizer.preTokenize("line\nnext") == ["line", "\n", "next"])
    }

    /// A byte-level BPE in the tokenizer.json format, small enough to check by hand.
    static func tinyTokenizer() throws -> WhisperTokenizer {
        var vocab: [String] = []
        for byte in 0..<256 { vocab.append("\"\(escape(String(WhisperTokenizer.byteToUnicode[byte])))\": \(byte)") }
        vocab.append("\"ab\": 256")
        vocab.append("\"abc\": 257")
        vocab.append("\"Ġab\": 258")
        vocab.append("\"bc\": 259")
        let json = """
            {"added_tokens": [{"id": 260, "content": "<|endoftext|>"}, {"id": 261, "content": "<|ar|>"}],
             "model": {"type": "BPE", "vocab": {\(vocab.joined(separator: ", "))},
                       "merges": ["a b", "ab c", "Ġ ab", "b c"]}}
            """
        return try WhisperTokenizer(json: Array(json.utf8))
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    @Test(
        "merges apply by the merged token's id (tiktoken's rank), bytes outside the merges stay single, special ids come from added_tokens"
    )
    func tinyMerges() throws {
        let tokenizer = try Self.tinyTokenizer()
        #expect(tokenizer.encode("abc") == [257])  // a b -> ab (rank 0), ab c -> abc (rank 1)
        #expect(tokenizer.encode("bc") == [259])
        #expect(tokenizer.encode("abc ab") == [257, 258])
        #expect(tokenizer.encode("é") == [0xC3, 0xA9])  // two UTF-8 bytes
        #expect(tokenizer.decode([257, 258, 0xC3, 0xA9, 260]) == "abc abé")
        #expect(tokenizer.specialID("<|ar|>") == 261)
        #expect(tokenizer.firstSpecialID == 260)
    }

    @Test(
        "the real tokenizer: special ids, and text round-trips in Arabic and English",
        .enabled(
            if: whisperModelFile("whisper_tokenizer.json") != nil,
            "whisper_tokenizer.json is not built (bash .ci/setup)"))
    func realTokenizer() throws {
        let path = try #require(whisperModelFile("whisper_tokenizer.json"))
        let tokenizer = try WhisperTokenizer(json: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(tokenizer.specialID("<|endoftext|>") == 50257)
        #expect(tokenizer.specialID("<|startoftranscript|>") == 50258)
        #expect(tokenizer.specialID("<|en|>") == 50259)
        #expect(tokenizer.specialID("<|ar|>") == 50272)
        #expect(tokenizer.specialID("<|transcribe|>") == 50359)
        #expect(tokenizer.specialID("<|notimestamps|>") == 50363)
        #expect(tokenizer.firstSpecialID == 50257)
        for text in [
            " الحمد لله الذي أحيانا بعد ما أماتنا وإليه النشور",
            " الْحَمْدُ لِلَّهِ رَبِّ الْعَالَمِينَ",
            " The quick brown fox jumps over the lazy dog.",
            " Don't stop: 1234, ok?",
        ] {
            let ids = tokenizer.encode(text)
            #expect(!ids.isEmpty && ids.allSatisfy { $0 < 50257 })
            #expect(tokenizer.decode(ids) == text)
            #expect(tokenizer.decode([50258, 50272, 50359, 50363] + ids + [50257, 50400]) == text)
        }
        // Common words are single tokens; BPE gives fewer tokens than bytes.
        #expect(tokenizer.encode(" the").count == 1)
        let arabic = tokenizer.encode(" الحمد لله")
        #expect(arabic.count < Array(" الحمد لله".utf8).count / 2)
        // Whisper's vocabulary.txt (one token per line, id = line) agrees with tokenizer.json.
        if let vocabulary = whisperModelFile("whisper_vocabulary.txt") {
            let lines = try String(contentsOfFile: vocabulary, encoding: .utf8).split(
                separator: "\n", omittingEmptySubsequences: false)
            #expect(lines[Int(tokenizer.encode(" the")[0])] == "Ġthe")
        }
    }
}

/// A small deterministic language model: each token's successor is fixed by a table, given as
/// logits with a margin, and the window's encoding picks one of two tables. Exercises the loop's
/// rules (prompt, suppression, caps, repetition, forced scores) without a neural network.
final class TableModel: WhisperStepModel {
    let vocabularySize = 51_865
    let maxPositions = 448
    var next: [Int: Int]
    var noSpeechFirst = false
    var positions = 0
    var fed: [[Int]] = []

    init(next: [Int: Int]) { self.next = next }

    /// A model that says `words` after the no-timestamps prompt token, then ends the text.
    convenience init(saying words: [Int]) {
        var table: [Int: Int] = [50363: words[0]]
        for (a, b) in zip(words, words.dropFirst()) { table[a] = b }
        table[words.last!] = 50257
        self.init(next: table)
    }

    func encode(melWindow: [Float]) throws(ProofkitError) {
        noSpeechFirst = melWindow.allSatisfy { $0 == 0 }
        resetTokens()
    }

    func resetTokens() { positions = 0 }

    func logits(appending tokens: [Int]) throws(ProofkitError) -> [[Float]] {
        guard positions + tokens.count <= maxPositions else {
            throw ProofkitError(.invalidArgument, "past the positions")
        }
        fed.append(tokens)
        positions += tokens.count
        return tokens.map { token in
            var row = [Float](repeating: 0, count: vocabularySize)
            if token == 50258 && noSpeechFirst { row[50362] = 13 }
            if let successor = next[token] { row[successor] = 5 }
            row[220] += 4  // a blank, which is suppressed at the first step only
            return row
        }
    }
}

@Suite("Whisper greedy decoding loop")
struct DecodingLoopTests {
    static func tokenizer() throws -> WhisperTokenizer {
        guard let path = whisperModelFile("whisper_tokenizer.json") else { throw SkipError() }
        return try WhisperTokenizer(json: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }
    struct SkipError: Error {}

    static let speech = (0..<32_000).map { Float(0.3 * Foundation.sin(Double($0) * 0.3)) }

    @Test(
        "the prompt, suppression at the first step, end of text, and the text of the tokens",
        .enabled(
            if: whisperModelFile("whisper_tokenizer.json") != nil,
            "whisper_tokenizer.json is not built (bash .ci/setup)"))
    func prompt() throws {
        let tokenizer = try Self.tokenizer()
        let words = tokenizer.encode(" الحمد لله")
        let model = TableModel(saying: words)
        let transcriber = try WhisperTranscriber(model: model, tokenizer: tokenizer)
        let result = try transcriber.transcribe(samples: Self.speech)
        #expect(model.fed.first == [50258, 50272, 50359, 50363])
        #expect(result.text == "الحمد لله")
        #expect(result.windows.count == 1 && result.windows[0].stop == .endOfText)
        #expect(result.windows[0].meanLogProbability < 0)
    }

    @Test(
        "a loop stops at the repetition limit and keeps one copy; the token cap bounds the rest",
        .enabled(
            if: whisperModelFile("whisper_tokenizer.json") != nil,
            "whisper_tokenizer.json is not built (bash .ci/setup)"))
    func repetitionAndCap() throws {
        let tokenizer = try Self.tokenizer()
        let a = tokenizer.encode(" نعم")[0]
        let b = tokenizer.encode(" لا")[0]
        let looping = TableModel(next: [50363: a, a: b, b: a])
        let result = try WhisperTranscriber(model: looping, tokenizer: tokenizer).transcribe(samples: Self.speech)
        #expect(result.windows[0].stop == .repetition)
        #expect(result.windows[0].tokens == [a, b])
        // Without the repetition rule, the cap ends the window.
        let capped = TableModel(next: [50363: a, a: b, b: a])
        let options = WhisperDecodingOptions(maxTokensPerWindow: 30, repetitionLimit: 0)
        let long = try WhisperTranscriber(model: capped, tokenizer: tokenizer, options: options).transcribe(
            samples: Self.speech)
        #expect(long.windows[0].stop == .tokenCap && long.windows[0].tokens.count == 30)
        #expect(long.decoderSteps < 30)
    }

    @Test(
        "repetitionCut finds the shortest repeating tail",
        arguments: [
            ([1, 2, 3, 3, 3, 3], 4, 3),  // single token four times: keep up to the first copy
            ([9, 1, 2, 1, 2, 1, 2, 1, 2], 4, 3),
            ([1, 2, 1, 2, 1, 2], 4, -1),  // three copies are allowed
            ([5, 5, 5], 4, -1),
        ])
    func repetitionCut(tokens: [Int], limit: Int, keep: Int) {
        #expect(WhisperTranscriber.repetitionCut(tokens, limit: limit, maxLength: 8) == (keep < 0 ? nil : keep))
    }

    @Test(
        "long input: one window per 30 s, and over the limit nothing runs",
        .enabled(
            if: whisperModelFile("whisper_tokenizer.json") != nil,
            "whisper_tokenizer.json is not built (bash .ci/setup)"))
    func windowsAndLimit() throws {
        let tokenizer = try Self.tokenizer()
        let model = TableModel(next: [50363: 50257])
        let transcriber = try WhisperTranscriber(
            model: model, tokenizer: tokenizer, options: WhisperDecodingOptions(maxWindows: 2))
        let minute = [Float](repeating: 0.1, count: 16_000 * 55)
        let result = try transcriber.transcribe(samples: minute)
        #expect(result.windows.map(\.startSeconds) == [0, 30])
        model.fed = []
        #expect(throws: ProofkitError.self) { try transcriber.transcribe(samples: minute + minute) }
        #expect(model.fed.isEmpty)
    }

    @Test(
        "no speech: a window the model marks <|nospeech|> with a low log-probability is empty",
        .enabled(
            if: whisperModelFile("whisper_tokenizer.json") != nil,
            "whisper_tokenizer.json is not built (bash .ci/setup)"))
    func noSpeech() throws {
        let tokenizer = try Self.tokenizer()
        // An all-zero window (the TableModel's "silence") with a weak, flat continuation.
        let model = TableModel(next: [:])
        let transcriber = try WhisperTranscriber(
            model: model, tokenizer: tokenizer, options: WhisperDecodingOptions(maxTokensPerWindow: 10))
        try model.encode(melWindow: [Float](repeating: 0, count: 240_000))
        let result = try transcriber.transcribe(
            features: LogMelSpectrogram(
                bins: 80, frames: 100, contentFrames: 100, values: [Float](repeating: 0, count: 8000)))
        #expect(result.windows[0].stop == .noSpeech)
        #expect(result.windows[0].noSpeechProbability > 0.6)
        #expect(result.text.isEmpty)
    }

    @Test(
        "forced scoring: one pass over prompt + text, each token's log-softmax",
        .enabled(
            if: whisperModelFile("whisper_tokenizer.json") != nil,
            "whisper_tokenizer.json is not built (bash .ci/setup)"))
    func forcedScore() throws {
        let tokenizer = try Self.tokenizer()
        let words = tokenizer.encode(" الحمد لله")
        let model = TableModel(saying: words)
        let transcriber = try WhisperTranscriber(model: model, tokenizer: tokenizer)
        let rightScore = try transcriber.score(text: "الحمد لله", samples: Self.speech)
        let right = try #require(rightScore)
        #expect(model.fed.last == [50258, 50272, 50359, 50363] + words)
        #expect(right.tokens == words + [50257])
        // Each expected token has logit 5 (+4 on the blank) against 0 elsewhere.
        let expected = 5 - Foundation.log(Foundation.exp(5.0) + Foundation.exp(4.0) + 51_863)
        for value in right.logProbabilities { #expect(abs(value - expected) < 1e-6) }
        let wrongScore = try transcriber.score(text: "سبحان ربي", samples: Self.speech)
        let wrong = try #require(wrongScore)
        #expect(wrong.meanLogProbability < right.meanLogProbability - 3)
    }
}

@Suite("The forced-score rule")
struct ForcedScoreRuleTests {
    static func score(_ values: [Double]) -> ForcedScore {
        ForcedScore(tokens: Array(0..<values.count), logProbabilities: values)
    }

    @Test(
        "the ratio is the text's mean log-probability minus the transcript's; it passes within the margin, with enough tokens"
    )
    func rule() {
        let transcript = Self.score(Array(repeating: -0.2, count: 20))
        let read = Self.score(Array(repeating: -0.2 - 0.3, count: 20))  // spelt differently in places
        let other = Self.score(Array(repeating: -3.5, count: 20))
        #expect(abs((ForcedScoreRule.ratio(text: read, transcript: transcript) ?? 9) + 0.3) < 1e-12)
        #expect(abs((ForcedScoreRule.ratio(text: other, transcript: transcript) ?? 9) + 3.3) < 1e-12)
        let rule = ForcedScoreRule()
        #expect(rule.passes(text: read, transcript: transcript))
        #expect(!rule.passes(text: other, transcript: transcript))
        // Just inside and just outside the margin.
        let edge = ForcedScoreRule(margin: 1, minimumTokens: 1)
        #expect(edge.passes(text: Self.score(Array(repeating: -1.15, count: 10)), transcript: transcript))
        #expect(!edge.passes(text: Self.score(Array(repeating: -1.25, count: 10)), transcript: transcript))
        // Too short a text, no transcript (the model wrote nothing), no text score: never passes.
        let short = Self.score(Array(repeating: -0.2, count: ForcedScoreRule.defaultMinimumTokens - 1))
        #expect(!rule.passes(text: short, transcript: transcript))
        #expect(!rule.passes(text: read, transcript: nil))
        #expect(!rule.passes(text: read, transcript: Self.score([-0.1])))  // <|endoftext|> alone
        #expect(!rule.passes(text: nil, transcript: transcript))
        #expect(ForcedScoreRule.ratio(text: read, transcript: nil) == nil)
    }

    @Test(
        "scores(texts:) encodes each window once, scores every text and the window's own transcript there",
        .enabled(
            if: whisperModelFile("whisper_tokenizer.json") != nil,
            "whisper_tokenizer.json is not built (bash .ci/setup)"))
    func scoresOnOneEncoding() throws {
        let tokenizer = try DecodingLoopTests.tokenizer()
        let words = tokenizer.encode(" الحمد لله رب العالمين")
        let model = TableModel(saying: words)
        let transcriber = try WhisperTranscriber(model: model, tokenizer: tokenizer)
        let features = WhisperFeatures.logMel(of: DecodingLoopTests.speech)
        let transcription = try transcriber.transcribe(features: features)
        #expect(transcription.windows.first?.tokens == words)
        model.fed = []
        let scores = try transcriber.scores(
            texts: ["الحمد لله رب العالمين", "سبحان ربي العظيم"], features: features, transcription: transcription)
        #expect(scores.count == 2)
        // One pass for the transcript, one per text with tokens; the prompt starts each.
        #expect(model.fed.count == 3)
        #expect(model.fed.allSatisfy { Array($0.prefix(4)) == [50258, 50272, 50359, 50363] })
        let same = try #require(scores[0])
        let transcriptScore = try #require(same.transcript)
        #expect(transcriptScore.tokens == words + [50257])
        #expect(abs(ForcedScoreRule.ratio(text: same.text, transcript: same.transcript) ?? 9) < 1e-9)
        #expect(ForcedScoreRule(minimumTokens: 1).passes(text: same.text, transcript: same.transcript))
        let other = try #require(scores[1])
        #expect(!ForcedScoreRule(minimumTokens: 1).passes(text: other.text, transcript: other.transcript))
    }
}
