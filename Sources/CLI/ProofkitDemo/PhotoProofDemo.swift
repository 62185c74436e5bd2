import ImageProof
public import Proofkit
public import ProofkitCore
import ProofkitDemoMedia

/// The photo-proof step of `proofkit demo`: the default engine (EfficientNet-Lite0 int8, fast
/// decode, five-crop rule) judges two pictures embedded in proofkit: a rendered picture of a prayer
/// mat that proofkit draws (not a photo: the project has no licensed photo of a real mat to ship)
/// and scikit-image's CC0 photo of a cup of coffee.
public enum PhotoProofDemo {
    /// One judged picture.
    public struct Photo: Sendable {
        /// What the picture shows and where it comes from.
        public var title: String
        /// Whether it shows a prayer mat (what the verdict should say).
        public var showsMat: Bool
        /// The verdict, score, brightness, hint and details.
        public var result: PhotoProofResult
        /// The first crop's most probable class and its probability.
        public var topClass: (name: String, probability: Double)?
    }

    /// What the step did.
    public struct Outcome: Sendable {
        /// Why the step was skipped (the model is not installed, ONNX Runtime is missing), or `nil`.
        public var skippedReason: String?
        /// The engine used.
        public var engine: PhotoEngine
        /// Model load and session creation.
        public var load: PhotoModelLoad?
        /// The judged pictures (mat first).
        public var photos: [Photo]
    }

    /// The embedded pictures: (name, title, shows a mat, JPEG bytes); see ``DemoMedia``.
    public static func embeddedPhotos() throws(ProofkitError) -> [(
        name: String, title: String, showsMat: Bool, bytes: [UInt8]
    )] {
        DemoMedia.photos
    }

    /// Runs the step.
    /// - Parameter environment: the process environment (`PROOFKIT_MODELS`, `PROOFKIT_ORT_LIBRARY`).
    /// - Returns: the outcome; a missing model or runtime gives a skipped outcome with the reason.
    /// - Throws: `.modelInvalid` when the installed model fails its SHA-256 check (a broken
    ///   install is an error, not a skip), or a decode failure of the embedded pictures (a bug).
    public static func run(environment: [String: String]) throws(ProofkitError) -> Outcome {
        let options = PhotoJudgeOptions()
        var judge: PhotoJudge
        do {
            judge = try PhotoJudge(options: options, store: ModelStore(environment: environment))
        } catch  where error.code == .runtimeUnavailable {
            return Outcome(skippedReason: error.description, engine: options.engine, load: nil, photos: [])
        }
        var photos: [Photo] = []
        for photo in try embeddedPhotos() {
            let result = try judge.judge(bytes: photo.bytes, name: photo.name)
            let top = result.topClasses.first.map { (judge.className($0.index), $0.probability) }
            photos.append(Photo(title: photo.title, showsMat: photo.showsMat, result: result, topClass: top))
        }
        return Outcome(skippedReason: nil, engine: options.engine, load: judge.load, photos: photos)
    }
}
