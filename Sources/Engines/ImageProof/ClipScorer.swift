public import ProofkitCore

/// The MobileCLIP mat score: how much of a photo's prompt probability goes to the mat prompts.
///
/// The image embedding and every prompt embedding are L2-normalised; the cosine similarities
/// are multiplied by the logit scale (100, CLIP's trained temperature), shifted by the top
/// value and soft-maxed over all prompts; the score is the summed probability of the mat
/// prompts ("a photo of a prayer rug", ...) against the others ("a photo of a bed", ...).
public struct ClipPromptScorer: Sendable {
    /// The result for one photo.
    public struct Score: Sendable, Equatable {
        /// The mat prompts' share of the probability, 0...1.
        public var matShare: Double
        /// The probability of each prompt: mat prompts first, then the others, in the order
        /// given to the scorer.
        public var promptProbabilities: [Double]
        /// The cosine similarity of each prompt, same order.
        public var similarities: [Double]
    }

    /// The embedding length.
    public let dimension: Int
    /// The CLIP logit scale.
    public let logitScale: Double
    /// Number of mat prompts (the first rows of the prompt table).
    public let matPromptCount: Int
    private let prompts: [[Double]]

    /// Creates a scorer from the prompt embeddings.
    /// - Parameters:
    ///   - matPrompts: the embeddings of the mat prompts, at least one, all the same length.
    ///   - otherPrompts: the embeddings of the other prompts, at least one, same length.
    ///   - logitScale: the softmax temperature factor (default 100).
    /// - Throws: `.modelInvalid` when a set is empty, lengths differ, or an embedding is zero
    ///   or not finite.
    public init(matPrompts: [[Float]], otherPrompts: [[Float]], logitScale: Double = 100) throws(ProofkitError) {
        guard !matPrompts.isEmpty, !otherPrompts.isEmpty else {
            throw ProofkitError(
                .modelInvalid, "the CLIP prompt file needs at least one mat prompt and one other prompt")
        }
        let dimension = matPrompts[0].count
        guard dimension > 0 else { throw ProofkitError(.modelInvalid, "CLIP prompt embeddings are empty") }
        var normalised: [[Double]] = []
        for embedding in matPrompts + otherPrompts {
            guard embedding.count == dimension else {
                throw ProofkitError(
                    .modelInvalid,
                    "CLIP prompt embeddings differ in length (\(embedding.count) and \(dimension))")
            }
            guard let unit = Self.normalised(embedding) else {
                throw ProofkitError(.modelInvalid, "a CLIP prompt embedding is zero or not finite")
            }
            normalised.append(unit)
        }
        self.dimension = dimension
        self.logitScale = logitScale
        self.matPromptCount = matPrompts.count
        self.prompts = normalised
    }

    /// Scores one image embedding.
    /// - Parameter imageEmbedding: the image encoder's output, ``dimension`` values.
    /// - Returns: the mat share and per-prompt figures; a zero or non-finite embedding scores 0.
    public func score(imageEmbedding: [Float]) -> Score {
        precondition(imageEmbedding.count == dimension, "image embedding has the wrong length")
        guard let image = Self.normalised(imageEmbedding) else {
            let flat = [Double](repeating: 1 / Double(prompts.count), count: prompts.count)
            return Score(
                matShare: 0, promptProbabilities: flat, similarities: [Double](repeating: 0, count: prompts.count))
        }
        let similarities = prompts.map { prompt in
            var dot = 0.0
            for index in 0..<dimension { dot += prompt[index] * image[index] }
            return dot
        }
        let probabilities = Softmax.probabilities(similarities, scale: logitScale)
        let share = probabilities[0..<matPromptCount].reduce(0, +)
        return Score(matShare: share, promptProbabilities: probabilities, similarities: similarities)
    }

    /// The unit vector along `vector`, or `nil` when it is zero or not finite.
    static func normalised(_ vector: [Float]) -> [Double]? {
        var squares = 0.0
        for value in vector { squares += Double(value) * Double(value) }
        guard squares > 0, squares.isFinite else { return nil }
        let norm = squares.squareRoot()
        return vector.map { Double($0) / norm }
    }
}
