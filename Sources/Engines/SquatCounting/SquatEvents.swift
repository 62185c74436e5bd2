public import ProofkitCore

/// What the squat checks measured over one movement (all fractions of the standing reference).
public struct SquatChecks: Sendable, Equatable {
    /// Largest distance a planted ankle moved from where it stood at the start.
    public var footTravel: Double
    /// Largest rise of the floor line (lower ankle) above where it was at the start.
    public var floorRise: Double
    /// Knee-height difference at the bottom, beyond the difference while standing.
    public var kneeAsymmetry: Double
    /// Shoulder height above the hips at the bottom, as a fraction of its standing value
    /// (infinity when the shoulders were not seen).
    public var torsoUprightness: Double
    /// How far the knees bent: the largest tilt of the thighs from vertical during the movement,
    /// in degrees, from how much the hip-to-knee height shrank against its standing value
    /// (`acos(height / standing height)`, the same from the front, the side or the back). NaN when
    /// the knees or their standing height were not known.
    public var kneeBend: Double = .nan
    /// How far the hips rose above their standing height during the movement or just after it
    /// (a take-off), fraction of the standing reference (0 when they never did).
    public var hipRise: Double = 0

    /// Creates the measurements.
    /// - Parameters:
    ///   - footTravel: fraction of the standing reference.
    ///   - floorRise: fraction of the standing reference.
    ///   - kneeAsymmetry: fraction of the standing reference.
    ///   - torsoUprightness: fraction of the standing shoulder height (infinity: not seen).
    ///   - kneeBend: degrees of thigh tilt (NaN: not known), default NaN.
    ///   - hipRise: fraction of the standing reference, default 0.
    public init(
        footTravel: Double, floorRise: Double, kneeAsymmetry: Double, torsoUprightness: Double,
        kneeBend: Double = .nan, hipRise: Double = 0
    ) {
        self.footTravel = footTravel
        self.floorRise = floorRise
        self.kneeAsymmetry = kneeAsymmetry
        self.torsoUprightness = torsoUprightness
        self.kneeBend = kneeBend
        self.hipRise = hipRise
    }

    public static func == (a: SquatChecks, b: SquatChecks) -> Bool {
        a.footTravel == b.footTravel && a.floorRise == b.floorRise && a.kneeAsymmetry == b.kneeAsymmetry
            && a.torsoUprightness == b.torsoUprightness && a.hipRise == b.hipRise
            && (a.kneeBend == b.kneeBend || (a.kneeBend.isNaN && b.kneeBend.isNaN))
    }
}

/// One counted squat.
public struct SquatRep: Sendable, Equatable {
    /// 1-based number of the rep in the whole workout.
    public var number: Int
    /// 1-based set the rep belongs to.
    public var set: Int
    /// When the hips left the standing band (depth rose above the stand threshold), seconds.
    public var startTime: Double
    /// When the smoothed depth was deepest, seconds.
    public var bottomTime: Double
    /// When the person was confirmed standing again (depth and knees), seconds.
    public var endTime: Double
    /// Deepest smoothed depth, as a fraction of the standing reference (0 = standing).
    public var depth: Double
    /// What the squat checks measured.
    public var checks: SquatChecks
}

/// Why a movement that went down past the depth threshold was not counted.
public enum SquatRejectionReason: String, Sendable, Equatable, CaseIterable {
    /// Down and up faster than the minimum rep duration (a bounce, a jump landing, a noisy spike).
    case tooFast
    /// The hips stayed still at the bottom for longer than the maximum bottom hold (sat down).
    case tooLong
    /// A foot left its place (a lunge step, walking, a jumping-jack straddle).
    case feetMoved
    /// Both feet left the floor, or the hips rose above standing (a jump), during the rep, in the
    /// second before it (a landing) or just after it (a take-off, as in a tennis serve).
    case jumped
    /// The knees barely bent (the thighs stayed near vertical): the hips went down by leaning or
    /// a tracker's scale change, as in an overhead press, not a squat.
    case kneesStraight
    /// One knee dropped much lower than the other (a lunge).
    case asymmetricKnees
    /// The shoulders came down to the hips (bending over, not squatting).
    case bentOver
    /// Usable frames stopped for longer than the maximum gap during the rep.
    case trackingLost
}

/// A movement that went down past the depth threshold but was not counted, and why.
public struct SquatRejection: Sendable, Equatable {
    /// Why it was not counted.
    public var reason: SquatRejectionReason
    /// When the hips left the standing band, seconds.
    public var startTime: Double
    /// When the movement was judged, seconds.
    public var endTime: Double
    /// Deepest smoothed depth reached, fraction of the standing reference.
    public var depth: Double
    /// What the squat checks measured up to the judgement.
    public var checks: SquatChecks
}

/// A completed set.
public struct SquatSet: Sendable, Equatable {
    /// 1-based set number.
    public var number: Int
    /// Reps counted in the set.
    public var reps: Int
    /// Start of the set's first rep, seconds.
    public var startTime: Double
    /// End of the set's last rep, seconds.
    public var endTime: Double
}

/// Why a frame was not used.
public enum SquatSkipReason: String, Sendable, Equatable, CaseIterable {
    /// No hip, knee or ankle at or above the minimum confidence.
    case missingJoints
    /// A coordinate or time was NaN or infinite.
    case invalidValues
    /// The time did not increase from the previous frame.
    case timeNotIncreasing
    /// The hips were not above the ankles (lying down, or a wrong detection).
    case implausiblePose
}

/// Something the counter noticed in a frame.
public enum SquatEvent: Sendable, Equatable {
    /// The standing reference was learned (first time only): `reference` is the hip-to-floor
    /// height in image heights.
    case calibrated(time: Double, reference: Double)
    /// A squat was counted.
    case rep(SquatRep)
    /// A movement went down but was not counted.
    case rejected(SquatRejection)
    /// A set reached its target reps.
    case setCompleted(SquatSet)
    /// The rest after set `set` passed the plan's maximum rest (raised once per rest).
    case restTooLong(set: Int, rest: Double, time: Double)
    /// All sets of the plan are done.
    case workoutCompleted(time: Double)
}

/// One usable frame's depth (for plots), recorded when
/// ``SquatCounterConfiguration/recordsDepthTrace`` is on.
public struct SquatDepthSample: Sendable, Equatable {
    /// Seconds.
    public var time: Double
    /// Raw depth, fraction of the standing reference.
    public var depth: Double
    /// Smoothed depth, fraction of the standing reference.
    public var smoothedDepth: Double
}

/// What a stream of frames amounted to.
public struct SquatResult: Sendable, Equatable {
    /// Counted squats, in order.
    public var reps: [SquatRep]
    /// Movements that went down but were not counted, in order.
    public var rejections: [SquatRejection]
    /// Completed sets, in order.
    public var sets: [SquatSet]
    /// Frames given to the counter.
    public var frameCount: Int
    /// Frames not used, by reason.
    public var skippedFrames: [SquatSkipReason: Int]
    /// The standing reference (hip-to-floor height, image heights) at the end, or `nil` when the
    /// person never stood still long enough to learn it.
    public var standingReference: Double?
    /// Rests that went over the plan's maximum, as `(set, seconds)`.
    public var longRests: [SquatLongRest]
    /// Per-frame depths, when recording was asked for; otherwise empty.
    public var depthTrace: [SquatDepthSample]
    /// The plan's target (total reps).
    public var target: Int
    /// Accepted with `score` = reps when reps >= target; otherwise rejected (`incomplete`, or
    /// `insufficientInput` when the standing pose was never learned).
    public var verdict: Verdict

    /// Number of counted squats.
    public var repCount: Int { reps.count }
    /// Total skipped frames.
    public var skippedFrameCount: Int { skippedFrames.values.reduce(0, +) }
}

/// A rest between sets that went over the plan's maximum.
public struct SquatLongRest: Sendable, Equatable {
    /// The set the rest followed (1-based).
    public var set: Int
    /// Seconds of rest when it was reported (the maximum was passed).
    public var rest: Double
}
