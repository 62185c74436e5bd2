import Foundation
import Inference
import Proofkit
import ProofkitCore
import TestSupport
import Testing

enum SileroIntegrityFixture {
    static let installed = TestEnvironment.packageRoot.appendingPathComponent(SileroVoiceDetector.defaultModelPath).path
}

/// Issue 14 / issue 15 item 4: the Silero model is found through `PROOFKIT_MODELS` and checked
/// against the manifest's SHA-256 on every load, whatever the fallback policy.
@Suite(
    "Silero integrity",
    .enabled(
        if: OnnxRuntime.isAvailable && FileManager.default.fileExists(atPath: SileroIntegrityFixture.installed),
        "needs ONNX Runtime and Models/generated/silero_vad.onnx"))
struct SileroIntegrityTests {
    static let installed = SileroIntegrityFixture.installed

    /// A models folder with the installed model (one bit flipped when `flipping`) and manifest.
    func folder(flipping: Bool) throws -> String {
        let folder = try TestFolder.make()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: Self.installed))
        if flipping { bytes[bytes.count / 3] ^= 0x80 }
        try bytes.write(to: URL(fileURLWithPath: folder + "/silero_vad.onnx"))
        let manifest = URL(fileURLWithPath: Self.installed).deletingLastPathComponent().appendingPathComponent(
            "manifest.json"
        ).path
        try FileManager.default.copyItem(atPath: manifest, toPath: folder + "/manifest.json")
        return folder
    }

    @Test("PROOFKIT_MODELS is where the model is looked for; PROOFKIT_SILERO_MODEL still names a file")
    func locate() throws {
        let models = try folder(flipping: false)
        defer { try? FileManager.default.removeItem(atPath: models) }
        #expect(
            ReadingProofSession.sileroModelPath(environment: ["PROOFKIT_MODELS": models]) == models + "/silero_vad.onnx"
        )
        #expect(ReadingProofSession.sileroModelPath(environment: ["PROOFKIT_MODELS": models + "/none"]) == nil)
        #expect(ReadingProofSession.sileroModelPath(environment: ["PROOFKIT_SILERO_MODEL": "/x/y.onnx"]) == "/x/y.onnx")
        #expect(
            try SileroVoiceDetector.expectedSHA256(ofModelAt: models + "/silero_vad.onnx")
                == SileroVoiceDetector.modelSHA256)
    }

    @Test(
        "a byte-flipped model is refused (modelInvalid) in every mode and with every fallback; a missing one falls back only where allowed",
        arguments: [VoiceDetectionFallback.never, .bothOnly, .always])
    func flipped(fallback: VoiceDetectionFallback) throws {
        let models = try folder(flipping: true)
        defer { try? FileManager.default.removeItem(atPath: models) }
        for mode in [VoiceDetectionMode.silero, .both] {
            let error = try #require(throws: ProofkitError.self) {
                _ = try ReadingProofSession(
                    configuration: .init(voiceDetection: mode), sileroModelPath: models + "/silero_vad.onnx",
                    fallback: fallback)
            }
            #expect(error.code == .modelInvalid, "\(mode) \(fallback): \(error)")
        }
        // Missing: silero falls back only with .always, both with .bothOnly or .always.
        let missing = models + "/absent.onnx"
        for mode in [VoiceDetectionMode.silero, .both] {
            let fallsBack = fallback == .always || (fallback == .bothOnly && mode == .both)
            if fallsBack {
                let session = try ReadingProofSession(
                    configuration: .init(voiceDetection: mode), sileroModelPath: missing, fallback: fallback)
                #expect(session.proof.configuration.voiceDetection == .energy)
                #expect(session.fallbackReason != nil)
            } else {
                let error = try #require(throws: ProofkitError.self) {
                    _ = try ReadingProofSession(
                        configuration: .init(voiceDetection: mode), sileroModelPath: missing, fallback: fallback)
                }
                #expect(error.code == .runtimeUnavailable)
            }
        }
    }

    @Test("a malformed manifest beside the model is refused, not skipped")
    func malformedManifest() throws {
        let models = try folder(flipping: false)
        defer { try? FileManager.default.removeItem(atPath: models) }
        try Data("{\"format\":\"other\"}".utf8).write(to: URL(fileURLWithPath: models + "/manifest.json"))
        let error = try #require(throws: ProofkitError.self) {
            _ = try SileroVoiceDetector(modelPath: models + "/silero_vad.onnx")
        }
        #expect(error.code == .modelInvalid)
    }
}
