/// A body joint that proofkit's pose-based proofs use.
///
/// The raw values are the snake-case names of the JSON Lines pose format
/// (`"left_hip"`, ...), which are also the COCO / MoveNet keypoint names. Left and right are the
/// *person's* left and right, not the image's.
public enum PoseJoint: String, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    case leftShoulder = "left_shoulder"
    case rightShoulder = "right_shoulder"
    case leftHip = "left_hip"
    case rightHip = "right_hip"
    case leftKnee = "left_knee"
    case rightKnee = "right_knee"
    case leftAnkle = "left_ankle"
    case rightAnkle = "right_ankle"

    /// The snake-case name, e.g. `"left_hip"`.
    public var description: String { rawValue }
}

/// One detected body joint in normalised image coordinates.
///
/// `x` grows to the right and `y` grows **downward**, both in 0...1 of the image width and height
/// (values slightly outside 0...1 mean the joint is just out of frame). `confidence` is in 0...1;
/// a joint that was not detected has confidence 0.
public struct Keypoint: Sendable, Equatable {
    /// Horizontal position, fraction of the image width from the left edge.
    public var x: Double
    /// Vertical position, fraction of the image height from the top edge (y grows downward).
    public var y: Double
    /// Detection confidence or visibility, 0...1 (0 = not detected).
    public var confidence: Double

    /// Creates a keypoint.
    /// - Parameters:
    ///   - x: fraction of the image width from the left.
    ///   - y: fraction of the image height from the top (y down).
    ///   - confidence: 0...1, default 1.
    public init(x: Double, y: Double, confidence: Double = 1) {
        self.x = x
        self.y = y
        self.confidence = confidence
    }

    /// A joint that was not detected: `(0, 0)` with confidence 0.
    public static let missing = Keypoint(x: 0, y: 0, confidence: 0)
}

/// One frame of body-pose keypoints: a timestamp and the joints of one person.
///
/// This is the shape that Apple Vision, MediaPipe, MoveNet or a depth camera produce once mapped
/// to ``PoseJoint`` names (Apple Vision's y axis points up: flip it with `1 - y`). Joints that were
/// not given are ``Keypoint/missing``. Stored inline (no dictionary), so frames are cheap to pass.
public struct PoseFrame: Sendable, Equatable {
    /// Seconds from an arbitrary origin (usually the first frame). Must grow from frame to frame.
    public var time: Double
    /// The person's left shoulder.
    public var leftShoulder: Keypoint
    /// The person's right shoulder.
    public var rightShoulder: Keypoint
    /// The person's left hip.
    public var leftHip: Keypoint
    /// The person's right hip.
    public var rightHip: Keypoint
    /// The person's left knee.
    public var leftKnee: Keypoint
    /// The person's right knee.
    public var rightKnee: Keypoint
    /// The person's left ankle.
    public var leftAnkle: Keypoint
    /// The person's right ankle.
    public var rightAnkle: Keypoint

    /// A frame with no joints detected at `time` seconds.
    public init(time: Double) {
        self.time = time
        leftShoulder = .missing
        rightShoulder = .missing
        leftHip = .missing
        rightHip = .missing
        leftKnee = .missing
        rightKnee = .missing
        leftAnkle = .missing
        rightAnkle = .missing
    }

    /// A frame from keypoints by joint; joints not in `keypoints` are ``Keypoint/missing``.
    /// - Parameters:
    ///   - time: seconds.
    ///   - keypoints: the detected joints.
    public init(time: Double, keypoints: [PoseJoint: Keypoint]) {
        self.init(time: time)
        for (joint, point) in keypoints { self[joint] = point }
    }

    /// The keypoint of `joint` (``Keypoint/missing`` when not detected).
    public subscript(joint: PoseJoint) -> Keypoint {
        get {
            switch joint {
            case .leftShoulder: leftShoulder
            case .rightShoulder: rightShoulder
            case .leftHip: leftHip
            case .rightHip: rightHip
            case .leftKnee: leftKnee
            case .rightKnee: rightKnee
            case .leftAnkle: leftAnkle
            case .rightAnkle: rightAnkle
            }
        }
        set {
            switch joint {
            case .leftShoulder: leftShoulder = newValue
            case .rightShoulder: rightShoulder = newValue
            case .leftHip: leftHip = newValue
            case .rightHip: rightHip = newValue
            case .leftKnee: leftKnee = newValue
            case .rightKnee: rightKnee = newValue
            case .leftAnkle: leftAnkle = newValue
            case .rightAnkle: rightAnkle = newValue
            }
        }
    }
}
