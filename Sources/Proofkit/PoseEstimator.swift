import ImageIO
import Inference
public import PoseEstimation
public import ProofkitCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The files of the body-pose estimator (MediaPipe's BlazePose detector and full landmark model,
/// converted to ONNX by `Models/build.sh`), found like the other models (``ModelStore``:
/// `PROOFKIT_MODELS`, else `Models/generated` above the executable, else under the current folder)
/// and checked against the folder's `manifest.json`, else the digests committed in
/// `Models/models.sha256`.
public enum PoseModelFiles {
    /// The detector: `image` float32 [1, 224, 224, 3] in [-1, 1] → `regressors` [1, 2254, 12], `scores` [1, 2254, 1].
    public static let detector = "pose_detection.onnx"
    /// The landmark model: `image` float32 [1, 256, 256, 3] in [0, 1] → `landmarks` [1, 195],
    /// `presence` [1, 1], `heatmap` [1, 64, 64, 39] (and `segmentation`, `world_landmarks`, unused).
    public static let landmarks = "pose_landmark_full.onnx"
    /// The pipeline's constants (`PosePipelineConfiguration`).
    public static let pipeline = "pose_pipeline.json"
    /// Every file, in load order.
    public static let all = [pipeline, detector, landmarks]
}

/// How long one frame's two models took, in seconds.
public struct PoseTimings: Sendable, Equatable {
    /// The detector's run (0 when the region was tracked from the previous frame).
    public var detector: Double
    /// The landmark model's run (0 when nobody was detected).
    public var landmarks: Double
}

/// A photo's pose: the result and the image it was found in.
public struct PosePhoto: Sendable, Equatable {
    /// A person with 33 landmarks in pixels of the analysed image, or nobody in view.
    public var observation: PoseObservation
    /// The analysed (decoded, upright) image's width, in pixels.
    public var width: Int
    /// The analysed image's height, in pixels.
    public var height: Int
    /// The photo's upright width at full size, in pixels (larger than ``width`` when a big JPEG
    /// was decoded at a reduced size).
    public var fullWidth: Int
    /// The photo's upright height at full size, in pixels.
    public var fullHeight: Int
    /// The file's format: `"jpeg"` or `"png"`.
    public var format: String
    /// The time of each model.
    public var timings: PoseTimings
}

/// Body pose on the device: MediaPipe Pose's single-person pipeline (`PosePipeline`)
/// with its two models run by ONNX Runtime.
///
/// ```swift
/// let estimator = try PoseEstimator(store: ModelStore(environment: env))
/// let photo = try estimator.estimate(photoAt: "squat.jpg")
/// if let pose = photo.observation.estimate { print(pose.landmarks[23]) }   // left hip, pixels
/// ```
///
/// Blocking: every call runs the models on the calling thread; use one estimator per thread.
/// `@unchecked Sendable`: the sessions are owned here and used by one caller at a time.
public final class PoseEstimator: @unchecked Sendable {
    /// The largest photo decoded at full size, as its shorter side in pixels: a bigger JPEG is
    /// decoded at a reduced size (libjpeg-turbo's DCT scaling, the smallest factor that keeps the
    /// shorter side at least this). The models see far fewer pixels (the detector 224, the
    /// landmark model 256 of a region that is often larger than the photo), and a 48 MP phone
    /// photo's decode stays near 9 MB instead of 144. PNGs are decoded at full size, within the
    /// decoder's 50 MP limit (larger photos are refused: exit 65).
    public static let decodedShorterSide = 1080

    /// The pipeline (anchors, decoding, regions, crops, projection).
    public let pipeline: PosePipeline
    /// The folder the models were loaded from.
    public let folder: String
    /// Seconds spent loading (checking both models and creating their sessions).
    public let loadSeconds: Double

    private var detector: InferenceSession
    private var landmarkModel: InferenceSession
    private let decoder: ImageDecoder

    /// Loads the pipeline file and both models after checking their SHA-256.
    /// - Parameters:
    ///   - store: where the models are.
    ///   - threads: ONNX Runtime intra-op threads per model, default 1 (0 = one per core).
    /// - Throws: `.runtimeUnavailable` (exit 69) when a file is missing (the message says to run
    ///   `bash .ci/setup`) or ONNX Runtime is not installed; `.modelInvalid` (exit 78) when a file
    ///   is damaged (SHA-256 mismatch), has no known digest, or is not the graph or pipeline file
    ///   proofkit expects.
    public init(store: ModelStore, threads: Int = 1) throws(ProofkitError) {
        let clock = ContinuousClock()
        let start = clock.now
        var paths: [String: String] = [:]
        for name in PoseModelFiles.all { paths[name] = try store.locate(name) }
        let manifests = try Self.manifests(for: Array(paths.values))
        func digest(_ name: String) throws(ProofkitError) -> String {
            let path = paths[name]!
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            guard let digest = ModelStore.expectedSHA256(ofFileAt: path, manifest: manifests[folder] ?? nil) else {
                throw ProofkitError(
                    .modelInvalid,
                    "no SHA-256 is known for this file (no manifest.json entry); rebuild it with 'bash .ci/setup'",
                    path: path)
            }
            return digest
        }
        let pipelinePath = paths[PoseModelFiles.pipeline]!
        let configuration: PosePipelineConfiguration
        do {
            let bytes = try ModelFile.read(pipelinePath, expectedSHA256: try digest(PoseModelFiles.pipeline))
            configuration = try PosePipelineConfiguration(json: try JSONReader.parse(bytes: bytes))
        } catch {
            throw error.code == .decodeFailed
                ? ProofkitError(.modelInvalid, error.message, path: pipelinePath) : error.at(path: pipelinePath)
        }
        let options = InferenceSession.Options(intraOpThreads: threads)
        let detectorPath = paths[PoseModelFiles.detector]!
        let landmarksPath = paths[PoseModelFiles.landmarks]!
        let detector = try InferenceSession(
            contentsOf: detectorPath, expectedSHA256: try digest(PoseModelFiles.detector), options: options)
        let side = configuration.detectorInputSize
        try Self.check(
            detector, input: [1, side, side, 3], outputs: ["regressors", "scores"], path: detectorPath)
        let landmarkModel = try InferenceSession(
            contentsOf: landmarksPath, expectedSHA256: try digest(PoseModelFiles.landmarks), options: options)
        let crop = configuration.landmarkInputSize
        try Self.check(
            landmarkModel, input: [1, crop, crop, 3], outputs: ["landmarks", "presence", "heatmap"],
            path: landmarksPath)
        self.detector = detector
        self.landmarkModel = landmarkModel
        pipeline = PosePipeline(configuration: configuration)
        decoder = try ImageDecoder(configuration: .init(minimumShorterSide: Self.decodedShorterSide))
        folder = URL(fileURLWithPath: detectorPath).deletingLastPathComponent().path
        loadSeconds = (clock.now - start).seconds
    }

    /// Each folder's `manifest.json`, read once (`nil`: the folder has none).
    private static func manifests(for paths: [String]) throws(ProofkitError) -> [String: ModelsManifest?] {
        var result: [String: ModelsManifest?] = [:]
        for path in paths {
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            if result[folder] == nil { result[folder] = .some(try ModelsManifest.load(besideFileAt: path)) }
        }
        return result
    }

    private static func check(
        _ session: borrowing InferenceSession, input shape: [Int], outputs: [String], path: String
    ) throws(ProofkitError) {
        let image = session.inputs.first { $0.name == "image" }
        let names = Set(session.outputs.map(\.name))
        guard session.inputs.count == 1, let image, image.elementType == .float32, image.accepts(shape: shape),
            Set(outputs).isSubset(of: names)
        else {
            throw ProofkitError(
                .modelInvalid,
                "not the BlazePose graph proofkit expects: it takes \(session.inputs.map(\.description).joined(separator: ", ")) and gives \(session.outputs.map(\.name).joined(separator: ", ")); expected image float32\(shape) -> \(outputs.joined(separator: ", "))",
                path: path)
        }
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        (ContinuousClock().now - start).seconds
    }

    /// The time of the last frame's two models.
    public private(set) var lastTimings = PoseTimings(detector: 0, landmarks: 0)
    /// Whether the detector ran on the last frame (false when its region was tracked).
    public private(set) var lastRanDetector = false
    /// How many people the detector saw the last time it ran (its detections after the
    /// suppression; the first is the one followed); 0 before it has run.
    public private(set) var lastPeopleDetected = 0

    /// The pose in one upright RGB image.
    /// - Parameters:
    ///   - image: the frame.
    ///   - previous: the previous frame's estimate of the same video, when it had a person: its
    ///     landmarks 33 and 34 give this frame's region and the detector is not run (MediaPipe's
    ///     tracking); if the landmark model then finds nobody, the detector runs after all when
    ///     `redetect` is true. `nil` (the default, and a photo): the detector runs.
    ///   - redetect: whether a tracked frame whose person is lost runs the detector at once
    ///     (default true); false gives nobody for that frame, as MediaPipe's video mode does (its
    ///     next frame then starts with the detector).
    /// - Returns: a person with 33 landmarks in the image's pixels, or nobody in view.
    /// - Throws: `.internal` when ONNX Runtime fails; `.modelInvalid` when an output has the wrong size.
    public func estimate(image: RGBImage, previous: PoseEstimate? = nil, redetect: Bool = true)
        throws(ProofkitError) -> PoseObservation
    {
        lastTimings = PoseTimings(detector: 0, landmarks: 0)
        lastRanDetector = false
        guard image.width > 0, image.height > 0 else { return .nobody(.noDetection) }
        if let previous,
            let region = PoseRegion.tracking(landmarks: previous.allLandmarks, configuration: pipeline.configuration)
        {
            let tracked = try landmarks(in: image, region: region, detection: nil)
            if tracked.estimate != nil || !redetect { return tracked }
        }
        let start = ContinuousClock().now
        lastRanDetector = true
        let everyone = try detect(in: image)
        lastTimings.detector = Self.seconds(since: start)
        guard let detection = everyone.first else { return .nobody(.noDetection) }
        let region = pipeline.region(of: detection, imageWidth: image.width, imageHeight: image.height)
        return try landmarks(in: image, region: region, detection: detection)
    }

    private func landmarks(in image: RGBImage, region: PoseRegion, detection: PoseDetection?)
        throws(ProofkitError) -> PoseObservation
    {
        let start = ContinuousClock().now
        let side = pipeline.configuration.landmarkInputSize
        let outputs = try landmarkModel.run(
            [
                "image": try Tensor(
                    shape: [1, side, side, 3], scalars: pipeline.landmarkInput(of: image, region: region))
            ],
            outputs: ["landmarks", "presence", "heatmap"])
        let presence = try outputs.tensor("presence", as: Float.self).scalars
        guard presence.count == 1 else {
            throw ProofkitError(.modelInvalid, "the pose landmark model gave \(presence.count) presence values, not 1")
        }
        let observation = try pipeline.observation(
            landmarks: try outputs.tensor("landmarks", as: Float.self).scalars, presence: presence[0],
            heatmap: try outputs.tensor("heatmap", as: Float.self).scalars, region: region, detection: detection)
        lastTimings.landmarks += Self.seconds(since: start)
        return observation
    }

    /// How many people the detector sees in an image (its detections after the suppression), without
    /// the landmark model: for a hint that someone else is in view while one person is tracked.
    /// Sets ``lastPeopleDetected``.
    /// - Throws: as ``estimate(image:previous:redetect:)``.
    public func countPeople(in image: RGBImage) throws(ProofkitError) -> Int {
        guard image.width > 0, image.height > 0 else { return 0 }
        return try detect(in: image).count
    }

    /// The detector on the letterboxed image: every detection after the suppression, best first,
    /// normalised to the image. Sets ``lastPeopleDetected``.
    private func detect(in image: RGBImage) throws(ProofkitError) -> [PoseDetection] {
        let side = pipeline.configuration.detectorInputSize
        let outputs = try detector.run(
            ["image": try Tensor(shape: [1, side, side, 3], scalars: pipeline.detectorInput(of: image))],
            outputs: ["regressors", "scores"])
        let everyone = try pipeline.allDetections(
            regressors: try outputs.tensor("regressors", as: Float.self).scalars,
            scores: try outputs.tensor("scores", as: Float.self).scalars, imageWidth: image.width,
            imageHeight: image.height)
        lastPeopleDetected = everyone.count
        return everyone
    }

    /// The time of each model on one frame, both always run (for `proofkit bench`): the detector
    /// on the letterboxed image, then the landmark model on the first detection's region, or on
    /// the letterboxed image when nobody is detected (the same work as a frame with a person).
    /// Only the models' runs are timed, not the crops or the decoding.
    /// - Throws: as ``estimate(image:previous:redetect:)``.
    public func modelTimings(on image: RGBImage) throws(ProofkitError) -> PoseTimings {
        let side = pipeline.configuration.detectorInputSize
        let detectorInput = try Tensor(shape: [1, side, side, 3], scalars: pipeline.detectorInput(of: image))
        let start = ContinuousClock().now
        let outputs = try detector.run(["image": detectorInput], outputs: ["regressors", "scores"])
        let detectorSeconds = Self.seconds(since: start)
        let detection = try pipeline.firstDetection(
            regressors: try outputs.tensor("regressors", as: Float.self).scalars,
            scores: try outputs.tensor("scores", as: Float.self).scalars, imageWidth: image.width,
            imageHeight: image.height)
        let region =
            detection.map { pipeline.region(of: $0, imageWidth: image.width, imageHeight: image.height) }
            ?? PoseRegion.letterbox(imageWidth: image.width, imageHeight: image.height)
        let crop = pipeline.configuration.landmarkInputSize
        let landmarkInput = try Tensor(
            shape: [1, crop, crop, 3], scalars: pipeline.landmarkInput(of: image, region: region))
        let landmarkStart = ContinuousClock().now
        let landmarkOutputs = try landmarkModel.run(
            ["image": landmarkInput], outputs: ["landmarks", "presence", "heatmap"])
        let landmarkSeconds = Self.seconds(since: landmarkStart)
        withExtendedLifetime(landmarkOutputs) {}
        return PoseTimings(detector: detectorSeconds, landmarks: landmarkSeconds)
    }

    /// Decodes a photo as ``estimate(photoAt:)`` does.
    /// - Throws: the decoder's errors, naming the file (65, 66, 74).
    public func decode(photoAt path: String) throws(ProofkitError) -> RGBImage {
        try decoder.decode(contentsOf: path).image
    }

    /// The pose in a photo file (JPEG or PNG, by content; EXIF orientation applied; a JPEG whose
    /// shorter side is over ``decodedShorterSide`` is decoded at a reduced size).
    /// - Parameter path: the photo.
    /// - Returns: the result, in pixels of the analysed image, with both sizes.
    /// - Throws: `.notFound` (66), `.io` (74), `.decodeFailed` or `.unsupportedFormat` (65: not
    ///   an image, truncated, over 50 MP), naming the file; ONNX Runtime's errors as
    ///   ``estimate(image:previous:redetect:)``.
    public func estimate(photoAt path: String) throws(ProofkitError) -> PosePhoto {
        let decoded = try decoder.decode(contentsOf: path)
        let observation = try estimate(image: decoded.image)
        let swaps = decoded.orientation.swapsAxes
        return PosePhoto(
            observation: observation, width: decoded.image.width, height: decoded.image.height,
            fullWidth: swaps ? decoded.storedHeight : decoded.storedWidth,
            fullHeight: swaps ? decoded.storedWidth : decoded.storedHeight, format: decoded.format.rawValue,
            timings: lastTimings)
    }
}
