public import Foundation

/// Helpers for the image tests: the fixtures in `Fixtures/images` and a Python with Pillow.
public enum ImageFixtures {
    /// `Tests/TestSupport/Fixtures/images`.
    public static let folder: URL = TestEnvironment.fixtures.appendingPathComponent("images")

    /// Path of an image fixture.
    public static func path(_ name: String) -> String {
        folder.appendingPathComponent(name).path
    }

    /// The bytes of an image fixture.
    public static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: folder.appendingPathComponent(name)))
    }

    /// `expected.json`, made with the fixtures by `Tests/Scripts/make_image_fixtures.py`.
    public static func expected() throws -> [String: Any] {
        let data = try Data(contentsOf: folder.appendingPathComponent("expected.json"))
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }

    /// `numbers.json` (numpy's softmax, CLIP and logistic-head values).
    public static func numbers() throws -> [String: Any] {
        let data = try Data(contentsOf: folder.appendingPathComponent("numbers.json"))
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }

    /// A Python interpreter that has Pillow and numpy: `$PROOFKIT_PYTHON` when set, else the
    /// project's `.deps/venv/bin/python`; `nil` when neither imports both (tests that compare
    /// against Pillow live are then skipped; the committed expectations still run).
    public static let pythonWithPillow: String? = {
        var candidates: [String] = []
        if let override = ProcessInfo.processInfo.environment["PROOFKIT_PYTHON"] { candidates.append(override) }
        candidates.append(TestEnvironment.packageRoot.appendingPathComponent(".deps/venv/bin/python").path)
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) {
            if let result = try? runProcess(candidate, ["-c", "import PIL, numpy"]), result.status == 0 {
                return candidate
            }
        }
        return nil
    }()

    /// Whether ``pythonWithPillow`` was found.
    public static var hasPythonWithPillow: Bool { pythonWithPillow != nil }

    /// A fresh temporary folder (removed by the caller when done).
    public static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "proofkit-image-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

extension ImageFixtures {
    /// The fixtures re-made now by `Tests/Scripts/make_image_fixtures.py` with the Python that
    /// has Pillow (made once per test process), so tests can compare against Pillow live as
    /// well as against the committed expectations. `nil` when no such Python is available.
    public static let regenerated: URL? = {
        guard let python = pythonWithPillow, let folder = try? temporaryFolder() else { return nil }
        let script = TestEnvironment.packageRoot.appendingPathComponent("Tests/Scripts/make_image_fixtures.py").path
        guard let result = try? runProcess(python, [script, folder.path]), result.status == 0 else { return nil }
        return folder
    }()
}
