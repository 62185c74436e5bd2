public import ImageIO
public import ImageProof
public import ProofkitCore
internal import ProofkitSystem

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Something that runs the photo model: an ONNX Runtime session in the app and the CLI.
///
/// `~Copyable` types (an owned session) may conform. `run` is `mutating` because a session
/// needs exclusive access while it runs.
public protocol PhotoModelRunner: ~Copyable {
    /// Runs the model on one batch.
    /// - Parameter input: `[n, 3, h, w]` float32 NCHW.
    /// - Returns: the logits and/or embeddings for the `n` crops.
    /// - Throws: the runtime's error (`.runtimeUnavailable`, `.modelInvalid`, `.internal`).
    mutating func run(_ input: ImageTensor) throws(ProofkitError) -> PhotoModelOutput
}

/// How a photo is judged: decoding, preprocessing, crops, the scorer and the policy.
public struct PhotoProofConfiguration: Sendable {
    /// The scorer.
    public var scorer: PhotoScorer
    /// Decoder limits; `minimumShorterSide` set means the fast DCT-scaled JPEG decode.
    public var decoder: ImageDecoder.Configuration
    /// Resize, crop and normalisation.
    public var preprocessing: ImagePreprocessing
    /// The crops fed to the model in one batch; the first is the one the enrolment, the top
    /// classes and the CLIP score use (the head scores every crop). Default `[.center]`.
    public var crops: [CropRegion]
    /// How the per-crop class scores combine (default maximum).
    public var aggregation: CropAggregation
    /// Thresholds and hints.
    public var policy: MatProofPolicy
    /// An optional logistic head on each crop's embedding, its probabilities combined over the
    /// crops by ``aggregation`` (the maximum by default); accepts at its own threshold (its
    /// file's `threshold`, else 0.5) when the class score does not (class score OR head).
    public var head: LogisticHead?
    /// An optional enrolled mat; accepts at its own threshold.
    public var enrolment: MatEnrolment?
    /// Run the crops one at a time, in order, and stop at the first whose class score reaches
    /// the threshold, or whose head probability reaches the head's (default `false`: one batch
    /// of all crops). The verdict is the same as the maximum over all crops (a crop that passes
    /// makes the maximum pass); the score and the head's probability are then the maxima over
    /// the crops that ran, and the result's `cropScores` lists only those.
    /// A mat usually passes on the centre crop, so it costs one crop's inference instead of
    /// five, and a batch of one needs about a fifth of the activation memory. Applies to the
    /// ImageNet scorer with ``CropAggregation/maximum``; otherwise the crops run as one batch.
    public var stopsAtFirstPassingCrop: Bool = false

    /// Creates a configuration; see ``lite0(threshold:fastDecode:crops:)`` and
    /// ``clip(prompts:threshold:fastDecode:)`` for the usual ones.
    public init(
        scorer: PhotoScorer, decoder: ImageDecoder.Configuration, preprocessing: ImagePreprocessing,
        crops: [CropRegion] = [.center], aggregation: CropAggregation = .maximum, policy: MatProofPolicy,
        head: LogisticHead? = nil, enrolment: MatEnrolment? = nil
    ) {
        self.scorer = scorer
        self.decoder = decoder
        self.preprocessing = preprocessing
        self.crops = crops.isEmpty ? [.center] : crops
        self.aggregation = aggregation
        self.policy = policy
        self.head = head
        self.enrolment = enrolment
    }

    /// The rules that turn the model's output into the verdict (the engine's part of judging).
    public var verdictRules: PhotoVerdictRules {
        PhotoVerdictRules(
            scorer: scorer, cropCount: crops.count, aggregation: aggregation, policy: policy, head: head,
            enrolment: enrolment, stopsAtFirstPassingCrop: stopsAtFirstPassingCrop)
    }

    /// EfficientNet-Lite0 on class 741.
    /// - Parameters:
    ///   - threshold: pass threshold (default 0.3).
    ///   - fastDecode: DCT-scaled JPEG decoding to a shorter side of at least 256 (default
    ///     true; same verdicts as the full decode on the shared photo set, several times faster).
    ///   - crops: the crops (default the centre crop; `CropRegion.fiveCrop()` for the five-crop
    ///     rule).
    /// - Throws: `.invalidArgument` for a threshold outside 0...1.
    public static func lite0(
        threshold: Double = MatProofPolicy.lite0Threshold, fastDecode: Bool = true,
        crops: [CropRegion] = [.center]
    ) throws(ProofkitError) -> PhotoProofConfiguration {
        let preprocessing = ImagePreprocessing.efficientNetLite0
        return PhotoProofConfiguration(
            scorer: .imageNetClass(ClassifierReading.prayerRugClass),
            decoder: .init(minimumShorterSide: fastDecode ? preprocessing.shorterSide : nil),
            preprocessing: preprocessing, crops: crops, policy: try MatProofPolicy(threshold: threshold))
    }

    /// MobileCLIP S0 with the prompt embeddings file.
    /// - Parameters:
    ///   - prompts: the loaded prompt embeddings (``PhotoProof/loadPromptEmbeddings(contentsOf:)``).
    ///   - threshold: pass threshold (default 0.45).
    ///   - fastDecode: DCT-scaled JPEG decoding (default true).
    /// - Throws: `.invalidArgument` for a threshold outside 0...1.
    public static func clip(
        prompts: ClipPromptScorer, threshold: Double = MatProofPolicy.clipThreshold, fastDecode: Bool = true
    ) throws(ProofkitError) -> PhotoProofConfiguration {
        // MobileCLIP S0 (ml-mobileclip's transform, as Models/export_mobileclip.py documents):
        // shorter side to 256 bilinear, centre crop 256, RGB / 255 with no mean/std.
        let preprocessing = try ImagePreprocessing(
            shorterSide: 256, cropSize: 256, filter: .bilinear, mean: [0, 0, 0], standardDeviation: [255, 255, 255])
        return PhotoProofConfiguration(
            scorer: .clip(prompts), decoder: .init(minimumShorterSide: fastDecode ? 256 : nil),
            preprocessing: preprocessing, policy: try MatProofPolicy(threshold: threshold))
    }
}

/// Wall time of each step of one photo, for `--verbose` and benchmarks.
public struct PhotoProofTimings: Sendable, Equatable {
    /// Reading and decoding the file.
    public var decode: Duration
    /// Resizing, brightness and building the tensor.
    public var preprocess: Duration
    /// Running the model.
    public var inference: Duration
}

/// The outcome for one photo: the engine's verdict (whose fields read as the result's own,
/// `result.judgement`, `result.cropScores`, ...), with the photo's path, what the decoder saw and
/// the time each step took.
@dynamicMemberLookup
public struct PhotoProofResult: Sendable {
    /// The photo's path as given.
    public var path: String
    /// The verdict, score, brightness and hint, and the figures behind them (the ImageProof engine's `PhotoVerdict`).
    public var verdict: PhotoVerdict
    /// What the decoder saw (size, orientation, DCT scale, colour model, warnings).
    public var decoded: DecodedImageSummary
    /// Time per step.
    public var timings: PhotoProofTimings

    /// A field of ``verdict``, read (and set) as the result's own.
    public subscript<Value>(dynamicMember field: WritableKeyPath<PhotoVerdict, Value>) -> Value {
        get { verdict[keyPath: field] }
        set { verdict[keyPath: field] = newValue }
    }
}

/// The decoder's facts about a photo, without its pixels.
public struct DecodedImageSummary: Sendable, Equatable {
    /// JPEG or PNG, by content.
    public var format: ImageFormat
    /// Upright decoded width in pixels (after DCT scaling and orientation).
    public var width: Int
    /// Upright decoded height in pixels.
    public var height: Int
    /// Width stored in the file, in pixels.
    public var storedWidth: Int
    /// Height stored in the file, in pixels.
    public var storedHeight: Int
    /// The EXIF orientation that was applied.
    public var orientation: ExifOrientation
    /// DCT scale as "num/denom", e.g. "1/4" ("1/1" for a full-size decode and for PNG).
    public var scale: String
    /// The file's colour model (see `DecodedImage.colorModel`).
    public var colorModel: String
    /// Non-fatal decoder warnings.
    public var warnings: [String]

    /// The summary of an image that was never a file: a YUYV camera frame, converted in Swift.
    /// Its `format` is `.png` (lossless, as the frame is), its colour model "YUYV 4:2:2".
    init(uncompressedFrame image: RGBImage) {
        format = .png
        width = image.width
        height = image.height
        storedWidth = image.width
        storedHeight = image.height
        orientation = .up
        scale = "1/1"
        colorModel = "YUYV 4:2:2"
        warnings = []
    }

    init(_ decoded: DecodedImage) {
        format = decoded.format
        width = decoded.image.width
        height = decoded.image.height
        storedWidth = decoded.storedWidth
        storedHeight = decoded.storedHeight
        orientation = decoded.orientation
        scale = "\(decoded.scaleNumerator)/\(decoded.scaleDenominator)"
        colorModel = decoded.colorModel
        warnings = decoded.warnings
    }
}

/// A photo ready for the model: decoded, resized and measured, with the crops to cut from it.
///
/// The crops' tensors are cut when asked for (``tensor(crops:)``), not kept: a photo judged one
/// crop at a time up to the first that passes holds one 224x224 crop (0.6 MB) while the model
/// runs, not the whole batch of five (3 MB).
public struct PreparedPhotoInput: Sendable {
    /// The decoder's facts.
    public var decoded: DecodedImageSummary
    /// Brightness, 0...1 (mean Rec.601 luma of the resized photo).
    public var brightness: Double
    /// The resized photo the crops are cut from.
    public var photo: PreparedPhoto
    /// The crops, in the configuration's order (at least one).
    public var crops: [CropRegion]
    /// Time to read and decode the file.
    public var decodeTime: Duration
    /// Time to resize and measure the photo (cutting the crops is counted when they are cut).
    public var preprocessTime: Duration

    /// The batch tensor of all ``crops``, `[crops.count, 3, 224, 224]` (cut on each call).
    public var tensor: ImageTensor { photo.tensor(crops) }

    /// The tensor of some of the crops, `[range.count, 3, 224, 224]`, cut now.
    /// - Parameter range: crop indices within `crops.indices`, not empty (a programmer error).
    public func tensor(crops range: Range<Int>) -> ImageTensor {
        photo.tensor(Array(crops[range]))
    }
}

/// The photo proof pipeline: decode (ImageIO), preprocess and judge (ImageProof), with the model
/// run by whatever ``PhotoModelRunner`` the caller holds (an ONNX Runtime session).
///
/// The photo is read, judged and forgotten: nothing is written and nothing leaves the device.
public struct PhotoProof: Sendable {
    /// The configuration in use.
    public let configuration: PhotoProofConfiguration
    private let decoder: ImageDecoder

    /// Creates the pipeline.
    /// - Throws: `.invalidArgument` when the decoder limits are invalid.
    public init(configuration: PhotoProofConfiguration) throws(ProofkitError) {
        self.configuration = configuration
        self.decoder = try ImageDecoder(configuration: configuration.decoder)
    }

    /// Reads, decodes and preprocesses one photo into the model's batch tensor.
    /// - Parameter path: the photo (JPEG or PNG, by content).
    /// - Throws: the decoder's errors (`.notFound`, `.io`, `.decodeFailed`,
    ///   `.unsupportedFormat`), naming `path`.
    public func prepare(contentsOf path: String) throws(ProofkitError) -> PreparedPhotoInput {
        try prepare { () throws(ProofkitError) in try decoder.decode(contentsOf: path) }
    }

    /// Decodes and preprocesses a photo held in memory (an embedded or received JPEG or PNG).
    /// - Parameter bytes: the file's content.
    /// - Throws: the decoder's errors (`.decodeFailed`, `.unsupportedFormat`), without a path.
    public func prepare(bytes: [UInt8]) throws(ProofkitError) -> PreparedPhotoInput {
        try prepare { () throws(ProofkitError) in try decoder.decode(bytes) }
    }

    /// Judges a photo held in memory, as ``judge(contentsOf:model:)`` does a file.
    /// - Parameters:
    ///   - bytes: the photo's content (JPEG or PNG).
    ///   - name: what to call it in the result's `path` and in errors.
    ///   - model: the model runner.
    /// - Throws: as ``judge(contentsOf:model:)``, naming `name`.
    public func judge<Model: PhotoModelRunner & ~Copyable>(
        bytes: [UInt8], name: String, model: inout Model
    ) throws(ProofkitError) -> PhotoProofResult {
        do {
            return try judge(input: try prepare(bytes: bytes), path: name, model: &model)
        } catch {
            throw error.at(path: name)
        }
    }

    /// Preprocesses an image already in memory as RGB (a YUYV camera frame), with no decoding.
    public func prepare(uncompressedFrame image: RGBImage) -> PreparedPhotoInput {
        let clock = ContinuousClock()
        let start = clock.now
        let photo = PreparedPhoto(image, preprocessing: configuration.preprocessing)
        return PreparedPhotoInput(
            decoded: DecodedImageSummary(uncompressedFrame: image), brightness: photo.brightness, photo: photo,
            crops: configuration.crops, decodeTime: .zero, preprocessTime: clock.now - start)
    }

    private func prepare(
        _ decode: () throws(ProofkitError) -> DecodedImage
    ) throws(ProofkitError) -> PreparedPhotoInput {
        let clock = ContinuousClock()
        let start = clock.now
        let decoded = try decode()
        let decodedAt = clock.now
        let photo = PreparedPhoto(decoded.image, preprocessing: configuration.preprocessing)
        let preparedAt = clock.now
        return PreparedPhotoInput(
            decoded: DecodedImageSummary(decoded), brightness: photo.brightness, photo: photo,
            crops: configuration.crops, decodeTime: decodedAt - start, preprocessTime: preparedAt - decodedAt)
    }

    /// Judges one photo: prepare, run the model once on the batch of crops, score, decide.
    /// - Parameters:
    ///   - path: the photo.
    ///   - model: the model runner (used exclusively for the call).
    /// - Returns: the verdict, score, brightness, hint and details.
    /// - Throws: the decoder's errors naming `path`, the runner's errors, and `.modelInvalid`
    ///   when the model's outputs do not fit the scorer.
    public func judge<Model: PhotoModelRunner & ~Copyable>(
        contentsOf path: String, model: inout Model
    ) throws(ProofkitError) -> PhotoProofResult {
        try judge(input: try prepare(contentsOf: path), path: path, model: &model)
    }

    /// Runs the model on a prepared photo and judges it.
    /// - Throws: the runner's errors, and `.modelInvalid` when the outputs do not fit the scorer.
    public func judge<Model: PhotoModelRunner & ~Copyable>(
        input: PreparedPhotoInput, path: String, model: inout Model
    ) throws(ProofkitError) -> PhotoProofResult {
        var cutting = Duration.zero
        var inference = Duration.zero
        let output = try run(input, model: &model, cutting: &cutting, inference: &inference)
        return try evaluate(
            output, for: input, path: path,
            timings: PhotoProofTimings(
                decode: input.decodeTime, preprocess: input.preprocessTime + cutting, inference: inference))
    }

    /// Runs the model on the crops: one batch, or one crop at a time up to the first that passes
    /// (``PhotoProofConfiguration/stopsAtFirstPassingCrop``).
    /// Adds the time spent cutting crops to `cutting` and running the model to `inference`.
    private func run<Model: PhotoModelRunner & ~Copyable>(
        _ input: PreparedPhotoInput, model: inout Model, cutting: inout Duration, inference: inout Duration
    ) throws(ProofkitError) -> PhotoModelOutput {
        let clock = ContinuousClock()
        func timed<T, E: Error>(_ total: inout Duration, _ work: () throws(E) -> T) throws(E) -> T {
            let start = clock.now
            defer { total += clock.now - start }
            return try work()
        }
        let rules = configuration.verdictRules
        guard rules.runsCropsOneAtATime else {
            let batch = timed(&cutting) { input.tensor }
            return try timed(&inference) { () throws(ProofkitError) in try model.run(batch) }
        }
        var logits: [Float] = []
        var embeddings: [Float] = []
        var ran = 0
        for index in 0..<input.crops.count {
            let one = timed(&cutting) { input.tensor(crops: index..<(index + 1)) }
            let output = try timed(&inference) { () throws(ProofkitError) in try model.run(one) }
            logits += output.logits
            embeddings += output.embeddings
            ran += 1
            if rules.endsAfter(crop: output) { break }
        }
        return PhotoModelOutput(batch: ran, logits: logits, embeddings: embeddings)
    }

    /// Scores and judges a model's output for a prepared photo (the pure part of judging).
    /// - Throws: `.modelInvalid` when the output lacks what the scorer, head or enrolment
    ///   needs, or has the wrong batch or width.
    public func evaluate(
        _ output: PhotoModelOutput, for input: PreparedPhotoInput, path: String,
        timings: PhotoProofTimings? = nil
    ) throws(ProofkitError) -> PhotoProofResult {
        let verdict = try configuration.verdictRules.judge(output, brightness: input.brightness)
        return PhotoProofResult(
            path: path, verdict: verdict, decoded: input.decoded,
            timings: timings
                ?? PhotoProofTimings(decode: input.decodeTime, preprocess: input.preprocessTime, inference: .zero))
    }
}

// MARK: Model side files

extension PhotoProof {
    /// The ImageNet class names, one per line (`imagenet_classes.txt` from the models build).
    /// - Throws: `.notFound`, `.io`, or `.modelInvalid` when there are not 1000 names or class
    ///   741 is not "prayer rug, prayer mat".
    public static func loadClassNames(contentsOf path: String) throws(ProofkitError) -> [String] {
        try loadClassNames(bytes: readData(path), path: path)
    }

    /// ``loadClassNames(contentsOf:)`` over bytes already read (and checked) from `path`, which
    /// names the file in errors.
    static func loadClassNames(bytes: [UInt8], path: String) throws(ProofkitError) -> [String] {
        let text = String(decoding: bytes, as: UTF8.self)
        let names = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.trimmingSpacesAndNewlines()
        }.filter { !$0.isEmpty }
        guard names.count == 1000, names[ClassifierReading.prayerRugClass] == "prayer rug, prayer mat" else {
            throw ProofkitError(
                .modelInvalid, "expected 1000 ImageNet class names with class 741 \"prayer rug, prayer mat\"",
                path: path)
        }
        return names
    }

    /// The CLIP prompt embeddings file (`"format": "proofkit-prompt-embeddings"`, version 1:
    /// `dim`, `logit_scale`, `threshold`, and `mat`/`other` arrays of `{"prompt", "embedding"}`).
    /// - Returns: the scorer, the file's threshold, and the prompt texts (mat prompts first).
    /// - Throws: `.notFound`, `.io`, or `.modelInvalid` for anything malformed.
    public static func loadPromptEmbeddings(contentsOf path: String) throws(ProofkitError)
        -> (scorer: ClipPromptScorer, threshold: Double?, prompts: [String])
    {
        let loaded = try loadPromptEmbeddings(bytes: readData(path), path: path)
        return (loaded.scorer, loaded.threshold, loaded.prompts)
    }

    /// ``loadPromptEmbeddings(contentsOf:)`` over bytes already read (and checked) from `path`,
    /// which names the file in errors; also gives the file's `image_encoder_sha256`, if any.
    static func loadPromptEmbeddings(bytes data: [UInt8], path: String) throws(ProofkitError)
        -> (scorer: ClipPromptScorer, threshold: Double?, prompts: [String], encoderSHA256: String?)
    {
        guard let json = JSONNode(bytes: data), json["format"]?.string == "proofkit-prompt-embeddings",
            let mat = json["mat"]?.array, mat.allSatisfy({ $0.members != nil }),
            let other = json["other"]?.array, other.allSatisfy({ $0.members != nil })
        else {
            throw ProofkitError(.modelInvalid, "not a proofkit prompt embeddings file", path: path)
        }
        func rows(_ items: [JSONNode]) -> ([String], [[Float]]) {
            (
                items.map { $0["prompt"]?.string ?? "" },
                items.map { ($0["embedding"]?.array ?? []).compactMap { $0.number.map(Float.init) } }
            )
        }
        let (matPrompts, matEmbeddings) = rows(mat)
        let (otherPrompts, otherEmbeddings) = rows(other)
        let scale = json["logit_scale"]?.number ?? 100
        do throws(ProofkitError) {
            let scorer = try ClipPromptScorer(
                matPrompts: matEmbeddings, otherPrompts: otherEmbeddings, logitScale: scale)
            if let dim = json["dim"]?.number.flatMap({ Int(exactly: $0.rounded(.towardZero)) }), dim != scorer.dimension
            {
                throw ProofkitError(
                    .modelInvalid, "the file says dim \(dim) but its embeddings have \(scorer.dimension)")
            }
            return (
                scorer, json["threshold"]?.number, matPrompts + otherPrompts,
                json["image_encoder_sha256"]?.string?.lowercased()
            )
        } catch {
            throw error.at(path: path)
        }
    }

    /// A logistic head file (``LogisticHead``'s JSON schema).
    /// - Throws: `.notFound`, `.io`, or `.modelInvalid`.
    public static func loadHead(contentsOf path: String) throws(ProofkitError) -> LogisticHead {
        try loadHead(bytes: readData(path), path: path)
    }

    /// ``loadHead(contentsOf:)`` over bytes already read (and checked) from `path`, which names
    /// the file in errors.
    static func loadHead(bytes: [UInt8], path: String) throws(ProofkitError) -> LogisticHead {
        // Read with the project's JSON reader rather than JSONDecoder: the same schema, about a
        // millisecond less on every `proofkit mat` (1,281 numbers).
        func floats(_ node: JSONNode?) -> [Float]? {
            guard let array = node?.array else { return nil }
            var values: [Float] = []
            values.reserveCapacity(array.count)
            for item in array {
                guard let number = item.number else { return nil }
                values.append(Float(number))
            }
            return values
        }
        func invalid(_ reason: String) -> ProofkitError {
            ProofkitError(.modelInvalid, "not a logistic head file: \(reason)", path: path)
        }
        guard let json = JSONNode(bytes: bytes), json.members != nil else { throw invalid("not a JSON object") }
        guard let weights = floats(json["weights"]) else { throw invalid("\"weights\" must be an array of numbers") }
        guard let bias = json["bias"]?.number else { throw invalid("\"bias\" must be a number") }
        let mean = floats(json["mean"])
        let scale = floats(json["scale"])
        if json["mean"] != nil && mean == nil { throw invalid("\"mean\" must be an array of numbers") }
        if json["scale"] != nil && scale == nil { throw invalid("\"scale\" must be an array of numbers") }
        let threshold = json["threshold"]?.number
        if json["threshold"] != nil && threshold == nil { throw invalid("\"threshold\" must be a number") }
        var normalize: LogisticHead.Normalization?
        if let node = json["normalize"] {
            guard let name = node.string, let value = LogisticHead.Normalization(rawValue: name) else {
                throw invalid("\"normalize\" must be \"l2\"")
            }
            normalize = value
        }
        do {
            return try LogisticHead(
                weights: weights, bias: Float(bias), mean: mean, scale: scale, threshold: threshold,
                normalize: normalize)
        } catch {
            throw error.at(path: path)
        }
    }

    /// The bytes of a model's side file (class names, prompt embeddings, the head): at most 64 MiB.
    static func readData(_ path: String) throws(ProofkitError) -> [UInt8] {
        try BoundedFile.read(path, limit: 64 << 20, what: "model file")
    }
}

extension DecodedImageSummary {
    /// "jpeg" or "png" (for callers that do not import ImageIO).
    public var formatName: String { format.rawValue }
    /// The EXIF orientation number that was applied, 1...8.
    public var orientationCode: Int { orientation.rawValue }
}
