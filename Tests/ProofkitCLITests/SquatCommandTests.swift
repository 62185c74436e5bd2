import Foundation
import ProofkitCLI
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `proofkit squat` in process (files) and end to end (stdin streaming, exit codes).
@Suite("proofkit squat", .offThePool)
struct SquatCommandTests {
    static let fixture = TestEnvironment.fixture("squat/pna_1666_squat.jsonl")
    static let setFixture = TestEnvironment.fixture("squat/sqf_video16_squat.jsonl")

    func run(_ arguments: [String]) -> (status: Int32, out: String, err: String) {
        let captured = CapturedIO()
        let status = ProofkitCLI.run(arguments: ["proofkit", "squat"] + arguments, io: captured.io)
        return (status, captured.stdout, captured.stderr)
    }

    func temporaryFile(_ contents: String, name: String = "poses.jsonl") throws -> String {
        // Removed with everything in it when the test process exits.
        let folder = URL(fileURLWithPath: try TestFolder.makeForProcess("proofkit-squat"))
        let url = folder.appendingPathComponent(name)
        try contents.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    @Test("a real phone recording: 7 reps with times and depth, accepted against --target 7")
    func countsRealSet() {
        let (status, out, err) = run([Self.setFixture, "--target", "7"])
        #expect(status == 0)
        #expect(err.isEmpty)
        #expect(out.components(separatedBy: "\n").filter { $0.hasPrefix("rep ") }.count == 7)
        #expect(out.contains("rep 1: start "))
        #expect(out.contains("7 squats (target 7): accepted"))
        #expect(out.contains("skipped 0 of 1070 frames"))
    }

    @Test("--json gives one object with the documented fields")
    func jsonOutput() throws {
        let (status, out, _) = run([Self.fixture, "--json", "--target", "1"])
        #expect(status == 0)
        let lines = out.split(separator: "\n")
        #expect(lines.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(object["reps"] as? Int == 1)
        #expect(object["verdict"] as? String == "accepted")
        #expect(object["frames"] as? Int == 78)
        let reps = try #require(object["repList"] as? [[String: Any]])
        let rep = try #require(reps.first)
        let start = try #require(rep["start"] as? Double)
        let bottom = try #require(rep["bottom"] as? Double)
        let end = try #require(rep["end"] as? Double)
        #expect(start < bottom && bottom < end)
        for key in [
            "rejected", "sets", "longRests", "skippedFrames", "skipped", "standingReference", "target", "reason",
        ] {
            #expect(object[key] != nil, "missing \(key)")
        }
    }

    @Test("--strict exits 2 when the target is not met, 0 without it")
    func strict() {
        #expect(run([Self.fixture, "--target", "3"]).status == 0)
        let (status, out, _) = run([Self.fixture, "--target", "3", "--strict"])
        #expect(status == 2)
        #expect(out.contains("rejected (1 of 3 squats)"))
    }

    @Test("--plot writes an SVG with the depth line, both thresholds and the rep band")
    func plot() throws {
        let svgPath = try temporaryFile("", name: "depth.svg")
        let (status, _, _) = run([Self.fixture, "--plot", svgPath])
        #expect(status == 0)
        let svg = try String(contentsOfFile: svgPath, encoding: .utf8)
        #expect(svg.hasPrefix("<svg"))
        #expect(svg.contains("smoothed depth"))
        #expect(svg.contains("down threshold 0.15"))
        #expect(svg.contains("stand threshold 0.08"))
        #expect(svg.contains("counted rep"))
    }

    @Test(
        "bad input: one line naming the line number, exit 65, no plot written",
        arguments: [
            ("{\"t\":0,\"keypoints\":{}}\nnot json\n", "line 2: not JSON"),
            ("{\"t\":0}\n", "line 1: missing field \"keypoints\""),
            ("{\"keypoints\":{}}\n", "line 1: missing field \"t\""),
            ("{\"t\":1,\"keypoints\":{}}\n{\"t\":0.5,\"keypoints\":{}}\n", "line 2: time goes backwards"),
            ("{\"t\":0,\"keypoints\":{\"left_hip\":[NaN,0.5,1]}}\n", "line 1: not JSON: NaN"),
            (
                "{\"t\":0,\"keypoints\":{\"left_hip\":[0.5,0.5]}}\n",
                "line 1: keypoint \"left_hip\" must be [x, y, conf]"
            ),
            ("{\"t\":0,\"keypoints\":{\"left_hip\":[0.5,0.5,7]}}\n", "line 1: keypoint \"left_hip\" confidence"),
            ("\n\n", "no pose frames"),
        ])
    func badInput(contents: String, message: String) throws {
        let path = try temporaryFile(contents)
        let svgPath = path + ".svg"
        let (status, out, err) = run([path, "--plot", svgPath])
        #expect(status == 65)
        #expect(out.isEmpty)
        #expect(err.contains(message), "stderr: \(err)")
        #expect(err.split(separator: "\n").count == 1)
        #expect(!FileManager.default.fileExists(atPath: svgPath))
    }

    @Test("usage errors exit 64; a missing file exits 66")
    func usageAndMissing() {
        #expect(run([]).status == 64)
        #expect(run([Self.fixture, "--target", "0"]).status == 64)
        #expect(run([Self.fixture, "--bogus"]).status == 64)
        #expect(run(["/nonexistent/poses.jsonl"]).status == 66)
        // Every tunable is an option; out of range or not a number is a usage error.
        #expect(run([Self.fixture, "--knee-gate", "95"]).status == 64)
        #expect(run([Self.fixture, "--depth", "abc"]).status == 64)
        #expect(run([Self.fixture, "--take-off-watch", "3s"]).status == 64)
        #expect(
            run([Self.fixture, "--depth", "0.12", "--stand", "0.06", "--knee-gate", "15", "--foot-hold", "200ms"])
                .status == 0)
    }

    @Test(
        "stdin stream: reps are printed as they happen, then the result (built binary)",
        .enabled(if: TestEnvironment.hasProofkitBinary, "run swift build first"))
    func stdinStream() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: Self.setFixture))
        let result = try runProcess(
            TestEnvironment.proofkitBinary, ["squat", "-", "--json", "--target", "7"], stdin: data)
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let events = lines.compactMap { line -> String? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                return nil
            }
            return object["event"] as? String
        }
        #expect(events.filter { $0 == "rep" }.count == 7)
        #expect(events.last == "result")
        #expect(events.first == "calibrated")
        #expect(result.stderr.isEmpty)
    }

    @Test(
        "stdin stream with bad data stops at the line, exit 65 (built binary)",
        .enabled(if: TestEnvironment.hasProofkitBinary, "run swift build first"))
    func stdinBadData() throws {
        let input = "{\"t\":0,\"keypoints\":{}}\n{\"t\":0,\"keypoints\":{}}\n"
        let result = try runProcess(TestEnvironment.proofkitBinary, ["squat", "-"], stdin: Data(input.utf8))
        #expect(result.status == 65)
        #expect(result.stderr == "proofkit squat: stdin: line 2: time does not increase (t = 0.0 s twice)\n")
    }

    @Test("endless or size-0 inputs end at once with exit 65 and one line: /dev/zero, /proc/self/pagemap, a 5 MB line")
    func endlessInputs() throws {
        let long = try temporaryFile(String(repeating: "a", count: 5_000_000))
        for path in ["/dev/zero", "/proc/self/pagemap", long] where FileManager.default.isReadableFile(atPath: path) {
            let (status, out, err) = run([path])
            #expect(status == 65, "\(path)")
            #expect(out.isEmpty)
            #expect(err.contains("line 1 is longer than 1 MiB"), "\(path): \(err)")
            #expect(err.split(separator: "\n").count == 1)
        }
    }

    @Test(
        "a FIFO with no writer ends like check's: exit 74 and one line within the wait, not a hang",
        .enabled(if: TestEnvironment.hasProofkitBinary, "run swift build first"))
    func fifoWithoutWriter() throws {
        try withTemporaryFolder { folder in
            #expect(mkfifo(folder + "/poses.jsonl", 0o644) == 0)
            let started = Date()
            // `timeout` ends a hang (status 124) so that a regression fails instead of blocking the suite.
            let result = try runProcess(
                "/usr/bin/env", ["timeout", "30", TestEnvironment.proofkitBinary, "squat", folder + "/poses.jsonl"])
            #expect(result.status == 74, "\(result.status) \(result.stderr)")
            #expect(result.stderr.contains("no writer sent anything to this FIFO within 10 s"), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
            #expect(Date().timeIntervalSince(started) < 20)
        }
    }

    @Test(
        "the same lines on stdin count the same reps as the file, and stdin ends at the target (built binary)",
        .enabled(if: TestEnvironment.hasProofkitBinary, "run swift build first"))
    func fileEqualsStdin() throws {
        let (status, out, _) = run([Self.setFixture, "--json", "--target", "7"])
        #expect(status == 0)
        let data = try Data(contentsOf: URL(fileURLWithPath: Self.setFixture))
        let result = try runProcess(
            TestEnvironment.proofkitBinary, ["squat", "-", "--json", "--target", "7"], stdin: data)
        #expect(result.status == 0)
        let last = try #require(result.stdout.split(separator: "\n").last)
        // The object without "file" and "event", serialised with sorted keys.
        func canonical(_ text: Substring) throws -> String {
            var object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            object["file"] = nil
            object["event"] = nil
            return String(
                decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
        }
        let fromFile = try canonical(Substring(out.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(fromFile.contains("\"reps\":7"))
        // A live stream ends once the workout is done: the same reps, sets and verdict, from the
        // frames up to the target's last rep (the file goes on to its end).
        func counted(_ text: String) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        }
        let file = try counted(fromFile)
        let live = try counted(try canonical(last))
        for key in ["reps", "target", "verdict", "repList", "sets"] {
            #expect((live[key] as? NSObject) == (file[key] as? NSObject), "\(key)")
        }
        #expect((live["frames"] as? Int ?? 0) <= (file["frames"] as? Int ?? 0))
    }

    @Test("a rep the input ends on (still in its take-off watch) is counted and printed")
    func repAtEndOfInput() {
        // A 2 s watch outlasts the clip: the rep is decided when the input ends.
        let (status, out, _) = run([Self.fixture, "--target", "1", "--take-off-watch", "2s"])
        #expect(status == 0)
        #expect(out.hasPrefix("rep 1: start "))
        #expect(out.contains("1 squat (target 1): accepted"))
    }
}
