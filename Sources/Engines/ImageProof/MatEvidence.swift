public import ProofkitCore

/// Everything a photo showed towards "this is a prayer mat", for ``MatProofPolicy/judge(_:brightness:)``.
///
/// The model's score is always there; a fitted head and an enrolled mat are optional extra
/// ways to accept (any one that reaches its threshold accepts the photo).
public struct MatEvidence: Sendable, Equatable {
    /// The model's mat score, 0...1: class-741 probability (max over crops) or the CLIP share.
    public var score: Double
    /// A logistic head's probability on the embedding, with the threshold it accepts at.
    public var head: (probability: Double, threshold: Double)?
    /// The best cosine similarity to the person's enrolled mat photos, with its threshold.
    public var enrolment: (similarity: Double, threshold: Double)?

    /// Creates evidence.
    public init(
        score: Double, head: (probability: Double, threshold: Double)? = nil,
        enrolment: (similarity: Double, threshold: Double)? = nil
    ) {
        self.score = score
        self.head = head
        self.enrolment = enrolment
    }

    public static func == (a: MatEvidence, b: MatEvidence) -> Bool {
        a.score == b.score && a.head?.probability == b.head?.probability
            && a.head?.threshold == b.head?.threshold && a.enrolment?.similarity == b.enrolment?.similarity
            && a.enrolment?.threshold == b.enrolment?.threshold
    }
}

/// Which evidence accepted a photo.
public enum MatAcceptance: String, Sendable, Equatable {
    /// The model's score reached the policy's threshold.
    case score
    /// The logistic head reached its threshold.
    case head
    /// The photo is close enough to the person's enrolled mat.
    case enrolment
}

extension MatProofPolicy {
    /// Judges one photo on all its evidence: accepted when the score reaches ``threshold``, or
    /// the head or the enrolment reaches its own threshold (checked in that order); otherwise
    /// rejected with the dark or not-a-mat hint as in ``judge(score:brightness:)``.
    /// - Returns: the judgement (its `score` is always the model's score; its verdict's score,
    ///   ``MatJudgement/decidingScore`` and ``MatJudgement/decidedBy`` are those of the evidence
    ///   that decided) and, when accepted, which evidence accepted it.
    public func judge(_ evidence: MatEvidence, brightness: Double) -> (
        judgement: MatJudgement, acceptedBy: MatAcceptance?
    ) {
        let base = judge(score: evidence.score, brightness: brightness)
        if base.verdict.isAccepted { return (base, .score) }
        if let head = evidence.head, head.probability >= head.threshold {
            let judgement = MatJudgement(
                verdict: .accepted(score: head.probability), score: evidence.score, brightness: brightness, hint: nil,
                decidedBy: .head, decidingScore: head.probability)
            return (judgement, .head)
        }
        if let enrolment = evidence.enrolment, enrolment.similarity >= enrolment.threshold {
            let judgement = MatJudgement(
                verdict: .accepted(score: enrolment.similarity), score: evidence.score, brightness: brightness,
                hint: nil, decidedBy: .enrolment, decidingScore: enrolment.similarity)
            return (judgement, .enrolment)
        }
        return (base, nil)
    }
}

/// A person's own prayer mat, enrolled from one or a few photos of it: the model's embeddings
/// of those photos. A new photo is accepted as that mat when its embedding's cosine similarity
/// to any enrolled one reaches ``threshold``.
///
/// `Codable` (`{"embeddings": [[...]], "threshold": 0.75}`) so an app or the CLI can keep it in
/// a file. It only ever holds embeddings, never the photos.
public struct MatEnrolment: Sendable, Equatable, Codable {
    /// The default cosine threshold, 0.75 (the models study's `ENROL_THRESHOLD`).
    public static let defaultThreshold = 0.75

    /// One embedding per enrolled photo, all the same length.
    public var embeddings: [[Float]]
    /// The cosine similarity needed, -1...1.
    public var threshold: Double

    /// Creates an enrolment.
    /// - Parameters:
    ///   - embeddings: at least one non-zero embedding; all the same length.
    ///   - threshold: cosine needed to accept (default 0.75).
    /// - Throws: `.invalidArgument` when there is no embedding, lengths differ, or one is zero.
    public init(embeddings: [[Float]], threshold: Double = Self.defaultThreshold) throws(ProofkitError) {
        self.embeddings = embeddings
        self.threshold = threshold
        try validate()
    }

    /// Checks an enrolment read from a file.
    /// - Throws: `.invalidArgument` with what is wrong.
    public func validate() throws(ProofkitError) {
        guard let first = embeddings.first, !first.isEmpty else {
            throw ProofkitError(.invalidArgument, "an enrolment needs at least one embedding")
        }
        guard embeddings.allSatisfy({ $0.count == first.count }) else {
            throw ProofkitError(.invalidArgument, "enrolled embeddings differ in length")
        }
        guard embeddings.allSatisfy({ ClipPromptScorer.normalised($0) != nil }) else {
            throw ProofkitError(.invalidArgument, "an enrolled embedding is zero or not finite")
        }
        guard (-1...1).contains(threshold) else {
            throw ProofkitError(.invalidArgument, "the enrolment threshold must be between -1 and 1")
        }
    }

    /// The best cosine similarity between `embedding` and the enrolled ones (-1...1; -1 for a
    /// zero embedding).
    public func similarity(_ embedding: [Float]) -> Double {
        precondition(embedding.count == embeddings.first?.count, "embedding has the wrong length")
        guard let unit = ClipPromptScorer.normalised(embedding) else { return -1 }
        var best = -1.0
        for enrolled in embeddings {
            guard let other = ClipPromptScorer.normalised(enrolled) else { continue }
            var dot = 0.0
            for index in 0..<unit.count { dot += unit[index] * other[index] }
            best = max(best, dot)
        }
        return best
    }
}
