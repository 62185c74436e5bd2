public import ProofkitCore

extension RejectionReason.Kind {
    /// The photo's top classes are mostly textiles: a close-up or a folded mat (``MatRetakeHint``).
    public static let showWholeMat = RejectionReason.Kind("showWholeMat")
    /// The prayer-rug class is there but below the pass mark (``MatRetakeHint``).
    public static let almostAMat = RejectionReason.Kind("almostAMat")
}

/// How to retake a rejected mat photo, from what the ImageNet classifier saw in it.
///
/// On real mat photos the model was not tuned on, the misses are close-ups of the pattern,
/// folded mats and pictures with text over them, and in those the model's top classes are
/// textiles (quilt, handkerchief, sleeping bag, bath towel, ...). As "turn on a light" does for
/// a dark room, the hint says what to change. It only ever replaces the hint of a photo that is
/// already rejected for not looking like a mat: it never turns a rejection into a pass, and a
/// dark photo keeps "too dark: turn on a light".
///
/// Rule (on the top five classes of the centre crop, and the class-741 score):
/// - textile: the classes of ``textileClasses`` (class 741 included) hold at least
///   ``textileShare`` of the top five's probability;
/// - present: class 741 is among the top five, or its score (the maximum over the crops) is at
///   least ``presentScore``.
/// Present and textile: ``closeFoldedHint``; present only: ``closeHint``; textile only:
/// ``wholeMatHint``; neither: the hint stays "that does not look like a prayer mat".
public enum MatRetakeHint {
    /// ImageNet-1k classes of textiles and rug-like things, by index (0-based, the order of
    /// `imagenet_classes.txt`): rugs, cloth, bedding, towels, curtains and cloth garments, which
    /// is what the model calls a mat seen too close, folded, or as a product shot.
    public static let textileClasses: [Int: String] = [
        399: "abaya", 411: "apron", 434: "bath towel", 443: "bib", 474: "cardigan",
        501: "cloak", 529: "diaper, nappy, napkin", 533: "dishrag, dishcloth", 539: "doormat, welcome mat",
        568: "fur coat", 591: "handkerchief", 608: "jean, blue jean, denim", 610: "jersey, T-shirt",
        614: "kimono", 697: "pajama", 721: "pillow", 735: "poncho", 741: "prayer rug, prayer mat",
        750: "quilt, comforter", 775: "sarong", 794: "shower curtain", 797: "sleeping bag", 824: "stole",
        841: "sweatshirt", 842: "swimming trunks", 854: "theater curtain", 885: "velvet", 887: "vestment",
        911: "wool, woolen, woollen",
    ]
    /// The share of the top five's probability that textile classes need for "mostly textile": 0.5.
    public static let textileShare = 0.5
    /// A class-741 score from which the prayer rug counts as present even outside the top five: 0.05.
    public static let presentScore = 0.05

    /// Mostly textile, no prayer rug in sight.
    public static let wholeMatHint =
        "that looks like cloth, not a whole prayer mat: show the whole mat, laid flat, from standing height"
    /// The prayer rug is there but below the pass mark, and the rest is textile (folded or too near).
    public static let closeFoldedHint =
        "close: that may be a prayer mat, folded or too near; lay the whole mat flat and take the photo from standing height"
    /// The prayer rug is there but below the pass mark.
    public static let closeHint =
        "close: that may be a prayer mat; show all of it, laid flat, filling most of the photo, with nothing on it or over it"

    /// The retake hint for a photo the classifier did not pass.
    /// - Parameters:
    ///   - topClasses: the centre crop's most probable classes (five), most probable first.
    ///   - score: the class-741 score judged (0...1, the maximum over the crops).
    ///   - threshold: the pass mark (0.3 by default); a score at or above it gets no hint.
    /// - Returns: the kind and text of the hint, or `nil` when the rule finds nothing to say.
    public static func hint(topClasses: [RankedClass], score: Double, threshold: Double)
        -> (kind: RejectionReason.Kind, text: String)?
    {
        guard !(score >= threshold) else { return nil }
        let total = topClasses.reduce(0) { $0 + $1.probability }
        let textile = topClasses.filter { textileClasses[$0.index] != nil }.reduce(0) { $0 + $1.probability }
        let isTextile = total > 0 && textile >= textileShare * total
        let isPresent = topClasses.contains { $0.index == ClassifierReading.prayerRugClass } || score >= presentScore
        switch (isPresent, isTextile) {
        case (true, true): return (.almostAMat, closeFoldedHint)
        case (true, false): return (.almostAMat, closeHint)
        case (false, true): return (.showWholeMat, wholeMatHint)
        case (false, false): return nil
        }
    }
}

extension MatJudgement {
    /// This judgement with ``MatRetakeHint``'s hint in place of "that does not look like a
    /// prayer mat", when the rule has one. Accepted and too-dark judgements come back unchanged.
    /// - Parameters:
    ///   - topClasses: the centre crop's top five classes.
    ///   - score: the class-741 score (maximum over the crops).
    ///   - threshold: the pass mark.
    public func withRetakeHint(topClasses: [RankedClass], score: Double, threshold: Double) -> MatJudgement {
        guard case .rejected(let reason) = verdict, reason.kind == .notAMat,
            let (kind, text) = MatRetakeHint.hint(topClasses: topClasses, score: score, threshold: threshold)
        else { return self }
        var judged = self
        judged.verdict = .rejected(reason: RejectionReason(kind, text))
        judged.hint = text
        return judged
    }
}
