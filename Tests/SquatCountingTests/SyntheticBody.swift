import ProofkitCore

/// A synthetic keypoint trajectory generator: a stick body whose hip drop, scale, position and
/// limbs follow functions of time, rendered as pose frames (normalised coordinates, y down).
///
/// Geometry (standing, scale 1): ankles on the floor line at `floorY`, hips `legLength` above,
/// knees half-way, shoulders `0.6 * legLength` above the hips, stance `0.35 * legLength` wide.
struct SyntheticBody {
    enum View { case front, side }

    var fps = 30.0
    var legLength = 0.36
    var floorY = 0.88
    var centerX = 0.5
    var view = View.front
    /// Hip drop as a fraction of leg length, by time.
    var depth: (Double) -> Double = { _ in 0 }
    /// Apparent size (1 = as at start), by time: > 1 when closer to the camera.
    var scale: (Double) -> Double = { _ in 1 }
    /// Extra vertical lift of the whole body (jumping), fraction of leg length, by time.
    var lift: (Double) -> Double = { _ in 0 }
    /// Forward step of the right foot (lunge), fraction of leg length, by time.
    var rightFootStep: (Double) -> Double = { _ in 0 }
    /// Extra sideways spread of each foot (jumping jacks), fraction of leg length, by time.
    var footSpread: (Double) -> Double = { _ in 0 }
    /// Forward lean of the torso, 0 upright ... 1 horizontal, by time (bending over).
    var lean: (Double) -> Double? = { _ in nil }
    /// Floor line change (walking: feet higher in the image as the person walks away), by time.
    var floorShift: (Double) -> Double = { _ in 0 }
    /// Frames to change before output (drop joints, add spikes).
    var edit: (Int, inout PoseFrame) -> Void = { _, _ in }

    func frame(at t: Double, index: Int) -> PoseFrame {
        let s = scale(t)
        let leg = legLength * s
        let d = depth(t)
        let floor = floorY + floorShift(t) - lift(t) * leg
        let stance = 0.35 * leg
        var frame = PoseFrame(time: t)
        let spread = footSpread(t) * leg
        let step = rightFootStep(t) * leg
        // Ankles.
        var leftAnkle = Keypoint(x: centerX + stance / 2 + spread, y: floor)
        var rightAnkle = Keypoint(x: centerX - stance / 2 - spread, y: floor)
        if view == .side {
            leftAnkle.x = centerX
            rightAnkle.x = centerX + 0.01
        }
        // A lunge step: in front view the stepping foot comes closer (lower in the image).
        if view == .front { rightAnkle.y += step } else { rightAnkle.x += step }
        // Hips.
        let hipY = floor - leg * (1 - d)
        let hipBack = view == .side ? -0.3 * d * leg : 0
        frame.leftHip = Keypoint(x: centerX + 0.08 * leg + hipBack, y: hipY)
        frame.rightHip = Keypoint(x: centerX - 0.08 * leg + hipBack, y: hipY)
        if view == .side { frame.rightHip.x = frame.leftHip.x + 0.005 }
        // Knees: half-way between hip and ankle in height, but the shin shortens a little and the
        // knee comes forward as the hips drop. In a lunge the back knee drops towards the floor.
        let kneeFromFloor = 0.5 * legLength * s * (1 - 0.25 * d)
        let kneeForward = view == .side ? 0.35 * d * leg : 0
        frame.leftKnee = Keypoint(x: leftAnkle.x + kneeForward, y: leftAnkle.y - kneeFromFloor)
        frame.rightKnee = Keypoint(x: rightAnkle.x + kneeForward, y: rightAnkle.y - kneeFromFloor)
        if step > 0.05 * leg {
            // Back (left) knee goes down towards the floor with the hips; front knee stays.
            frame.leftKnee.y = min(floor - 0.05 * leg, hipY + 0.5 * leg)
            frame.rightKnee.y = rightAnkle.y - 0.5 * leg
        }
        frame.leftAnkle = leftAnkle
        frame.rightAnkle = rightAnkle
        // Shoulders: the torso leans forward as the hips drop (or by `lean`).
        let torso = 0.6 * leg
        let leanAmount = lean(t) ?? 0.35 * d
        let shoulderY = hipY - torso * (1 - leanAmount)
        let halfWidth = view == .front ? 0.22 * leg : 0.005
        let shoulderForward = view == .side ? torso * leanAmount : 0
        frame.leftShoulder = Keypoint(x: centerX + halfWidth + shoulderForward, y: shoulderY)
        frame.rightShoulder = Keypoint(x: centerX - halfWidth + shoulderForward, y: shoulderY)
        edit(index, &frame)
        return frame
    }

    /// Frames from 0 up to `duration` seconds.
    func frames(duration: Double) -> [PoseFrame] {
        let count = Int(duration * fps)
        return (0..<count).map { frame(at: Double($0) / fps, index: $0) }
    }
}

/// A depth profile: standing, then `count` cosine-shaped reps of `depth` lasting `repDuration`
/// each, with `pause` seconds of standing between them, starting after `lead` seconds.
func repProfile(
    count: Int, depth: Double, repDuration: Double = 2, pause: Double = 1, lead: Double = 2
) -> (Double) -> Double {
    { t in
        let local = t - lead
        guard local >= 0 else { return 0 }
        let period = repDuration + pause
        let index = Int(local / period)
        guard index < count else { return 0 }
        let phase = local - Double(index) * period
        guard phase < repDuration else { return 0 }
        return depth * (1 - cosine(2 * Double.pi * phase / repDuration)) / 2
    }
}

/// cos without Foundation (Taylor series after range reduction; plenty for test trajectories).
func cosine(_ x: Double) -> Double {
    var r = x.truncatingRemainder(dividingBy: 2 * Double.pi)
    if r > Double.pi { r -= 2 * Double.pi }
    if r < -Double.pi { r += 2 * Double.pi }
    let r2 = r * r
    var term = 1.0
    var sum = 1.0
    for n in 1...12 {
        term *= -r2 / Double((2 * n - 1) * (2 * n))
        sum += term
    }
    return sum
}
