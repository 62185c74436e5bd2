public import ProofkitCore

/// Counts squats in a stream of body-pose frames.
///
/// ## Algorithm
/// 1. **Measure** each frame: the hip centre (mean of the detected hips), the floor line (the lower
///    detected ankle) and their vertical distance, the *hip-to-floor height*. Frames without a
///    hip, a knee and an ankle at ``SquatCounterConfiguration/minimumConfidence`` are skipped and
///    counted by ``SquatSkipReason``; a rep is never completed across a gap longer than
///    ``SquatCounterConfiguration/maximumGap``.
/// 2. **Learn the standing pose**: once the hip-to-floor height has stayed still for
///    ``SquatCounterConfiguration/standingWindow`` seconds with straight knees, the standing
///    reference `L` is the larger of that still height and the tallest the upright frames seen so
///    far stayed for 0.1 s (with the body parts as they were then), so a clip that starts in the
///    descent, or whose first still moment is a pause at the bottom, is not measured low. The frames
///    seen before (up to about 20 s) are then replayed, so a rep that begins in the first second
///    still counts. A person never still long enough is measured from the whole sequence when the
///    stream ends. While the person stands still the reference follows them; it rises at once if
///    they stand taller. After a rejected rep, 1 s standing still with straight knees is standing
///    whatever the depth reads (a floor line or reference gone stale), and they follow from there.
/// 3. **Depth** = `1 - (height / bodyScale) / L`: the hip drop as a fraction of the person's own
///    standing leg extent, corrected by `bodyScale` (the median of how much larger the torso, shin
///    and shoulder width look than at calibration), so stepping closer or further does not look like a squat.
///    The knee angle only gates (``SquatCounterConfiguration/minimumKneeBend``, off by default): in
///    the image it is foreshortened, and from a front camera the knees drop with the hips.
/// 4. **Hysteresis**: a rep goes *down* when both the smoothed depth (exponential, time constant
///    ``SquatCounterConfiguration/smoothingTimeConstant``) and the raw depth reach
///    ``SquatCounterConfiguration/depthThreshold``, and comes back *up* when both are at or below
///    ``SquatCounterConfiguration/standThreshold`` and the knee check says the legs are straight
///    again. A single noisy frame moves the smoothed depth only a little, so it can never complete
///    a rep on its own.
/// 5. **Is it a squat?** The rep is counted only if it lasted at least the minimum rep duration
///    (not a bounce or jump), the hips did not stay still at the bottom for longer than
///    ``SquatCounterConfiguration/maximumBottomHold`` (sitting down; a slow rep that keeps moving
///    and ends standing counts however long it takes), the feet stayed planted (not a lunge step,
///    walking or a jumping-jack straddle; nor still moving when the hips started down), the floor
///    line did not rise (a take-off: feet up, with the hips no lower than the depth threshold,
///    and down again within a flight's 1 s; feet "up" for longer are a moved view or the
///    tracker's ankles, and the floor line is then learned afresh) and the hips did not rise
///    above standing and come down again in the
///    ``SquatCounterConfiguration/takeOffWatch`` after standing up (not a jump, nor a knee bend
///    that ends in one), the knees dropped symmetrically (not a lunge), the thighs tilted past the
///    knee gate when it is on, and the shoulders stayed above the hips (not bending over).
///    Otherwise a ``SquatEvent/rejected(_:)`` event says why. The feet and knee checks are *sustained*: they use the smallest distance over
///    the last ``SquatCounterConfiguration/footHoldTime`` (0.3 s), measured from a robust running
///    estimate of where the feet stood, so tracker glitches of a few frames (a depth camera loses
///    the ankles as the knees bend) are not steps.
///
/// Deterministic and allocation-free per frame (apart from the returned events, the optional
/// depth trace, and the history of up to 1,200 frames kept, reserved once, until the standing
/// pose is learned). Time is the frames' own `time`; the counter never reads a clock.
///
/// ## Known limits
/// Only one person; the x and y units are image width and height, so very non-square frames
/// weigh sideways foot travel differently from vertical. A clip that begins already part-way
/// down and shows the person standing only in its last few frames is measured low and its rep
/// can be missed (single-rep clips cut from the front-view depth-camera sets at the rep's start:
/// 20 of 47 counted; with 0.2 s before and after: 41 of 47); the reference rises as soon as they
/// stand taller, for the reps after.
public struct SquatRepCounter: Sendable {
    /// The settings in use.
    public let configuration: SquatCounterConfiguration

    // MARK: Per-frame measurements

    /// What one usable frame measured (image units, y down). NaN marks "not measured".
    struct Sample: Sendable {
        var time: Double
        var floorY: Double
        var extent: Double  // floorY - hipY
        var torso: Double  // shoulder centre to hip centre, Euclidean
        var shin: Double  // knee to ankle of the floor leg, Euclidean
        var shoulderWidth: Double  // left to right shoulder, Euclidean
        var thigh: Double  // lowest knee y - hip y
        var kneeDiff: Double  // |left knee y - right knee y|
        var torsoHeight: Double  // hip y - shoulder y
        var leftAnkleX: Double, leftAnkleY: Double
        var rightAnkleX: Double, rightAnkleY: Double
    }

    /// An exponential moving average that tolerates missing (NaN) inputs.
    struct Smoother: Sendable {
        var value = Double.nan
        mutating func update(_ input: Double, alpha: Double) {
            guard input.isFinite else { return }
            value = value.isFinite ? value + alpha * (input - value) : input
        }
    }

    /// `confirming`: stood back up, watched for a take-off for ``SquatCounterConfiguration/takeOffWatch``.
    enum Phase: Sendable { case standing, down, confirming, recovering }

    /// A usable frame kept for a replay, with what the stillness run said at that frame.
    struct Recorded: Sendable {
        var sample: Sample
        var isStill: Bool
        var stillMean: Double
    }

    struct RepInProgress: Sendable {
        var startTime: Double
        var bottomTime: Double
        var bottomDepth: Double
        var downSamples = 0
        var baselineFloor: Double
        var baselineKneeDiff: Double
        /// Start of the current still stretch at the bottom, and the depth it is still around.
        var holdStart: Double
        var holdDepth: Double
        var footTravel = 0.0
        var floorRise = 0.0
        var kneeAsymmetry = 0.0
        var uprightness = Double.infinity
        /// Smallest hip-to-knee height over its standing value (infinity: not measured).
        var thighRatio = Double.infinity
        var hipRise = 0.0
        /// The run of frames whose floor line is above the limit (``SquatCounterConfiguration/maximumFloorRise``):
        /// when it began (NaN: none now) and its highest rise. Only a run shorter than a flight
        /// (``SquatRepCounter/longestFlight``) is a jump and enters `floorRise`.
        var riseSince = Double.nan
        var risePeak = 0.0
        /// When the person stood back up (while ``Phase/confirming``).
        var standTime = Double.nan
        var kneeBend: Double { thighRatio.isFinite ? arcCosineDegrees(thighRatio) : .nan }
        var checks: SquatChecks {
            SquatChecks(
                footTravel: footTravel, floorRise: floorRise, kneeAsymmetry: kneeAsymmetry,
                torsoUprightness: uprightness, kneeBend: kneeBend, hipRise: hipRise)
        }
    }

    // Observation (calibration) state.
    var lastTime = -Double.infinity
    var observedTorso = Smoother(), observedShin = Smoother(), observedShoulders = Smoother()
    var observedThigh = Smoother(), observedTorsoHeight = Smoother(), observedFloor = Smoother()
    var runStart = 0.0, runMin = 0.0, runMax = 0.0, runSum = 0.0, runCount = 0
    /// The usable frames from the start, kept (at most ``historyCapacity``, about 20 s at 60 fps;
    /// the oldest quarter is dropped when full) until the standing pose is learned: it gives the
    /// tallest upright moment, and it is replayed then. (Replaying it again when the person later
    /// stands taller was tried: on the shared set it took the stretch of a tennis serve's jump for
    /// the standing height and counted the stance before it.)
    var history: [Recorded] = []
    var historyOpen = true
    static let historyCapacity = 1200

    // Reference (learned standing pose). Part references are fixed at calibration; `reference`
    // and `thighReference` are in calibration-scale units and follow the standing person.
    var isCalibrated = false
    var reference = 0.0
    var torsoReference = 0.0, shinReference = 0.0, shoulderReference = 0.0
    var thighReference = 0.0, torsoHeightReference = 0.0

    // Step (counting) state.
    var lastStepTime = Double.nan
    var scaleTorso = Smoother(), scaleShin = Smoother(), scaleShoulders = Smoother()
    var smoothedDepth = Double.nan
    var floorLine = Double.nan
    /// The last frame with the feet above the floor line, and when that run of frames began
    /// (`since` NaN: on the floor line).
    var airborneRun = (last: -Double.infinity, since: Double.nan)
    var footLeftX = Smoother(), footLeftY = Smoother(), footRightX = Smoother()
    var footRightY = Smoother(), footFloor = Smoother()
    var phase = Phase.standing
    var candidateStart = 0.0
    var baselineFloor = Double.nan, baselineKneeDiff = Double.nan
    /// Where the feet stand: a robust (clipped) running estimate of each planted ankle over the
    /// standing phase, frozen during a rep; NaN where that ankle was not seen on the floor.
    var baselineAnkles = (lx: Double.nan, ly: Double.nan, rx: Double.nan, ry: Double.nan)
    /// How far each ankle has been from `baselineAnkles` for the whole of the last
    /// ``SquatCounterConfiguration/footHoldTime`` (image units).
    var leftTravel = SustainedMinimum(), rightTravel = SustainedMinimum()
    /// How much more the knee heights have differed than standing, for the whole of the last
    /// ``SquatCounterConfiguration/footHoldTime`` (fraction of the standing reference).
    var kneeExcess = SustainedMinimum()
    /// After the feet were found to have moved, the foot baseline, floor line and body scale
    /// follow the person until this time.
    var movingUntil = -Double.infinity
    var rep: RepInProgress?
    var smoothedThigh = Smoother()
    /// Take-off watch: the hips' peak rise above standing and how far they came down from it.
    var peakRise = 0.0, fallFromPeak = 0.0
    /// Frames in a row, at the end of a rep in progress, whose raw depth is back at standing
    /// with straight knees (the smoothed depth lags them), and when the run began.
    var standingRun = 0
    var standingRunStart = Double.nan

    // Results.
    var reps: [SquatRep] = []
    var rejections: [SquatRejection] = []
    var sets: [SquatSet] = []
    var longRests: [SquatLongRest] = []
    var trace: [SquatDepthSample] = []
    var frameCount = 0
    var skipped = (missing: 0, invalid: 0, time: 0, implausible: 0)
    var setReps = 0
    var setStart = 0.0
    var restStart = Double.nan
    var restReported = false

    /// The raw depth of the last usable frame after calibration (fraction of the standing
    /// reference), or `nil` before.
    public internal(set) var currentDepth: Double?
    /// Reps counted so far.
    public var repCount: Int { reps.count }
    /// Whether the standing pose has been learned.
    public var hasLearnedStandingPose: Bool { isCalibrated }

    /// Creates a counter.
    /// - Parameter configuration: the settings; default `SquatCounterConfiguration()` (every setting at its default).
    /// - Throws: `ProofkitError` `.invalidArgument` when a setting is out of range.
    public init(configuration: SquatCounterConfiguration = SquatCounterConfiguration()) throws(ProofkitError) {
        try configuration.validate()
        self.init(validated: configuration)
    }

    /// The non-throwing initialiser behind ``init(configuration:)``. (A typed-throws initialiser
    /// that sets the stored properties itself crashed at -Onone in "outlined init with copy" on
    /// Swift 6.3.1; delegating avoids it.)
    private init(validated configuration: SquatCounterConfiguration) {
        self.configuration = configuration
    }

    // MARK: Streaming

    /// Feeds one frame.
    /// - Parameter frame: the next frame; its time must be greater than the previous frame's
    ///   (otherwise it is skipped as ``SquatSkipReason/timeNotIncreasing``).
    /// - Returns: what happened at this frame (usually nothing). When the standing pose is first
    ///   learned, the frames seen before are replayed and their events come back here too.
    public mutating func process(_ frame: PoseFrame) -> [SquatEvent] {
        frameCount += 1
        let time = frame.time
        guard time.isFinite else {
            skipped.invalid += 1
            return []
        }
        guard time > lastTime else {
            skipped.time += 1
            return []
        }
        lastTime = time
        var events: [SquatEvent] = []
        checkRest(at: time, into: &events)

        guard let sample = measure(frame) else { return events }
        let (isStill, stillMean) = observe(sample)
        record(Recorded(sample: sample, isStill: isStill, stillMean: stillMean))
        if !isCalibrated {
            // Learn only from a pose with straight knees: a pause at the bottom is not standing.
            guard isStill, isUpright(sample) else { return events }
            calibrate(stillMean: stillMean, at: time, into: &events)
            replayHistory(into: &events)
            closeHistory()
            return events
        }
        step(sample, isStill: isStill, stillMean: stillMean, into: &events)
        return events
    }

    /// Keeps a usable frame in the history while it is open.
    mutating func record(_ entry: Recorded) {
        guard historyOpen else { return }
        if history.count >= Self.historyCapacity { history.removeFirst(Self.historyCapacity / 4) }
        if history.isEmpty { history.reserveCapacity(Self.historyCapacity) }
        history.append(entry)
    }

    mutating func closeHistory() {
        historyOpen = false
        history = []
    }

    /// Replays the history through the counting steps (after calibration).
    mutating func replayHistory(into events: inout [SquatEvent]) {
        let replay = history
        for entry in replay { step(entry.sample, isStill: entry.isStill, stillMean: entry.stillMean, into: &events) }
    }

    /// The outcome so far: reps, rejections, sets, skipped frames and the verdict against the
    /// plan's target. A rep still in progress is not counted.
    public func finish() -> SquatResult {
        var final = self
        final.settle()
        return final.result()
    }

    /// What the end of the stream decides: a person never seen standing still is measured from the
    /// whole sequence (the standing hip-to-floor height of its upright frames), and a rep being
    /// watched for a take-off counts.
    mutating func settle() {
        var ignored: [SquatEvent] = []
        if !isCalibrated, historyOpen, history.count >= 3, standingInHistory() != nil {
            calibrate(stillMean: 0, at: lastTime, into: &ignored)
            replayHistory(into: &ignored)
        }
        if phase == .confirming, let current = rep {
            judge(current, at: current.standTime, into: &ignored)
            phase = .standing
        }
        // A clip that ends just after the person stood up: the smoothed depth lags the last raw
        // frames; two of them at standing with straight knees end the rep.
        if phase == .down, let current = rep, standingRun >= 2 {
            judge(current, at: standingRunStart, into: &ignored)
            phase = .standing
        }
    }

    func result() -> SquatResult {
        var skippedFrames: [SquatSkipReason: Int] = [:]
        if skipped.missing > 0 { skippedFrames[.missingJoints] = skipped.missing }
        if skipped.invalid > 0 { skippedFrames[.invalidValues] = skipped.invalid }
        if skipped.time > 0 { skippedFrames[.timeNotIncreasing] = skipped.time }
        if skipped.implausible > 0 { skippedFrames[.implausiblePose] = skipped.implausible }
        let target = configuration.plan.totalReps
        let verdict: Verdict
        if reps.count >= target {
            verdict = .accepted(score: Double(reps.count))
        } else if !isCalibrated {
            verdict = .rejected(
                reason: RejectionReason(
                    .insufficientInput,
                    "never saw the person stand still long enough to learn the standing pose"))
        } else {
            verdict = .rejected(
                reason: RejectionReason(
                    .incomplete, "\(reps.count) of \(target) squats"))
        }
        return SquatResult(
            reps: reps, rejections: rejections, sets: sets, frameCount: frameCount,
            skippedFrames: skippedFrames, standingReference: isCalibrated ? reference : nil,
            longRests: longRests, depthTrace: trace, target: target, verdict: verdict)
    }

    // MARK: Measurement

    func usable(_ point: Keypoint) -> Bool {
        point.confidence >= configuration.minimumConfidence && point.confidence > 0
    }

    /// Measures a frame, or counts why it is skipped and returns `nil`.
    mutating func measure(_ frame: PoseFrame) -> Sample? {
        let lh = frame.leftHip
        let rh = frame.rightHip
        let lk = frame.leftKnee
        let rk = frame.rightKnee
        let la = frame.leftAnkle
        let ra = frame.rightAnkle
        let ls = frame.leftShoulder
        let rs = frame.rightShoulder
        let useLH = usable(lh)
        let useRH = usable(rh)
        let useLK = usable(lk)
        let useRK = usable(rk)
        let useLA = usable(la)
        let useRA = usable(ra)
        let useLS = usable(ls)
        let useRS = usable(rs)
        // A usable joint must have finite coordinates.
        func bad(_ use: Bool, _ point: Keypoint) -> Bool { use && !(point.x.isFinite && point.y.isFinite) }
        if bad(useLH, lh) || bad(useRH, rh) || bad(useLK, lk) || bad(useRK, rk) || bad(useLA, la)
            || bad(useRA, ra) || bad(useLS, ls) || bad(useRS, rs)
        {
            skipped.invalid += 1
            return nil
        }
        guard useLH || useRH, useLK || useRK, useLA || useRA else {
            skipped.missing += 1
            return nil
        }
        let hipX = useLH && useRH ? (lh.x + rh.x) / 2 : (useLH ? lh.x : rh.x)
        let hipY = useLH && useRH ? (lh.y + rh.y) / 2 : (useLH ? lh.y : rh.y)
        // The floor line is the lower ankle; its leg gives the shin length.
        let leftIsFloor = useLA && (!useRA || la.y >= ra.y)
        let floor = leftIsFloor ? la : ra
        let floorY = floor.y
        let extent = floorY - hipY
        guard extent > 0.02 else {
            skipped.implausible += 1
            return nil
        }
        let nan = Double.nan
        var shin = nan
        if leftIsFloor, useLK { shin = distance(lk, la) }
        if !leftIsFloor, useRK { shin = distance(rk, ra) }
        let kneeY = useLK && useRK ? max(lk.y, rk.y) : (useLK ? lk.y : rk.y)
        var torso = nan
        var torsoHeight = nan
        var shoulderWidth = nan
        if useLS || useRS {
            let sx = useLS && useRS ? (ls.x + rs.x) / 2 : (useLS ? ls.x : rs.x)
            let sy = useLS && useRS ? (ls.y + rs.y) / 2 : (useLS ? ls.y : rs.y)
            let dx = sx - hipX
            let dy = sy - hipY
            torso = (dx * dx + dy * dy).squareRoot()
            torsoHeight = hipY - sy
            if useLS && useRS { shoulderWidth = distance(ls, rs) }
        }
        return Sample(
            time: frame.time, floorY: floorY, extent: extent, torso: torso, shin: shin,
            shoulderWidth: shoulderWidth, thigh: kneeY - hipY,
            kneeDiff: useLK && useRK ? abs(lk.y - rk.y) : nan, torsoHeight: torsoHeight,
            leftAnkleX: useLA ? la.x : nan, leftAnkleY: useLA ? la.y : nan,
            rightAnkleX: useRA ? ra.x : nan, rightAnkleY: useRA ? ra.y : nan)
    }

    func distance(_ a: Keypoint, _ b: Keypoint) -> Double {
        let dx = a.x - b.x
        let dy = a.y - b.y
        return (dx * dx + dy * dy).squareRoot()
    }

    // MARK: Calibration

    /// Updates the stillness run and the observed body parts; returns whether the hip-to-floor
    /// height has been still for the standing window, and its mean over the run.
    mutating func observe(_ sample: Sample) -> (Bool, Double) {
        let dt = observedLastTime.isFinite ? sample.time - observedLastTime : 0
        let alpha = dt > 0 ? blend(dt, 0.3) : 1
        observedTorso.update(sample.torso, alpha: alpha)
        observedShin.update(sample.shin, alpha: alpha)
        observedShoulders.update(sample.shoulderWidth, alpha: alpha)
        observedThigh.update(sample.thigh, alpha: alpha)
        observedTorsoHeight.update(sample.torsoHeight, alpha: alpha)
        observedFloor.update(sample.floorY, alpha: alpha)
        observedLastTime = sample.time

        let low = min(runMin, sample.extent)
        let high = max(runMax, sample.extent)
        let mean = (runSum + sample.extent) / Double(runCount + 1)
        if runCount == 0 || high - low > configuration.stillnessTolerance * mean
            || dt > configuration.maximumGap
        {
            runStart = sample.time
            runMin = sample.extent
            runMax = sample.extent
            runSum = sample.extent
            runCount = 1
        } else {
            runMin = low
            runMax = high
            runSum += sample.extent
            runCount += 1
        }
        let still = runCount >= 3 && sample.time - runStart >= configuration.standingWindow
        return (still, runSum / Double(runCount))
    }
    var observedLastTime = Double.nan

    /// Learns the standing pose: the still stretch's mean height (with the body parts as observed
    /// now), or the history's tallest upright 0.1 s when that is taller (with the body parts as
    /// they were then: a still moment at the bottom of a squat foreshortens the torso and shins).
    mutating func calibrate(stillMean: Double, at time: Double, into events: inout [SquatEvent]) {
        isCalibrated = true
        reference = stillMean
        torsoReference = observedTorso.value
        shinReference = observedShin.value
        shoulderReference = observedShoulders.value
        thighReference = observedThigh.value
        floorLine = observedFloor.value
        torsoHeightReference = observedTorsoHeight.value
        if let tallest = standingInHistory(), tallest.height > stillMean {
            reference = tallest.height
            func mean(_ part: (Sample) -> Double) -> Double {
                var sum = 0.0
                var count = 0.0
                for entry in history[tallest.range] where part(entry.sample).isFinite {
                    sum += part(entry.sample)
                    count += 1
                }
                return count > 0 ? sum / count : .nan
            }
            torsoReference = mean(\.torso)
            shinReference = mean(\.shin)
            shoulderReference = mean(\.shoulderWidth)
            thighReference = mean(\.thigh)
            floorLine = mean(\.floorY)
            torsoHeightReference = mean(\.torsoHeight)
        }
        events.append(.calibrated(time: time, reference: reference))
    }

    /// Straight knees: the hip-to-knee height is at least half the knee-to-floor height.
    func isUpright(_ sample: Sample) -> Bool {
        sample.thigh >= 0.5 * (sample.extent - sample.thigh)
    }

    /// The standing hip-to-floor height learned from the whole history rather than from a calm
    /// moment: the tallest the upright frames stayed for 0.1 s (the largest over the history of
    /// the smallest height within 0.1 s, so a glitched frame or two cannot set it), or 0 when no
    /// frame was upright. The reference is the larger of it and the still stretch's mean, so a
    /// clip that starts in a slow descent (still enough for the window, but already going down), or
    /// whose first still moment is a pause at the bottom of a shallow squat, is not measured low,
    /// and a person who never stands still is measured at the end from the whole sequence.
    func standingInHistory() -> (height: Double, range: ClosedRange<Int>)? {
        var best: (height: Double, range: ClosedRange<Int>)?
        var start = 0
        for end in history.indices {
            let sample = history[end].sample
            guard isUpright(sample) else {
                start = end + 1
                continue
            }
            while start < end, sample.time - history[start].sample.time > 0.1 { start += 1 }
            guard end > start else { continue }
            var low = Double.infinity
            for index in start...end { low = min(low, history[index].sample.extent) }
            if low > (best?.height ?? 0) { best = (low, start...end) }
        }
        return best
    }

    /// How much larger the body looks than at calibration (1 = same size).
    func bodyScale() -> Double {
        // The median of the parts' size ratios (the mean of two, or the one there is): a person
        // who turns changes one of them (the shoulder width first), not all.
        var a = Double.nan
        var b = Double.nan
        var c = Double.nan
        let minimumPart = 0.2 * reference
        if torsoReference > minimumPart, scaleTorso.value.isFinite { a = scaleTorso.value / torsoReference }
        if shinReference > minimumPart, scaleShin.value.isFinite { b = scaleShin.value / shinReference }
        if shoulderReference > 0.15 * reference, scaleShoulders.value.isFinite {
            c = scaleShoulders.value / shoulderReference
        }
        let ratio: Double
        switch (a.isFinite, b.isFinite, c.isFinite) {
        case (true, true, true): ratio = max(min(a, b), min(max(a, b), c))
        case (true, true, false): ratio = (a + b) / 2
        case (true, false, true): ratio = (a + c) / 2
        case (false, true, true): ratio = (b + c) / 2
        case (true, false, false): ratio = a
        case (false, true, false): ratio = b
        case (false, false, true): ratio = c
        case (false, false, false): return 1
        }
        return min(4, max(0.25, ratio))
    }
}

/// `acos(x)` in degrees for x in -1...1 (Abramowitz & Stegun 4.4.45, error below 0.005 degrees).
/// libm's `acos` would change two reported knee bends of the shared squat set by 0.1 degree
/// (rounding), so the outputs are kept as they are.
@inline(__always)
func arcCosineDegrees(_ x: Double) -> Double {
    let a = min(1, abs(x))
    let r = (1 - a).squareRoot() * (1.5707288 + a * (-0.2121144 + a * (0.0742610 - 0.0187293 * a)))
    let radians = x >= 0 ? r : Double.pi - r
    return radians * 180 / Double.pi
}
