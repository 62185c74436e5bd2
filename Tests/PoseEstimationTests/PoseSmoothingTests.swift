import PoseEstimation
import ProofkitCore
import Testing

// The reference figures are MediaPipe's own, from the comments beside its settings in
// pose_landmark_filtering.pbtxt: "Min cutoff 0.05 results into ~0.01 alpha in landmark EMA filter
// when landmark is static", "Beta 80.0 in combination with min_cutoff 0.05 results into ~0.94
// alpha ... when landmark is moving fast", "Derivative cutoff 1.0 results into ~0.17 alpha in
// landmark velocity EMA filter" (at its default 30 Hz).

/// A person standing still: 39 landmarks around (300, 200) with the tracking pair 100 px apart
/// (a person 200 px tall for the smoothing's scale), shifted by `dx`, `dy`.
private func estimate(dx: Double = 0, dy: Double = 0, visibility: Double = 0.9) -> PoseEstimate {
    var landmarks: [PoseLandmark] = (0..<39).map { index in
        PoseLandmark(
            x: 300 + Double(index % 5) * 10 + dx, y: 200 + Double(index / 5) * 10 + dy, z: Double(index),
            visibility: visibility, presence: 0.99)
    }
    landmarks[33] = PoseLandmark(x: 300 + dx, y: 250 + dy, z: 0, visibility: visibility, presence: 0.99)
    landmarks[34] = PoseLandmark(x: 300 + dx, y: 150 + dy, z: 0, visibility: visibility, presence: 0.99)
    return PoseEstimate(
        detection: nil, region: PoseRegion(centerX: 300, centerY: 200, width: 250, height: 250, rotation: 0),
        presence: 0.99, landmarks: Array(landmarks.prefix(33)), allLandmarks: landmarks)
}

@Suite("Landmark smoothing (MediaPipe's 1-euro and visibility filters)")
struct PoseSmoothingTests {
    @Test("the low-pass filter passes its first value, then mixes alpha of the new with the last output")
    func lowPass() {
        var filter = LowPassFilter()
        #expect(filter.apply(10, alpha: 0.1) == 10)
        #expect(abs(filter.apply(20, alpha: 0.1) - 11) < 1e-12)
        #expect(abs(filter.apply(20, alpha: 0.1) - 11.9) < 1e-12)
        #expect(filter.lastRawValue == 20)
    }

    @Test("a still landmark is smoothed with MediaPipe's alpha of about 0.01: a 10 px jolt moves it 0.1 px")
    func stillAlpha() {
        var filter = OneEuroFilter(minimumCutoff: 0.05, beta: 80, derivativeCutoff: 1)
        var output = 0.0
        for frame in 1...30 { output = filter.apply(100, time: Double(frame) / 30, valueScale: 1.0 / 200) }
        #expect(output == 100)
        // A jolt: speed 10 px x 30 Hz / 200 px = 1.5 /s, the derivative filtered with alpha 0.173
        // gives 0.26, so the cut-off is 0.05 + 80 x 0.26 = 20.8 Hz: a moving landmark follows.
        let jolt = filter.apply(110, time: 31.0 / 30, valueScale: 1.0 / 200)
        let derivativeAlpha = 1 / (1 + 30 / (2 * Double.pi * 1))
        #expect(abs(derivativeAlpha - 0.17) < 0.005)  // MediaPipe's ~0.17
        let cutoff = 0.05 + 80 * derivativeAlpha * 1.5
        let alpha = 1 / (1 + 30 / (2 * Double.pi * cutoff))
        #expect(abs(jolt - (100 + 10 * alpha)) < 1e-9)
        // At rest the weight is MediaPipe's ~0.01.
        let restAlpha = 1 / (1 + 30 / (2 * Double.pi * 0.05))
        #expect(abs(restAlpha - 0.01) < 0.001)
    }

    @Test("a landmark moving fast follows with MediaPipe's alpha of about 0.94: the lag stays under a pixel")
    func fastFollows() {
        var filter = OneEuroFilter(minimumCutoff: 0.05, beta: 80, derivativeCutoff: 1)
        var lag = 0.0
        for frame in 0...60 {
            let value = 100 + 20 * Double(frame)  // 600 px/s on a 200 px person
            lag = value - filter.apply(value, time: Double(frame + 1) / 30, valueScale: 1.0 / 200)
        }
        #expect(lag > 0 && lag < 1.2, "lag \(lag) px")
        // The steady-state weight: speed 3 /s, cut-off 240 Hz.
        let alpha = 1 / (1 + 30 / (2 * Double.pi * (0.05 + 80 * 3)))
        #expect(alpha > 0.94)
    }

    @Test(
        "a time that does not grow returns the value unfiltered and changes nothing; the frequency follows the timestamps"
    )
    func timestamps() {
        var filter = OneEuroFilter(minimumCutoff: 0.05, beta: 80, derivativeCutoff: 1)
        #expect(filter.frequency == 30)
        _ = filter.apply(100, time: 0.1)
        _ = filter.apply(100, time: 0.2)
        #expect(abs(filter.frequency - 10) < 1e-9)
        #expect(filter.apply(500, time: 0.2) == 500)
        #expect(filter.apply(500, time: 0.15) == 500)
        #expect(filter.apply(100, time: 0.3) == 100)  // the jolts left no trace
    }

    @Test("the smoother: the first frame passes, jitter of a still person is damped, nobody in view resets")
    func smoother() throws {
        var smoother = PoseLandmarkSmoother()
        let first = smoother.smooth(.person(estimate()), time: 1.0 / 30)
        #expect(first == .person(estimate()))
        var last = first
        for frame in 2...30 { last = smoother.smooth(.person(estimate()), time: Double(frame) / 30) }
        // A 1 px jitter of every landmark at 30 frames/s moves the smoothed ones by less than half
        // of it (the body's weight is about 0.3 at that speed, the tracking pair's 0.05), and the
        // visibilities by 0.1 of their change.
        let jittered = smoother.smooth(.person(estimate(dx: 1, visibility: 0.5)), time: 31.0 / 30)
        let before = try #require(last.estimate)
        let after = try #require(jittered.estimate)
        for index in [0, 11, 23, 25, 27, 33, 34] {
            let moved = after.allLandmarks[index].x - before.allLandmarks[index].x
            #expect(moved > 0 && moved < 0.5, "landmark \(index) moved \(moved) px")
            #expect(abs(after.allLandmarks[index].visibility - (0.9 - 0.1 * 0.4)) < 1e-9)
        }
        #expect(after.landmarks == Array(after.allLandmarks.prefix(33)))
        #expect(after.allLandmarks[36] == estimate(dx: 1, visibility: 0.5).allLandmarks[36])  // not smoothed
        #expect(after.presence == 0.99)
        // Nobody in view passes through and resets: the person who comes back is not pulled back.
        #expect(smoother.smooth(.nobody(.noDetection), time: 32.0 / 30) == .nobody(.noDetection))
        let back = smoother.smooth(.person(estimate(dx: 50)), time: 33.0 / 30)
        #expect(back == .person(estimate(dx: 50)))
    }
}
