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
        URL(fileURLWithPath: try TestFolder.make("proofkit-image"))
    }
}

extension ImageFixtures {
    /// The fixtures re-made now by `Tests/Scripts/make_image_fixtures.py` with the Python that
    /// has Pillow (made once per test process), so tests can compare against Pillow live as
    /// well as against the committed expectations. `nil` when no such Python is available.
    public static let regenerated: URL? = {
        guard let python = pythonWithPillow,
            let folder = try? TestFolder.makeForProcess("proofkit-image-fixtures")
        else { return nil }
        let script = TestEnvironment.packageRoot.appendingPathComponent("Tests/Scripts/make_image_fixtures.py").path
        guard let result = try? runProcess(python, [script, folder]), result.status == 0 else { return nil }
        return URL(fileURLWithPath: folder)
    }()
}

extension ImageFixtures {
    /// `Tests/Scripts/NAME`.
    public static func script(_ name: String) -> String {
        TestEnvironment.packageRoot.appendingPathComponent("Tests/Scripts/\(name)").path
    }

    /// One row of the shared set's `images/reference_scores.tsv`.
    public struct ReferencePhoto: Sendable {
        public var file: String
        public var isMat: Bool
        public var p741: Double
        /// The reference's static int8 model's class-741 score (another calibration than the
        /// models build's int8 model).
        public var p741Int8: Double
        public var brightness: Double
        public var path: String
    }

    /// The shared photo set with its reference scores (empty without `../shared/data`).
    public static let referencePhotos: [ReferencePhoto] = {
        guard let shared = TestEnvironment.sharedData else { return [] }
        let folder = shared.appendingPathComponent("images")
        guard let text = try? String(contentsOf: folder.appendingPathComponent("reference_scores.tsv"), encoding: .utf8)
        else { return [] }
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(separator: "\t").map(String.init)
            guard fields.count >= 5, let p741 = Double(fields[2]), let int8 = Double(fields[3]),
                let brightness = Double(fields[4])
            else { return nil }
            return ReferencePhoto(
                file: fields[0], isMat: fields[1] == "mat", p741: p741, p741Int8: int8, brightness: brightness,
                path: folder.appendingPathComponent(fields[0]).path)
        }
    }()
}

/// Writes float32 values to a file (native byte order, as numpy's `tofile`).
public func writeFloats(_ values: [Float], to url: URL) throws {
    try values.withUnsafeBytes { Data($0) }.write(to: url)
}

/// Reads a file of float32 values (native byte order, as numpy's `fromfile`).
public func readFloats(_ url: URL) throws -> [Float] {
    let data = try Data(contentsOf: url)
    return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
}
