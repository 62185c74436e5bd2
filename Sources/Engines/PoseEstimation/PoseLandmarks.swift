public import ProofkitCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One body landmark in an image.
public struct PoseLandmark: Sendable, Equatable {
    /// Horizontal position, in pixels from the image's left edge (may fall outside the image).
    public var x: Double
    /// Vertical position, in pixels from the image's top edge, growing downward.
    public var y: Double
    /// Depth, in pixels on the same scale as x (smaller is nearer the camera), relative to the
    /// hips' depth (MediaPipe's z times the image width).
    public var z: Double
    /// The likelihood that the landmark is visible (in the image and not hidden), 0...1.
    public var visibility: Double
    /// The likelihood that the landmark is present in the image, 0...1.
    public var presence: Double

    /// Creates a landmark (pixels; likelihoods 0...1).
    public init(x: Double, y: Double, z: Double, visibility: Double, presence: Double) {
        self.x = x
        self.y = y
        self.z = z
        self.visibility = visibility
        self.presence = presence
    }
}

/// The landmark model's raw outputs turned into landmarks in the image: heatmap refinement
/// (MediaPipe's `RefineLandmarksFromHeatmapCalculator`), the projection from the crop back to the
/// image through its region, and visibility and presence through the sigmoid
/// (`tensors_to_pose_landmarks_and_segmentation.pbtxt`).
public struct PoseLandmarkDecoder: Sendable {
    /// The pipeline's constants.
    public let configuration: PosePipelineConfiguration

    /// Creates a decoder.
    public init(configuration: PosePipelineConfiguration = .mediaPipe) {
        self.configuration = configuration
    }

    /// The logistic function, written as MediaPipe's Python reference computes it
    /// (`0.5 (1 + tanh(x / 2))`, which never overflows).
    public static func sigmoid(_ value: Double) -> Double { 0.5 * (1 + tanh(0.5 * value)) }

    /// Refines landmark positions from the heatmap: for each landmark, the `kernel` x `kernel`
    /// window of its channel (clipped to the map) around the cell it falls in (column `Int(x * side)`,
    /// truncated toward zero; landmarks outside the map are left alone); when the window's highest
    /// sigmoid value is at least the minimum, the position becomes the sigmoid-weighted mean of the
    /// window's cell indices divided by the map's side.
    /// - Parameters:
    ///   - points: positions normalised to the crop (0...1), one per heatmap channel.
    ///   - heatmap: logits, `[side, side, points.count]` in row-major order (NHWC without the batch).
    ///   - side: the heatmap's side, in cells (64).
    /// - Returns: the positions, refined where the heatmap is confident.
    public func refined(_ points: [PosePoint], heatmap: [Float], side: Int) -> [PosePoint] {
        let channels = points.count
        guard side > 0, heatmap.count == side * side * channels else { return points }
        let half = (configuration.refinementKernel - 1) / 2
        var result = points
        for (index, point) in points.enumerated() {
            let scaledX = point.x * Double(side)
            let scaledY = point.y * Double(side)
            guard scaledX.magnitude < 1e9, scaledY.magnitude < 1e9 else { continue }  // NaN fails too
            let column = Int(scaledX)
            let row = Int(scaledY)
            guard column >= 0, column < side, row >= 0, row < side else { continue }
            var total = 0.0
            var highest = 0.0
            var sumX = 0.0
            var sumY = 0.0
            for r in max(0, row - half)..<min(side, row + half + 1) {
                for c in max(0, column - half)..<min(side, column + half + 1) {
                    let confidence = Self.sigmoid(Double(heatmap[(r * side + c) * channels + index]))
                    total += confidence
                    highest = max(highest, confidence)
                    sumX += Double(c) * confidence
                    sumY += Double(r) * confidence
                }
            }
            if highest >= configuration.refinementMinimumConfidence && total > 0 {
                result[index] = PosePoint(x: sumX / Double(side) / total, y: sumY / Double(side) / total)
            }
        }
        return result
    }

    /// Every landmark of the model (39 for BlazePose full: the 33 pose landmarks, then the
    /// auxiliary ones that ``PoseRegion/tracking(landmarks:configuration:)`` reads), in image pixels.
    /// - Parameters:
    ///   - raw: the `landmarks` output: x, y, z (pixels of the crop), visibility logit, presence
    ///     logit per landmark.
    ///   - heatmap: the `heatmap` output, `[side, side, landmarks]` logits (side 64).
    ///   - region: the region the crop was taken from.
    /// - Throws: `.modelInvalid` when the outputs' sizes do not fit the configuration.
    public func landmarks(raw: [Float], heatmap: [Float], region: PoseRegion) throws(ProofkitError)
        -> [PoseLandmark]
    {
        let count = configuration.modelLandmarks
        let stride = configuration.valuesPerLandmark
        let cells = heatmap.count / max(count, 1)
        let side = Int(Double(cells).squareRoot().rounded())
        guard raw.count == count * stride, side * side * count == heatmap.count else {
            throw ProofkitError(
                .modelInvalid,
                "the pose landmark model gave \(raw.count) values and a heatmap of \(heatmap.count); expected \(count * stride) and side x side x \(count)"
            )
        }
        let input = Double(configuration.landmarkInputSize)
        let positions = (0..<count).map { i in
            PosePoint(x: Double(raw[i * stride]) / input, y: Double(raw[i * stride + 1]) / input)
        }
        let refined = refined(positions, heatmap: heatmap, side: side)
        let c = cos(region.rotation)
        let s = sin(region.rotation)
        return (0..<count).map { i in
            let dx = refined[i].x - 0.5
            let dy = refined[i].y - 0.5
            return PoseLandmark(
                x: (c * dx - s * dy) * region.width + region.centerX,
                y: (s * dx + c * dy) * region.height + region.centerY,
                z: Double(raw[i * stride + 2]) / input * region.width,
                visibility: Self.sigmoid(Double(raw[i * stride + 3])),
                presence: Self.sigmoid(Double(raw[i * stride + 4])))
        }
    }
}

/// MediaPipe Pose's 33 landmarks: their names, the skeleton's edges, and the 8 joints the squat
/// proof reads.
public enum PoseSkeleton {
    /// The landmark names, index = the model's landmark number (0 = nose ... 32 = right foot index);
    /// left and right are the person's.
    public static let landmarkNames = [
        "nose", "left_eye_inner", "left_eye", "left_eye_outer", "right_eye_inner", "right_eye", "right_eye_outer",
        "left_ear", "right_ear", "mouth_left", "mouth_right", "left_shoulder", "right_shoulder", "left_elbow",
        "right_elbow", "left_wrist", "right_wrist", "left_pinky", "right_pinky", "left_index", "right_index",
        "left_thumb", "right_thumb", "left_hip", "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle",
        "left_heel", "right_heel", "left_foot_index", "right_foot_index",
    ]

    /// The skeleton's bones, pairs of landmark numbers (MediaPipe's pose connections: the face,
    /// the arms and hands, the torso, the legs and feet; 35 edges).
    public static let edges: [(Int, Int)] = [
        (0, 1), (1, 2), (2, 3), (3, 7), (0, 4), (4, 5), (5, 6), (6, 8), (9, 10),
        (11, 12), (11, 13), (13, 15), (15, 17), (15, 19), (15, 21), (17, 19),
        (12, 14), (14, 16), (16, 18), (16, 20), (16, 22), (18, 20),
        (11, 23), (12, 24), (23, 24),
        (23, 25), (24, 26), (25, 27), (26, 28), (27, 29), (28, 30), (29, 31), (30, 32), (27, 31), (28, 32),
    ]

    /// The landmark number of a squat joint (shoulders 11/12, hips 23/24, knees 25/26, ankles 27/28).
    public static func landmarkIndex(of joint: PoseJoint) -> Int {
        switch joint {
        case .leftShoulder: 11
        case .rightShoulder: 12
        case .leftHip: 23
        case .rightHip: 24
        case .leftKnee: 25
        case .rightKnee: 26
        case .leftAnkle: 27
        case .rightAnkle: 28
        }
    }
}

/// Why a frame has no pose: a per-frame state, never an error.
public enum PoseAbsence: Sendable, Equatable {
    /// The detector found nobody (no candidate scored 0.5 or more).
    case noDetection
    /// A person was detected but the landmark model's presence was at or below the threshold
    /// (the value, 0...1).
    case lowPresence(Double)
}

/// The pose found in one frame.
public struct PoseEstimate: Sendable, Equatable {
    /// The detection the region came from (normalised to the image); `nil` when the region was
    /// tracked from the previous frame.
    public var detection: PoseDetection?
    /// The region the landmark model saw, in pixels.
    public var region: PoseRegion
    /// The landmark model's presence, 0...1 (above the threshold, 0.5).
    public var presence: Double
    /// The 33 pose landmarks in image pixels (``PoseSkeleton/landmarkNames`` order).
    public var landmarks: [PoseLandmark]
    /// Every landmark the model gave (39), the auxiliary ones included: the next frame's region
    /// comes from these (``PoseRegion/tracking(landmarks:configuration:)``).
    public var allLandmarks: [PoseLandmark]

    /// Creates an estimate.
    public init(
        detection: PoseDetection?, region: PoseRegion, presence: Double, landmarks: [PoseLandmark],
        allLandmarks: [PoseLandmark]
    ) {
        self.detection = detection
        self.region = region
        self.presence = presence
        self.landmarks = landmarks
        self.allLandmarks = allLandmarks
    }
}

/// One frame's result: a pose, or nobody in view (with why).
public enum PoseObservation: Sendable, Equatable {
    /// A person, with the 33 landmarks.
    case person(PoseEstimate)
    /// Nobody in view.
    case nobody(PoseAbsence)

    /// The estimate, or `nil` when nobody is in view.
    public var estimate: PoseEstimate? {
        if case .person(let estimate) = self { estimate } else { nil }
    }
}
