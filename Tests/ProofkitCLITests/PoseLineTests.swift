import Foundation
import ProofkitCore
import TestSupport
import Testing

@testable import ProofkitCLI

/// The fast pose-line decoder against the general JSONReader path: same frames, same errors.
@Suite("pose lines: fast decoder against the general JSON reader")
struct PoseLineTests {
    /// Decodes `lines` with both decoders (each keeping its own time order) and expects the same
    /// frame or the same error message for every line.
    func compare(_ lines: [[UInt8]], sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        var fast = PoseLineDecoder()
        var general = PoseLineDecoder()
        general.generalOnly = true
        var checked = 0
        for line in lines {
            let a = Result { () throws(PoseLineError) -> PoseFrame? in try fast.decode(line[...]) }
            let b = Result { () throws(PoseLineError) -> PoseFrame? in try general.decode(line[...]) }
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

    @Test("every fixture line gives the same frame (bit for bit)")
    func fixtures() throws {
        let files = try Self.fixtureLines()
        #expect(files.count >= 40)
        var lines = 0
        for (_, fileLines) in files { lines += compare(fileLines) }
        #expect(lines > 5000)
    }

    @Test("malformed and unusual lines give the same frame or the same message")
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

    @Test("the reader caps a line without a newline (an endless stream) and ends with exit 65")
    func endlessLine() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let writeEnd = fds[1]
        let writer = Thread {
            let chunk = [UInt8](repeating: 0, count: 1 << 16)
            // More than the cap, then the pipe closes.
            for _ in 0..<24 { _ = chunk.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) } }
            close(writeEnd)
        }
        writer.start()
        var lines = 0
        #expect(throws: ProofkitError.self) {
            try PoseLineReader.forEachLine(fd: fds[0], name: "stdin") { _ in lines += 1 }
        }
        // Drain what the writer still sends, so it can finish.
        var sink = [UInt8](repeating: 0, count: 1 << 16)
        while sink.withUnsafeMutableBytes({ read(fds[0], $0.baseAddress, $0.count) }) > 0 {}
        close(fds[0])
        #expect(lines == 0)
    }
}
