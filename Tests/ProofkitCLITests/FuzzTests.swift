import AlarmScheduling
import AudioIO
import DuaMatching
import Foundation
import PrayerPlanning
import Proofkit
import ProofkitCore
import TestSupport
import Testing

@testable import ProofkitCLI

// Issue 15 "Also": a seeded mutational fuzz harness over the parsers that read untrusted bytes:
// JSON (ProofkitCore's JSONReader), pose lines (`proofkit squat`'s line decoder), texts files
// (DuaCatalog), the plan state file, the models manifest, and WAV/CAF sniffing and decoding
// (AudioFileReader over libsndfile). Each case must end in a value or a one-line ProofkitError:
// never a crash, a hang or a trap. CI runs a fixed number of cases from fixed seeds (quick);
// PROOFKIT_FUZZ_RUNS=N multiplies them for a long run (Benchmarks/FUZZING.md), and
// PROOFKIT_FUZZ_SEED=S changes the seed. Inputs that ever crashed are kept in
// Tests/TestSupport/Fixtures/fuzz/<target>/ and run first, every time.

enum Fuzz {
    /// The case-count multiplier: 1 in CI, PROOFKIT_FUZZ_RUNS for a long run.
    static let scale: Int = ProcessInfo.processInfo.environment["PROOFKIT_FUZZ_RUNS"].flatMap(Int.init) ?? 1
    static let seed: UInt64 =
        ProcessInfo.processInfo.environment["PROOFKIT_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x15_2026
    /// In a long run each input is written to `proofkit-fuzz-last-TARGET` in the temporary
    /// folder before it runs, so a crash leaves it behind (copy it to Fixtures/fuzz/TARGET/).
    static func lastInputPath(_ target: String) -> String? {
        scale > 1 ? NSTemporaryDirectory() + "proofkit-fuzz-last-\(target)" : nil
    }

    /// Bytes that matter to the parsers, spliced in by the mutator.
    static let dictionary: [[UInt8]] =
        [
            "{", "}", "[", "]", "\"", ":", ",", "\\u", "\\ud800", "\\\\", "-", "1e999", "-0", "0.0", "1e-400",
            "null", "true", "false", "NaN", "\u{0}", "\"t\"", "\"keypoints\"", "\"version\"", "\"texts\"", "\"files\"",
            "\"sha256\"", "\"outcomes\"", "\"alarms\"", "RIFF", "WAVE", "fmt ", "data", "caff", "desc", "lpcm",
            "ID3", "fLaC", "OggS", "\u{FF}\u{FB}", "ftypM4A",
        ].map { Array($0.utf8) } + [
            [0xFF, 0xFF, 0xFF, 0x7F], [0, 0, 0, 0x80], [0xFF, 0xFF, 0xFF, 0xFF], [0x7F, 0xF8, 0, 0, 0, 0, 0, 0],
        ]

    /// One mutation of `input` (or a splice with `other`): flips, interesting bytes, dictionary
    /// words, deletions, duplications, and repetition (deep nesting, long runs).
    static func mutate(_ input: [UInt8], other: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &rng)
            switch Int.random(in: 0..<9, using: &rng) {
            case 0 where !bytes.isEmpty: bytes[position] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng)
            case 1 where !bytes.isEmpty:
                bytes[position] = [0, 0xFF, 0x7F, 0x80, 0x22, 0x5C, 0x0A, 0x30, 0x39].randomElement(using: &rng)!
            case 2: bytes.insert(contentsOf: dictionary.randomElement(using: &rng)!, at: position)
            case 3 where !bytes.isEmpty:
                let end = min(bytes.count, position + Int.random(in: 1...16, using: &rng))
                bytes.removeSubrange(position..<end)
            case 4 where !bytes.isEmpty:
                let end = min(bytes.count, position + Int.random(in: 1...32, using: &rng))
                bytes.insert(contentsOf: bytes[position..<end], at: position)
            case 5:
                let word = dictionary.randomElement(using: &rng)!
                let times = Int.random(in: 2...200, using: &rng)
                bytes.insert(contentsOf: (0..<times).flatMap { _ in word }, at: position)
            case 6 where !other.isEmpty:
                let cut = Int.random(in: 0...other.count, using: &rng)
                bytes = Array(bytes[..<position]) + Array(other[cut...])
            case 7 where bytes.count >= 4:
                // An integer field set to an extreme.
                let at = Int.random(in: 0...(bytes.count - 4), using: &rng)
                let value: [UInt8] = [
                    [0, 0, 0, 0], [1, 0, 0, 0], [0xFF, 0xFF, 0xFF, 0xFF], [0, 0, 0, 0x80], [0, 4, 0, 0],
                ].randomElement(using: &rng)!
                bytes.replaceSubrange(at..<(at + 4), with: value)
            default:
                bytes.append(UInt8.random(in: 0...255, using: &rng))
            }
        }
        return bytes
    }

    /// Runs `body` on the regression fixtures of `target`, the seeds, and `count` * ``scale``
    /// mutated cases.
    /// - Returns: the number of cases run.
    @discardableResult
    static func run(_ target: String, seeds: [[UInt8]], count: Int, _ body: ([UInt8]) -> Void) -> Int {
        var rng = SplitMix64(
            seed: seed ^ UInt64(truncatingIfNeeded: target.utf8.reduce(5381) { ($0 &* 33) &+ Int($1) }))
        let fixtures = TestEnvironment.fixtures.appendingPathComponent("fuzz/\(target)")
        var inputs = ((try? FileManager.default.contentsOfDirectory(atPath: fixtures.path)) ?? []).sorted()
            .compactMap { try? [UInt8](Data(contentsOf: fixtures.appendingPathComponent($0))) }
        inputs += seeds
        var executed = 0
        for input in inputs {
            body(input)
            executed += 1
        }
        var corpus = seeds
        for _ in 0..<(count * scale) {
            let parent = corpus.randomElement(using: &rng)!
            let input = mutate(parent, other: corpus.randomElement(using: &rng)!, &rng)
            if let lastInputPath = lastInputPath(target) {
                try? Data(input).write(to: URL(fileURLWithPath: lastInputPath))
            }
            body(input)
            executed += 1
            // Keep some mutants as parents, so mutations stack up (bounded corpus and size).
            if input.count < 1 << 16, Int.random(in: 0..<8, using: &rng) == 0 {
                if corpus.count < 256 {
                    corpus.append(input)
                } else {
                    corpus[Int.random(in: 0..<corpus.count, using: &rng)] = input
                }
            }
        }
        if scale > 1 { print("fuzz \(target): \(executed) executions, seed \(seed)") }
        return executed
    }

    /// A one-line error message (what every command prints for a ProofkitError).
    static func isOneLine(_ error: ProofkitError) -> Bool {
        !error.description.contains("\n") && !error.description.isEmpty
    }

}

@Suite("Fuzzing the parsers of untrusted bytes (seeded; PROOFKIT_FUZZ_RUNS scales it)", .offThePool)
struct FuzzTests {
    static let jsonSeeds: [[UInt8]] = [
        #"{"a": [1, 2.5, -3e-2, true, false, null], "b": {"c": "d\u00e9\n"}}"#, "[]", "{}", "\"x\"", "0",
        String(repeating: "[", count: 70) + String(repeating: "]", count: 70),
        #"{"t": 1.5, "keypoints": {"left_hip": [0.5, 0.4, 0.9]}}"#,
    ].map { Array($0.utf8) }

    @Test("JSONReader: any bytes give a node or a syntax error with an offset inside the input")
    func jsonReader() {
        let n = Fuzz.run("json", seeds: Self.jsonSeeds, count: 20_000) { bytes in
            do throws(JSONSyntaxError) {
                let node = try JSONReader.node(bytes: bytes)
                // What was read serialises and reads back.
                _ = try JSONReader.node(bytes: Array(JSONValue(node).serialized.utf8))
            } catch {
                #expect(
                    error.byteOffset >= 0 && error.byteOffset <= bytes.count,
                    "offset \(error.byteOffset) of \(bytes.count)")
            }
        }
        #expect(n >= 20_000)
    }

    @Test("pose lines: any line gives a frame, nothing, or a one-line error naming the line")
    func poseLines() {
        let seeds = [
            #"{"t": 0.0, "keypoints": {"left_hip": [0.5, 0.4, 0.9], "right_hip": [0.52, 0.41, 0.8], "left_knee": [0.5, 0.6, 0.9], "left_ankle": [0.5, 0.8, 0.9], "nose": [0.5, 0.1, 0.7]}}"#,
            #"{"t": 12, "keypoints": {}}"#, "   ", "{\"t\": 1e308, \"keypoints\": {\"left_hip\": [1, 2, 1]}}\r",
        ].map { Array($0.utf8) }
        var decoder = PoseLineDecoder()
        Fuzz.run("pose", seeds: seeds, count: 20_000) { bytes in
            do throws(ProofkitError) {
                if let frame = try decoder.decode(bytes[...]) { #expect(frame.time.isFinite) }
            } catch {
                #expect(!error.message.contains("\n") && error.message.hasPrefix("line "))
            }
            if decoder.lineNumber > 1_000 { decoder = PoseLineDecoder() }
        }
    }

    @Test("texts files: a catalog or one .decodeFailed line")
    func textsFiles() {
        let seeds = [
            #"{"texts": [{"name": "mine", "title": "Mine", "text": "بِسْمِ اللَّهِ الرَّحْمَٰنِ الرَّحِيمِ", "key_words": [{"word": "الرحمن", "stems": ["رحمن"]}], "required_key_words": 1}]}"#,
            #"{"texts": []}"#,
        ].map { Array($0.utf8) }
        Fuzz.run("texts", seeds: seeds, count: 5_000) { bytes in
            do throws(ProofkitError) {
                _ = try DuaCatalog(json: String(decoding: bytes, as: UTF8.self))
            } catch {
                #expect(Fuzz.isOneLine(error))
            }
        }
    }

    @Test("plan state files: a ledger, or a one-line error with exit 65; never a trap")
    func stateFiles() throws {
        let seeds = [
            #"{"format": "proofkit-alarm-state", "version": 1, "fingerprint": "0123456789abcdef", "alarms": [{"id": "fajr.2026-11-30.0512.r0", "fire": "2026-11-30T05:12:00+05:00", "sound": "adhan", "state": "scheduled"}], "outcomes": [{"occurrence": "fajr.2026-11-29", "kind": "escape", "at": "2026-11-29T05:20:00+05:00"}], "postponed": {"fajr.2026-11-30.0512.r1": "2026-11-30T05:30:00+05:00"}, "merged": ["x"], "app": {"k": [1]}}"#,
            "{}", "",
        ].map { Array($0.utf8) }
        Fuzz.run("state", seeds: seeds, count: 10_000) { bytes in
            do throws(ProofkitError) {
                let file = try StateFile.parse(bytes, path: "state.json")
                _ = file.ledger.planningContext
            } catch {
                #expect(error.code == .decodeFailed && Fuzz.isOneLine(error), "\(error)")
            }
        }
    }

    @Test("models manifest: entries, or a one-line .modelInvalid naming the manifest")
    func manifest() throws {
        try withTemporaryFolder { folder in
            let digest = String(repeating: "ab", count: 32)
            let seeds = [
                #"{"format": "proofkit-models-manifest", "files": {"lite0.onnx": {"sha256": "\#(digest)"}, "lite0.ort": {"sha256": "\#(digest)", "source_sha256": "\#(digest)", "cpu": "x86_64", "onnxruntime": "1.23.2"}}}"#
            ].map { Array($0.utf8) }
            let path = folder + "/manifest.json"
            Fuzz.run("manifest", seeds: seeds, count: 1_000) { bytes in
                try? Data(bytes).write(to: URL(fileURLWithPath: path))
                do throws(ProofkitError) {
                    let manifest = try ModelsManifest.load(besideFileAt: folder + "/model.onnx")
                    for entry in manifest?.entries.values.map({ $0 }) ?? [] {
                        if let sha = entry.sha256 { #expect(sha.count == 64) }
                    }
                } catch {
                    #expect(
                        error.code == .modelInvalid && Fuzz.isOneLine(error) && error.description.count < 600,
                        "\(error)")
                }
            }
        }
    }

    @Test("WAV and CAF sniffing and decoding: audio (bounded) or one line; never a crash or a hang")
    func audioFiles() throws {
        try withTemporaryFolder { folder in
            let seeds = [
                [UInt8](handMadeWAV(rate: 16000, channels: 1, frames: 200)),
                [UInt8](handMadeWAV(rate: 44100, channels: 2, frames: 100)),
                [UInt8](handMadeCAF(rate: 48000, channels: 1, frames: 200)),
                [UInt8](handMadeFloatWAV(frames: 100, nanEvery: 7)),
            ]
            let path = folder + "/case.bin"
            Fuzz.run("audio", seeds: seeds, count: 1_500) { bytes in
                try? Data(bytes).write(to: URL(fileURLWithPath: path))
                do throws(ProofkitError) {
                    var reader = try AudioFileReader(path: path)
                    let channels = reader.format.channels
                    guard channels <= 64 else { return }
                    var buffer = [Float](repeating: 0, count: 1024 * channels)
                    var total = 0
                    while total < 200_000, case let frames = try reader.read(into: &buffer, maxFrames: 1024), frames > 0
                    {
                        total += frames
                    }
                } catch {
                    #expect(Fuzz.isOneLine(error), "\(error)")
                }
            }
        }
    }
}

@Suite(
    "Fuzz regressions through the built proofkit",
    .enabled(if: TestEnvironment.hasProofkitBinary, "run swift build first"), .offThePool)
struct FuzzRegressionTests {
    @Test(
        "a \\uD800 escape followed by a non-surrogate \\u escape is read (U+FFFD): exit 0 or a one-line 65 (it trapped: exit 132)"
    )
    func loneHighSurrogate() throws {
        let fixtures = TestEnvironment.fixtures.appendingPathComponent("fuzz").path
        try withTemporaryFolder { folder in
            let state = folder + "/state.json"
            try FileManager.default.copyItem(atPath: fixtures + "/state/lone-high-surrogate.json", toPath: state)
            let runs = [
                ["dua", "check", "--texts", fixtures + "/texts/lone-high-surrogate.json", "x"],
                ["plan", "--lat", "24.86", "--lon", "67.0", "--tz", "Asia/Karachi", "--state", state],
            ]
            for arguments in runs {
                let result = try TestEnvironment.runProofkit(arguments)
                #expect(result.status == 0 || result.status == 65, "\(arguments): \(result.status) \(result.stderr)")
                #expect(result.stderr.split(separator: "\n").count <= 1)
            }
            let pose = try TestEnvironment.runProofkit(["squat", fixtures + "/pose/lone-high-surrogate.jsonl"])
            #expect(pose.status != 132 && pose.status != 133 && pose.status < 128, "\(pose.status) \(pose.stderr)")
        }
    }
}
