public import ProofkitCore

/// The photo proof's verdict and the hint shown to a sleepy person.
public struct MatJudgement: Sendable, Equatable {
    /// Accepted with the score that decided (``decidingScore``), or rejected with the reason
    /// (its detail is ``hint``).
    public var verdict: Verdict
    /// The model's mat score, 0...1 (the class-741 probability, or the CLIP share). It decided
    /// unless ``decidedBy`` says the head or the enrolment did.
    public var score: Double
    /// The photo's brightness, 0...1 (mean Rec.601 luma).
    public var brightness: Double
    /// `nil` when accepted; otherwise "too dark: turn on a light" for a dark photo, or
    /// "that does not look like a prayer mat".
    public var hint: String?
    /// Which evidence decided: ``MatAcceptance/score`` (the model's score, also for every
    /// rejection), ``MatAcceptance/head`` or ``MatAcceptance/enrolment`` when that accepted.
    public var decidedBy: MatAcceptance = .score
    /// The score that decided, 0...1 (a cosine, -1...1, for the enrolment): ``score``, the
    /// head's probability when the head accepted, or the similarity to the enrolled mat.
    public var decidingScore: Double

    /// The judgement; `decidingScore` is `score` unless given.
    init(
        verdict: Verdict, score: Double, brightness: Double, hint: String?, decidedBy: MatAcceptance = .score,
        decidingScore: Double? = nil
    ) {
        self.verdict = verdict
        self.score = score
        self.brightness = brightness
        self.hint = hint
        self.decidedBy = decidedBy
        self.decidingScore = decidingScore ?? score
    }
}

extension RejectionReason.Kind {
    /// The photo is too dark to judge (``MatProofPolicy/darkBrightness``).
    public static let tooDark = RejectionReason.Kind("tooDark")
    /// The photo is bright enough but does not show a prayer mat.
    public static let notAMat = RejectionReason.Kind("notAMat")
}

/// Turns a mat score and a brightness into a ``MatJudgement``.
///
/// A photo passes when its score reaches ``threshold``. A failed photo whose brightness is
/// below ``darkBrightness`` gets the hint "too dark: turn on a light"; any other failed photo
/// gets "that does not look like a prayer mat". A photo that passes is accepted whatever its
/// brightness.
///
/// The default dark cut, 0.24, comes from the shared photo set (`images/` in the shared data):
/// its three photos of dark rooms (subject "dark") measure 0.023, 0.111 and 0.174, and the
/// darkest of the other 49 (dim living rooms and bedrooms, a folded mat) measure 0.302, 0.309
/// and 0.325. 0.24 sits in the middle of that gap, so a dim but usable room is not told to
/// turn on a light and a dark one is.
public struct MatProofPolicy: Sendable, Equatable {
    /// The EfficientNet-Lite0 threshold on the class-741 probability.
    public static let lite0Threshold = 0.3
    /// The MobileCLIP threshold on the mat prompts' share.
    public static let clipThreshold = 0.45
    /// The default brightness below which a failed photo is called too dark.
    public static let defaultDarkBrightness = 0.24

    /// The hint for a failed dark photo.
    public static let tooDarkHint = "too dark: turn on a light"
    /// The hint for any other failed photo.
    public static let notAMatHint = "that does not look like a prayer mat"

    /// Score needed to pass, 0...1.
    public var threshold: Double
    /// Brightness (0...1) below which a failed photo is "too dark".
    public var darkBrightness: Double

    /// Creates a policy.
    /// - Parameters:
    ///   - threshold: score needed to pass, in 0...1 (``lite0Threshold`` or ``clipThreshold``
    ///     by engine, or a user's `--threshold`).
    ///   - darkBrightness: dark cut in 0...1 (default 0.24).
    /// - Throws: `.invalidArgument` when a value is outside 0...1.
    public init(threshold: Double, darkBrightness: Double = Self.defaultDarkBrightness) throws(ProofkitError) {
        guard (0...1).contains(threshold) else {
            throw ProofkitError(.invalidArgument, "threshold must be between 0 and 1, not \(threshold)")
        }
        guard (0...1).contains(darkBrightness) else {
            throw ProofkitError(.invalidArgument, "dark brightness must be between 0 and 1, not \(darkBrightness)")
        }
        self.threshold = threshold
        self.darkBrightness = darkBrightness
    }

    /// Judges one photo.
    /// - Parameters:
    ///   - score: the mat score, 0...1 (class-741 probability, CLIP mat share or a head's
    ///     probability). NaN never passes.
    ///   - brightness: the photo's brightness, 0...1.
    public func judge(score: Double, brightness: Double) -> MatJudgement {
        if score >= threshold {
            return MatJudgement(verdict: .accepted(score: score), score: score, brightness: brightness, hint: nil)
        }
        let reason =
            brightness < darkBrightness
            ? RejectionReason(.tooDark, Self.tooDarkHint)
            : RejectionReason(.notAMat, Self.notAMatHint)
        return MatJudgement(
            verdict: .rejected(reason: reason), score: score, brightness: brightness, hint: reason.detail)
    }
}
