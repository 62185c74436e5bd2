public import ProofkitCore

/// Pure decoders from common pose-model outputs (`[Float]` plus shape) to ``PoseFrame``, so a
/// model run by any runtime feeds ``SquatRepCounter`` and the decoding is testable without one.
///
/// All results are in normalised image coordinates with y down, person's left/right.
public enum PoseDecoding {
    /// MediaPipe Pose (BlazePose) landmark indices of the joints proofkit uses (33-landmark model).
    public static let mediaPipeIndices: [PoseJoint: Int] = [
        .leftShoulder: 11, .rightShoulder: 12, .leftHip: 23, .rightHip: 24,
        .leftKnee: 25, .rightKnee: 26, .leftAnkle: 27, .rightAnkle: 28,
    ]

    /// COCO 17-keypoint indices (MoveNet, HRNet, YOLO-pose and most COCO-trained models).
    public static let cocoIndices: [PoseJoint: Int] = [
        .leftShoulder: 5, .rightShoulder: 6, .leftHip: 11, .rightHip: 12,
        .leftKnee: 13, .rightKnee: 14, .leftAnkle: 15, .rightAnkle: 16,
    ]

    /// Decodes MediaPipe Pose landmarks.
    ///
    /// - Parameters:
    ///   - values: landmarks, row-major `[..., 33, stride]` with `stride` >= 4: x, y, z,
    ///     visibility (and presence, when stride is 5). The 39-row raw model output also works
    ///     (only the first 33 rows are read).
    ///   - shape: the tensor shape; the last two dimensions are (landmarks >= 33, stride >= 4),
    ///     or a flat `[1, 195]`/`[195]` meaning 39 x 5.
    ///   - time: the frame time in seconds.
    ///   - inputSize: when the landmarks are in pixels of the model input (the raw TFLite/ONNX
    ///     model), its (width, height); `nil` when already normalised (the Tasks API).
    ///   - visibilityIsLogit: apply a sigmoid to visibility (raw model output). Default `false`.
    /// - Returns: the frame; confidence = visibility (times presence when given).
    /// - Throws: `ProofkitError` `.modelInvalid` when the shape does not fit the values.
    public static func mediaPipe(
        _ values: [Float], shape: [Int], time: Double, inputSize: (width: Double, height: Double)? = nil,
        visibilityIsLogit: Bool = false
    ) throws(ProofkitError) -> PoseFrame {
        var rows: Int, stride: Int
        if shape.count >= 2, shape.last! >= 4, shape[shape.count - 2] >= 33 {
            rows = shape[shape.count - 2]
            stride = shape.last!
        } else if shape.reduce(1, *) == 195 {
            rows = 39
            stride = 5
        } else {
            throw ProofkitError(.modelInvalid, "MediaPipe landmarks need shape [..., 33, 4 or 5], got \(shape)")
        }
        guard values.count >= rows * stride else {
            throw ProofkitError(.modelInvalid, "MediaPipe landmarks: \(values.count) values for shape \(shape)")
        }
        var frame = PoseFrame(time: time)
        for (joint, row) in mediaPipeIndices {
            let base = row * stride
            var x = Double(values[base]), y = Double(values[base + 1])
            if let inputSize {
                x /= inputSize.width
                y /= inputSize.height
            }
            var confidence = Double(values[base + 3])
            if visibilityIsLogit { confidence = sigmoid(confidence) }
            if stride >= 5 {
                var presence = Double(values[base + 4])
                if visibilityIsLogit { presence = sigmoid(presence) }
                confidence *= presence
            }
            frame[joint] = Keypoint(x: x, y: y, confidence: min(1, max(0, confidence)))
        }
        return frame
    }

    /// Decodes MoveNet output.
    ///
    /// - Parameters:
    ///   - values: SinglePose `[1, 1, 17, 3]` as (y, x, score) rows, normalised; or MultiPose
    ///     `[1, 6, 56]` (17 x (y, x, score), then box ymin, xmin, ymax, xmax, score): the person
    ///     with the highest box score is taken.
    ///   - shape: the tensor shape.
    ///   - time: the frame time in seconds.
    /// - Returns: the frame; confidence = keypoint score.
    /// - Throws: `ProofkitError` `.modelInvalid` for any other shape.
    public static func moveNet(_ values: [Float], shape: [Int], time: Double) throws(ProofkitError) -> PoseFrame {
        var base = 0
        if shape.count >= 2, shape[shape.count - 2] == 17, shape.last == 3, values.count >= 51 {
            base = 0
        } else if shape.count >= 2, shape.last == 56, values.count >= shape.reduce(1, *) {
            let people = shape[shape.count - 2]
            var best = -Float.infinity
            for person in 0..<people where values[person * 56 + 55] > best {
                best = values[person * 56 + 55]
                base = person * 56
            }
        } else {
            throw ProofkitError(.modelInvalid, "MoveNet output needs shape [1, 1, 17, 3] or [1, N, 56], got \(shape)")
        }
        var frame = PoseFrame(time: time)
        for (joint, index) in cocoIndices {
            let offset = base + index * 3
            frame[joint] = Keypoint(
                x: Double(values[offset + 1]), y: Double(values[offset]),
                confidence: min(1, max(0, Double(values[offset + 2]))))
        }
        return frame
    }

    /// Decodes COCO keypoint heatmaps (SimpleBaseline, HRNet, ViTPose) by the arg-max of each map.
    ///
    /// - Parameters:
    ///   - values: `[1, 17, H, W]` (channels first) heatmaps.
    ///   - shape: the tensor shape (last three: 17 or more, H, W).
    ///   - time: the frame time in seconds.
    /// - Returns: the frame; x, y are cell centres `(col + 0.5) / W`, `(row + 0.5) / H` of the model
    ///   input; confidence is the peak value clamped to 0...1.
    /// - Throws: `ProofkitError` `.modelInvalid` when the shape does not fit.
    public static func cocoHeatmaps(_ values: [Float], shape: [Int], time: Double) throws(ProofkitError) -> PoseFrame {
        guard shape.count >= 3 else {
            throw ProofkitError(.modelInvalid, "heatmaps need shape [1, 17, H, W], got \(shape)")
        }
        let channels = shape[shape.count - 3], height = shape[shape.count - 2], width = shape[shape.count - 1]
        guard channels >= 17, height > 0, width > 0, values.count >= channels * height * width else {
            throw ProofkitError(.modelInvalid, "heatmaps need shape [1, 17, H, W], got \(shape)")
        }
        var frame = PoseFrame(time: time)
        let plane = height * width
        for (joint, channel) in cocoIndices {
            var bestIndex = 0
            var best = -Float.infinity
            for cell in 0..<plane where values[channel * plane + cell] > best {
                best = values[channel * plane + cell]
                bestIndex = cell
            }
            frame[joint] = Keypoint(
                x: (Double(bestIndex % width) + 0.5) / Double(width),
                y: (Double(bestIndex / width) + 0.5) / Double(height),
                confidence: min(1, max(0, Double(best))))
        }
        return frame
    }

    /// Maps a joint name from common pose APIs to a ``PoseJoint``: snake case (`left_hip`, COCO,
    /// MoveNet, MediaPipe), camel case (`leftHip`), upper case (`LEFT_HIP`) and Apple Vision's
    /// joint names (`left_upLeg_joint` = hip, `left_leg_joint` = knee, `left_foot_joint` = ankle,
    /// `left_shoulder_1_joint` = shoulder).
    /// - Returns: the joint, or `nil` for joints proofkit does not use.
    public static func joint(named name: String) -> PoseJoint? {
        if let joint = PoseJoint(rawValue: name) { return joint }
        let appleVision: [String: PoseJoint] = [
            "left_shoulder_1_joint": .leftShoulder, "right_shoulder_1_joint": .rightShoulder,
            "left_upLeg_joint": .leftHip, "right_upLeg_joint": .rightHip,
            "left_leg_joint": .leftKnee, "right_leg_joint": .rightKnee,
            "left_foot_joint": .leftAnkle, "right_foot_joint": .rightAnkle,
        ]
        if let joint = appleVision[name] { return joint }
        var snake = ""
        for character in name {
            if character.isUppercase, !snake.isEmpty, snake.last != "_" { snake += "_" }
            snake += character.lowercased()
        }
        return PoseJoint(rawValue: snake)
    }

    static func sigmoid(_ x: Double) -> Double {
        // 1 / (1 + e^-x) without libm: e^-x by squaring a short Taylor series (x clamped).
        let clamped = min(30, max(-30, x))
        var e = 1 + (-clamped / 64)
        e = e * e; e = e * e; e = e * e; e = e * e; e = e * e; e = e * e  // (1 - x/64)^64
        return 1 / (1 + max(0, e))
    }
}
