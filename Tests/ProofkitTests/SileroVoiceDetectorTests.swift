import Foundation
import Inference
import Proofkit
import ProofkitCore
import TestSupport
import Testing

/// The Silero VAD facade on the real model that set-up installs (Models/generated/silero_vad.onnx,
/// from the silero-vad 6.2.3 wheel), on real speech and real room noise.
@Suite(
    "SileroVoiceDetector",
    .enabled(
        if: SileroFixtures.available, "needs ONNX Runtime and Models/generated/silero_vad.onnx (run bash .ci/setup)"))
struct SileroVoiceDetectorTests {
    @Test("the set-up model has the pinned digest and the v5/v6 signature, with 32 ms chunks at 16 and 8 kHz")
    func loads() throws {
        let vad = try SileroVoiceDetector(
            modelPath: SileroFixtures.modelPath, expectedSHA256: SileroVoiceDetector.modelSHA256)
        #expect(vad.chunkSize == 512)
        #expect(vad.contextSize == 64)
        #expect(vad.chunkSeconds == 0.032)
        let narrow = try SileroVoiceDetector(modelPath: SileroFixtures.modelPath, sampleRate: 8_000)
        #expect(narrow.chunkSize == 256 && narrow.contextSize == 32)
    }

    @Test(
        "real speech is found, in Arabic and in quiet English",
        arguments: [("vad_speech_ar.wav", 1.2), ("vad_speech_en.wav", 4.0)])
    func speech(file: String, minimumVoicedSeconds: Double) throws {
        var vad = try SileroVoiceDetector(modelPath: SileroFixtures.modelPath)
        let samples = try SileroFixtures.readPCM16(TestEnvironment.fixture("audio/\(file)"))
        let probabilities = try vad.probabilities(ofSamples: samples)
        #expect(probabilities.count == (samples.count + 511) / 512)
        let voiced = Double(probabilities.filter { $0 > 0.5 }.count) * vad.chunkSeconds
        #expect(voiced >= minimumVoicedSeconds, "\(file): \(voiced) s voiced")
        #expect(probabilities.allSatisfy { $0 >= 0 && $0 <= 1 })
    }

    @Test(
        "real room noise (air conditioner, fan, night insects) is not speech",
        arguments: ["vad_noise_aircon.wav", "vad_noise_fan.wav", "vad_noise_night.wav"])
    func noise(file: String) throws {
        var vad = try SileroVoiceDetector(modelPath: SileroFixtures.modelPath)
        let probabilities = try vad.probabilities(
            ofSamples: try SileroFixtures.readPCM16(TestEnvironment.fixture("audio/\(file)")))
        let voiced = Double(probabilities.filter { $0 > 0.5 }.count) * vad.chunkSeconds
        #expect(voiced <= 0.1, "\(file): \(voiced) s voiced")
        #expect(probabilities.reduce(0, +) / Float(probabilities.count) < 0.1)
    }

    @Test(
        "the state is carried: streaming chunk by chunk equals the whole-clip call, and differs from a fresh state per chunk"
    )
    func stateCarried() throws {
        let samples = Array(
            try SileroFixtures.readPCM16(TestEnvironment.fixture("audio/vad_speech_en.wav")).prefix(512 * 40))
        var vad = try SileroVoiceDetector(modelPath: SileroFixtures.modelPath)
        let whole = try vad.probabilities(ofSamples: samples)
        vad.reset()
        var streamed: [Float] = []
        var fresh: [Float] = []
        for start in stride(from: 0, to: samples.count, by: 512) {
            streamed.append(try vad.probability(ofChunk: Array(samples[start..<start + 512])))
        }
        var forgetful = try SileroVoiceDetector(modelPath: SileroFixtures.modelPath)
        for start in stride(from: 0, to: samples.count, by: 512) {
            forgetful.reset()
            fresh.append(try forgetful.probability(ofChunk: Array(samples[start..<start + 512])))
        }
        #expect(streamed == whole)
        #expect(try vad.probabilities(ofSamples: samples) == whole)  // starts again from a fresh state
        let difference = zip(whole, fresh).map { abs($0 - $1) }.max() ?? 0
        #expect(difference > 0.05, "carrying the state should change the output")
    }

    @Test(
        "matches Python onnxruntime on the models engineer's reference signal (within its tolerance)",
        .enabled(if: FileManager.default.fileExists(atPath: SileroFixtures.referencePath)))
    func matchesPythonReference() throws {
        struct Reference: Decodable {
            let chunk: Int
            let context: Int
            let tolerance: Float
            let probabilities: [Float]
        }
        let reference = try JSONDecoder().decode(
            Reference.self, from: Data(contentsOf: URL(fileURLWithPath: SileroFixtures.referencePath)))
        let raw = try Data(contentsOf: URL(fileURLWithPath: SileroFixtures.referenceSignalPath))
        let signal = raw.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        var vad = try SileroVoiceDetector(modelPath: SileroFixtures.modelPath)
        #expect(reference.chunk == vad.chunkSize && reference.context == vad.contextSize)
        // The reference covers whole chunks only; ours also scores the zero-padded partial chunk.
        let whole = signal.count / vad.chunkSize
        let ours = try vad.probabilities(ofSamples: Array(signal.prefix(whole * vad.chunkSize)))
        #expect(ours.count == reference.probabilities.count)
        let worst = zip(ours, reference.probabilities).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst <= max(reference.tolerance, 1e-4), "largest difference \(worst)")
    }

    @Test("bad use is refused: wrong rate, wrong chunk length, wrong model, wrong digest")
    func refusals() throws {
        let rate = try #require(throws: ProofkitError.self) {
            _ = try SileroVoiceDetector(modelPath: SileroFixtures.modelPath, sampleRate: 44_100)
        }
        #expect(rate.code == .invalidArgument)
        var vad = try SileroVoiceDetector(modelPath: SileroFixtures.modelPath)
        let chunk = try #require(throws: ProofkitError.self) { _ = try vad.probability(ofChunk: [0, 0, 0]) }
        #expect(chunk.code == .invalidArgument)
        let clip = try #require(throws: ProofkitError.self) {
            _ = try vad.probabilities(of: AudioClip(samples: [0, 0], channels: 1, sampleRate: 48_000))
        }
        #expect(clip.code == .invalidArgument)
        let wrongModel = try #require(throws: ProofkitError.self) {
            // With its own digest, so that the signature check is what refuses it.
            let path = TestEnvironment.fixture("onnx/add_relu.onnx")
            _ = try SileroVoiceDetector(modelPath: path, expectedSHA256: try ModelFile.sha256(ofFileAt: path))
        }
        #expect(wrongModel.code == .modelInvalid)
        #expect(wrongModel.message.contains("not a Silero VAD"))
        let digest = try #require(throws: ProofkitError.self) {
            _ = try SileroVoiceDetector(
                modelPath: SileroFixtures.modelPath, expectedSHA256: String(repeating: "ab", count: 32))
        }
        #expect(digest.code == .modelInvalid)
        // Without a digest the manifest's (else the committed one) is checked: another model is refused.
        let unlisted = try #require(throws: ProofkitError.self) {
            _ = try SileroVoiceDetector(modelPath: TestEnvironment.fixture("onnx/add_relu.onnx"))
        }
        #expect(unlisted.code == .modelInvalid)
        #expect(unlisted.message.contains("SHA-256"))
        #expect(
            try SileroVoiceDetector.expectedSHA256(ofModelAt: SileroFixtures.modelPath)
                == SileroVoiceDetector.modelSHA256)
        let missing = try #require(throws: ProofkitError.self) {
            _ = try SileroVoiceDetector(modelPath: "/nonexistent/silero_vad.onnx")
        }
        #expect(missing.code == .notFound)
    }
}

enum SileroFixtures {
    static let modelPath = TestEnvironment.packageRoot.appendingPathComponent(SileroVoiceDetector.defaultModelPath).path
    static let referencePath = TestEnvironment.packageRoot.appendingPathComponent(
        "Models/generated/silero_vad_reference.json"
    ).path
    static let referenceSignalPath = TestEnvironment.packageRoot.appendingPathComponent(
        "Models/generated/silero_vad_reference_signal.f32"
    ).path

    /// Set-up always installs both, so CI runs these tests.
    static let available = OnnxRuntime.isAvailable && FileManager.default.fileExists(atPath: modelPath)

    /// Mono 16-bit PCM WAV samples scaled to [-1, 1) (the fixtures are written by sox that way).
    static func readPCM16(_ path: String) throws -> [Float] {
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func word(_ at: Int) -> Int { Int(data[at]) | Int(data[at + 1]) << 8 }
        func dword(_ at: Int) -> Int { word(at) | word(at + 2) << 16 }
        var offset = 12
        var bitsPerSample = 0
        var channels = 0
        while offset + 8 <= data.count {
            let id = String(decoding: data[offset..<offset + 4], as: UTF8.self)
            let size = dword(offset + 4)
            if id == "fmt " {
                channels = word(offset + 10)
                bitsPerSample = word(offset + 22)
            } else if id == "data" {
                #expect(channels == 1 && bitsPerSample == 16, "\(path) must be mono 16-bit PCM")
                let end = min(data.count, offset + 8 + size)
                return stride(from: offset + 8, to: end - 1, by: 2).map {
                    Float(Int16(bitPattern: UInt16(data[$0]) | UInt16(data[$0 + 1]) << 8)) / 32768
                }
            }
            offset += 8 + size + (size & 1)
        }
        Issue.record("\(path) has no data chunk")
        return []
    }
}
