import AudioIO
public import Camera
import Dispatch
public import ImageProof
import Inference
public import ProofkitCore
internal import ProofkitSystem
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How a Lite0 engine decides that a photo shows a prayer mat.
public enum PhotoRule: String, Sendable, Equatable, CaseIterable, CustomStringConvertible {
    /// The seed's rule: the class-741 probability (maximum over the crops) reaches the threshold
    /// (0.3). No head is loaded.
    case classScore = "class"
    /// Class 741 reaches its threshold, OR the mat head (``PhotoEngine/headFile``, a logistic
    /// regression on the L2-normalised 1280-d embedding, maximum over the crops) reaches the
    /// head's threshold: the default, chosen by source-disjoint evaluation (Models/MODELS.md).
    case classOrHead = "class-or-head"

    /// The name used on the command line and in JSON.
    public var description: String { rawValue }
}

/// How ``PhotoJudge`` is set up.
public struct PhotoJudgeOptions: Sendable, Equatable {
    /// The engine (default ``PhotoEngine/lite0``, the int8 model).
    public var engine: PhotoEngine
    /// The pass threshold, 0...1; `nil` (default) is the engine's: 0.3 for Lite0, the prompts
    /// file's `threshold` (0.45) for CLIP.
    public var threshold: Double?
    /// DCT-scaled JPEG decoding to a shorter side of at least 256 (default true: the fast path;
    /// the same verdicts as the full-size decode on the shared photos).
    public var fastDecode: Bool
    /// The five-crop rule for the Lite0 engines (default true; CLIP always uses the centre crop).
    public var fiveCrop: Bool
    /// ONNX Runtime intra-op threads (default 1; spinning off).
    public var threads: Int
    /// Whether to load the ImageNet class names (for the top classes; default true).
    public var loadsClassNames: Bool
    /// Run the five crops one at a time and stop at the first that passes (default true: the
    /// same verdict as scoring all five, a fifth of the inference for a mat seen in the centre,
    /// and a fifth of the activation memory); false scores all five in one batch.
    public var stopsAtFirstPassingCrop: Bool
    /// The decision rule of the Lite0 engines (default ``PhotoRule/classOrHead``; the CLIP engine
    /// always uses its own score and ignores this).
    public var rule: PhotoRule

    /// - Parameters: see the properties.
    public init(
        engine: PhotoEngine = .lite0, threshold: Double? = nil, fastDecode: Bool = true, fiveCrop: Bool = true,
        threads: Int = 1, loadsClassNames: Bool = true, stopsAtFirstPassingCrop: Bool = true,
        rule: PhotoRule = .classOrHead
    ) {
        self.rule = rule
        self.stopsAtFirstPassingCrop = stopsAtFirstPassingCrop
        self.engine = engine
        self.threshold = threshold
        self.fastDecode = fastDecode
        self.fiveCrop = fiveCrop
        self.threads = threads
        self.loadsClassNames = loadsClassNames
    }
}

/// What loading the model took.
public struct PhotoModelLoad: Sendable, Equatable {
    /// The model file loaded: the engine's `.onnx`, or the ORT-format copy the models build
    /// optimised for this machine (``ModelStore/optimizedModel(for:modelPath:modelSHA256:manifest:)``).
    public var modelPath: String
    /// Its SHA-256, checked against the expected digest.
    public var modelSHA256: String
    /// Finding and checking the files: the side files' SHA-256 and, for an `.onnx`, reading it
    /// and checking its SHA-256 (an ORT-format model is mapped and checked as its session is made,
    /// so that time is in ``sessionCreation``).
    public var readAndVerify: Duration
    /// Creating the ONNX Runtime session (the runtime's first load included).
    public var sessionCreation: Duration
}

/// The photo proof's entry point: the proof with its model loaded, what `proofkit mat` and the
/// demo use (``PhotoProof`` is the pipeline under it, for a model of your own).
///
/// ```swift
/// var judge = try PhotoJudge(options: PhotoJudgeOptions(), store: ModelStore(environment: env))
/// let result = try judge.judge(contentsOf: "mat.jpg")
/// print(result.judgement.verdict, result.judgement.score)
/// ```
///
/// Owns one ONNX Runtime session (`~Copyable`): load once, judge many photos. The model file and
/// its side files are checked against their SHA-256 before ONNX Runtime sees them
/// (``ModelStore/expectedSHA256(ofFileAt:)``; for CLIP, the encoder may instead be tied to
/// the prompts file by its `image_encoder_sha256`).
public struct PhotoJudge: ~Copyable {
    /// The engine.
    public let engine: PhotoEngine
    /// The pipeline (configuration, decoder).
    public private(set) var proof: PhotoProof
    /// The ImageNet class names (empty for CLIP, or when not asked for).
    public let classNames: [String]
    /// The prompt texts, mat prompts first (CLIP only).
    public let prompts: [String]
    /// The rule in force: ``PhotoJudgeOptions/rule`` for the Lite0 engines, `nil` for CLIP.
    public let rule: PhotoRule?
    /// The SHA-256 of the mat head file in use (lowercase hex), `nil` when no head is loaded.
    public let headSHA256: String?
    /// What loading took.
    public let load: PhotoModelLoad
    private var model: OnnxPhotoModel
    private var prefetched: PreparedPhotoInputResult?

    /// Finds, checks and loads the engine's model.
    /// - Parameters:
    ///   - options: engine, threshold, decoding, crops, threads.
    ///   - store: where the models are.
    ///   - firstPhoto: a photo to decode and preprocess on another thread while the model loads
    ///     (the first one to judge): the whole job then takes about the model's load time plus
    ///     one inference. Its errors are reported when it is judged.
    /// - Throws: `.runtimeUnavailable` (exit 69) when the model is not installed or ONNX Runtime
    ///   is missing; `.modelInvalid` (exit 78) for a SHA-256 mismatch (both digests in the
    ///   message), a file with no known digest, or a file that is not the expected model;
    ///   `.invalidArgument` for a threshold outside 0...1 or threads < 0. With
    ///   ``PhotoRule/classOrHead``, the head file is found and checked like the model (missing:
    ///   exit 69; SHA-256 mismatch, no known digest or not a 1280-value head: exit 78).
    public init(options: PhotoJudgeOptions, store: ModelStore, prefetching firstPhoto: String? = nil)
        throws(ProofkitError)
    {
        guard options.threads >= 0 else {
            throw ProofkitError(
                .invalidArgument, "threads must be 0 (ONNX Runtime's choice) or more, not \(options.threads)")
        }
        let clock = ContinuousClock()
        let start = clock.now
        let engine = options.engine
        let modelPath = try store.locate(engine.modelFile)
        let manifests = try ModelsManifestLookup(modelPath: modelPath)
        var expected = ModelStore.expectedSHA256(ofFileAt: modelPath, manifest: manifests.modelManifest)
        let sideFiles: PhotoSideFiles
        if let promptsFile = engine.promptsFile {
            sideFiles = try Self.readPrompts(promptsFile, options: options, store: store, manifests: manifests)
        } else {
            sideFiles = try Self.readLite0SideFiles(options: options, store: store, manifests: manifests)
        }
        if expected == nil { expected = sideFiles.encoderSHA256 }
        var configuration = sideFiles.configuration
        let headFile = sideFiles.headFile
        // Three things at once: this thread checks the model file; another loads ONNX Runtime
        // (dlopen and its environment, the first time in the process: the longest step before the
        // session); a third decodes and preprocesses the first photo, which is ready by the time
        // the session is.
        let proofForPrefetch = try PhotoProof(configuration: configuration)
        let runtime = BackgroundWork { () -> Bool in
            (try? OnnxRuntime.load()) != nil  // errors surface on this thread when the session is made
        }
        defer { _ = runtime.wait() }
        let background = Self.prefetch(firstPhoto, with: proofForPrefetch)
        defer { _ = background.wait() }
        // The mat head: read, checked against its SHA-256 and parsed while the runtime loads.
        var proof = proofForPrefetch
        if let headFile {
            configuration.head = try Self.readMatHead(headFile)
            proof = try PhotoProof(configuration: configuration)
        }
        guard let expected else {
            throw ProofkitError(
                .modelInvalid,
                "no SHA-256 is known for this model (no manifest.json entry, no committed digest, no prompts file naming it)",
                path: modelPath)
        }
        let loaded = try Self.loadModel(
            engine: engine, modelPath: modelPath, sha256: expected, manifest: manifests.modelManifest,
            threads: options.threads, cacheFolder: store.optimizedModelCache, clock: clock)
        var model = loaded.model
        // Lite0's pooled features are needed only to enrol a mat (``enrol(contentsOf:threshold:)``
        // turns them back on); fetching just the logits is what a plain judgement needs.
        model.fetchesEmbedding = engine == .clip || configuration.head != nil
        let created = clock.now
        self.prefetched = background.wait()
        self.model = model
        self.proof = proof
        self.engine = engine
        self.classNames = sideFiles.classNames
        self.prompts = sideFiles.prompts
        self.rule = engine == .clip ? nil : options.rule
        self.headSHA256 = headFile?.sha256
        self.load = PhotoModelLoad(
            modelPath: loaded.path, modelSHA256: loaded.sha256, readAndVerify: loaded.verified - start,
            sessionCreation: created - loaded.verified)
    }

    /// CLIP's side file: reads and checks the prompts file and makes the configuration from it.
    private static func readPrompts(
        _ promptsFile: String, options: PhotoJudgeOptions, store: ModelStore, manifests: ModelsManifestLookup
    ) throws(ProofkitError) -> PhotoSideFiles {
        let promptsPath = try store.locate(promptsFile)
        // Read once: the bytes checked are the bytes parsed.
        let bytes: [UInt8]
        if let digest = try manifests.expectedSHA256(ofFileAt: promptsPath) {
            bytes = try ModelFile.read(promptsPath, expectedSHA256: digest)
        } else {
            bytes = try PhotoProof.readData(promptsPath)
        }
        let loaded = try PhotoProof.loadPromptEmbeddings(bytes: bytes, path: promptsPath)
        let configuration = try PhotoProofConfiguration.clip(
            prompts: loaded.scorer,
            threshold: options.threshold ?? loaded.threshold ?? MatProofPolicy.clipThreshold,
            fastDecode: options.fastDecode)
        return PhotoSideFiles(
            configuration: configuration, prompts: loaded.prompts, encoderSHA256: loaded.encoderSHA256)
    }

    /// Lite0's side files: makes the configuration, finds the mat head (with the class-or-head
    /// rule) and reads and checks the class names (when asked for).
    private static func readLite0SideFiles(
        options: PhotoJudgeOptions, store: ModelStore, manifests: ModelsManifestLookup
    ) throws(ProofkitError) -> PhotoSideFiles {
        let engine = options.engine
        var configuration = try PhotoProofConfiguration.lite0(
            threshold: options.threshold ?? MatProofPolicy.lite0Threshold, fastDecode: options.fastDecode,
            crops: options.fiveCrop ? CropRegion.fiveCrop() : [.center])
        configuration.stopsAtFirstPassingCrop = options.stopsAtFirstPassingCrop
        var headFile: (path: String, sha256: String)?
        if options.rule == .classOrHead, let file = engine.headFile {
            // Found and its digest known now (errors before any work); read and checked later,
            // while ONNX Runtime loads on another thread.
            let path = try store.locate(file)
            guard let digest = try manifests.expectedSHA256(ofFileAt: path) else {
                throw ProofkitError(
                    .modelInvalid, "no SHA-256 is known for this file (no manifest.json entry)", path: path)
            }
            headFile = (path, digest.lowercased())
        }
        var names: [String] = []
        if options.loadsClassNames, let file = engine.classNamesFile {
            let path = try store.locate(file)
            guard let digest = try manifests.expectedSHA256(ofFileAt: path) else {
                throw ProofkitError(
                    .modelInvalid, "no SHA-256 is known for this file (no manifest.json entry)", path: path)
            }
            names = try PhotoProof.loadClassNames(bytes: ModelFile.read(path, expectedSHA256: digest), path: path)
        }
        return PhotoSideFiles(configuration: configuration, classNames: names, headFile: headFile)
    }

    /// Decodes and preprocesses `firstPhoto` (when given) on a thread of its own.
    private static func prefetch(
        _ firstPhoto: String?, with proof: PhotoProof
    ) -> BackgroundWork<PreparedPhotoInputResult?> {
        BackgroundWork { () -> PreparedPhotoInputResult? in
            guard let firstPhoto else { return nil }
            return PreparedPhotoInputResult(
                path: firstPhoto,
                result: Result { () throws(ProofkitError) in try proof.prepare(contentsOf: firstPhoto) })
        }
    }

    /// Reads the mat head, checks it against its SHA-256 and that it fits Lite0's embedding.
    private static func readMatHead(_ headFile: (path: String, sha256: String)) throws(ProofkitError) -> LogisticHead {
        let head = try PhotoProof.loadHead(
            bytes: ModelFile.read(headFile.path, expectedSHA256: headFile.sha256), path: headFile.path)
        guard head.dimension == Self.lite0EmbeddingDimension else {
            throw ProofkitError(
                .modelInvalid,
                "not the Lite0 mat head: it has \(head.dimension) weights, the embedding \(Self.lite0EmbeddingDimension) values",
                path: headFile.path)
        }
        return head
    }

    /// Makes the session: from the ORT-format copy when one fits, else from the `.onnx` (read and
    /// checked against `sha256`, and cached as an ORT-format copy in `cacheFolder` where that is
    /// used).
    private static func loadModel(
        engine: PhotoEngine, modelPath: String, sha256 expected: String, manifest: ModelsManifest?, threads: Int,
        cacheFolder: String?, clock: ContinuousClock
    ) throws(ProofkitError) -> LoadedPhotoModel {
        var verified = clock.now
        // The models build's ORT-format copy, optimised on this machine, when it fits this CPU,
        // this runtime and this .onnx: its session is made about twice as fast. Its SHA-256 is
        // checked like any model's (a mismatch is refused, exit 78); a runtime that cannot read
        // it falls back to the portable .onnx.
        // (The file is mapped and hashed while the runtime loads; a session made by another
        // runtime release than the one that saved the file is dropped.)
        // An installed tree on another CPU than the one that built it makes its own copy on
        // first use, in the user's cache (``OptimizedModelCache``).
        let cache = OptimizedModelCache.isUsed(forModelAt: modelPath) ? cacheFolder : nil
        var optimized = ModelStore.optimizedModel(
            for: engine, modelPath: modelPath, modelSHA256: expected, manifest: manifest)
        var fast: OnnxPhotoModel? = nil
        if optimized == nil, let cache,
            let cached = OptimizedModelCache.lookup(for: engine, modelSHA256: expected, in: cache)
        {
            // A cached copy that is damaged is dropped (and made again), not an error: the
            // installed .onnx it came from is the model.
            optimized = cached
            do { fast = try Self.loadOptimized(cached, threads: threads) } catch {
                OptimizedModelCache.discard(cached)
                optimized = nil
            }
        } else if let optimized {
            fast = try Self.loadOptimized(optimized, threads: threads)
        }
        if let optimized, let fast = fast.take(), (try? OnnxRuntime.load().version) == optimized.runtimeVersion {
            return LoadedPhotoModel(model: fast, path: optimized.path, sha256: optimized.sha256, verified: verified)
        }
        let bytes = try ModelFile.read(modelPath, expectedSHA256: expected)
        verified = clock.now
        let model = try OnnxPhotoModel(bytes: bytes, path: modelPath, threads: threads)
        if let cache {
            OptimizedModelCache.store(for: engine, bytes: bytes, modelSHA256: expected, in: cache)
        }
        return LoadedPhotoModel(model: model, path: modelPath, sha256: expected, verified: verified)
    }

    /// The ORT-format model, or `nil` when ONNX Runtime cannot load it (then the `.onnx` is used).
    /// - Throws: a SHA-256 mismatch or an unreadable file (the model is damaged: refused).
    static func loadOptimized(_ optimized: OptimizedPhotoModel, threads: Int) throws(ProofkitError) -> OnnxPhotoModel? {
        do {
            return try OnnxPhotoModel(
                ortFormatContentsOf: optimized.path, expectedSHA256: optimized.sha256, threads: threads)
        } catch  where error.code == .modelInvalid && error.operation != "sha256" {
            return nil
        }
    }

    /// The length of EfficientNet-Lite0's `embedding` output, which the mat head reads.
    static let lite0EmbeddingDimension = 1280

    /// Judges one photo file.
    /// - Throws: the decoder's errors naming `path` (`.notFound` also for a folder, `.io`, `.decodeFailed`,
    ///   `.unsupportedFormat`), or the runtime's.
    public mutating func judge(contentsOf path: String) throws(ProofkitError) -> PhotoProofResult {
        if let prefetched, prefetched.path == path {
            self.prefetched = nil
            return try proof.judge(input: try prefetched.result.get(), path: path, model: &model)
        }
        return try proof.judge(contentsOf: path, model: &model)
    }

    /// Judges a photo held in memory.
    /// - Throws: as ``judge(contentsOf:)``, naming `name`.
    public mutating func judge(bytes: [UInt8], name: String) throws(ProofkitError) -> PhotoProofResult {
        try proof.judge(bytes: bytes, name: name, model: &model)
    }

    /// Judges a camera frame: a JPEG (MJPEG) as a photo in memory (DCT-scaled as a photo is), a
    /// YUYV frame from its pixels.
    /// - Throws: as ``judge(bytes:name:)``, naming `name`; `.decodeFailed` for a truncated YUYV frame.
    public mutating func judge(frame: CameraFrame, name: String) throws(ProofkitError) -> PhotoProofResult {
        switch frame.format {
        case .mjpeg: return try judge(bytes: frame.bytes, name: name)
        case .yuyv:
            guard
                let image = YUYV.rgb(
                    frame.bytes, width: frame.width, height: frame.height, bytesPerLine: frame.bytesPerLine)
            else { throw ProofkitError(.decodeFailed, "the YUYV frame is truncated", path: name) }
            return try proof.judge(input: proof.prepare(uncompressedFrame: image), path: name, model: &model)
        }
    }

    /// Enrols the person's own mat from one or more photos of it: later photos are also accepted
    /// when their centre crop's embedding is close enough to one of these (cosine ≥ `threshold`).
    /// - Parameters:
    ///   - paths: photos of the mat.
    ///   - threshold: the cosine needed (default 0.75, see Models/MODELS.md).
    /// - Returns: the enrolment now in use.
    /// - Throws: the decoder's errors naming the photo; `.invalidArgument` when the engine gives
    ///   no embedding or `paths` is empty.
    @discardableResult
    public mutating func enrol(
        contentsOf paths: [String], threshold: Double = MatEnrolment.defaultThreshold
    ) throws(ProofkitError) -> MatEnrolment {
        guard !paths.isEmpty else { throw ProofkitError(.invalidArgument, "no photo to enrol") }
        model.fetchesEmbedding = true
        var embeddings: [[Float]] = []
        for path in paths {
            let result = try proof.judge(contentsOf: path, model: &model)
            guard !result.embedding.isEmpty else {
                throw ProofkitError(.invalidArgument, "the \(engine) engine gives no embedding to enrol a mat with")
            }
            embeddings.append(result.embedding)
        }
        let enrolment = try MatEnrolment(embeddings: embeddings, threshold: threshold)
        var configuration = proof.configuration
        configuration.enrolment = enrolment
        proof = try PhotoProof(configuration: configuration)
        return enrolment
    }

    /// The name of ImageNet class `index` ("class N" when the names are not loaded).
    public func className(_ index: Int) -> String {
        classNames.indices.contains(index) ? classNames[index] : "class \(index)"
    }
}

/// Each folder's manifest, read once: the model, its class names or prompts and its ORT-format
/// copy are usually in one folder.
struct ModelsManifestLookup {
    /// The model file's path.
    let modelPath: String
    /// The manifest beside the model, if any.
    let modelManifest: ModelsManifest?

    /// Reads the manifest beside the model.
    init(modelPath: String) throws(ProofkitError) {
        self.modelPath = modelPath
        modelManifest = try ModelsManifest.load(besideFileAt: modelPath)
    }

    /// The manifest beside `path`: the model's when in the model's folder, else read.
    func manifest(besideFileAt path: String) throws(ProofkitError) -> ModelsManifest? {
        URL(fileURLWithPath: path).deletingLastPathComponent()
            == URL(fileURLWithPath: modelPath).deletingLastPathComponent()
            ? modelManifest : try ModelsManifest.load(besideFileAt: path)
    }

    /// The SHA-256 expected of the file at `path`, from the manifest beside it or a committed digest.
    func expectedSHA256(ofFileAt path: String) throws(ProofkitError) -> String? {
        ModelStore.expectedSHA256(ofFileAt: path, manifest: try manifest(besideFileAt: path))
    }
}

/// What an engine's side files give ``PhotoJudge``: the pipeline's configuration and what was read
/// beside the model.
struct PhotoSideFiles {
    /// The pipeline's configuration (without the mat head, which is read later).
    var configuration: PhotoProofConfiguration
    /// The ImageNet class names (Lite0, when asked for).
    var classNames: [String] = []
    /// The prompt texts (CLIP).
    var prompts: [String] = []
    /// The mat head file, found and its digest known (Lite0 with the class-or-head rule).
    var headFile: (path: String, sha256: String)?
    /// The image encoder's SHA-256 that the prompts file names (CLIP), if any.
    var encoderSHA256: String?
}

/// The session ``PhotoJudge`` made, and from which file.
struct LoadedPhotoModel: ~Copyable {
    /// The session.
    var model: OnnxPhotoModel
    /// The file loaded: the `.onnx` or its ORT-format copy.
    var path: String
    /// That file's SHA-256.
    var sha256: String
    /// When the model file was read and checked (before the session was made).
    var verified: ContinuousClock.Instant
}

/// A photo prepared ahead (see ``PhotoJudge/init(options:store:prefetching:)``).
struct PreparedPhotoInputResult: Sendable {
    var path: String
    var result: Result<PreparedPhotoInput, ProofkitError>
}

/// Runs `body` once on its own thread; ``wait()`` returns its value (any number of times).
final class BackgroundWork<Value: Sendable>: Sendable {
    // `value` is set once by the thread before `done` is signalled; `wait()` takes the signal
    // once (under `finished`'s lock, so concurrent waiters queue behind the first).
    private let value = Mutex<Value?>(nil)
    private let done = DispatchSemaphore(value: 0)
    private let finished = Mutex(false)

    init(_ body: @escaping @Sendable () -> Value) {
        runOnDedicatedThread { [self] in
            let result = body()
            value.withLock { $0 = result }
            done.signal()
        }
    }

    /// Blocks until the work is done, then returns its value.
    func wait() -> Value {
        finished.withLock { finished in
            if !finished {
                done.wait()
                finished = true
            }
        }
        return value.withLock { $0! }
    }
}

// The names before the photo proof's types were named by role (issue 19).
@available(*, deprecated, renamed: "PhotoJudge")
public typealias MatJudge = PhotoJudge
@available(*, deprecated, renamed: "PhotoJudgeOptions")
public typealias MatJudgeOptions = PhotoJudgeOptions
@available(*, deprecated, renamed: "PhotoModelLoad")
public typealias MatModelLoad = PhotoModelLoad
@available(*, deprecated, renamed: "PhotoRule")
public typealias MatRule = PhotoRule
