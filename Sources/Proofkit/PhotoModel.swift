public import ImageProof
import Inference
public import ProofkitCore

/// The photo model run by proofkit's ONNX Runtime wrapper: EfficientNet-Lite0 (input `input`
/// `[N, 3, 224, 224]`, outputs `logits` `[N, 1000]` and `embedding` `[N, 1280]`) or a MobileCLIP
/// image encoder (input `image` `[1, 3, 256, 256]`, output `embedding` `[1, 512]`).
///
/// ```swift
/// var model = try OnnxPhotoModel(contentsOf: OnnxPhotoModel.lite0FP32Path)
/// let proof = try PhotoProof(configuration: .lite0())
/// let result = try proof.judge(contentsOf: "mat.jpg", model: &model)
/// ```
///
/// Owns one `InferenceSession` (`~Copyable`): create it once and judge many photos with it.
/// A model with a fixed batch of 1 (the CLIP encoder) is run one crop at a time.
public struct OnnxPhotoModel: ~Copyable, PhotoModelRunner {
    /// Where set-up puts the fp32 EfficientNet-Lite0, relative to the package root.
    public static let lite0FP32Path = "Models/generated/efficientnet_lite0_fp32.onnx"
    /// Where set-up puts the static int8 EfficientNet-Lite0.
    public static let lite0Int8Path = "Models/generated/efficientnet_lite0_int8.onnx"

    private var session: InferenceSession
    private let inputName: String
    private let hasLogits: Bool
    private let hasEmbedding: Bool
    private let fixedBatch: Int?
    /// Whether ``run(_:)`` also fetches the `embedding` output of a model that has `logits`
    /// (default true; false skips copying it out, for callers that need no head or enrolment).
    public var fetchesEmbedding = true

    /// Loads a photo model.
    /// - Parameters:
    ///   - path: the `.onnx` file.
    ///   - expectedSHA256: when given, the file must have this digest.
    ///   - threads: intra-op threads (default 1; spinning stays off).
    /// - Throws: `.notFound`, `.io`, `.modelInvalid` (digest mismatch, not loadable, or not a
    ///   model with one float32 image input and a `logits` or `embedding` output),
    ///   `.runtimeUnavailable`.
    public init(contentsOf path: String, expectedSHA256: String? = nil, threads: Int = 1) throws(ProofkitError) {
        let session = try InferenceSession(
            contentsOf: path, expectedSHA256: expectedSHA256, options: InferenceSession.Options(intraOpThreads: threads)
        )
        try self.init(session: session, path: path)
    }

    /// Loads a photo model from bytes already read (and checked) by the caller.
    /// - Parameters:
    ///   - bytes: the `.onnx` file's content.
    ///   - path: the file it came from, for messages.
    ///   - threads: intra-op threads (default 1; spinning stays off).
    /// - Throws: as ``init(contentsOf:expectedSHA256:threads:)``.
    public init(bytes: [UInt8], path: String, threads: Int = 1) throws(ProofkitError) {
        let session: InferenceSession
        do {
            session = try InferenceSession(bytes: bytes, options: InferenceSession.Options(intraOpThreads: threads))
        } catch {
            // A missing runtime is not the model file's fault: its message names the library paths.
            throw error.code == .runtimeUnavailable ? error : error.at(path: path)
        }
        try self.init(session: session, path: path)
    }

    /// Loads a photo model saved in ONNX Runtime's own format (`.ort`, optimised by the models
    /// build on this machine), mapped and checked against `expectedSHA256`, with no further graph
    /// optimisation (see `InferenceSession.init(ortFormatContentsOf:expectedSHA256:options:)`).
    /// - Parameters:
    ///   - path: the `.ort` file.
    ///   - expectedSHA256: the digest it must have.
    ///   - threads: intra-op threads (default 1; spinning stays off).
    /// - Throws: as ``init(contentsOf:expectedSHA256:threads:)``.
    public init(ortFormatContentsOf path: String, expectedSHA256: String, threads: Int = 1) throws(ProofkitError) {
        let session = try InferenceSession(
            ortFormatContentsOf: path, expectedSHA256: expectedSHA256,
            options: InferenceSession.Options(intraOpThreads: threads, graphOptimization: .disabled))
        try self.init(session: session, path: path)
    }

    private init(session: consuming InferenceSession, path: String) throws(ProofkitError) {
        guard session.inputs.count == 1, let input = session.inputs.first, input.elementType == .float32,
            input.shape.count == 4
        else {
            throw ProofkitError(
                .modelInvalid, "not a photo model: it needs one float32 [N, 3, H, W] input", path: path)
        }
        let names = session.outputs.map(\.name)
        guard names.contains("logits") || names.contains("embedding") else {
            throw ProofkitError(
                .modelInvalid, "not a photo model: it has no `logits` or `embedding` output (it has \(names))",
                path: path)
        }
        self.inputName = input.name
        self.hasLogits = names.contains("logits")
        self.hasEmbedding = names.contains("embedding")
        self.fixedBatch = input.shape.first?.size
        self.session = session
    }

    /// Runs the model on a batch of crops (one at a time when the model's batch is fixed at 1).
    /// - Throws: `.invalidArgument` when ORT refuses the input's shape, `.internal` on an ORT
    ///   failure, `.modelInvalid` when an output has an unexpected size.
    public mutating func run(_ input: ImageTensor) throws(ProofkitError) -> PhotoModelOutput {
        let batch = input.shape[0]
        let wantsEmbedding = hasEmbedding && (fetchesEmbedding || !hasLogits)
        let requested = (hasLogits ? ["logits"] : []) + (wantsEmbedding ? ["embedding"] : [])
        if let fixed = fixedBatch, fixed != batch {
            guard fixed == 1 else {
                throw ProofkitError(.modelInvalid, "the model takes batches of \(fixed), not \(batch)")
            }
            var logits: [Float] = []
            var embeddings: [Float] = []
            let plane = input.values.count / batch
            for index in 0..<batch {
                let one = ImageTensor(
                    values: Array(input.values[(index * plane)..<((index + 1) * plane)]),
                    shape: [1] + input.shape.dropFirst())
                let output = try run(one)
                logits += output.logits
                embeddings += output.embeddings
            }
            return PhotoModelOutput(batch: batch, logits: logits, embeddings: embeddings)
        }
        let tensor = try Tensor(shape: input.shape, scalars: input.values)
        let outputs = try session.run([inputName: tensor], outputs: requested)
        let logits = hasLogits ? try outputs.tensor("logits", as: Float.self).scalars : []
        let embeddings = wantsEmbedding ? try outputs.tensor("embedding", as: Float.self).scalars : []
        guard logits.count % batch == 0, embeddings.count % batch == 0 else {
            throw ProofkitError(.modelInvalid, "the model's outputs do not hold one row per image")
        }
        return PhotoModelOutput(batch: batch, logits: logits, embeddings: embeddings)
    }

    /// Releases the session now (otherwise when the model goes out of scope).
    public consuming func close() {}
}

/// The photo engines `proofkit mat` offers.
public enum PhotoEngine: String, Sendable, CaseIterable, CustomStringConvertible {
    /// EfficientNet-Lite0, static int8 (`efficientnet_lite0_int8.onnx`), five-crop rule: the default.
    case lite0
    /// EfficientNet-Lite0, fp32 (`efficientnet_lite0_fp32.onnx`), five-crop rule.
    case lite0FP32 = "lite0-fp32"
    /// MobileCLIP-S0's image encoder with the prompt embeddings (`mobileclip_s0_image.onnx` and
    /// `mobileclip_s0_prompts.json`, written by `Models/export_mobileclip.py`).
    case clip

    /// The model file's name in the models folder.
    public var modelFile: String {
        switch self {
        case .lite0: "efficientnet_lite0_int8.onnx"
        case .lite0FP32: "efficientnet_lite0_fp32.onnx"
        case .clip: "mobileclip_s0_image.onnx"
        }
    }

    /// The same model saved by `Models/build.sh` in ONNX Runtime's own format, optimised on this
    /// machine (the Lite0 engines only); see ``ModelStore/optimizedModel(for:modelPath:modelSHA256:manifest:)``.
    public var optimizedModelFile: String? {
        switch self {
        case .lite0: "efficientnet_lite0_int8.ort"
        case .lite0FP32: "efficientnet_lite0_fp32.ort"
        case .clip: nil
        }
    }

    /// The prompt embeddings file (CLIP only).
    public var promptsFile: String? { self == .clip ? "mobileclip_s0_prompts.json" : nil }

    /// The mat head file (the Lite0 engines only): the logistic head on the 1280-d embedding
    /// that `Models/fit_mat_head.py` fitted and the models build copies from `Models/mat_head.json`.
    public var headFile: String? { self == .clip ? nil : "mat_head.json" }

    /// The class names file (the ImageNet engines only).
    public var classNamesFile: String? { self == .clip ? nil : "imagenet_classes.txt" }

    /// A short human description, e.g. "EfficientNet-Lite0 int8".
    public var description: String {
        switch self {
        case .lite0: "EfficientNet-Lite0 int8"
        case .lite0FP32: "EfficientNet-Lite0 fp32"
        case .clip: "MobileCLIP-S0"
        }
    }
}
