public import Foundation

/// Shared helpers for proofkit's test targets.
public enum TestEnvironment {
    /// The folder of the package (found from this source file's location).
    public static let packageRoot: URL = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }()

    /// `Tests/TestSupport/Fixtures` in the source tree.
    public static let fixtures: URL = packageRoot.appendingPathComponent("Tests/TestSupport/Fixtures")

    /// `../shared/data` beside the clone, when it is there (tests must pass without it too).
    public static let sharedData: URL? = {
        let url = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/data")
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }()

    /// The models folder the built `proofkit` finds: `$PROOFKIT_MODELS` when set and not empty,
    /// else the package's `Models/generated` (made by `bash .ci/setup`).
    public static let modelsFolder: String = {
        if let explicit = ProcessInfo.processInfo.environment["PROOFKIT_MODELS"], !explicit.isEmpty { return explicit }
        return packageRoot.appendingPathComponent("Models/generated").path
    }()

    /// Whether Whisper base, as the set-up converts it (encoder, decoder, tokenizer and config), is in
    /// ``modelsFolder``.
    public static let hasWhisperModels: Bool = [
        "whisper_base_encoder.onnx", "whisper_base_decoder.onnx", "whisper_tokenizer.json", "whisper_config.json",
    ].allSatisfy { FileManager.default.fileExists(atPath: modelsFolder + "/" + $0) }

    /// Path of a fixture file.
    public static func fixture(_ name: String) -> String {
        fixtures.appendingPathComponent(name).path
    }

    /// Whether an executable is on PATH (sox, ffprobe, espeak-ng, strace...).
    public static func hasTool(_ name: String) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(name)")
        }
    }
}

/// Whether `a` and `b` are approximately equal: `|a - b| <= max(absoluteTolerance,
/// relativeTolerance * max(|a|, |b|))`. Not transitive; never use it for `Equatable`.
/// - Parameters:
///   - relativeTolerance: default `sqrt(ulpOfOne)` (about 1.5e-8 for `Double`).
///   - absoluteTolerance: default 0.
public func isApproximatelyEqual<T: BinaryFloatingPoint>(
    _ a: T, _ b: T, relativeTolerance: T = T.ulpOfOne.squareRoot(), absoluteTolerance: T = 0
) -> Bool {
    if a == b { return true }
    guard a.isFinite, b.isFinite else { return false }
    let scale = max(abs(a), abs(b))
    return abs(a - b) <= max(absoluteTolerance, relativeTolerance * scale)
}
