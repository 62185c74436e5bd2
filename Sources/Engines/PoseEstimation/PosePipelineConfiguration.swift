public import ProofkitCore

/// The constants of MediaPipe Pose's single-person pipeline (MediaPipe 0.10.21, the graphs under
/// `mediapipe/modules/pose_detection` and `pose_landmark`), as `Models/build.sh` writes them to
/// `pose_pipeline.json`. ``mediaPipe`` holds the same numbers, so the engine runs without the file;
/// ``init(json:)`` reads the file (a test checks that both agree).
public struct PosePipelineConfiguration: Sendable, Equatable {
    /// The detector's anchors (MediaPipe's `SsdAnchorsCalculator` options).
    public var anchors: SSDAnchorOptions
    /// The detector's square input side, in pixels (224).
    public var detectorInputSize: Int
    /// Raw box and keypoint values are divided by this (the detector input's side, 224) before the
    /// anchor's centre is added (`x_scale` = `y_scale` = `w_scale` = `h_scale`).
    public var detectorCoordinateScale: Double
    /// Score logits are clamped to ±this before the sigmoid (100).
    public var scoreClipping: Double
    /// Candidates whose sigmoid score is below this are dropped (0.5).
    public var minimumDetectionScore: Double
    /// Keypoints per detection (4: hip centre, full-body scale point, shoulder centre, upper-body scale point).
    public var detectionKeypoints: Int
    /// Weighted non-maximum suppression: boxes whose intersection over union with the best one is
    /// above this are merged into it (0.3).
    public var suppressionThreshold: Double
    /// The detection keypoint at the region's centre (0, the hip centre) and the one whose distance
    /// and direction from it give the region's size and rotation (1).
    public var regionKeypoints: (start: Int, end: Int)
    /// The landmarks that give the next frame's region when tracking (33 and 34, auxiliary).
    public var trackingLandmarks: (start: Int, end: Int)
    /// The angle, in radians, that the start→end vector is rotated to (π/2: the body upright; computed
    /// as 90 x (π / 180), as Python's `math.radians`).
    public var targetAngle: Double
    /// The region's side is twice the start→end distance times this (1.25).
    public var regionScale: Double
    /// The landmark model's square input side, in pixels (256).
    public var landmarkInputSize: Int
    /// Landmarks the model gives (39: the 33 pose landmarks and 6 auxiliary ones).
    public var modelLandmarks: Int
    /// Values per landmark in the model's `landmarks` output (5: x, y, z, visibility logit, presence logit).
    public var valuesPerLandmark: Int
    /// The pose landmarks reported (the first 33).
    public var poseLandmarks: Int
    /// A pose is there when the model's `presence` output is above this (0.5).
    public var presenceThreshold: Double
    /// The heatmap refinement's window side, in heatmap cells (7).
    public var refinementKernel: Int
    /// A landmark is refined only when its window's highest sigmoid value is at least this (0.5).
    public var refinementMinimumConfidence: Double

    /// MediaPipe Pose's values (full landmark model), the same as `pose_pipeline.json`.
    public static let mediaPipe = PosePipelineConfiguration(
        anchors: .blazePose, detectorInputSize: 224, detectorCoordinateScale: 224, scoreClipping: 100,
        minimumDetectionScore: 0.5, detectionKeypoints: 4, suppressionThreshold: 0.3, regionKeypoints: (0, 1),
        trackingLandmarks: (33, 34), targetAngle: 90 * (Double.pi / 180), regionScale: 1.25, landmarkInputSize: 256,
        modelLandmarks: 39, valuesPerLandmark: 5, poseLandmarks: 33, presenceThreshold: 0.5, refinementKernel: 7,
        refinementMinimumConfidence: 0.5)

    /// Creates a configuration from every value (see each property).
    public init(
        anchors: SSDAnchorOptions, detectorInputSize: Int, detectorCoordinateScale: Double, scoreClipping: Double,
        minimumDetectionScore: Double, detectionKeypoints: Int, suppressionThreshold: Double,
        regionKeypoints: (start: Int, end: Int), trackingLandmarks: (start: Int, end: Int), targetAngle: Double,
        regionScale: Double, landmarkInputSize: Int, modelLandmarks: Int, valuesPerLandmark: Int, poseLandmarks: Int,
        presenceThreshold: Double, refinementKernel: Int, refinementMinimumConfidence: Double
    ) {
        self.anchors = anchors
        self.detectorInputSize = detectorInputSize
        self.detectorCoordinateScale = detectorCoordinateScale
        self.scoreClipping = scoreClipping
        self.minimumDetectionScore = minimumDetectionScore
        self.detectionKeypoints = detectionKeypoints
        self.suppressionThreshold = suppressionThreshold
        self.regionKeypoints = regionKeypoints
        self.trackingLandmarks = trackingLandmarks
        self.targetAngle = targetAngle
        self.regionScale = regionScale
        self.landmarkInputSize = landmarkInputSize
        self.modelLandmarks = modelLandmarks
        self.valuesPerLandmark = valuesPerLandmark
        self.poseLandmarks = poseLandmarks
        self.presenceThreshold = presenceThreshold
        self.refinementKernel = refinementKernel
        self.refinementMinimumConfidence = refinementMinimumConfidence
    }

    /// Reads `pose_pipeline.json` (format `proofkit-pose-pipeline`, version 1).
    /// - Throws: `.modelInvalid` naming the first field that is missing or out of range.
    public init(json: JSONNode) throws(ProofkitError) {
        func fail(_ what: String) -> ProofkitError {
            ProofkitError(.modelInvalid, "not a proofkit pose pipeline file: \(what)")
        }
        guard json["format"]?.string == "proofkit-pose-pipeline", json["version"]?.integer == 1 else {
            throw fail("\"format\" must be \"proofkit-pose-pipeline\", \"version\" 1")
        }
        func number(_ path: [String]) throws(ProofkitError) -> Double {
            var node: JSONNode? = json
            for key in path { node = node?[key] }
            guard let value = node?.number, value.isFinite else {
                throw fail("\(path.joined(separator: ".")) is not a number")
            }
            return value
        }
        func integer(_ path: [String], in range: ClosedRange<Int>) throws(ProofkitError) -> Int {
            let value = try number(path)
            guard let whole = Int(exactly: value), range.contains(whole) else {
                throw fail("\(path.joined(separator: ".")) is not a whole number in \(range)")
            }
            return whole
        }
        let a = ["detector", "anchors"]
        guard let strides = json["detector"]?["anchors"]?["strides"]?.array?.compactMap(\.integer),
            !strides.isEmpty, strides.allSatisfy({ (1...1024).contains($0) }),
            let ratios = json["detector"]?["anchors"]?["aspect_ratios"]?.array?.compactMap(\.number),
            !ratios.isEmpty, ratios.allSatisfy({ $0 > 0 && $0.isFinite })
        else { throw fail("detector.anchors.strides or aspect_ratios") }
        let anchors = SSDAnchorOptions(
            layers: try integer(a + ["num_layers"], in: 1...strides.count), minimumScale: try number(a + ["min_scale"]),
            maximumScale: try number(a + ["max_scale"]),
            inputHeight: try integer(a + ["input_size_height"], in: 1...4096),
            inputWidth: try integer(a + ["input_size_width"], in: 1...4096),
            offsetX: try number(a + ["anchor_offset_x"]),
            offsetY: try number(a + ["anchor_offset_y"]), strides: strides, aspectRatios: ratios,
            fixedAnchorSize: json["detector"]?["anchors"]?["fixed_anchor_size"] == .bool(true),
            interpolatedScaleAspectRatio: try number(a + ["interpolated_scale_aspect_ratio"]),
            reduceBoxesInLowestLayer: json["detector"]?["anchors"]?["reduce_boxes_in_lowest_layer"] == .bool(true))
        let d = ["detector", "decode"]
        let inputShape = json["detector"]?["input"]?["shape"]?.array?.compactMap(\.integer) ?? []
        let landmarkShape = json["landmarks"]?["input"]?["shape"]?.array?.compactMap(\.integer) ?? []
        guard inputShape.count == 4, inputShape[1] == inputShape[2], inputShape[1] > 0, landmarkShape.count == 4,
            landmarkShape[1] == landmarkShape[2], landmarkShape[1] > 0
        else { throw fail("an input shape is not [1, side, side, 3]") }
        let xScale = try number(d + ["x_scale"])
        guard xScale > 0, try number(d + ["y_scale"]) == xScale, try number(d + ["w_scale"]) == xScale,
            try number(d + ["h_scale"]) == xScale, json["detector"]?["decode"]?["reverse_output_order"] == .bool(true),
            json["detector"]?["decode"]?["apply_exponential_on_box_size"] == .bool(false),
            try integer(d + ["box_coord_offset"], in: 0...0) == 0
        else { throw fail("detector.decode: proofkit reads XYWH boxes at offset 0 with one scale") }
        let keypoints = try integer(d + ["num_keypoints"], in: 2...16)
        guard try integer(d + ["keypoint_coord_offset"], in: 4...4) == 4,
            try integer(d + ["num_coords"], in: 6...64) == 4 + 2 * keypoints
        else { throw fail("detector.decode: coordinates are not 4 + 2 per keypoint") }
        let r = ["detection_roi"]
        let t = ["tracking_roi"]
        let l = ["landmarks"]
        let h = ["landmarks", "refine_from_heatmap"]
        let modelLandmarks = try integer(l + ["num_landmarks"], in: 1...256)
        let angle = try number(r + ["rotation_vector_target_angle_degrees"])
        guard try number(r + ["scale_y"]) == (try number(r + ["scale_x"])) else {
            throw fail("detection_roi scales differ")
        }
        self.init(
            anchors: anchors, detectorInputSize: inputShape[1], detectorCoordinateScale: xScale,
            scoreClipping: try number(d + ["score_clipping_thresh"]),
            minimumDetectionScore: try number(d + ["min_score_thresh"]), detectionKeypoints: keypoints,
            suppressionThreshold: try number(["detector", "nms", "min_suppression_threshold"]),
            regionKeypoints: (
                try integer(r + ["rotation_vector_start_keypoint_index"], in: 0...keypoints - 1),
                try integer(r + ["rotation_vector_end_keypoint_index"], in: 0...keypoints - 1)
            ),
            trackingLandmarks: (
                try integer(t + ["start_landmark"], in: 0...modelLandmarks - 1),
                try integer(t + ["end_landmark"], in: 0...modelLandmarks - 1)
            ),
            targetAngle: angle * (Double.pi / 180), regionScale: try number(r + ["scale_x"]),
            landmarkInputSize: landmarkShape[1], modelLandmarks: modelLandmarks,
            valuesPerLandmark: try integer(l + ["values_per_landmark"], in: 3...16),
            poseLandmarks: try integer(l + ["pose_landmarks"], in: 1...modelLandmarks),
            presenceThreshold: try number(l + ["presence_threshold"]),
            refinementKernel: try integer(h + ["kernel_size"], in: 1...63),
            refinementMinimumConfidence: try number(h + ["min_confidence_to_refine"]))
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.anchors == b.anchors && a.detectorInputSize == b.detectorInputSize
            && a.detectorCoordinateScale == b.detectorCoordinateScale && a.scoreClipping == b.scoreClipping
            && a.minimumDetectionScore == b.minimumDetectionScore && a.detectionKeypoints == b.detectionKeypoints
            && a.suppressionThreshold == b.suppressionThreshold && a.regionKeypoints == b.regionKeypoints
            && a.trackingLandmarks == b.trackingLandmarks && a.targetAngle == b.targetAngle
            && a.regionScale == b.regionScale && a.landmarkInputSize == b.landmarkInputSize
            && a.modelLandmarks == b.modelLandmarks && a.valuesPerLandmark == b.valuesPerLandmark
            && a.poseLandmarks == b.poseLandmarks && a.presenceThreshold == b.presenceThreshold
            && a.refinementKernel == b.refinementKernel
            && a.refinementMinimumConfidence == b.refinementMinimumConfidence
    }
}
