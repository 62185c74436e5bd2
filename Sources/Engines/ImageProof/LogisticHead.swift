public import ProofkitCore

/// A small logistic-regression head on a model's embedding (e.g. EfficientNet-Lite0's 1280-d
/// pooled features): `p = sigmoid(w . ((n(x) - mean) / scale) + b)`, where `n(x)` is `x / |x|`
/// when ``normalize`` is ``Normalization/l2`` and `x` otherwise.
///
/// It is `Codable` so the facade can load it from the JSON file the model tools write; the
/// schema is the property names below (`normalize`, `mean`, `scale` and `threshold` optional;
/// other keys are ignored):
/// `{"weights": [...], "bias": b, "normalize": "l2", "mean": [...], "scale": [...], "threshold": t}`.
/// `Models/mat_head.json` (written by `Models/fit_mat_head.py`) is one.
public struct LogisticHead: Sendable, Equatable, Codable {
    /// How the feature vector is normalised before the weights apply.
    public enum Normalization: String, Sendable, Equatable, Codable {
        /// Divided by its Euclidean length (a zero vector stays zero).
        case l2
    }

    /// One weight per feature.
    public var weights: [Float]
    /// The intercept.
    public var bias: Float
    /// Per-feature mean subtracted first (standardisation), when the head was fitted on
    /// standardised features.
    public var mean: [Float]?
    /// Per-feature divisor applied after the mean (non-zero), with ``mean``.
    public var scale: [Float]?
    /// The probability the head was tuned to accept at, when the file gives one.
    public var threshold: Double?
    /// The normalisation applied to the features first (`nil`: none).
    public var normalize: Normalization?

    /// Creates a head.
    /// - Throws: `.modelInvalid` when the vectors differ in length, a scale is zero, or a value
    ///   is not finite.
    public init(
        weights: [Float], bias: Float, mean: [Float]? = nil, scale: [Float]? = nil, threshold: Double? = nil,
        normalize: Normalization? = nil
    ) throws(ProofkitError) {
        self.weights = weights
        self.bias = bias
        self.normalize = normalize
        self.mean = mean
        self.scale = scale
        self.threshold = threshold
        try validate()
    }

    /// The probability at which the head accepts: ``threshold``, else 0.5.
    public var acceptingThreshold: Double { threshold ?? 0.5 }

    /// The number of features the head expects.
    public var dimension: Int { weights.count }

    /// Checks the head read from a file (`Codable` decoding does not).
    /// - Throws: `.modelInvalid` with what is wrong.
    public func validate() throws(ProofkitError) {
        guard !weights.isEmpty else { throw ProofkitError(.modelInvalid, "the head has no weights") }
        guard weights.allSatisfy(\.isFinite), bias.isFinite else {
            throw ProofkitError(.modelInvalid, "the head has a weight that is not a finite number")
        }
        if let mean, mean.count != weights.count || !mean.allSatisfy(\.isFinite) {
            throw ProofkitError(.modelInvalid, "the head's mean has \(mean.count) values for \(weights.count) weights")
        }
        if let scale, scale.count != weights.count || scale.contains(where: { $0 == 0 || !$0.isFinite }) {
            throw ProofkitError(.modelInvalid, "the head's scale must have \(weights.count) finite non-zero values")
        }
        if let threshold, !(0...1).contains(threshold) {
            throw ProofkitError(.modelInvalid, "the head's threshold must be between 0 and 1")
        }
    }

    /// The head's probability for one feature vector.
    /// - Parameter features: ``dimension`` values (traps otherwise: a programmer error).
    /// - Returns: 0...1.
    public func probability(_ features: [Float]) -> Double {
        precondition(features.count == weights.count, "feature vector has the wrong length")
        var unit = 1.0
        if normalize == .l2 {
            var squares = 0.0
            for value in features { squares += Double(value) * Double(value) }
            if squares > 0 { unit = 1 / squares.squareRoot() }
        }
        var z = Double(bias)
        for index in 0..<weights.count {
            var x = Double(features[index]) * unit
            if let mean { x -= Double(mean[index]) }
            if let scale { x /= Double(scale[index]) }
            z += Double(weights[index]) * x
        }
        return Self.sigmoid(z)
    }

    /// `1 / (1 + e^-z)`, stable for large |z|.
    static func sigmoid(_ z: Double) -> Double {
        if z >= 0 { return 1 / (1 + (-z).exponentiated) }
        let e = z.exponentiated
        return e / (1 + e)
    }
}

/// How the scores of several crops of one photo become one score.
public enum CropAggregation: String, Sendable, Equatable, CaseIterable {
    /// The best crop counts (more accepting: a mat seen in any crop).
    case maximum
    /// The mean over crops.
    case mean

    /// Combines per-crop scores.
    /// - Parameter scores: at least one score.
    public func combine(_ scores: [Double]) -> Double {
        precondition(!scores.isEmpty, "no crop scores to combine")
        switch self {
        case .maximum: return scores.max() ?? 0
        case .mean: return scores.reduce(0, +) / Double(scores.count)
        }
    }
}
