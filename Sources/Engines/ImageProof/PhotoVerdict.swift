public import ProofkitCore

// The photo proof's verdict from the model's output: which crops to run, the mat score over the
// crops, the head and the enrolment, and the policy's judgement with its retake hint. Pure: the
// facade's PhotoProof decodes the photo and runs the model, then asks these rules.

/// What a photo model returned for a batch of `batch` crops.
public struct PhotoModelOutput: Sendable, Equatable {
    /// Crops in the batch.
    public var batch: Int
    /// `batch x classCount` raw logits, row per crop (ImageNet classifiers), or empty.
    public var logits: [Float]
    /// `batch x embeddingDimension` embeddings, row per crop (CLIP image encoders, or the
    /// classifier's pooled features for a head or enrolment), or empty.
    public var embeddings: [Float]

    /// Creates an output. Traps when a non-empty array is not a whole number of rows.
    public init(batch: Int, logits: [Float] = [], embeddings: [Float] = []) {
        precondition(
            batch > 0 && logits.count % batch == 0 && embeddings.count % batch == 0,
            "model outputs must hold one row per crop")
        self.batch = batch
        self.logits = logits
        self.embeddings = embeddings
    }

    /// Logits of crop `index`.
    public func logits(ofCrop index: Int) -> [Float] {
        let width = logits.count / batch
        return Array(logits[(index * width)..<((index + 1) * width)])
    }

    /// Embedding of crop `index`.
    public func embedding(ofCrop index: Int) -> [Float] {
        let width = embeddings.count / batch
        return Array(embeddings[(index * width)..<((index + 1) * width)])
    }
}

/// Where the mat score comes from.
public enum PhotoScorer: Sendable {
    /// The softmax probability of one ImageNet class (741, "prayer rug, prayer mat"),
    /// combined over the crops.
    case imageNetClass(Int)
    /// The MobileCLIP mat prompts' share of the centre crop's embedding.
    case clip(ClipPromptScorer)
}

/// The rules that turn a photo model's output into the photo proof's verdict.
public struct PhotoVerdictRules: Sendable {
    /// The scorer.
    public var scorer: PhotoScorer
    /// The crops the photo is cut into (at least 1); the first is the one the enrolment, the
    /// top classes and the CLIP score use.
    public var cropCount: Int
    /// How the per-crop class scores and head probabilities combine.
    public var aggregation: CropAggregation
    /// Thresholds and hints.
    public var policy: MatProofPolicy
    /// An optional logistic head on each crop's embedding (class score OR head).
    public var head: LogisticHead?
    /// An optional enrolled mat; accepts at its own threshold.
    public var enrolment: MatEnrolment?
    /// Whether the crops run one at a time up to the first that passes (see
    /// ``runsCropsOneAtATime``).
    public var stopsAtFirstPassingCrop: Bool

    /// Makes the rules.
    /// - Parameters:
    ///   - scorer: where the mat score comes from.
    ///   - cropCount: the crops per photo; less than 1 counts as 1.
    ///   - aggregation: how the crops' scores combine (default maximum).
    ///   - policy: thresholds and hints.
    ///   - head: an optional logistic head (default none).
    ///   - enrolment: an optional enrolled mat (default none).
    ///   - stopsAtFirstPassingCrop: run the crops one at a time up to the first that passes
    ///     (default `false`).
    public init(
        scorer: PhotoScorer, cropCount: Int, aggregation: CropAggregation = .maximum, policy: MatProofPolicy,
        head: LogisticHead? = nil, enrolment: MatEnrolment? = nil, stopsAtFirstPassingCrop: Bool = false
    ) {
        self.scorer = scorer
        self.cropCount = max(1, cropCount)
        self.aggregation = aggregation
        self.policy = policy
        self.head = head
        self.enrolment = enrolment
        self.stopsAtFirstPassingCrop = stopsAtFirstPassingCrop
    }

    /// Whether the crops run one at a time, in order, up to the first that passes: asked for,
    /// with the ImageNet scorer, the maximum over the crops and more than one crop. The verdict
    /// is then the same as over all crops (a crop that passes makes the maximum pass).
    public var runsCropsOneAtATime: Bool {
        guard stopsAtFirstPassingCrop, aggregation == .maximum, case .imageNetClass = scorer else { return false }
        return cropCount > 1
    }

    /// Whether running the crops one at a time stops after this one: its class score reaches the
    /// policy's threshold, its head probability reaches the head's, or it lacks the class (the
    /// verdict then reports the misfit).
    /// - Parameter output: the model's output for one crop.
    public func endsAfter(crop output: PhotoModelOutput) -> Bool {
        guard case .imageNetClass(let classIndex) = scorer, output.logits.count > classIndex else { return true }
        if ClassifierReading(logits: output.logits).probabilities[classIndex] >= policy.threshold { return true }
        if let head, output.embeddings.count == head.dimension,
            head.probability(output.embeddings) >= head.acceptingThreshold
        {
            return true
        }
        return false
    }

    /// Scores and judges a model's output for one photo.
    /// - Parameters:
    ///   - output: the model's output for the photo's crops (with ``runsCropsOneAtATime``, for
    ///     the first crops only).
    ///   - brightness: the photo's brightness, 0...1 (mean Rec.601 luma).
    /// - Throws: `.modelInvalid` when the output lacks what the scorer, head or enrolment
    ///   needs, or has the wrong batch or width.
    public func judge(_ output: PhotoModelOutput, brightness: Double) throws(ProofkitError) -> PhotoVerdict {
        // With stopsAtFirstPassingCrop, the output may cover only the first crops.
        let allowsFewer = stopsAtFirstPassingCrop && aggregation == .maximum
        guard output.batch == cropCount || (allowsFewer && (1...cropCount).contains(output.batch)) else {
            throw ProofkitError(.modelInvalid, "the model returned \(output.batch) results for \(cropCount) crops")
        }
        let crops = output.batch
        var cropScores: [Double] = []
        var top: [RankedClass] = []
        let score: Double
        switch scorer {
        case .imageNetClass(let classIndex):
            guard output.logits.count / crops > classIndex else {
                throw ProofkitError(
                    .modelInvalid,
                    "the model gives \(output.logits.count / crops) class scores; class \(classIndex) is needed")
            }
            for crop in 0..<crops {
                let reading = ClassifierReading(logits: output.logits(ofCrop: crop))
                cropScores.append(reading.probabilities[classIndex])
                if crop == 0 { top = reading.top(5) }
            }
            score = aggregation.combine(cropScores)
        case .clip(let scorer):
            guard output.embeddings.count / crops == scorer.dimension else {
                throw ProofkitError(
                    .modelInvalid,
                    "the image encoder gives \(output.embeddings.count / crops) values; the prompts have \(scorer.dimension)"
                )
            }
            score = scorer.score(imageEmbedding: output.embedding(ofCrop: 0)).matShare
            cropScores = [score]
        }
        let embedding = output.embeddings.isEmpty ? [] : output.embedding(ofCrop: 0)
        var evidence = MatEvidence(score: score)
        var headProbability: Double?
        if let head {
            guard embedding.count == head.dimension else {
                throw ProofkitError(
                    .modelInvalid,
                    "the head needs a \(head.dimension)-value embedding; the model gives \(embedding.count)")
            }
            let probability = aggregation.combine((0..<crops).map { head.probability(output.embedding(ofCrop: $0)) })
            headProbability = probability
            evidence.head = (probability, head.acceptingThreshold)
        }
        var similarity: Double?
        if let enrolment {
            guard embedding.count == enrolment.embeddings[0].count else {
                throw ProofkitError(
                    .modelInvalid,
                    "the enrolled mat has \(enrolment.embeddings[0].count)-value embeddings; the model gives \(embedding.count)"
                )
            }
            let value = enrolment.similarity(embedding)
            similarity = value
            evidence.enrolment = (value, enrolment.threshold)
        }
        var (judgement, acceptedBy) = policy.judge(evidence, brightness: brightness)
        // How to retake a rejected photo, from the classes seen (never changes the verdict).
        if case .imageNetClass(let classIndex) = scorer, classIndex == ClassifierReading.prayerRugClass {
            judgement = judgement.withRetakeHint(topClasses: top, score: score, threshold: policy.threshold)
        }
        return PhotoVerdict(
            judgement: judgement, acceptedBy: acceptedBy, cropScores: cropScores, topClasses: top,
            headProbability: headProbability, enrolmentSimilarity: similarity, embedding: embedding)
    }
}

/// The photo proof's verdict on a model's output, and the figures behind it.
public struct PhotoVerdict: Sendable {
    /// Verdict, score (0...1), brightness (0...1) and hint.
    public var judgement: MatJudgement
    /// Which evidence accepted the photo (`nil` when rejected).
    public var acceptedBy: MatAcceptance?
    /// The class score of each crop that ran (ImageNet scorer), or the CLIP share (one value).
    public var cropScores: [Double]
    /// The first crop's most probable classes (ImageNet scorer; empty for CLIP).
    public var topClasses: [RankedClass]
    /// The head's probability (combined over the crops that ran), when a head is configured.
    public var headProbability: Double?
    /// The best cosine to the enrolled mat, when one is configured.
    public var enrolmentSimilarity: Double?
    /// The first crop's embedding, when the model gives one (to enrol this photo's mat).
    public var embedding: [Float]
}
