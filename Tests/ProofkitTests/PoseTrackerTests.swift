import Foundation
import Inference
import Proofkit
import ProofkitCore
import TestSupport
import Testing

private let canRun = OnnxRuntime.isAvailable && PoseFixtures.hasModels
private let store = ModelStore(environment: ["PROOFKIT_MODELS": PoseFixtures.models.path])
private let walkers = TestEnvironment.fixture("video/walkers.mp4")

/// The squat joints' landmark numbers (shoulders, hips, knees, ankles).
private let squatJoints = [11, 12, 23, 24, 25, 26, 27, 28]

@Suite(
    "PoseTracker and PoseVideo: MediaPipe's video mode on a real video",
    .enabled(if: canRun, "needs ONNX Runtime and Models/generated"))
struct PoseTrackerTests {
    @Test(
        "walkers.mp4 against MediaPipe's own video mode: the same frames with a person, the squat joints within 1.5 % of the diagonal (median), the detector only to find the person again"
    )
    func walkersVideo() throws {
        let estimator = try PoseEstimator(store: store)
        let tracker = PoseTracker(estimator: estimator)
        let video = try PoseVideo(path: walkers, tracker: tracker)
        var frames: [(image: RGBImage, time: Double)] = []
        while let frame = try video.nextImage() { frames.append(frame) }
        #expect(video.stop == nil)
        #expect(frames.count == 90)
        // MediaPipe's Python clocks its graph at 1/30 s per frame whatever the video's rate: the
        // same clock here, so that both smooth alike.
        let tracked = try frames.indices.map { try tracker.track(frames[$0].image, time: Double($0 + 1) / 30) }
        let reference = try String(
            contentsOfFile: TestEnvironment.fixture("video/walkers_mediapipe.jsonl"), encoding: .utf8
        ).split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(reference.count == 90)
        let joints = PoseJoint.allCases.map { ($0.rawValue, PoseSkeleton.landmarkIndex(of: $0)) }
        let diagonal = (640.0 * 640 + 480 * 480).squareRoot()
        var agree = 0
        var both = 0
        var close = 0
        var worsts: [Double] = []
        for (observation, expected) in zip(tracked, reference) {
            let theirs = expected["keypoints"] as? [String: [Double]] ?? [:]
            let person = expected["person"] as? Bool ?? false
            if (observation.estimate != nil) == person { agree += 1 }
            guard let ours = observation.estimate, person else { continue }
            both += 1
            var worst = 0.0
            for (name, index) in joints {
                let point = try #require(theirs[name])
                let dx = ours.landmarks[index].x - point[0] * 640
                let dy = ours.landmarks[index].y - point[1] * 480
                worst = max(worst, (dx * dx + dy * dy).squareRoot() / diagonal)
            }
            if worst < 0.05 { close += 1 }
            worsts.append(worst)
        }
        #expect(agree >= 85, "person or nobody as MediaPipe on \(agree) of 90 frames")
        #expect(both >= 60)
        // Measured: 55 of 74 frames within 5 %, median 1.2 %. The rest is one event: where the two
        // walkers cross (3 s in), MediaPipe's presence falls below 0.5 and its detector then picks
        // up the other walker, while proofkit's stays at 0.8 and keeps the first (same models,
        // regions a few pixels apart); 2 s later both follow the same person again.
        #expect(Double(close) >= 0.7 * Double(both), "\(close) of \(both) frames within 5 %")
        let median = worsts.sorted()[worsts.count / 2]
        #expect(median < 0.015, "median \(median) of the diagonal")
        // Tracking: the detector runs on the empty frames at the start and when the person is
        // lost, not on every frame with a person.
        let withPerson = tracked.filter { $0.estimate != nil }.count
        #expect(tracker.frames == 90)
        #expect(tracker.detectorRuns < 90 - withPerson / 2, "detector on \(tracker.detectorRuns) frames")
    }

    @Test("a new size of frame starts afresh (detector, no smoothing); reset forgets the counts")
    func sizeChange() throws {
        let estimator = try PoseEstimator(store: store)
        let tracker = PoseTracker(estimator: estimator)
        let video = try PoseVideo(path: walkers, tracker: PoseTracker(estimator: estimator))
        var images: [RGBImage] = []
        while let frame = try video.nextImage() { images.append(frame.image) }
        let person = images.count - 1
        try #require(person > 0)
        _ = try tracker.track(images[person - 1], time: 0)
        _ = try tracker.track(images[person], time: 0.1)
        let runs = tracker.detectorRuns
        // The same frame at half size: the last region means nothing there.
        var pixels = [UInt8](repeating: 0, count: 320 * 240 * 3)
        for y in 0..<240 {
            for x in 0..<320 {
                let from = (2 * y * 640 + 2 * x) * 3
                let to = (y * 320 + x) * 3
                for channel in 0..<3 { pixels[to + channel] = images[person].pixels[from + channel] }
            }
        }
        let half = RGBImage(width: 320, height: 240, pixels: pixels)
        _ = try tracker.track(half, time: 0.2)
        #expect(tracker.detectorRuns == runs + 1)
        tracker.reset()
        #expect(tracker.frames == 0 && tracker.detectorRuns == 0)
    }
}
