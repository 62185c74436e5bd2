import Foundation
import PoseEstimation
import ProofkitCore
import TestSupport

/// The Python reference's numbers (`Tests/TestSupport/Fixtures/pose/pose_reference.json`, made by
/// `Tests/Scripts/make_pose_fixtures.py` from `Models/proofkit_models/blazepose_pipeline.py`) and
/// the build's per-photo reference tensors (`Models/generated/pose_ref_*.f32`, when built).
enum PoseReference {
    /// Read at each use (a 36 KB file; `[String: Any]` cannot be a shared constant).
    static var json: [String: Any] {
        let url = TestEnvironment.fixtures.appendingPathComponent("pose/pose_reference.json")
        guard let data = try? Data(contentsOf: url),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [:] }
        return object
    }

    static var photos: [String: [String: Any]] { json["photos"] as? [String: [String: Any]] ?? [:] }
    static let photoNames = ["astronaut", "camera", "grace_hopper", "coffee", "chelsea", "rocket"]

    static let models = TestEnvironment.packageRoot.appendingPathComponent("Models/generated")
    /// Whether the models build wrote the reference tensors here.
    static let hasTensors = FileManager.default.fileExists(
        atPath: models.appendingPathComponent("pose_ref_rocket_world_landmarks.f32").path)
    /// The pinned wheels the photos come from (`.deps/wheels`).
    static let wheels = TestEnvironment.packageRoot.appendingPathComponent(".deps/wheels")
    static let hasPhotos =
        ImageFixtures.hasPythonWithPillow && FileManager.default.fileExists(atPath: wheels.path) && hasTensors

    /// A reference tensor of the build (little-endian float32).
    static func tensor(_ photo: String, _ name: String) throws -> [Float] {
        try readFloats(models.appendingPathComponent("pose_ref_\(photo)_\(name).f32"))
    }

    static func floats(base64 text: Any?) -> [Float] {
        guard let text = text as? String, let data = Data(base64Encoded: text) else { return [] }
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    static func number(_ value: Any?) -> Double { (value as? NSNumber)?.doubleValue ?? .nan }
    static func numbers(_ value: Any?) -> [Double] { (value as? [Any] ?? []).map(number) }

    static func detection(_ value: Any?) -> PoseDetection? {
        guard let object = value as? [String: Any] else { return nil }
        let box = numbers(object["box"])
        let keypoints = (object["keypoints"] as? [Any] ?? []).map(numbers).map { PosePoint(x: $0[0], y: $0[1]) }
        return PoseDetection(
            score: number(object["score"]), anchor: Int(number(object["anchor"])),
            box: PoseBox(minX: box[0], minY: box[1], maxX: box[2], maxY: box[3]), keypoints: keypoints,
            mergedCount: Int(number(object["merged"])))
    }

    static func region(_ value: Any?) -> PoseRegion? {
        guard let object = value as? [String: Any] else { return nil }
        return PoseRegion(
            centerX: number(object["x_center"]), centerY: number(object["y_center"]), width: number(object["width"]),
            height: number(object["height"]), rotation: number(object["rotation"]))
    }

    /// The photo's size (width, height).
    static func size(_ photo: String) -> (width: Int, height: Int) {
        let size = numbers(photos[photo]?["size"])
        return (Int(size[0]), Int(size[1]))
    }

    /// The photo decoded by Pillow (`convert("RGB")`, as the reference pipeline reads it), from its
    /// wheel, through the Python of `.deps/venv`.
    static func decodedPhoto(_ photo: String) throws -> RGBImage {
        guard let python = ImageFixtures.pythonWithPillow, let entry = photos[photo],
            let member = entry["member"] as? String, let wheel = entry["wheel"] as? String
        else { throw CocoaError(.fileNoSuchFile) }
        let prefix = wheel == "skimage" ? "scikit_image-" : "matplotlib-"
        let folder = try ImageFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("pixels.rgb").path
        let script = """
            import io, os, sys, zipfile
            from PIL import Image
            wheels, prefix, member, out = sys.argv[1:5]
            name = next(f for f in sorted(os.listdir(wheels)) if f.startswith(prefix) and f.endswith('.whl'))
            image = Image.open(io.BytesIO(zipfile.ZipFile(os.path.join(wheels, name)).read(member))).convert('RGB')
            open(out, 'wb').write(image.tobytes())
            print(image.width, image.height)
            """
        let result = try runProcess(python, ["-c", script, wheels.path, prefix, member, out])
        let words = result.stdout.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard result.status == 0, words.count == 2 else { throw CocoaError(.fileReadCorruptFile) }
        return RGBImage(
            width: words[0], height: words[1], pixels: [UInt8](try Data(contentsOf: URL(fileURLWithPath: out))))
    }
}

/// The largest |a - b| over two equally long lists (infinity when the lengths differ).
func maximumDifference(_ a: [Double], _ b: [Double]) -> Double {
    guard a.count == b.count else { return .infinity }
    return zip(a, b).map { abs($0 - $1) }.max() ?? 0
}
