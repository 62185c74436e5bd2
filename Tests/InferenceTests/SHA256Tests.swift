import Foundation
import ProofkitCore
import TestSupport
import Testing

@testable import Inference

@Suite("SHA-256 and model digests", .offThePool)
struct SHA256Tests {
    @Test(
        "FIPS 180-4 example messages",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
        ])
    func knownVectors(message: String, digest: String) {
        #expect(SHA256.hexDigest(of: Array(message.utf8)) == digest)
    }

    @Test("the CPU's SHA instructions and the Swift code agree on every length and split")
    func hardwareAndSwiftAgree() {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<20_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        print("SHA-256 instructions available: \(HardwareSHA256.isAvailable)")
        for length in [0, 1, 63, 64, 65, 127, 128, 129, 640, 1000, 4096, 19_999, 20_000] {
            for split in [0, 1, 64, 100, length / 2] where split <= length {
                var hardware = SHA256()
                var swift = SHA256(allowsHardware: false)
                bytes[0..<split].withUnsafeBytes {
                    hardware.update(bytes: $0)
                    swift.update(bytes: $0)
                }
                bytes[split..<length].withUnsafeBytes {
                    hardware.update(bytes: $0)
                    swift.update(bytes: $0)
                }
                #expect(hardware.finalize() == swift.finalize(), "length \(length), split \(split)")
            }
        }
    }

    @Test("a million 'a's, fed in uneven pieces")
    func millionAs() {
        var hasher = SHA256()
        var remaining = 1_000_000
        var piece = 1
        while remaining > 0 {
            let count = min(piece, remaining)
            Array(repeating: UInt8(ascii: "a"), count: count).withUnsafeBytes { hasher.update(bytes: $0) }
            remaining -= count
            piece = piece * 3 % 1000 + 1
        }
        #expect(SHA256.hex(hasher.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test(
        "agrees with sha256sum on every length around the block boundaries and on the fixture models",
        .enabled(if: TestEnvironment.hasTool("sha256sum")))
    func agreesWithSha256sum() throws {
        try withTemporaryFolder("proofkit-sha") { scratch in
            let folder = URL(fileURLWithPath: scratch)
            var generator = SystemRandomNumberGenerator()
            var paths: [String] = []
            var ours: [String] = []
            for length in [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 70_001] {
                let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let path = folder.appendingPathComponent("\(length).bin").path
                try Data(bytes).write(to: URL(fileURLWithPath: path))
                paths.append(path)
                ours.append(SHA256.hexDigest(of: bytes))
                // The generic-sequence path gives the same digest as the buffer path.
                var generic = SHA256()
                generic.update(bytes.lazy.map { $0 })
                #expect(SHA256.hex(generic.finalize()) == ours.last)
            }
            for name in ["add_relu", "dense_relu", "int64_affine", "small_types"] {
                let path = InferenceFixtures.model(name)
                paths.append(path)
                ours.append(try ModelFile.sha256(ofFileAt: path))
            }
            let result = try runProcess("/usr/bin/env", ["sha256sum"] + paths)
            #expect(result.status == 0)
            let theirs = result.stdout.split(separator: "\n").map { String($0.prefix(64)) }
            #expect(theirs == ours)
        }
    }

    @Test("ModelFile.read checks the digest: match, mismatch, missing file, malformed digest")
    func modelFileRead() throws {
        let path = InferenceFixtures.model("dense_relu")
        let digest = try ModelFile.sha256(ofFileAt: path)
        let bytes = try ModelFile.read(path, expectedSHA256: digest.uppercased())
        #expect(bytes == (try InferenceFixtures.bytes("dense_relu")))

        let wrong = String(repeating: "0", count: 64)
        let mismatch = try #require(throws: ProofkitError.self) { try ModelFile.read(path, expectedSHA256: wrong) }
        #expect(mismatch.code == .modelInvalid)
        #expect(mismatch.path == path)
        #expect(mismatch.message.contains(digest) && mismatch.message.contains(wrong))

        let missing = try #require(throws: ProofkitError.self) {
            try ModelFile.read("/nonexistent/model.onnx", expectedSHA256: digest)
        }
        #expect(missing.code == .notFound)
        let malformed = try #require(throws: ProofkitError.self) { try ModelFile.read(path, expectedSHA256: "abc") }
        #expect(malformed.code == .invalidArgument)
        let folder = try #require(throws: ProofkitError.self) {
            try ModelFile.read(TestEnvironment.fixture("onnx"), expectedSHA256: digest)
        }
        #expect(folder.code == .io)
    }

    @Test(
        "a session loads by expected digest, and refuses a different model",
        .enabled(if: InferenceFixtures.runtimeAvailable, "set PROOFKIT_ORT_LIBRARY"))
    func sessionByDigest() throws {
        let path = InferenceFixtures.model("int64_affine")
        let digest = try ModelFile.sha256(ofFileAt: path)
        var session = try InferenceSession(contentsOf: path, expectedSHA256: digest)
        #expect(session.path == path)
        #expect(
            try session.run(["ids": Tensor<Int64>(shape: [1], scalars: [2])]).tensor("scaled", as: Int64.self).scalars
                == [7])
        let other = try ModelFile.sha256(ofFileAt: InferenceFixtures.model("add_relu"))
        let error = try #require(throws: ProofkitError.self) {
            _ = try InferenceSession(contentsOf: path, expectedSHA256: other)
        }
        #expect(error.code == .modelInvalid)
    }

    @Test(
        "an ORT-format model loads mapped, by expected digest, and runs like its .onnx; a wrong digest or a non-ORT file is refused",
        .enabled(if: InferenceFixtures.runtimeAvailable, "set PROOFKIT_ORT_LIBRARY"))
    func ortFormatByDigest() throws {
        let path = TestEnvironment.fixture("onnx/add_relu.ort")
        let digest = try ModelFile.sha256(ofFileAt: path)
        var session = try InferenceSession(
            ortFormatContentsOf: path, expectedSHA256: digest.uppercased(), options: .init(graphOptimization: .disabled)
        )
        #expect(session.path == path)
        #expect(session.inputs.map(\.description) == ["a: float32[batch, 3]", "b: float32[batch, 3]"])
        let a: [Float] = [-2, 0.5, 3, 1, -1, 0]
        let b: [Float] = [1, 1, -4, 0.25, 0.5, 0]
        let outputs = try session.run([
            "a": try Tensor(shape: [2, 3], scalars: a), "b": try Tensor(shape: [2, 3], scalars: b),
        ])
        #expect(try outputs.tensor("sum", as: Float.self).scalars == zip(a, b).map { $0 + $1 })
        #expect(try outputs.tensor("relu", as: Float.self).scalars == zip(a, b).map { max($0 + $1, 0) })

        let other = try ModelFile.sha256(ofFileAt: InferenceFixtures.model("add_relu"))
        let mismatch = try #require(throws: ProofkitError.self) {
            _ = try InferenceSession(ortFormatContentsOf: path, expectedSHA256: other, options: .init())
        }
        #expect(mismatch.code == .modelInvalid)
        #expect(mismatch.operation == "sha256")
        // An .onnx file handed over as ORT format: ONNX Runtime's refusal, not a crash.
        let notORT = try #require(throws: ProofkitError.self) {
            _ = try InferenceSession(
                ortFormatContentsOf: InferenceFixtures.model("add_relu"), expectedSHA256: other, options: .init())
        }
        #expect(notORT.code == .modelInvalid)
        #expect(notORT.operation == "CreateSessionFromArray")
        let missing = try #require(throws: ProofkitError.self) {
            _ = try InferenceSession(ortFormatContentsOf: path + ".missing", expectedSHA256: digest, options: .init())
        }
        #expect(missing.code == .notFound)
    }

    @Test(
        "checkingFileAt: ORT reads the checked open file itself and runs like contentsOf; a wrong digest, a missing file, an unparsable file",
        .enabled(if: InferenceFixtures.runtimeAvailable, "set PROOFKIT_ORT_LIBRARY"))
    func checkingFile() throws {
        try withTemporaryFolder("proofkit-checking") { folder in
            let path = folder + "/model.onnx"
            try FileManager.default.copyItem(atPath: InferenceFixtures.model("int64_affine"), toPath: path)
            let digest = try ModelFile.sha256(ofFileAt: path)
            // Memory pattern and arena off (what the Whisper decoder uses) change nothing in the result.
            var options = InferenceSession.Options()
            options.memoryPattern = false
            options.cpuMemoryArena = false
            var session = try InferenceSession(
                checkingFileAt: path, expectedSHA256: digest.uppercased(), options: options)
            #expect(session.path == path)
            for value in [Int64(2), 5, -3] {
                let scaled = try session.run(["ids": Tensor<Int64>(shape: [1], scalars: [value])]).tensor(
                    "scaled", as: Int64.self)
                var plain = try InferenceSession(contentsOf: path)
                let expected = try plain.run(["ids": Tensor<Int64>(shape: [1], scalars: [value])]).tensor(
                    "scaled", as: Int64.self)
                #expect(scaled.scalars == expected.scalars)
            }
            let other = try ModelFile.sha256(ofFileAt: InferenceFixtures.model("add_relu"))
            let mismatch = try #require(throws: ProofkitError.self) {
                _ = try InferenceSession(checkingFileAt: path, expectedSHA256: other)
            }
            #expect(mismatch.code == .modelInvalid)
            #expect(mismatch.operation == "sha256")
            let missing = try #require(throws: ProofkitError.self) {
                _ = try InferenceSession(checkingFileAt: path + ".missing", expectedSHA256: digest)
            }
            #expect(missing.code == .notFound)
            // A file ORT cannot parse, with its right digest: ORT's refusal naming the real path
            // (not /proc/self/fd/N).
            let junk = folder + "/junk.onnx"
            try Data("not a model".utf8).write(to: URL(fileURLWithPath: junk))
            let refused = try #require(throws: ProofkitError.self) {
                _ = try InferenceSession(checkingFileAt: junk, expectedSHA256: try ModelFile.sha256(ofFileAt: junk))
            }
            #expect(refused.code == .modelInvalid)
            #expect(refused.path == junk)
        }
    }
}
