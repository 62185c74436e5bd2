import Foundation
import ImageProof
import ProofkitCore
import TestSupport
import Testing

/// The synthetic 123x77 source of the resampling fixtures (same formula as the Python script).
private func resampleSource() -> RGBImage {
    var pixels: [UInt8] = []
    for y in 0..<77 {
        for x in 0..<123 {
            pixels.append(UInt8((x * 7 + y * 3) % 256))
            pixels.append(UInt8((x * x + y * 11) % 256))
            pixels.append(UInt8(((x ^ y) * 5) % 256))
        }
    }
    return RGBImage(width: 123, height: 77, pixels: pixels)
}

private func floats(_ value: Any?) -> [Float] {
    (value as? [Any] ?? []).compactMap { ($0 as? NSNumber)?.floatValue }
}

private func doubles(_ value: Any?) -> [Double] {
    (value as? [Any] ?? []).compactMap { ($0 as? NSNumber)?.doubleValue }
}

@Suite("ImageResampler matches Pillow's resize byte for byte")
struct ResamplerTests {
    @Test("the committed Pillow outputs are reproduced exactly")
    func pillowExact() throws {
        let source = resampleSource()
        #expect(source.pixels == (try ImageFixtures.bytes("resample_source.rgb")))
        let cases = try #require(try ImageFixtures.expected()["resample"] as? [[String: Any]])
        #expect(cases.count == 12)
        for entry in cases {
            let filter = try #require(ResamplingFilter(rawValue: entry["filter"] as? String ?? ""))
            let width = try #require(entry["width"] as? Int)
            let height = try #require(entry["height"] as? Int)
            let expected = try ImageFixtures.bytes(try #require(entry["file"] as? String))
            let resized = ImageResampler.resize(source, width: width, height: height, filter: filter)
            #expect(resized.width == width && resized.height == height)
            let mismatches = zip(resized.pixels, expected).filter { $0 != $1 }.count
            #expect(mismatches == 0, "\(filter) \(width)x\(height): \(mismatches) bytes differ")
        }
    }

    @Test("a solid image stays solid at any size, and an unchanged size is a copy")
    func solid() {
        let solid = RGBImage(width: 37, height: 23, red: 200, green: 10, blue: 99)
        for filter in ResamplingFilter.allCases {
            let small = ImageResampler.resize(solid, width: 5, height: 4, filter: filter)
            #expect(small == RGBImage(width: 5, height: 4, red: 200, green: 10, blue: 99))
            let big = ImageResampler.resize(solid, width: 80, height: 50, filter: filter)
            #expect(big == RGBImage(width: 80, height: 50, red: 200, green: 10, blue: 99))
        }
        #expect(ImageResampler.resize(solid, width: 37, height: 23, filter: .bicubic) == solid)
    }
}

@Suite("Preprocessing for EfficientNet-Lite0")
struct PreprocessingTests {
    @Test("the shorter side goes to 256 and the other keeps the aspect ratio")
    func sizes() {
        let recipe = ImagePreprocessing.efficientNetLite0
        #expect(recipe.resizedSize(width: 1600, height: 1200) == (341, 256))
        #expect(recipe.resizedSize(width: 1200, height: 1600) == (256, 341))
        #expect(recipe.resizedSize(width: 705, height: 1600) == (256, 581))
        #expect(recipe.resizedSize(width: 823, height: 823) == (256, 256))
        #expect(recipe.resizedSize(width: 100, height: 50) == (512, 256))
    }

    @Test("the centre crop starts at floor((w - 224) / 2), like the reference pipeline")
    func cropOrigin() {
        let photo = PreparedPhoto(RGBImage(width: 1600, height: 1200, red: 1, green: 2, blue: 3))
        #expect(photo.resized.width == 341 && photo.resized.height == 256)
        #expect(photo.origin(of: .center) == (58, 16))  // (341 - 224) / 2 = 58.5 -> 58
        #expect(photo.origin(of: .start) == (0, 16))
        #expect(photo.origin(of: .end) == (117, 16))
        #expect(photo.origin(of: .offset(x: 500, y: -3)) == (117, 0))
        let portrait = PreparedPhoto(RGBImage(width: 300, height: 500, red: 1, green: 2, blue: 3))
        #expect(portrait.origin(of: .start) == (16, 0))
        #expect(portrait.origin(of: .end) == (16, 203))
    }

    @Test("the tensor is NCHW float32 with (RGB - 127) / 128")
    func tensorLayout() throws {
        // A 256x256 image (no resize) whose pixel at (x, y) is (x, y, 255 - x).
        var pixels: [UInt8] = []
        for y in 0..<256 {
            for x in 0..<256 { pixels += [UInt8(x), UInt8(y), UInt8(255 - x)] }
        }
        let photo = PreparedPhoto(RGBImage(width: 256, height: 256, pixels: pixels))
        let tensor = photo.tensor()
        #expect(tensor.shape == [1, 3, 224, 224])
        let plane = 224 * 224
        for (x, y) in [(0, 0), (10, 200), (223, 223)] {
            let sx = Float(x + 16)
            let sy = Float(y + 16)
            #expect(tensor.values[y * 224 + x] == (sx - 127) / 128)
            #expect(tensor.values[plane + y * 224 + x] == (sy - 127) / 128)
            #expect(tensor.values[2 * plane + y * 224 + x] == (255 - sx - 127) / 128)
        }
        let batch = photo.tensor([.center, .start, .fullFrame])
        #expect(batch.shape == [3, 3, 224, 224])
        #expect(Array(batch.values[0..<(3 * plane)]) == tensor.values)
        #expect(batch.values[3 * plane] == Float(0 - 127) / 128)  // .start of a square image: the left edge
    }

    @Test("brightness is the mean Rec.601 luma in 0...1")
    func brightness() {
        #expect(Brightness.meanLuma(RGBImage(width: 4, height: 4, red: 255, green: 255, blue: 255)) == 1)
        #expect(Brightness.meanLuma(RGBImage(width: 4, height: 4, red: 0, green: 0, blue: 0)) == 0)
        let red = Brightness.meanLuma(RGBImage(width: 3, height: 2, red: 255, green: 0, blue: 0))
        #expect(isApproximatelyEqual(red, 0.299, absoluteTolerance: 1e-12))
        let mixed = RGBImage(width: 2, height: 1, pixels: [10, 20, 30, 200, 100, 50])
        let luma: Double = 0.299 * 210 + 0.587 * 120 + 0.114 * 80
        let expected = luma / 510
        #expect(isApproximatelyEqual(Brightness.meanLuma(mixed), expected, absoluteTolerance: 1e-12))
    }

    @Test("invalid recipes are refused")
    func invalid() {
        #expect(throws: ProofkitError.self) { try ImagePreprocessing(shorterSide: 200, cropSize: 224) }
        #expect(throws: ProofkitError.self) { try ImagePreprocessing(standardDeviation: [1, 0, 1]) }
        #expect(throws: Never.self) { try ImagePreprocessing(shorterSide: 256, cropSize: 256, filter: .bilinear) }
    }
}

@Suite("Classifier reading and the CLIP scorer against numpy")
struct ScoringTests {
    @Test("softmax, class 741 and the top 5 equal numpy's")
    func softmax() throws {
        let cases = try #require(try ImageFixtures.numbers()["softmax"] as? [[String: Any]])
        #expect(cases.count == 3)
        for entry in cases {
            let reading = ClassifierReading(logits: floats(entry["logits"]))
            let p741 = try #require((entry["p741"] as? NSNumber)?.doubleValue)
            #expect(
                isApproximatelyEqual(reading.prayerRugScore, p741, relativeTolerance: 1e-9, absoluteTolerance: 1e-15))
            let top = try #require(entry["top5"] as? [[NSNumber]])
            let mine = reading.top(5)
            #expect(mine.map(\.index) == top.map { $0[0].intValue })
            for (a, b) in zip(mine, top) {
                #expect(isApproximatelyEqual(a.probability, b[1].doubleValue, relativeTolerance: 1e-9))
            }
            #expect(isApproximatelyEqual(reading.probabilities.reduce(0, +), 1, relativeTolerance: 1e-12))
        }
    }

    @Test("the engine's exp is accurate and softmax survives huge logits")
    func exponential() {
        let values: [(Double, Double)] = [
            (0, 1), (1, 2.718281828459045), (-1, 0.36787944117144233), (10, 22026.465794806718),
            (-20, 2.061153622438558e-09), (0.5, 1.6487212707001282), (-700, 9.85967654375977e-305),
        ]
        for (x, expected) in values {
            let probabilities = Softmax.probabilities([x, 0])
            // p0 = e^x / (e^x + 1): compare through the ratio p0 / p1 = e^x.
            #expect(isApproximatelyEqual(probabilities[0] / probabilities[1], expected, relativeTolerance: 1e-13))
        }
        let extreme = Softmax.probabilities([Float(1e30), 0, -Float(1e30)])
        #expect(extreme == [1, 0, 0])
        #expect(Softmax.top([0.1, 0.5, 0.5, 0.2], count: 3).map(\.index) == [1, 2, 3])
    }

    @Test("the CLIP mat share equals numpy's")
    func clip() throws {
        let clip = try #require(try ImageFixtures.numbers()["clip"] as? [String: Any])
        let mats = (clip["mat_prompts"] as? [Any] ?? []).map(floats)
        let others = (clip["other_prompts"] as? [Any] ?? []).map(floats)
        let scorer = try ClipPromptScorer(matPrompts: mats, otherPrompts: others)
        #expect(scorer.dimension == 512 && scorer.matPromptCount == 4)
        let cases = try #require(clip["cases"] as? [[String: Any]])
        var shares: [Double] = []
        for entry in cases {
            let score = scorer.score(imageEmbedding: floats(entry["image"]))
            let expected = try #require((entry["mat_share"] as? NSNumber)?.doubleValue)
            #expect(isApproximatelyEqual(score.matShare, expected, relativeTolerance: 1e-9, absoluteTolerance: 1e-12))
            for (a, b) in zip(score.promptProbabilities, doubles(entry["probabilities"])) {
                #expect(isApproximatelyEqual(a, b, relativeTolerance: 1e-9, absoluteTolerance: 1e-15))
            }
            shares.append(score.matShare)
        }
        // The cases run from unrelated to close to a mat prompt: the share must span the range.
        #expect((shares.min() ?? 1) < 0.1 && (shares.max() ?? 0) > 0.9)
    }

    @Test("CLIP prompt tables that cannot work are refused as invalid models")
    func clipInvalid() {
        #expect(throws: ProofkitError.self) { try ClipPromptScorer(matPrompts: [], otherPrompts: [[1]]) }
        #expect(throws: ProofkitError.self) { try ClipPromptScorer(matPrompts: [[1, 0]], otherPrompts: [[1]]) }
        #expect(throws: ProofkitError.self) { try ClipPromptScorer(matPrompts: [[0, 0]], otherPrompts: [[1, 0]]) }
    }

    @Test("the logistic head equals numpy's probability")
    func head() throws {
        let json = try #require(try ImageFixtures.numbers()["head"] as? [String: Any])
        let head = try LogisticHead(
            weights: floats(json["weights"]), bias: 0.25, mean: floats(json["mean"]), scale: floats(json["scale"]))
        #expect(head.dimension == 1280)
        for entry in try #require(json["cases"] as? [[String: Any]]) {
            let expected = try #require((entry["probability"] as? NSNumber)?.doubleValue)
            #expect(
                isApproximatelyEqual(head.probability(floats(entry["features"])), expected, relativeTolerance: 1e-9))
        }
        #expect(throws: ProofkitError.self) { try LogisticHead(weights: [1, 2], bias: 0, mean: [1]) }
        #expect(throws: ProofkitError.self) { try LogisticHead(weights: [1], bias: 0, scale: [0]) }
        #expect(CropAggregation.maximum.combine([0.1, 0.7, 0.2]) == 0.7)
        #expect(isApproximatelyEqual(CropAggregation.mean.combine([0.1, 0.7, 0.4]), 0.4, absoluteTolerance: 1e-15))
    }

    @Test("a head decodes from JSON with the documented schema")
    func headJSON() throws {
        let text = #"{"weights": [0.5, -1.5], "bias": 0.1, "threshold": 0.6}"#
        let head = try JSONDecoder().decode(LogisticHead.self, from: Data(text.utf8))
        try head.validate()
        #expect(head.threshold == 0.6 && head.mean == nil)
        let z = 0.1 + 0.5 * 2 - 1.5 * 1
        #expect(isApproximatelyEqual(head.probability([2, 1]), 1 / (1 + Foundation.exp(-z)), relativeTolerance: 1e-6))
        #expect(head.normalize == nil && head.acceptingThreshold == 0.6)
    }

    @Test("an L2-normalising head scores x / |x|: any positive multiple of a vector alike, zero as zero")
    func headL2() throws {
        let text = #"{"weights": [0.5, -1.5, 2], "bias": -0.2, "normalize": "l2"}"#
        let head = try JSONDecoder().decode(LogisticHead.self, from: Data(text.utf8))
        #expect(head.normalize == .l2 && head.acceptingThreshold == 0.5)
        let x: [Float] = [3, 4, 12]  // |x| = 13
        let dot: Double = 0.5 * 3 - 1.5 * 4 + 2 * 12
        let z: Double = Double(Float(-0.2)) + dot / 13
        let expected: Double = 1 / (1 + Foundation.exp(-z))
        #expect(isApproximatelyEqual(head.probability(x), expected, relativeTolerance: 1e-9))
        #expect(
            isApproximatelyEqual(
                head.probability([30, 40, 120]), head.probability([3, 4, 12]), relativeTolerance: 1e-12))
        let atZero: Double = 1 / (1 + Foundation.exp(-Double(Float(-0.2))))  // the bias is stored as a Float
        #expect(isApproximatelyEqual(head.probability([0, 0, 0]), atZero, relativeTolerance: 1e-12))
        #expect(throws: DecodingError.self) {
            _ = try JSONDecoder().decode(
                LogisticHead.self, from: Data(#"{"weights": [1], "bias": 0, "normalize": "l3"}"#.utf8))
        }
    }
}

@Suite("MatProofPolicy: verdicts and hints")
struct MatProofPolicyTests {
    @Test(
        "pass at the threshold, hints for failures by brightness",
        arguments: [
            (0.30, 0.50, true, nil), (0.2999, 0.50, false, MatProofPolicy.notAMatHint),
            (0.05, 0.17, false, MatProofPolicy.tooDarkHint), (0.05, 0.30, false, MatProofPolicy.notAMatHint),
            (0.90, 0.02, true, nil), (0.0, 0.2399, false, MatProofPolicy.tooDarkHint),
            (0.0, 0.24, false, MatProofPolicy.notAMatHint),
        ] as [(Double, Double, Bool, String?)])
    func lite0(score: Double, brightness: Double, accepted: Bool, hint: String?) throws {
        let policy = try MatProofPolicy(threshold: MatProofPolicy.lite0Threshold)
        let judgement = policy.judge(score: score, brightness: brightness)
        #expect(judgement.verdict.isAccepted == accepted)
        #expect(judgement.hint == hint)
        if case .rejected(let reason) = judgement.verdict {
            #expect(reason.kind == (hint == MatProofPolicy.tooDarkHint ? .tooDark : .notAMat))
        }
    }

    @Test("the CLIP threshold is 0.45; NaN never passes; bad thresholds are refused")
    func clipAndInvalid() throws {
        let clip = try MatProofPolicy(threshold: MatProofPolicy.clipThreshold)
        #expect(!clip.judge(score: 0.44, brightness: 0.5).verdict.isAccepted)
        #expect(clip.judge(score: 0.45, brightness: 0.5).verdict.isAccepted)
        #expect(!clip.judge(score: .nan, brightness: 0.5).verdict.isAccepted)
        #expect(throws: ProofkitError.self) { try MatProofPolicy(threshold: 1.5) }
        #expect(throws: ProofkitError.self) { try MatProofPolicy(threshold: 0.3, darkBrightness: -1) }
    }

    @Test(
        "the dark cut separates the shared set's dark photos from the rest",
        .enabled(if: TestEnvironment.sharedData != nil, "needs ../shared/data"))
    func darkCutOnReference() throws {
        let url = try #require(TestEnvironment.sharedData).appendingPathComponent("images/reference_scores.tsv")
        let rows = try String(contentsOf: url, encoding: .utf8).split(separator: "\n").dropFirst()
        var darkest = 1.0
        var brightestDark = 0.0
        for row in rows {
            let fields = row.split(separator: "\t")
            guard fields.count >= 5, let brightness = Double(fields[4]) else { continue }
            if fields[0].contains("_dark_") {
                brightestDark = max(brightestDark, brightness)
            } else {
                darkest = min(darkest, brightness)
            }
        }
        #expect(brightestDark < MatProofPolicy.defaultDarkBrightness - 0.05)
        #expect(darkest > MatProofPolicy.defaultDarkBrightness + 0.05)
    }
}

@Suite("ImageResampler against Pillow, live")
struct ResamplerLivePillowTests {
    @Test(
        "Pillow's resize, run now, is reproduced exactly",
        .enabled(if: ImageFixtures.hasPythonWithPillow, "needs .deps/venv with Pillow (or PROOFKIT_PYTHON)"))
    func regenerated() throws {
        let folder = try #require(ImageFixtures.regenerated, "the fixture script failed")
        let data = try Data(contentsOf: folder.appendingPathComponent("expected.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let cases = try #require(json["resample"] as? [[String: Any]])
        #expect(cases.count == 12)
        for entry in cases {
            let filter = try #require(ResamplingFilter(rawValue: entry["filter"] as? String ?? ""))
            let width = try #require(entry["width"] as? Int)
            let height = try #require(entry["height"] as? Int)
            let file = try #require(entry["file"] as? String)
            let expected = [UInt8](try Data(contentsOf: folder.appendingPathComponent(file)))
            let resized = ImageResampler.resize(resampleSource(), width: width, height: height, filter: filter)
            #expect(resized.pixels == expected, "\(filter) \(width)x\(height)")
        }
    }
}

@Suite("MatJudgement names the score that decided")
struct DecidingScoreTests {
    @Test("the head's probability when the head accepted, the enrolment's similarity when it did, else the score")
    func decidingScore() throws {
        let policy = try MatProofPolicy(threshold: 0.3)
        let byHead = policy.judge(MatEvidence(score: 0.05, head: (probability: 0.93, threshold: 0.9)), brightness: 0.5)
        #expect(byHead.acceptedBy == .head)
        #expect(byHead.judgement.decidedBy == .head && byHead.judgement.decidingScore == 0.93)
        #expect(byHead.judgement.verdict == .accepted(score: 0.93))
        #expect(byHead.judgement.score == 0.05, "score stays the model's class score")
        let byEnrolment = policy.judge(
            MatEvidence(
                score: 0.05, head: (probability: 0.2, threshold: 0.9), enrolment: (similarity: 0.8, threshold: 0.75)),
            brightness: 0.5)
        #expect(byEnrolment.judgement.decidedBy == .enrolment && byEnrolment.judgement.decidingScore == 0.8)
        let byScore = policy.judge(MatEvidence(score: 0.6, head: (probability: 0.99, threshold: 0.9)), brightness: 0.5)
        #expect(byScore.judgement.decidedBy == .score && byScore.judgement.decidingScore == 0.6)
        let rejected = policy.judge(MatEvidence(score: 0.1, head: (probability: 0.5, threshold: 0.9)), brightness: 0.5)
        #expect(!rejected.judgement.verdict.isAccepted && rejected.judgement.decidedBy == .score)
        #expect(rejected.judgement.decidingScore == 0.1)
    }
}
