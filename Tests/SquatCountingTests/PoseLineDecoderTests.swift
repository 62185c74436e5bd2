import Foundation
import ProofkitCore
import TestSupport
import Testing

@testable import SquatCounting

// Issue 34: the pose-line decoder is SquatCounting's public API (it was internal to the CLI).
// Checked on the real recordings against Foundation's JSONSerialization (an independent reader),
// and its fast path against its general JSONReader path: same frames, same errors.

@Suite("pose lines: SquatCounting's public decoder")
struct PoseLineDecoderTests {
    /// Decodes `lines` with both decoders (each keeping its own time order) and expects the same
    /// frame or the same error message for every line.
    func compare(_ lines: [[UInt8]], sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        var fast = PoseLineDecoder()
        var general = PoseLineDecoder()
        general.generalOnly = true
        var checked = 0
        for line in lines {
            let a = Result { () throws(ProofkitError) -> PoseFrame? in try fast.decode(line[...]) }
            let b = Result { () throws(ProofkitError) -> PoseFrame? in try general.decode(line[...]) }
            switch (a, b) {
            case (.success(let x), .success(let y)):
                #expect(x == y, "line \(String(decoding: line, as: UTF8.self))", sourceLocation: sourceLocation)
            case (.failure(let x), .failure(let y)):
                #expect(x.message == y.message, sourceLocation: sourceLocation)
            default:
                Issue.record(
                    "fast \(a) general \(b) for \(String(decoding: line, as: UTF8.self))",
                    sourceLocation: sourceLocation)
            }
            checked += 1
        }
        return checked
    }

    static func fixtureLines() throws -> [(String, [[UInt8]])] {
        let folder = TestEnvironment.fixtures.appendingPathComponent("squat")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".jsonl") }
            .sorted()
        return try names.map { name in
            let data = try Data(contentsOf: folder.appendingPathComponent(name))
            return (name, data.split(separator: 0x0A, omittingEmptySubsequences: false).map { Array($0) })
        }
    }

    @Test("every recording (the shared set when present, else the fixtures) gives JSONSerialization's frames")
    func recordingsAgainstFoundation() throws {
        #expect(RealData.sequences.count >= 40)
        var frames = 0
        for sequence in RealData.sequences {
            let url = RealData.folder.appendingPathComponent(sequence.file)
            let expected = try RealData.frames(at: url)
            // The public API as an app calls it: one decoder per stream, a String per line.
            var decoder = PoseLineDecoder()
            var decoded: [PoseFrame] = []
            let text = try String(contentsOf: url, encoding: .utf8)
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                if let frame = try decoder.decode(String(line)) { decoded.append(frame) }
            }
            #expect(decoded == expected, "\(sequence.file)")
            #expect(decoder.lineNumber >= decoded.count)
            frames += decoded.count
            // The frames count the recording's true reps as the counter does from the reference's.
            #expect(try RealData.count(decoded, SquatCounterConfiguration()) == RealData.count(sequence.file))
        }
        #expect(frames > 5000)
    }

    @Test("every fixture line gives the same frame from the fast and the general path (bit for bit)")
    func fixtures() throws {
        let files = try Self.fixtureLines()
        #expect(files.count >= 40)
        var lines = 0
        for (_, fileLines) in files { lines += compare(fileLines) }
        #expect(lines > 5000)
    }

    @Test("a bad line throws one line of text that names it; blank lines give nil")
    func errors() throws {
        var decoder = PoseLineDecoder()
        #expect(try decoder.decode("") == nil)
        #expect(try decoder.decode(" \t\r") == nil)
        let frame = try #require(
            try decoder.decode(#"{"t": 0.5, "keypoints": {"left_hip": [0.4, 0.6, 0.9], "nose": [1, 2, 3]}}"#))
        #expect(frame.time == 0.5 && frame.leftHip == Keypoint(x: 0.4, y: 0.6, confidence: 0.9))
        #expect(frame.rightHip.confidence == 0)  // not in the line: not detected
        #expect(throws: ProofkitError(.decodeFailed, "line 4: time goes backwards (t = 0.25 s after 0.5 s)")) {
            try decoder.decode(#"{"t": 0.25, "keypoints": {}}"#)
        }
        #expect(throws: ProofkitError(.decodeFailed, #"line 5: keypoint "left_knee" must be [x, y, conf]"#)) {
            try decoder.decode(#"{"t": 1, "keypoints": {"left_knee": [0.5, 0.5]}}"#)
        }
        let cut = #expect(throws: ProofkitError.self) { try decoder.decode(#"{"t": 1,"#) }
        #expect(cut?.message.hasPrefix("line 6: not JSON: ") == true, "\(String(describing: cut))")
        #expect(decoder.lineNumber == 6)
    }

    @Test("malformed and unusual lines give the same frame or the same message on both paths")
    func malformed() {
        let good = #"{"t":1.5,"keypoints":{"left_hip":[0.5,0.5,1.0]}}"#
        let cases = [
            good, " " + good + " \r", "", "   ", "\t",
            #"{"t":1.5,"keypoints":{"left_hip":[0.5,0.5,1.0],"nose":{"a":[1,2,{"b":null}],"c":"x\"y"}},"extra":[true,false]}"#,
            #"{"keypoints":{"left_hip":[0.5,0.5,1.0]},"t":2}"#,
            #"{"t":1.5,"t":2,"keypoints":{}}"#, #"{"t":1.5,"keypoints":{},"keypoints":5}"#,
            #"{"t":1.5,"keypoints":{"left_hip":[0.5,0.5,1.0],"left_hip":[0.1,0.2,0.3]}}"#,
            #"{"t":"1.5","keypoints":{}}"#, #"{"t":NaN,"keypoints":{}}"#, #"{"t":1e999,"keypoints":{}}"#,
            #"{"t":+1,"keypoints":{}}"#, #"{"t":01.5,"keypoints":{}}"#, #"{"t":1.,"keypoints":{}}"#,
            #"{"t":.5,"keypoints":{}}"#, #"{"t":1.5.3,"keypoints":{}}"#, #"{"t":-0.0,"keypoints":{}}"#,
            #"{"t":1E2,"keypoints":{}}"#, #"{"t":12345678901234567890123,"keypoints":{}}"#,
            #"{"t":0.30000000000000004,"keypoints":{}}"#, #"{"t":4.35e-12,"keypoints":{}}"#,
            #"{"t":1.5,"keypoints":{"left_hip":[0.5,0.5]}}"#, #"{"t":1.5,"keypoints":{"left_hip":[0.5,0.5,1.5]}}"#,
            #"{"t":1.5,"keypoints":{"left_hip":[0.5,0.5,-0.1]}}"#, #"{"t":1.5,"keypoints":{"left_hip":[0.5,"a",1]}}"#,
            #"{"t":1.5,"keypoints":{"left_hip":[0.5,0.5,1,2]}}"#, #"{"t":1.5,"keypoints":[]}"#,
            #"{"t":1.5}"#, #"{"keypoints":{}}"#, "[1,2]", "null", "{", #"{"t":1.5,"keypoints":{}"#,
            #"{"t":1.5,"keypoints":{}} x"#, #"{"t":1.5,"keypoints":{"left\u005fhip":[0.5,0.5,1.0]}}"#,
            #"{"t":1.5,"keypoints":{"le\nft":[0.5,0.5,1.0]}}"#, "{\"t\":1.5,\"keypoints\":{\"a\":\"\u{1}\"}}",
            #"{"t":3,"keypoints":{"right_ankle":[1e-3,2E+1,1]}}"#, #"{"t":2,"keypoints":{}}"#,
        ]
        #expect(compare(cases.map { Array($0.utf8) }) == cases.count)
    }

    @Test("thousands of damaged fixture lines (bytes changed, cut, doubled) agree", .tags(.property), .propertyRun)
    func damaged() throws {
        let files = try Self.fixtureLines()
        var seed: UInt64 = 17
        func next() -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(seed >> 33)
        }
        let alphabet = Array(#"{}[],:."\-+eE0123456789 tnfa_"#.utf8)
        var lines: [[UInt8]] = []
        for (_, fileLines) in files {
            for line in fileLines.prefix(60) where !line.isEmpty {
                var damaged = line
                switch next() % 4 {
                case 0: damaged[next() % damaged.count] = alphabet[next() % alphabet.count]
                case 1: damaged.removeLast(next() % damaged.count)
                case 2: damaged.insert(alphabet[next() % alphabet.count], at: next() % damaged.count)
                default: damaged.remove(at: next() % damaged.count)
                }
                lines.append(damaged)
            }
        }
        #expect(compare(lines) > 2000)
    }
}
