import Foundation
import PoseEstimation
import ProofkitCore
import TestSupport
import Testing

// Tolerances against the Python reference (blazepose_pipeline.py): both compute in Double from the
// same float32 inputs with the same formulas, so they differ only in the order of a few sums
// (numpy's pairwise sums in the refinement) and in the reference's 12 significant digits:
// 1e-9 of a normalised coordinate (5e-7 pixel on a 512-pixel photo) and 1e-7 pixel of a region.
private let normalizedTolerance = 1e-9

/// FNV-1a 64 of the anchors' little-endian float32 bytes (x, y, w, h per anchor).
private func fnv1a64(_ anchors: [SSDAnchor]) -> String {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for anchor in anchors {
        for value in [anchor.centerX, anchor.centerY, anchor.width, anchor.height] {
            var bits = value.bitPattern.littleEndian
            for _ in 0..<4 {
                hash ^= UInt64(bits & 0xFF)
                hash = hash &* 0x100_0000_01B3
                bits >>= 8
            }
        }
    }
    return String(hash, radix: 16).leftPadded(to: 16)
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}

/// The reference's first detection, region, landmarks and tracking region against the engine's,
/// from the given raw outputs.
private func checkAgainstReference(
    photo: String, regressors: [Float], scores: [Float], landmarks raw: [Float], heatmap: [Float]
) throws {
    let entry = try #require(PoseFixtures.photos[photo])
    let (width, height) = PoseFixtures.size(photo)
    let pipeline = PosePipeline()
    let candidates = try pipeline.detections.candidates(regressors: regressors, scores: scores)
    let expectedCandidates = entry["candidates"] as? [[String: Any]] ?? []
    #expect(candidates.map(\.anchor) == expectedCandidates.map { Int(PoseFixtures.number($0["anchor"])) }, "\(photo)")
    #expect(
        maximumDifference(candidates.map(\.score), expectedCandidates.map { PoseFixtures.number($0["score"]) })
            < 1e-11,
        "\(photo)")
    let suppressed = pipeline.detections.suppressed(candidates)
    let expectedSuppressed = (entry["suppressed"] as? [Any] ?? []).compactMap(PoseReference.detection)
    #expect(suppressed.count == expectedSuppressed.count, "\(photo)")
    for (got, want) in zip(suppressed, expectedSuppressed) {
        #expect(got.anchor == want.anchor && got.mergedCount == want.mergedCount, "\(photo)")
        let gotValues =
            [got.box.minX, got.box.minY, got.box.maxX, got.box.maxY] + got.keypoints.flatMap { [$0.x, $0.y] }
        let wantValues =
            [want.box.minX, want.box.minY, want.box.maxX, want.box.maxY] + want.keypoints.flatMap { [$0.x, $0.y] }
        #expect(maximumDifference(gotValues, wantValues) < normalizedTolerance, "\(photo)")
    }
    let detection = try pipeline.firstDetection(
        regressors: regressors, scores: scores, imageWidth: width, imageHeight: height)
    // Every person the detector sees: one per suppressed detection, the first being the one followed.
    let everyone = try pipeline.allDetections(
        regressors: regressors, scores: scores, imageWidth: width, imageHeight: height)
    #expect(everyone.count == expectedSuppressed.count && everyone.first == detection, "\(photo)")
    guard let want = PoseReference.detection(entry["detection"]) else {
        #expect(detection == nil, "\(photo): the reference finds nobody")
        return
    }
    let got = try #require(detection, "\(photo): the reference finds a person")
    #expect(
        maximumDifference(got.keypoints.flatMap { [$0.x, $0.y] }, want.keypoints.flatMap { [$0.x, $0.y] })
            < normalizedTolerance, "\(photo)")
    let region = pipeline.region(of: got, imageWidth: width, imageHeight: height)
    let wantRegion = try #require(PoseReference.region(entry["region"]))
    let regionValues = { (r: PoseRegion) in [r.centerX, r.centerY, r.width, r.height, r.rotation * 1000] }
    #expect(maximumDifference(regionValues(region), regionValues(wantRegion)) < 1e-6, "\(photo)")

    // The landmarks, through the reference's region (so that only the projection is compared).
    let all = try pipeline.landmarks.landmarks(raw: raw, heatmap: heatmap, region: wantRegion)
    let wantLandmarks = (entry["landmarks"] as? [Any] ?? []).map(PoseFixtures.numbers)
    #expect(all.count == 39 && wantLandmarks.count == 39, "\(photo)")
    let normalized = all.map {
        [$0.x / Double(width), $0.y / Double(height), $0.z / Double(width), $0.visibility, $0.presence]
    }
    for (index, (got, want)) in zip(normalized, wantLandmarks).enumerated() {
        #expect(maximumDifference(got, want) < normalizedTolerance, "\(photo) landmark \(index): \(got) vs \(want)")
    }
    let tracking = try #require(PoseRegion.tracking(landmarks: all))
    let wantTracking = try #require(PoseReference.region(entry["tracking_region"]))
    #expect(maximumDifference(regionValues(tracking), regionValues(wantTracking)) < 1e-6, "\(photo)")
}

@Suite("PoseEstimation against the Python reference (blazepose_pipeline.py)")
struct PoseEstimationReferenceTests {
    @Test("the anchors: 2254, every value equal to the reference's (FNV-1a of all float32 values)")
    func anchors() throws {
        let reference = try #require(PoseFixtures.reference["anchors"] as? [String: Any])
        let anchors = SSDAnchorOptions.blazePose.anchors()
        #expect(anchors.count == 2254 && PoseFixtures.number(reference["count"]) == 2254)
        #expect(fnv1a64(anchors) == reference["fnv1a64_float32_xywh"] as? String)
        let samples = try #require(reference["samples"] as? [String: Any])
        #expect(samples.count == 8)
        for (key, value) in samples {
            let anchor = anchors[try #require(Int(key))]
            // As float32 (Foundation's JSON reader on Linux may miss a double's last digit).
            #expect(
                [anchor.centerX, anchor.centerY, anchor.width, anchor.height]
                    == PoseFixtures.numbers(value).map { Float($0) }, "anchor \(key)")
        }
        // Layers of one stride share a feature map: 28x28x2 + 14x14x2 + 7x7x6.
        #expect(anchors[1567].centerX == anchors[1566].centerX && anchors[1568].centerX == Float(0.5 / 14))
    }

    @Test("astronaut, from the committed inputs: candidates, suppression, region, landmarks, tracking")
    func astronautAlwaysRuns() throws {
        let inputs = try #require(PoseFixtures.photos["astronaut"]?["inputs"] as? [String: Any])
        let rows = PoseFixtures.numbers(inputs["anchors"]).map { Int($0) }
        let rowValues = PoseReference.floats(base64: inputs["regressors"])
        let rowScores = PoseReference.floats(base64: inputs["scores"])
        #expect(rows.count == 8 && rowValues.count == rows.count * 12 && rowScores.count == rows.count)
        // Every other anchor scores -100 (sigmoid 4e-44): below the threshold, as in the model's output.
        var regressors = [Float](repeating: 0, count: 2254 * 12)
        var scores = [Float](repeating: -100, count: 2254)
        for (k, row) in rows.enumerated() {
            scores[row] = rowScores[k]
            for j in 0..<12 { regressors[row * 12 + j] = rowValues[k * 12 + j] }
        }
        // The heatmap: only the 7x7 window of each landmark is read by the refinement.
        var heatmap = [Float](repeating: -30, count: 64 * 64 * 39)
        let windows = try #require(inputs["heatmap_windows"] as? [[String: Any]])
        #expect(windows.count >= 20)
        for window in windows {
            let landmark = Int(PoseFixtures.number(window["landmark"]))
            let rowRange = PoseFixtures.numbers(window["rows"]).map { Int($0) }
            let columnRange = PoseFixtures.numbers(window["columns"]).map { Int($0) }
            let logits = PoseReference.floats(base64: window["logits"])
            var k = 0
            for r in rowRange[0]..<rowRange[1] {
                for c in columnRange[0]..<columnRange[1] {
                    heatmap[(r * 64 + c) * 39 + landmark] = logits[k]
                    k += 1
                }
            }
        }
        try checkAgainstReference(
            photo: "astronaut", regressors: regressors, scores: scores,
            landmarks: PoseReference.floats(base64: inputs["landmarks"]), heatmap: heatmap)
    }

    @Test(
        "every reference photo, from the build's tensors: detections, region, landmarks, tracking",
        .enabled(if: PoseFixtures.hasModels, "needs Models/generated (bash .ci/setup)"),
        arguments: PoseFixtures.photoNames)
    func referenceTensors(photo: String) throws {
        try checkAgainstReference(
            photo: photo, regressors: try PoseFixtures.tensor(photo, "regressors"),
            scores: try PoseFixtures.tensor(photo, "scores"), landmarks: try PoseFixtures.tensor(photo, "landmarks"),
            heatmap: try PoseFixtures.tensor(photo, "heatmap"))
    }

    @Test(
        "the crops equal the reference's (OpenCV's fixed-point warp) bit for bit",
        .enabled(
            if: PoseFixtures.hasModels && PoseFixtures.hasPhotos && ImageFixtures.hasPythonWithPillow,
            "needs Models/generated, .deps/wheels, unzip and .deps/venv"),
        arguments: PoseFixtures.photoNames)
    func crops(photo: String) throws {
        let image = try PoseFixtures.decodedPhoto(photo)
        let pipeline = PosePipeline()
        #expect(pipeline.detectorInput(of: image) == (try PoseFixtures.tensor(photo, "detector_input")))
        // The build's landmark input: the TFLite detection's region, or the letterboxed photo.
        let entry = try #require(PoseFixtures.photos[photo])
        let region =
            PoseReference.region(entry["region"])
            ?? PoseRegion.letterbox(imageWidth: image.width, imageHeight: image.height)
        #expect(
            pipeline.landmarkInput(of: image, region: region) == (try PoseFixtures.tensor(photo, "landmark_input")))
    }

    @Test(
        "the configuration read from pose_pipeline.json is MediaPipe's",
        .enabled(if: PoseFixtures.hasModels, "needs Models/generated (bash .ci/setup)"))
    func configurationFile() throws {
        let bytes = [UInt8](try Data(contentsOf: PoseFixtures.models.appendingPathComponent("pose_pipeline.json")))
        let configuration = try PosePipelineConfiguration(json: try JSONReader.parse(bytes: bytes))
        #expect(configuration == .mediaPipe)
        #expect(configuration.anchors.anchors() == SSDAnchorOptions.blazePose.anchors())
    }
}

@Suite("PoseEstimation geometry")
struct PoseEstimationGeometryTests {
    @Test("a pipeline file that is not one, or has a bad field, is refused as an invalid model")
    func badConfiguration() throws {
        for text in [
            #"{"format": "other", "version": 1}"#, #"{"format": "proofkit-pose-pipeline", "version": 1}"#,
            #"{"format": "proofkit-pose-pipeline", "version": 2}"#,
        ] {
            let error = try #require(throws: ProofkitError.self) {
                _ = try PosePipelineConfiguration(json: try JSONReader.parse(text))
            }
            #expect(error.code == .modelInvalid && error.message.contains("pose pipeline"))
        }
    }

    @Test("the region's transform maps the crop's corners to the region's, and its inverse back")
    func transform() throws {
        let region = PoseRegion(centerX: 100, centerY: 50, width: 80, height: 80, rotation: Double.pi / 2)
        let map = region.tensorToImage(width: 256, height: 256)
        // Rotated a quarter turn clockwise: the crop's top-left corner is the region's top-right.
        let corner = map.apply(PosePoint(x: 0, y: 0))
        #expect(abs(corner.x - 140) < 1e-12 && abs(corner.y - 10) < 1e-12)
        let centre = map.apply(PosePoint(x: 128, y: 128))
        #expect(abs(centre.x - 100) < 1e-12 && abs(centre.y - 50) < 1e-12)
        let inverse = try #require(map.inverted)
        for point in [PosePoint(x: 3, y: 250), PosePoint(x: -40, y: 17.5)] {
            let back = inverse.apply(map.apply(point))
            #expect(abs(back.x - point.x) < 1e-9 && abs(back.y - point.y) < 1e-9)
        }
        #expect(PoseAffineTransform(a: 1, b: 2, tx: 0, c: 2, d: 4, ty: 0).inverted == nil)
    }

    @Test("angles wrap into [-pi, pi), and a region points its start->end vector up")
    func angles() {
        #expect(PoseRegion.normalizedAngle(Double.pi) == -Double.pi)
        #expect(abs(PoseRegion.normalizedAngle(3 * Double.pi / 2) + Double.pi / 2) < 1e-12)
        // Hip at (50, 100), the scale point straight above it: no rotation, side 2 x 40 x 1.25.
        let upright = PoseRegion.aligned(
            start: PosePoint(x: 50, y: 100), end: PosePoint(x: 50, y: 60), targetAngle: Double.pi / 2, scale: 1.25)
        #expect(upright.rotation == 0 && upright.width == 100 && upright.height == 100 && upright.centerX == 50)
        // Lying down, the scale point to the right: a quarter turn.
        let lying = PoseRegion.aligned(
            start: PosePoint(x: 50, y: 100), end: PosePoint(x: 90, y: 100), targetAngle: Double.pi / 2, scale: 1.25)
        #expect(abs(lying.rotation - Double.pi / 2) < 1e-12)
    }

    @Test("the crop copies pixels at whole-pixel shifts, reads black or the edge outside, and halves at half pixels")
    func crop() {
        // A 4x3 image whose red channel is 10 x column + 100 x row.
        var pixels: [UInt8] = []
        for row in 0..<3 {
            for column in 0..<4 { pixels += [UInt8(10 * column + 100 * row), 7, 200] }
        }
        let image = RGBImage(width: 4, height: 3, pixels: pixels)
        let shift = PoseAffineTransform(a: 1, b: 0, tx: 1, c: 0, d: 1, ty: 1)
        let zero = PoseCrop.pixels(of: image, transform: shift, width: 4, height: 3, border: .zero)
        #expect(zero[0] == 110 && zero[1] == 7 && zero[2] == 200)  // (1, 1)
        #expect(zero[(0 * 4 + 3) * 3] == 0 && zero[(2 * 4 + 0) * 3 + 2] == 0)  // (4, 1), (1, 3): outside
        let replicate = PoseCrop.pixels(of: image, transform: shift, width: 4, height: 3, border: .replicate)
        #expect(replicate[(0 * 4 + 3) * 3] == 130 && replicate[(2 * 4 + 0) * 3] == 210)
        let half = PoseAffineTransform(a: 1, b: 0, tx: 0.5, c: 0, d: 1, ty: 0)
        let halves = PoseCrop.pixels(of: image, transform: half, width: 2, height: 1, border: .replicate)
        #expect(halves[0] == 5 && halves[3] == 15)
        #expect(PoseCrop.tensor(fromPixels: [0, 255, 51], range: -1...1) == [-1, 1, Float(51) * Float(2.0 / 255) - 1])
    }

    @Test("weighted suppression merges overlapping boxes by score and keeps the others apart")
    func suppression() {
        let decoder = PoseDetectionDecoder()
        func detection(_ score: Double, _ x: Double, anchor: Int) -> PoseDetection {
            PoseDetection(
                score: score, anchor: anchor, box: PoseBox(minX: x, minY: 0, maxX: x + 0.2, maxY: 0.2),
                keypoints: [PosePoint(x: x, y: 0)])
        }
        let result = decoder.suppressed([
            detection(0.6, 0.0, anchor: 1), detection(0.9, 0.02, anchor: 2), detection(0.7, 0.5, anchor: 3),
        ])
        #expect(result.map(\.anchor) == [2, 3] && result.map(\.mergedCount) == [2, 1])
        #expect(result[0].score == 0.9 && abs(result[0].box.minX - (0.6 * 0 + 0.9 * 0.02) / 1.5) < 1e-15)
        #expect(decoder.suppressed([]).isEmpty)
    }

    @Test("outputs of the wrong size are an invalid model, not a crash")
    func wrongSizes() throws {
        let pipeline = PosePipeline()
        let error = try #require(throws: ProofkitError.self) {
            _ = try pipeline.firstDetection(regressors: [0], scores: [0], imageWidth: 10, imageHeight: 10)
        }
        #expect(error.code == .modelInvalid)
        let region = PoseRegion.letterbox(imageWidth: 10, imageHeight: 10)
        #expect(throws: ProofkitError.self) {
            _ = try pipeline.observation(landmarks: [1, 2], presence: 1, heatmap: [], region: region, detection: nil)
        }
    }

    @Test("a presence at or below 0.5 is nobody in view, with the value")
    func presence() throws {
        let pipeline = PosePipeline()
        let raw = [Float](repeating: 128, count: 195)
        let heatmap = [Float](repeating: -10, count: 64 * 64 * 39)
        let region = PoseRegion(centerX: 20, centerY: 30, width: 40, height: 40, rotation: 0)
        let nobody = try pipeline.observation(
            landmarks: raw, presence: 0.5, heatmap: heatmap, region: region, detection: nil)
        #expect(nobody == .nobody(.lowPresence(0.5)) && nobody.estimate == nil)
        let person = try #require(
            try pipeline.observation(landmarks: raw, presence: 0.9, heatmap: heatmap, region: region, detection: nil)
                .estimate)
        // Every landmark at the crop's centre (128 of 256, no refinement): the region's centre.
        #expect(person.landmarks.count == 33 && person.allLandmarks.count == 39)
        #expect(person.landmarks.allSatisfy { $0.x == 20 && $0.y == 30 && $0.visibility == 1 })
    }

    @Test("the skeleton: 33 names, 35 edges between them, the squat joints at MediaPipe's numbers")
    func skeleton() {
        #expect(PoseSkeleton.landmarkNames.count == 33 && Set(PoseSkeleton.landmarkNames).count == 33)
        #expect(PoseSkeleton.edges.count == 35)
        #expect(PoseSkeleton.edges.allSatisfy { $0.0 < 33 && $0.1 < 33 && $0.0 != $0.1 })
        for joint in PoseJoint.allCases {
            #expect(PoseSkeleton.landmarkNames[PoseSkeleton.landmarkIndex(of: joint)] == joint.rawValue)
        }
    }
}
