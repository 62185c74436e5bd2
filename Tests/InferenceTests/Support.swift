import Foundation
import TestSupport

@testable import Inference

/// Shared helpers of the Inference tests.
enum InferenceFixtures {
    /// Whether ONNX Runtime loads here. Set-up always installs it (so CI runs every gated test);
    /// without it, set PROOFKIT_ORT_LIBRARY.
    static let runtimeAvailable = OnnxRuntime.isAvailable

    /// A tiny test model from `Tests/TestSupport/Fixtures/onnx` (see make_models.py there).
    static func model(_ name: String) -> String {
        TestEnvironment.fixture("onnx/\(name).onnx")
    }

    /// The bytes of a test model.
    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: model(name))))
    }

    /// Resident memory of this process in KiB (VmRSS in /proc/self/status).
    static func residentKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
        }
        return -1
    }
}
