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
///    they stand taller.
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
///    line did not rise and the hips did not rise above standing and come down again in the
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
        var extent: Double          // floorY - hipY
        var torso: Double           // shoulder centre to hip centre, Euclidean
        var shin: Double            // knee to ankle of the floor leg, Euclidean
        var shoulderWidth: Double   // left to right shoulder, Euclidean
        var thigh: Double           // lowest knee y - hip y
        var kneeDiff: Double        // |left knee y - right knee y|
        var torsoHeight: Double     // hip y - shoulder y
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
        /// When the person stood back up (while ``Phase/confirming``).
        var standTime = Double.nan
        var kneeBend: Double { thighRatio.isFinite ? arcCosineDegrees(thighRatio) : .nan }
        var checks: SquatChecks {
            SquatChecks(footTravel: footTravel, floorRise: floorRise, kneeAsymmetry: kneeAsymmetry,
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
    var lastAirborne = -Double.infinity
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
    public private(set) var currentDepth: Double?
    /// Reps counted so far.
    public var repCount: Int { reps.count }
    /// Whether the standing pose has been learned.
    public var hasLearnedStandingPose: Bool { isCalibrated }

    /// Creates a counter.
    /// - Parameter configuration: the settings; default ``SquatCounterConfiguration/init(depthThreshold:standThreshold:minimumConfidence:smoothingTimeConstant:standingWindow:stillnessTolerance:minimumRepDuration:maximumBottomHold:maximumGap:kneeExtension:maximumFootTravel:footHoldTime:maximumFloorRise:maximumKneeAsymmetry:minimumTorsoUprightness:plan:recordsDepthTrace:)``.
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
            verdict = .rejected(reason: RejectionReason(
                .insufficientInput,
                "never saw the person stand still long enough to learn the standing pose"))
        } else {
            verdict = .rejected(reason: RejectionReason(
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
        let lh = frame.leftHip, rh = frame.rightHip, lk = frame.leftKnee, rk = frame.rightKnee
        let la = frame.leftAnkle, ra = frame.rightAnkle
        let ls = frame.leftShoulder, rs = frame.rightShoulder
        let useLH = usable(lh), useRH = usable(rh), useLK = usable(lk), useRK = usable(rk)
        let useLA = usable(la), useRA = usable(ra), useLS = usable(ls), useRS = usable(rs)
        // A usable joint must have finite coordinates.
        func bad(_ use: Bool, _ point: Keypoint) -> Bool { use && !(point.x.isFinite && point.y.isFinite) }
        if bad(useLH, lh) || bad(useRH, rh) || bad(useLK, lk) || bad(useRK, rk) || bad(useLA, la)
            || bad(useRA, ra) || bad(useLS, ls) || bad(useRS, rs)
        {
            skipped.invalid += 1
            return nil
        }
        guard (useLH || useRH), (useLK || useRK), (useLA || useRA) else {
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
        var torso = nan, torsoHeight = nan, shoulderWidth = nan
        if useLS || useRS {
            let sx = useLS && useRS ? (ls.x + rs.x) / 2 : (useLS ? ls.x : rs.x)
            let sy = useLS && useRS ? (ls.y + rs.y) / 2 : (useLS ? ls.y : rs.y)
            let dx = sx - hipX, dy = sy - hipY
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
        let dx = a.x - b.x, dy = a.y - b.y
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

        let low = min(runMin, sample.extent), high = max(runMax, sample.extent)
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
                var sum = 0.0, count = 0.0
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
            guard isUpright(sample) else { start = end + 1; continue }
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
        var a = Double.nan, b = Double.nan, c = Double.nan
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

    // MARK: Counting

    /// The weight of a new value in an exponential average with time constant `tau` after `dt`
    /// seconds: `dt / (tau + dt)`, the first-order form of `1 - exp(-dt / tau)`. The time constants
    /// were tuned with this form: libm's exact `exp` keeps every rep count on the shared squat set
    /// but moves depths and times in 48 of its 56 files, so it stays.
    @inline(__always)
    func blend(_ dt: Double, _ tau: Double) -> Double { dt / (tau + dt) }

    /// What the feet did at this frame (see ``updateFeet(_:dt:)``).
    struct FeetState {
        /// How far a planted ankle has stayed from where the feet stood, over the hold time (image units).
        var moved: Double
        /// The floor line rose (a jump).
        var airborne: Bool
        /// The person is stepping (walking closer or further) outside a rep.
        var repositioning: Bool
    }

    /// One usable frame after calibration, in its phases: the feet, the body scale, the floor
    /// line, the reference, the depth, then the rep state machine.
    mutating func step(
        _ sample: Sample, isStill: Bool, stillMean: Double, into events: inout [SquatEvent]
    ) {
        let time = sample.time
        let dt = lastStepTime.isFinite ? time - lastStepTime : 0
        if phase == .down || phase == .confirming, dt > configuration.maximumGap, let current = rep {
            if phase == .confirming {
                judge(current, at: current.standTime, into: &events)
            } else {
                reject(current, .trackingLost, at: lastStepTime, into: &events)
            }
            phase = phase == .confirming ? .standing : .recovering
        }
        lastStepTime = time
        // "Settled": standing upright by both the smoothed and the last raw depth. Only then do the
        // body scale, the floor line and the reference follow the person: a squat foreshortens the
        // torso and shins and slides the ankle estimates, and the feet are planted during a rep.
        let settleLimit = 0.5 * configuration.standThreshold
        let settled = phase == .standing && !(smoothedDepth > settleLimit)
            && !((currentDepth ?? 0) > settleLimit)
        let feet = updateFeet(sample, dt: dt)
        updateScale(sample, dt: dt, settled: settled, repositioning: feet.repositioning)
        let scale = bodyScale()
        updateFloorLine(sample, dt: dt, isStill: isStill, settled: settled, feet: feet)
        if isStill, settled, !feet.airborne, !feet.repositioning {
            followStandingPerson(sample, stillMean: stillMean, scale: scale, dt: dt)
        }
        let depth = updateDepth(sample, scale: scale, dt: dt)
        advance(sample, depth: depth, scale: scale, feet: feet, dt: dt, into: &events)
    }

    /// Smooths the ankles, measures how far the feet have moved (sustained) and whether they left
    /// the floor, and lets the feet baseline follow a person who is stepping between reps.
    mutating func updateFeet(_ sample: Sample, dt: Double) -> FeetState {
        let time = sample.time
        // Ankles and floor smoothed a little (80 ms) for the feet checks: one-frame joint jumps
        // of a tracker must not look like a step or a jump.
        let footAlpha = dt > 0 ? blend(dt, 0.08) : 1
        footLeftX.update(sample.leftAnkleX, alpha: footAlpha)
        footLeftY.update(sample.leftAnkleY, alpha: footAlpha)
        footRightX.update(sample.rightAnkleX, alpha: footAlpha)
        footRightY.update(sample.rightAnkleY, alpha: footAlpha)
        footFloor.update(sample.floorY, alpha: footAlpha)
        // Feet planted? Each planted ankle's distance from where the feet stood, *sustained*: the
        // smallest over the last `footHoldTime`. A real step keeps the foot away for longer than
        // that; a tracker glitch (depth cameras lose the ankles as the knees bend) does not.
        let previousUnit = reference * bodyScale()
        let feetNow = plantedAnkles(sample, unit: previousUnit)
        let hold = configuration.footHoldTime, gap = configuration.maximumGap
        let moved = max(
            leftTravel.push(Self.travel(x: feetNow.lx, y: feetNow.ly, from: baselineAnkles),
                            at: time, window: hold, maximumGap: gap),
            rightTravel.push(Self.travel(x: feetNow.rx, y: feetNow.ry, from: baselineAnkles),
                             at: time, window: hold, maximumGap: gap))
        let airborne = floorLine - footFloor.value > configuration.maximumFloorRise * previousUnit
        // Repositioning: a foot has left its place while no rep is under way (walking, stepping
        // closer or further). The feet, floor line and body scale then follow for a while.
        if phase != .down, !airborne, moved > configuration.maximumFootTravel * previousUnit {
            movingUntil = time + hold
        }
        let repositioning = phase != .down && !airborne && time <= movingUntil
        if repositioning {
            // Still walking (the feet moved faster than a fifth of a standing reference per
            // second since the last frame)? Then keep following until they have been still for
            // a while.
            let step = max(Self.travel(x: feetNow.lx, y: feetNow.ly, from: baselineAnkles),
                           Self.travel(x: feetNow.rx, y: feetNow.ry, from: baselineAnkles))
            if dt > 0, step > 0.2 * previousUnit * dt { movingUntil = time + hold }
            resetFeet(to: feetNow)
        }
        return FeetState(moved: moved, airborne: airborne, repositioning: repositioning)
    }

    /// The body scale's parts follow the person while they stand upright (or step).
    mutating func updateScale(_ sample: Sample, dt: Double, settled: Bool, repositioning: Bool) {
        guard settled || repositioning else { return }
        let scaleAlpha = dt > 0 ? blend(dt, repositioning ? 0.3 : 1) : 1
        scaleTorso.update(sample.torso, alpha: scaleAlpha)
        scaleShin.update(sample.shin, alpha: scaleAlpha)
        scaleShoulders.update(sample.shoulderWidth, alpha: scaleAlpha)
    }

    /// The floor line follows the ankles only while the person stands: during a rep the feet are
    /// planted, and ankle estimates that slide as the knees go forward must not eat the drop.
    /// So it is learned, like the reference, only while the person stands still.
    mutating func updateFloorLine(_ sample: Sample, dt: Double, isStill: Bool, settled: Bool, feet: FeetState) {
        if !floorLine.isFinite || feet.repositioning {
            floorLine = footFloor.value
        } else if isStill, settled, !feet.airborne {
            floorLine += blend(dt, 0.2) * (sample.floorY - floorLine)
        }
    }

    /// Follows the standing person: the reference rises at once when they stand taller and drifts
    /// slowly otherwise.
    mutating func followStandingPerson(_ sample: Sample, stillMean: Double, scale: Double, dt: Double) {
        let still = stillMean / scale
        if still > reference * (1 + configuration.stillnessTolerance) {
            reference = still
        } else {
            reference += (blend(dt, 2)) * (still - reference)
        }
        if sample.thigh.isFinite {
            thighReference += (blend(dt, 2)) * (sample.thigh / scale - thighReference)
        }
    }

    /// Raw and smoothed depth of this frame (and the trace, when asked for).
    mutating func updateDepth(_ sample: Sample, scale: Double, dt: Double) -> Double {
        let height = (floorLine - sample.floorY + sample.extent) / scale
        let depth = 1 - height / reference
        let tau = configuration.smoothingTimeConstant
        if !smoothedDepth.isFinite || dt > configuration.maximumGap {
            smoothedDepth = depth
        } else {
            smoothedDepth += (tau > 0 ? blend(dt, tau) : 1) * (depth - smoothedDepth)
        }
        smoothedThigh.update(sample.thigh / scale, alpha: dt > 0 && tau > 0 ? blend(dt, tau) : 1)
        currentDepth = depth
        if configuration.recordsDepthTrace {
            trace.append(SquatDepthSample(time: sample.time, depth: depth, smoothedDepth: smoothedDepth))
        }
        return depth
    }

    /// The rep state machine: standing -> down -> confirming (take-off watch) -> standing, with
    /// recovering after a rejection until the person stands again.
    mutating func advance(
        _ sample: Sample, depth: Double, scale: Double, feet: FeetState, dt: Double,
        into events: inout [SquatEvent]
    ) {
        let time = sample.time
        let unit = reference * scale  // the standing reference in image units, now
        // Feet off the floor line (a jump): remembered, so the landing dip is not a squat either.
        if feet.airborne || floorLine - footFloor.value > configuration.maximumFloorRise * unit {
            lastAirborne = time
        }
        if phase == .confirming { confirm(sample, depth: depth, into: &events) }
        switch phase {
        case .standing: standing(sample, depth: depth, scale: scale, unit: unit, feet: feet, dt: dt)
        case .down: down(sample, depth: depth, scale: scale, unit: unit, feet: feet, into: &events)
        case .confirming: break
        case .recovering:
            if smoothedDepth <= configuration.standThreshold, depth <= configuration.standThreshold {
                phase = .standing
                candidateStart = time
                baselineFloor = footFloor.value
            }
        }
    }

    /// Standing: keep the start candidate and the feet baseline; go down past the depth threshold.
    mutating func standing(
        _ sample: Sample, depth: Double, scale: Double, unit: Double, feet: FeetState, dt: Double
    ) {
        let time = sample.time
        if smoothedDepth <= configuration.standThreshold {
            candidateStart = time
            baselineFloor = footFloor.value
            if !feet.repositioning {
                followFeet(plantedAnkles(sample, unit: unit), sample.kneeDiff, dt: dt, unit: unit)
            }
        }
        guard smoothedDepth >= configuration.depthThreshold, depth >= configuration.depthThreshold else { return }
        if restStart.isFinite { restStart = .nan }
        if setReps == 0 { setStart = candidateStart }
        rep = RepInProgress(
            startTime: candidateStart, bottomTime: time, bottomDepth: smoothedDepth,
            baselineFloor: baselineFloor.isFinite ? baselineFloor : footFloor.value,
            baselineKneeDiff: baselineKneeDiff, holdStart: time, holdDepth: smoothedDepth)
        kneeExcess.reset()
        standingRun = 0
        peakRise = 0
        fallFromPeak = 0
        phase = .down
        track(sample, depth: depth, scale: scale, unit: unit, moved: feet.moved)
    }

    /// Down: follow the rep; reject a step or a sit; stand back up into the take-off watch.
    mutating func down(
        _ sample: Sample, depth: Double, scale: Double, unit: Double, feet: FeetState,
        into events: inout [SquatEvent]
    ) {
        let time = sample.time, up = configuration.standThreshold
        track(sample, depth: depth, scale: scale, unit: unit, moved: feet.moved)
        guard var current = rep else { phase = .recovering; return }
        if depth <= up, kneesStraight(sample, scale: scale) {
            if standingRun == 0 { standingRunStart = time }
            standingRun += 1
        } else {
            standingRun = 0
        }
        if current.footTravel > configuration.maximumFootTravel, !feet.airborne {
            // A foot left its place: a step, a lunge or walking. Judge now and start afresh
            // from where the feet are, so walking closer never reads as a held squat.
            reject(current, .feetMoved, at: time, into: &events)
            phase = .recovering
            floorLine = footFloor.value
            resetFeet(to: plantedAnkles(sample, unit: unit))
            movingUntil = time + configuration.footHoldTime
        } else if time - current.holdStart > configuration.maximumBottomHold {
            // The hips have stayed still down there: sitting down (on a chair, the bed), not
            // a squat, however it ends.
            reject(current, .tooLong, at: time, into: &events)
            phase = .recovering
        } else if smoothedDepth <= up, depth <= up, kneesStraight(sample, scale: scale) {
            // Stood back up: watch for a take-off before counting.
            current.standTime = time
            rep = current
            phase = .confirming
            candidateStart = time
            confirm(sample, depth: depth, into: &events)
        }
    }

    /// The take-off watch after standing up: hips above standing mark a jump; when the watch ends
    /// (or the person goes down again) the rep is judged as of when they stood up.
    mutating func confirm(_ sample: Sample, depth: Double, into events: inout [SquatEvent]) {
        guard var current = rep else { phase = .standing; return }
        let time = sample.time
        // A take-off goes up and comes back down: the peak rise, and how far the hips have come
        // down from it since. Hips that rise and stay up are a taller standing pose, not a jump.
        let rise = -smoothedDepth
        if rise > peakRise { peakRise = rise; fallFromPeak = 0 }
        fallFromPeak = max(fallFromPeak, peakRise - rise)
        if fallFromPeak >= 0.5 * peakRise { current.hipRise = max(current.hipRise, peakRise) }
        rep = current
        let goingDown = smoothedDepth >= configuration.depthThreshold
        guard time - current.standTime >= configuration.takeOffWatch || goingDown else { return }
        judge(current, at: current.standTime, into: &events)
        phase = .standing
        candidateStart = time
    }

    /// Starts the foot baseline afresh from where the feet are now (after they moved).
    mutating func resetFeet(to feet: (lx: Double, ly: Double, rx: Double, ry: Double)) {
        baselineAnkles = feet
        leftTravel.reset()
        rightTravel.reset()
    }

    /// Lets the foot baseline and the standing knee-height difference follow the standing person
    /// with a clipped running average (time constant 1 s; each step moves at most 5 % of the
    /// standing reference), so a few glitched frames barely move it while a slow drift is
    /// followed. A robust stand-in for "the median over the standing phase", in O(1).
    mutating func followFeet(
        _ feet: (lx: Double, ly: Double, rx: Double, ry: Double), _ kneeDiff: Double, dt: Double, unit: Double
    ) {
        let alpha = dt > 0 ? blend(dt, 0.3) : 1
        let limit = 0.05 * unit
        @inline(__always) func follow(_ estimate: inout Double, _ value: Double) {
            guard value.isFinite else { return }
            if !estimate.isFinite { estimate = value; return }
            estimate += alpha * min(limit, max(-limit, value - estimate))
        }
        // A foot seen again after being off the floor line starts from where it is.
        if feet.lx.isFinite, !baselineAnkles.lx.isFinite { leftTravel.reset() }
        if feet.rx.isFinite, !baselineAnkles.rx.isFinite { rightTravel.reset() }
        follow(&baselineAnkles.lx, feet.lx)
        follow(&baselineAnkles.ly, feet.ly)
        follow(&baselineAnkles.rx, feet.rx)
        follow(&baselineAnkles.ry, feet.ry)
        follow(&baselineKneeDiff, kneeDiff)
    }

    /// The ankles that stand on the floor line (within 15 % of the standing reference of it).
    func plantedAnkles(_ sample: Sample, unit: Double) -> (lx: Double, ly: Double, rx: Double, ry: Double) {
        let nan = Double.nan
        let tolerance = 0.15 * unit
        let floor = footFloor.value
        let lx = footLeftX.value, ly = footLeftY.value, rx = footRightX.value, ry = footRightY.value
        let leftOK = sample.leftAnkleY.isFinite && ly.isFinite && floor - ly <= tolerance
        let rightOK = sample.rightAnkleY.isFinite && ry.isFinite && floor - ry <= tolerance
        return (leftOK ? lx : nan, leftOK ? ly : nan, rightOK ? rx : nan, rightOK ? ry : nan)
    }

    func kneesStraight(_ sample: Sample, scale: Double) -> Bool {
        guard thighReference > 0.1 * reference, sample.thigh.isFinite else { return true }
        return sample.thigh / scale >= configuration.kneeExtension * thighReference
    }

    /// Updates the rep in progress with this sample: bottom, still stretch, foot travel (already
    /// sustained: `moved`, image units), floor rise, knees (sustained, and how far they bent), torso.
    mutating func track(_ sample: Sample, depth: Double, scale: Double, unit: Double, moved: Double) {
        guard var current = rep else { return }
        current.downSamples += 1
        if thighReference > 0.1 * reference, smoothedThigh.value.isFinite {
            current.thighRatio = min(current.thighRatio, max(-1, min(1, smoothedThigh.value / thighReference)))
        }

        if smoothedDepth > current.bottomDepth {
            current.bottomDepth = smoothedDepth
            current.bottomTime = sample.time
            if sample.torsoHeight.isFinite, torsoHeightReference > 0.1 * reference {
                current.uprightness = sample.torsoHeight / scale / torsoHeightReference
            }
        }
        if abs(smoothedDepth - current.holdDepth) > configuration.stillnessTolerance {
            current.holdStart = sample.time
            current.holdDepth = smoothedDepth
        }
        if sample.kneeDiff.isFinite {
            let base = current.baselineKneeDiff.isFinite ? current.baselineKneeDiff : 0
            let excess = kneeExcess.push(
                max(0, sample.kneeDiff - base) / unit, at: sample.time,
                window: configuration.footHoldTime, maximumGap: configuration.maximumGap)
            current.kneeAsymmetry = max(current.kneeAsymmetry, excess)
        }
        current.floorRise = max(current.floorRise, (current.baselineFloor - footFloor.value) / unit)
        if moved.isFinite { current.footTravel = max(current.footTravel, moved / unit) }
        rep = current
    }

    /// Distance from an ankle at `(x, y)` to the nearest planted ankle of `base`; `-inf` when
    /// either side is unknown.
    static func travel(
        x: Double, y: Double, from base: (lx: Double, ly: Double, rx: Double, ry: Double)
    ) -> Double {
        guard x.isFinite else { return -.infinity }
        var nearest = Double.infinity
        if base.lx.isFinite {
            let dx = x - base.lx, dy = y - base.ly
            nearest = min(nearest, (dx * dx + dy * dy).squareRoot())
        }
        if base.rx.isFinite {
            let dx = x - base.rx, dy = y - base.ry
            nearest = min(nearest, (dx * dx + dy * dy).squareRoot())
        }
        return nearest.isFinite ? nearest : -.infinity
    }

    mutating func judge(_ current: RepInProgress, at time: Double, into events: inout [SquatEvent]) {
        let c = configuration
        let reason: SquatRejectionReason?
        if time - current.startTime < c.minimumRepDuration || current.downSamples < 2 {
            reason = .tooFast
        } else if current.floorRise > c.maximumFloorRise || lastAirborne >= current.startTime - 1
            || lastAirborne >= time - 0.2 || current.hipRise > c.maximumHipRise
        {
            reason = .jumped
        } else if c.minimumKneeBend > 0, current.kneeBend.isFinite, current.kneeBend < c.minimumKneeBend {
            reason = .kneesStraight
        } else if current.footTravel > c.maximumFootTravel || movingUntil >= current.startTime {
            // A foot left its place during the rep, or the feet were still moving (a step, as in
            // a lunge) when the hips started down.
            reason = .feetMoved
        } else if current.kneeAsymmetry > c.maximumKneeAsymmetry {
            reason = .asymmetricKnees
        } else if current.uprightness < c.minimumTorsoUprightness {
            reason = .bentOver
        } else {
            reason = nil
        }
        if let reason {
            reject(current, reason, at: time, into: &events)
            return
        }
        rep = nil
        let plan = c.plan
        let setNumber = min(sets.count + 1, plan.sets)
        let counted = SquatRep(
            number: reps.count + 1, set: setNumber, startTime: current.startTime,
            bottomTime: current.bottomTime, endTime: time, depth: current.bottomDepth,
            checks: current.checks)
        reps.append(counted)
        events.append(.rep(counted))
        setReps += 1
        if sets.count < plan.sets, setReps >= plan.repsPerSet {
            let done = SquatSet(number: sets.count + 1, reps: setReps, startTime: setStart, endTime: time)
            sets.append(done)
            events.append(.setCompleted(done))
            setReps = 0
            if sets.count == plan.sets {
                events.append(.workoutCompleted(time: time))
            } else {
                restStart = time
                restReported = false
            }
        }
    }

    mutating func reject(
        _ current: RepInProgress, _ reason: SquatRejectionReason, at time: Double,
        into events: inout [SquatEvent]
    ) {
        rep = nil
        let rejection = SquatRejection(
            reason: reason, startTime: current.startTime, endTime: time, depth: current.bottomDepth,
            checks: current.checks)
        rejections.append(rejection)
        events.append(.rejected(rejection))
    }

    mutating func checkRest(at time: Double, into events: inout [SquatEvent]) {
        guard restStart.isFinite, !restReported else { return }
        let rest = time - restStart
        if rest > configuration.plan.maximumRest {
            restReported = true
            longRests.append(SquatLongRest(set: sets.count, rest: rest))
            events.append(.restTooLong(set: sets.count, rest: rest, time: time))
        }
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
