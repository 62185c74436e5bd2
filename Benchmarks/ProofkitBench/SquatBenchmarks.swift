import ProofkitCore
import SquatCounting

/// Squat counter benchmarks: frames per second through `SquatRepCounter.process` on one core.
///
/// The input is a deterministic synthetic trajectory (60 fps, 10 deep squats every 3 s with
/// standing between, slight jitter), made before timing. Target: >= 1 million frames/s.
func squatBenchmarks() -> [Benchmark] {
    let frames = makeSquatFrames(count: 200_000)
    return [
        Benchmark(name: "squat.counter", unit: "frames", warmup: 2, iterations: 15) {
            var counter = try! SquatRepCounter()
            var events = 0
            for frame in frames { events &+= counter.process(frame).count }
            blackHole(events)
            blackHole(counter.finish().repCount)
            return Double(frames.count)
        }
    ]
}

/// `count` frames at 60 fps of a body doing slow squats (depth 0.5 of the leg, 2 s down-up, 1 s
/// standing), with a small deterministic jitter on the hips.
func makeSquatFrames(count: Int) -> [PoseFrame] {
    var frames: [PoseFrame] = []
    frames.reserveCapacity(count)
    var seed: UInt64 = 42
    let leg = 0.36
    let floor = 0.88
    for index in 0..<count {
        let t = Double(index) / 60
        let phase = (t - 1).truncatingRemainder(dividingBy: 3)
        var depth = 0.0
        if t > 1, phase < 2 {
            // Triangle-shaped dip (no libm needed): 0 -> 0.5 -> 0 over 2 s.
            depth = 0.5 * (1 - abs(phase - 1))
        }
        seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let jitter = (Double(seed >> 40) / Double(1 << 24) - 0.5) * 0.004
        let hipY = floor - leg * (1 - depth) + jitter
        let kneeY = floor - 0.5 * leg * (1 - 0.25 * depth)
        let shoulderY = hipY - 0.6 * leg * (1 - 0.35 * depth)
        var frame = PoseFrame(time: t)
        frame.leftHip = Keypoint(x: 0.53, y: hipY)
        frame.rightHip = Keypoint(x: 0.47, y: hipY)
        frame.leftKnee = Keypoint(x: 0.56, y: kneeY)
        frame.rightKnee = Keypoint(x: 0.44, y: kneeY)
        frame.leftAnkle = Keypoint(x: 0.56, y: floor)
        frame.rightAnkle = Keypoint(x: 0.44, y: floor)
        frame.leftShoulder = Keypoint(x: 0.58, y: shoulderY)
        frame.rightShoulder = Keypoint(x: 0.42, y: shoulderY)
        frames.append(frame)
    }
    return frames
}
