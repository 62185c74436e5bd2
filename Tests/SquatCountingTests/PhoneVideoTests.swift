import Foundation
import ProofkitCore
import SquatCounting
import TestSupport
import Testing

// Issue 36: MediaPipe keypoints from phone videos read deep, slow squats filmed from behind as
// jumps. Two causes, both in the floor line (the lower ankle):
// 1. A floor line that moved for good while the person stood (the phone tilted, the person
//    shuffled back) stayed "in the air" forever: the floor line was only learned on the floor,
//    so every later rep was a jump (Squatify video06: 0 of 4).
// 2. Deep in a squat, MediaPipe lifts the ankles 0.13-0.18 standing references as the shins
//    tilt, and lets them down again over seconds (video08, video12).
// The synthetic tests below reproduce each mechanism and the jumps that must stay rejected; the
// real ones run on the Squatify phone videos when they are present (see PhoneData).

@Suite("Squat counter on phone videos: floor line moves and tracker ankles are not jumps")
struct PhoneVideoTests {
    /// Four deep (0.6), slow (4.8 s) reps with 3 s standing between them, from t = 2 s.
    static func slowDeep(_ t: Double) -> Double { repProfile(count: 4, depth: 0.6, repDuration: 4.8, pause: 3)(t) }

    @Test("the view moves while the person stands (floor line higher for good): the reps after it count")
    func viewMovesBetweenReps() throws {
        var body = SyntheticBody(depth: Self.slowDeep)
        // In the pause after rep 1 (6.8 s to 9.8 s) everything moves up 0.05 of the image (0.14
        // of the leg, above the 0.12 floor-rise limit) over 0.5 s, and stays there. (Counted
        // before the fix too: the feet moving that fast read as stepping, which resets the floor
        // line. The slow drift during a rep below did not.)
        body.floorShift = { t in -0.05 * min(1, max(0, (t - 7.5) / 0.5)) }
        let (result, _) = try run(body.frames(duration: 36))
        #expect(result.repCount == 4, "\(result.rejections)")
        #expect(!reasons(result).contains(.jumped))
    }

    @Test("the view moves during a rep: the rep and those after it count")
    func viewMovesDuringRep() throws {
        var body = SyntheticBody(depth: Self.slowDeep)
        // Rep 1 runs from 2 s to 6.8 s; the view drifts up 0.05 over its whole length.
        body.floorShift = { t in -0.05 * min(1, max(0, (t - 2) / 4.8)) }
        let (result, _) = try run(body.frames(duration: 36))
        #expect(result.repCount == 4, "\(result.rejections)")
    }

    @Test("ankles the tracker lifts at the bottom of a deep squat (and lets down slowly) are no jump")
    func trackerLiftsAnkles() throws {
        var body = SyntheticBody(depth: Self.slowDeep)
        let leg = body.legLength
        body.edit = { index, frame in
            // Up to 0.18 of the leg at the bottom, as MediaPipe does from behind.
            let lift = 0.18 * leg * Self.slowDeep(Double(index) / 30) / 0.6
            frame.leftAnkle.y -= lift
            frame.rightAnkle.y -= lift
        }
        let (result, _) = try run(body.frames(duration: 36))
        #expect(result.repCount == 4, "\(result.rejections)")
    }

    @Test("after the view moved, a deep squat that ends in a jump is still a jump")
    func jumpAfterViewMoved() throws {
        var body = SyntheticBody(depth: repProfile(count: 1, depth: 0.6, repDuration: 4.8, lead: 6))
        body.floorShift = { t in t > 2.5 ? -0.05 : 0 }
        // Rep from 6 s to 10.8 s (standing again from about 10.3 s), taking off as it ends: hips
        // and feet 0.3 of the leg up for 0.45 s.
        body.lift = { t in t > 10.4 && t < 10.85 ? 0.3 : 0 }
        let (result, _) = try run(body.frames(duration: 15))
        #expect(result.repCount == 0)
        #expect(reasons(result).contains(.jumped))
    }

    @Test(
        "a slow deep squat that ends in a jump (feet up 0.45 s, or a long 0.9 s hop) is still a jump",
        arguments: [0.45, 0.9])
    func slowSquatEndsInJump(airTime: Double) throws {
        var body = SyntheticBody(depth: repProfile(count: 1, depth: 0.6, repDuration: 4.8, lead: 2))
        // The rep ends at 6.8 s; the person is standing again from about 6.3 s and takes off.
        body.lift = { t in t > 6.4 && t < 6.4 + airTime ? 0.25 : 0 }
        let (result, _) = try run(body.frames(duration: 10))
        #expect(result.repCount == 0)
        #expect(reasons(result).contains(.jumped))
    }
}

/// The Squatify phone videos converted by `Benchmarks/squatify_data.py` (21 videos; the repository
/// states no licence, so none is a fixture): the folder in `PROOFKIT_SQUAT_PHONE_DATA`, else
/// `../shared/data/squat` when it holds them.
enum PhoneData {
    static let folder: URL? = {
        var candidates: [URL] = []
        if let path = ProcessInfo.processInfo.environment["PROOFKIT_SQUAT_PHONE_DATA"], !path.isEmpty {
            candidates.append(URL(fileURLWithPath: path))
        }
        if let shared = TestEnvironment.sharedData?.appendingPathComponent("squat") { candidates.append(shared) }
        return candidates.first {
            FileManager.default.fileExists(atPath: $0.appendingPathComponent("sqf_video06_squat.jsonl").path)
        }
    }()

    /// The videos the first fix was studied on (the video06, the other two read as jumps,
    /// and the six already in the shared set); the four misses the second round studied; and the
    /// eight that neither studied (the check set of the second round; no video is held out any more).
    static let tuning = ["04", "06", "08", "11", "12", "16", "20", "24", "27"]
    static let tuningRound2 = ["07", "13", "18", "19"]
    static let notStudied = ["03", "09", "14", "15", "17", "21", "23", "25"]

    static func truth(_ video: String) throws -> Int {
        let folder = try #require(folder)
        let text = try String(contentsOf: folder.appendingPathComponent("MANIFEST.tsv"), encoding: .utf8)
        let name = "sqf_video\(video)_squat.jsonl"
        let row = try #require(text.split(separator: "\n").first { $0.hasPrefix(name + "\t") })
        return try #require(Int(row.split(separator: "\t")[2]))
    }

    static func result(_ video: String) throws -> SquatResult {
        let folder = try #require(folder)
        var counter = try SquatRepCounter(
            configuration: SquatCounterConfiguration(plan: SquatWorkoutPlan(repsPerSet: 1000)))
        for frame in try RealData.frames(at: folder.appendingPathComponent("sqf_video\(video)_squat.jsonl")) {
            _ = counter.process(frame)
        }
        return counter.finish()
    }
}

@Suite("Squat counter on the Squatify phone videos", .enabled(if: PhoneData.folder != nil))
struct PhoneVideoRealTests {
    @Test(
        "deep, slow squats filmed from behind are counted, not read as jumps",
        arguments: ["06", "08", "12"])
    func deepSlowFromBehind(video: String) throws {
        let result = try PhoneData.result(video)
        #expect(result.repCount == (try PhoneData.truth(video)), "\(result.rejections)")
        #expect(!result.rejections.contains { $0.reason == .jumped })
    }

    /// Video19: after a "rep" rejected as too long (the person standing while the floor line
    /// read them 0.13 deep), standing still with straight knees is standing again: 5 of its 6
    /// reps count (0 before). The last ends standing 0.12-0.22 "deep" until the recording stops.
    @Test("standing still after a rejected rep is standing (video19: 5 of 6, none before)")
    func standingAfterRejection() throws {
        let result = try PhoneData.result("19")
        #expect(result.repCount == 5, "\(result.rejections)")
        #expect(result.rejections.map(\.reason) == [.tooLong, .tooLong])
        #expect(!result.rejections.contains { $0.reason == .jumped })
    }

    /// Exact videos: first-round tuning 5 of 9 before its fix, 8 after; second-round tuning 0 of
    /// 4 before and after (video19 5 of 6, from 0); the 8 not studied 8 of 8 before and after
    /// (Benchmarks/SQUAT_PHONE_VIDEOS.md).
    @Test("split by video: each part's figures, no worse than measured")
    func splitByVideo() throws {
        let parts = [
            ("tuning (first round)", PhoneData.tuning, 8, 0.12),
            ("tuning (second round)", PhoneData.tuningRound2, 0, 2.26),
            ("not studied", PhoneData.notStudied, 8, 0.0),
        ]
        for (name, videos, minimum, maximumError) in parts {
            var line = AccuracyLine()
            for video in videos {
                let counted = try PhoneData.result(video).repCount
                line.add(truth: try PhoneData.truth(video), counted: counted)
            }
            print("squat phone videos \(name): \(line.text)")
            #expect(line.exact >= minimum, "\(name): \(line.text)")
            #expect(line.meanAbsoluteError <= maximumError, "\(name): \(line.text)")
        }
    }
}
