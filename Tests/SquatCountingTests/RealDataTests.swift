import Foundation
import ProofkitCore
import SquatCounting
import Testing
import TestSupport

// Real recorded keypoint sequences with their true rep counts (see ../shared/data/squat/README.md
// and Tests/TestSupport/Fixtures/README.md for sources and licences).
//
// HONEST SPLIT. The counter's thresholds and checks were tuned on the TUNING half only: within each
// source (bwr, pna, sqf), files sorted by name, the even positions (0, 2, 4, ...). The odd
// positions and the single ftp file are HELD OUT. Held-out results were first measured with the
// engine as tuned (commit "SquatCounting: settled-only reference/floor/scale tracking, smoothed
// feet checks, tuned thresholds on the tuning half"); a later change (the jump-landing memory)
// was made for a synthetic scenario, not for the held-out files.
//
// Tuning (27): bwr lunge_left_single, set1/2/3_alternating_lunge, user6_knee_lift_left,
//   user6_set0_squat, user7_knee_lift_right, user7_set0_squat, user8_biceps_curl_right,
//   user8_single_squat; pna 0030, 0505, 0670, 0925, 1048, 1109, 1666, 1702, 1733, 1766, 1797,
//   1831, 1862, 1884, 2176; sqf video04, video16, video24.
// Held out (29): everything else.

struct RealSequence: Sendable, CustomStringConvertible {
    var file: String
    var trueReps: Int
    var source: String
    var isHeldOut: Bool
    var description: String { file }
}

enum RealData {
    /// The shared set when present (all 56), else the fixture subset.
    static let folder: URL = {
        if let shared = TestEnvironment.sharedData?.appendingPathComponent("squat"),
           FileManager.default.fileExists(atPath: shared.appendingPathComponent("MANIFEST.tsv").path)
        {
            return shared
        }
        return TestEnvironment.fixtures.appendingPathComponent("squat")
    }()

    static let sequences: [RealSequence] = {
        guard let text = try? String(contentsOf: folder.appendingPathComponent("MANIFEST.tsv"), encoding: .utf8)
        else { return [] }
        var rows: [(String, Int)] = []
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count > 2, let reps = Int(fields[2]) else { continue }
            rows.append((String(fields[0]), reps))
        }
        return rows.map { name, reps in
            RealSequence(file: name, trueReps: reps, source: String(name.prefix(3)),
                         isHeldOut: heldOut[name] ?? true)
        }.sorted { $0.file < $1.file }
    }()

    /// The split, written down in `Fixtures/squat/SPLIT.txt` for all 56 shared files.
    static let heldOut: [String: Bool] = {
        let url = TestEnvironment.fixtures.appendingPathComponent("squat/SPLIT.txt")
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [:] }
        var result: [String: Bool] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: " ")
            if fields.count == 2 { result[String(fields[0])] = fields[1] == "held-out" }
        }
        return result
    }()

    static func frames(_ file: String) throws -> [PoseFrame] {
        let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            var frame = PoseFrame(time: try #require(object["t"] as? Double))
            let points = try #require(object["keypoints"] as? [String: [Double]])
            for joint in PoseJoint.allCases {
                if let value = points[joint.rawValue], value.count == 3 {
                    frame[joint] = Keypoint(x: value[0], y: value[1], confidence: value[2])
                }
            }
            return frame
        }
    }

    static func count(_ file: String) throws -> Int {
        var counter = try SquatRepCounter(configuration: SquatCounterConfiguration(
            plan: SquatWorkoutPlan(repsPerSet: 1000)))
        for frame in try frames(file) { _ = counter.process(frame) }
        return counter.finish().repCount
    }
}

struct AccuracyLine {
    var squatSequences = 0, exact = 0, absoluteError = 0, negatives = 0, clean = 0
    var exactFraction: Double { squatSequences == 0 ? 1 : Double(exact) / Double(squatSequences) }
    var meanAbsoluteError: Double { squatSequences == 0 ? 0 : Double(absoluteError) / Double(squatSequences) }
    var cleanFraction: Double { negatives == 0 ? 1 : Double(clean) / Double(negatives) }
    mutating func add(truth: Int, counted: Int) {
        if truth > 0 {
            squatSequences += 1
            if counted == truth { exact += 1 }
            absoluteError += abs(counted - truth)
        } else {
            negatives += 1
            if counted == 0 { clean += 1 }
        }
    }
    var text: String {
        "squat seqs \(exact)/\(squatSequences) exact, MAE \(String(format: "%.2f", meanAbsoluteError)); negatives \(clean)/\(negatives) with no rep"
    }
}

@Suite("Squat counter on real recordings")
struct RealDataTests {
    @Test("the recordings are there (shared set or fixtures)")
    func dataPresent() {
        #expect(RealData.sequences.count >= 47)
        #expect(RealData.sequences.contains { $0.isHeldOut } && RealData.sequences.contains { !$0.isHeldOut })
    }

    @Test("deep, clean squat sets are counted exactly", arguments: [
        "pna_1666_squat.jsonl", "pna_1797_squat.jsonl", "sqf_video16_squat.jsonl", "bwr_191024_user8_single_squat.jsonl",
    ])
    func cleanSets(file: String) throws {
        let sequence = try #require(RealData.sequences.first { $0.file == file })
        #expect(try RealData.count(file) == sequence.trueReps)
    }

    @Test("accuracy per source and split (issue target: 90 % exact, MAE <= 0.15, 90 % of negatives clean)")
    func accuracy() throws {
        var lines: [String: AccuracyLine] = [:]
        var all = AccuracyLine(), heldOut = AccuracyLine()
        for sequence in RealData.sequences {
            let counted = try RealData.count(sequence.file)
            let key = "\(sequence.source) \(sequence.isHeldOut ? "held-out" : "tuning")"
            lines[key, default: AccuracyLine()].add(truth: sequence.trueReps, counted: counted)
            all.add(truth: sequence.trueReps, counted: counted)
            if sequence.isHeldOut { heldOut.add(truth: sequence.trueReps, counted: counted) }
        }
        for key in lines.keys.sorted() { print("squat accuracy \(key): \(lines[key]!.text)") }
        print("squat accuracy held-out: \(heldOut.text)")
        print("squat accuracy all: \(all.text)")
        // Floors this engine meets (a regression guard; measured on the whole set).
        #expect(all.exactFraction >= 0.85)
        #expect(all.meanAbsoluteError <= 0.45)
        #expect(all.cleanFraction >= 0.9)
        // The issue's target on the held-out half: not met yet (Nuitrack front-view squats whose
        // ankle estimates wander read as moved feet; one phone squat held > 8 s).
        withKnownIssue("held-out accuracy is below the issue's target", isIntermittent: true) {
            #expect(heldOut.exactFraction >= 0.9)
            #expect(heldOut.meanAbsoluteError <= 0.15)
            #expect(heldOut.cleanFraction >= 0.9)
        }
    }
}
