/// One class of a classifier's output with its probability.
public struct RankedClass: Sendable, Equatable {
    /// The class index (0...999 for ImageNet).
    public var index: Int
    /// Its softmax probability, 0...1.
    public var probability: Double

    /// Creates a ranked class.
    public init(index: Int, probability: Double) {
        self.index = index
        self.probability = probability
    }
}

/// What an ImageNet classifier said about one photo: the softmax over its logits.
public struct ClassifierReading: Sendable, Equatable {
    /// ImageNet class 741, "prayer rug, prayer mat".
    public static let prayerRugClass = 741

    /// Softmax probabilities, one per class, summing to 1.
    public let probabilities: [Double]

    /// Reads a classifier's raw logits (one per class, e.g. 1000 for ImageNet).
    /// - Parameter logits: the model's output for one image; must not be empty.
    public init(logits: [Float]) {
        self.probabilities = Softmax.probabilities(logits)
    }

    /// The probability of ``prayerRugClass`` (0 when the model has fewer classes).
    public var prayerRugScore: Double {
        probabilities.count > Self.prayerRugClass ? probabilities[Self.prayerRugClass] : 0
    }

    /// The `count` most probable classes, most probable first (ties: lower index first).
    public func top(_ count: Int = 5) -> [RankedClass] {
        Softmax.top(probabilities, count: count)
    }
}

/// Numerically stable softmax and top-k.
public enum Softmax {
    /// `exp(x - max) / sum(exp(x - max))`, computed in `Double`.
    /// - Parameters:
    ///   - logits: the raw scores; must not be empty.
    ///   - scale: a factor applied to every logit first (a CLIP logit scale; default 1).
    /// - Returns: probabilities in the same order, summing to 1.
    public static func probabilities<S: Collection>(_ logits: S, scale: Double = 1) -> [Double]
    where S.Element: BinaryFloatingPoint {
        precondition(!logits.isEmpty, "softmax needs at least one value")
        let scaled = logits.map { Double($0) * scale }
        let top = scaled.max() ?? 0
        let exponentials = scaled.map { ($0 - top).exponentiated }
        let total = exponentials.reduce(0, +)
        return exponentials.map { $0 / total }
    }

    /// The `count` largest values with their indices, largest first (ties: lower index first).
    public static func top(_ probabilities: [Double], count: Int) -> [RankedClass] {
        guard count > 0 else { return [] }
        var best: [RankedClass] = []
        best.reserveCapacity(count + 1)
        for (index, probability) in probabilities.enumerated() {
            if best.count == count, let last = best.last, probability <= last.probability { continue }
            var position = best.count
            while position > 0 && best[position - 1].probability < probability { position -= 1 }
            best.insert(RankedClass(index: index, probability: probability), at: position)
            if best.count > count { best.removeLast() }
        }
        return best
    }
}

extension Double {
    /// e raised to this value (no Foundation needed in the engine).
    var exponentiated: Double { Self.exp(self) }

    private static func exp(_ x: Double) -> Double {
        // Range reduction: x = k ln2 + r with |r| <= ln2/2, then a degree-13 Taylor series for
        // e^r (error far below Double's epsilon over that range), scaled by 2^k.
        if x.isNaN { return x }
        if x > 709.78 { return .infinity }
        if x < -745.2 { return 0 }
        let ln2 = 0.693_147_180_559_945_309_417_232_121_458
        let k = (x / ln2).rounded()
        let r = x - k * ln2
        var term = 1.0
        var sum = 1.0
        for n in 1...13 {
            term *= r / Double(n)
            sum += term
        }
        return sum * Double(sign: .plus, exponent: Int(k), significand: 1)
    }
}
