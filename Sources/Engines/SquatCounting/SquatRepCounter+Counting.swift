import ProofkitCore

// SquatRepCounter, continued: counting (the per-frame step and the rep state machine).
extension SquatRepCounter {
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
        let settled =
            (phase == .standing && !(smoothedDepth > settleLimit) && !((currentDepth ?? 0) > settleLimit))
            || standingAfterRejection(sample, isStill: isStill)
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

    /// Standing, whatever the depth reads, after a rejected rep: while the counter waits for the
    /// person to stand back up (``Phase/recovering``), the hip-to-floor height has been still for
    /// at least the longest flight (``longestFlight``, 1 s) with the knees straight (the
    /// hip-to-knee height back to ``SquatCounterConfiguration/kneeExtension`` of standing, the
    /// check that ends a rep) and upright. Nobody holds a squat with straight knees: a depth that
    /// reads above the stand threshold there comes from a stale standing reference or floor line
    /// (the view moved down during the rep, or the legs look shorter than when the reference was
    /// learned), and the reference, body scale and floor line follow the person as they do at
    /// depth 0. Without it the counter waited for a depth it never saw again (phone video 19:
    /// standing read 0.13 deep after a "rep" rejected as too long; 0 of 6 counted).
    func standingAfterRejection(_ sample: Sample, isStill: Bool) -> Bool {
        guard phase == .recovering, isStill, isCalibrated else { return false }
        return sample.time - runStart >= Self.longestFlight && isUpright(sample)
            && kneesStraight(sample, scale: bodyScale())
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
        let hold = configuration.footHoldTime
        let gap = configuration.maximumGap
        let moved = max(
            leftTravel.push(
                Self.travel(x: feetNow.lx, y: feetNow.ly, from: baselineAnkles),
                at: time, window: hold, maximumGap: gap),
            rightTravel.push(
                Self.travel(x: feetNow.rx, y: feetNow.ry, from: baselineAnkles),
                at: time, window: hold, maximumGap: gap))
        // Off the floor only with the hips up (see ``floorCanRise(atDepth:)``); the last frame's depth.
        let airborne =
            floorLine - footFloor.value > configuration.maximumFloorRise * previousUnit
            && floorCanRise(atDepth: currentDepth ?? 0)
        if !airborne {
            airborneRun.since = .nan
        } else if !airborneRun.since.isFinite {
            airborneRun.since = time
        }
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
            let step = max(
                Self.travel(x: feetNow.lx, y: feetNow.ly, from: baselineAnkles),
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
    ///
    /// Feet "in the air" while the person stands still for longer than any jump's flight
    /// (``longestFlight``) are not in the air: the view moved (the phone tilted or slid, or the
    /// person shuffled back without a visible step), and the floor line is learned afresh there.
    /// Without this the floor line stayed where it was, every frame after read as airborne, and
    /// every later rep as a jump (phone videos filmed from behind: 0 of 4 deep squats counted).
    mutating func updateFloorLine(_ sample: Sample, dt: Double, isStill: Bool, settled: Bool, feet: FeetState) {
        if !floorLine.isFinite || feet.repositioning {
            floorLine = footFloor.value
        } else if isStill, settled, !feet.airborne {
            floorLine += blend(dt, 0.2) * (sample.floorY - floorLine)
        } else if isStill, settled, feet.airborne, sample.time - airborneRun.since >= Self.longestFlight {
            floorLine = footFloor.value
            airborneRun.since = .nan
        }
    }

    /// Whether feet above the floor line can be a jump at this depth: only with the hips no lower
    /// than the rep threshold (``SquatCounterConfiguration/depthThreshold``). Nobody leaves the
    /// floor from the bottom of a squat: the legs straighten first, and in the air the hips are
    /// above standing (the depth, measured from the floor line left behind, is negative). Deep in
    /// a squat the "floor" rise is the tracker's: filmed from behind, MediaPipe puts the ankles of
    /// a deep squat 0.13 to 0.18 standing references higher as the shins tilt forward (phone
    /// videos, hips down 0.6 to 0.75), which read as jumps.
    @inline(__always)
    func floorCanRise(atDepth depth: Double) -> Bool { !(depth > configuration.depthThreshold) }

    /// The longest time feet can stay off the floor in a jump, in seconds. A standing vertical
    /// jump of 60 cm, far beyond a home workout's, is in the air for 0.7 s (2 * sqrt(2h/g)).
    static let longestFlight = 1.0

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
        if feet.airborne
            || (floorLine - footFloor.value > configuration.maximumFloorRise * unit && floorCanRise(atDepth: depth))
        {
            airborneRun.last = time
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
        let time = sample.time
        let up = configuration.standThreshold
        track(sample, depth: depth, scale: scale, unit: unit, moved: feet.moved)
        guard var current = rep else {
            phase = .recovering
            return
        }
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
        guard var current = rep else {
            phase = .standing
            return
        }
        let time = sample.time
        // A take-off goes up and comes back down: the peak rise, and how far the hips have come
        // down from it since. Hips that rise and stay up are a taller standing pose, not a jump.
        let rise = -smoothedDepth
        if rise > peakRise {
            peakRise = rise
            fallFromPeak = 0
        }
        fallFromPeak = max(fallFromPeak, peakRise - rise)
        if fallFromPeak >= 0.5 * peakRise { current.hipRise = max(current.hipRise, peakRise) }
        trackFloor(&current, depth: depth, unit: reference * bodyScale(), at: time)
        rep = current
        let goingDown = smoothedDepth >= configuration.depthThreshold
        guard time - current.standTime >= configuration.takeOffWatch || goingDown else { return }
        if !goingDown, airborneRun.since.isFinite || current.riseSince.isFinite {
            // The feet are still up: watch on until they come down, for at most the longest
            // flight. Feet that stay up longer never left the floor (the view moved, or the
            // tracker's ankles drifted up and back over seconds, as in phone videos of deep
            // squats from behind): that rise is no jump.
            let since = min(
                airborneRun.since.isFinite ? airborneRun.since : time,
                current.riseSince.isFinite ? current.riseSince : time)
            guard time - since >= Self.longestFlight else { return }
            current.riseSince = .nan
            airborneRun.last = -.infinity
            rep = current
        }
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
            if !estimate.isFinite {
                estimate = value
                return
            }
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
        let lx = footLeftX.value
        let ly = footLeftY.value
        let rx = footRightX.value
        let ry = footRightY.value
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
        trackFloor(&current, depth: depth, unit: unit, at: sample.time)
        if moved.isFinite { current.footTravel = max(current.footTravel, moved / unit) }
        rep = current
    }

    /// Follows the floor line's rise over the rep's baseline. A rise above the limit counts (as a
    /// take-off) only if the feet are back within the longest flight: feet that stay up longer
    /// never left the floor.
    func trackFloor(_ current: inout RepInProgress, depth: Double, unit: Double, at time: Double) {
        guard floorCanRise(atDepth: depth) else { return }
        let rise = (current.baselineFloor - footFloor.value) / unit
        if rise > configuration.maximumFloorRise {
            if !current.riseSince.isFinite {
                current.riseSince = time
                current.risePeak = 0
            }
            current.risePeak = max(current.risePeak, rise)
            return
        }
        // A landing brings the feet back to the floor, not just under the limit: a floor line
        // that hovers about the limit is one long rise, not many short hops.
        if current.riseSince.isFinite, rise > 0.5 * configuration.maximumFloorRise { return }
        if current.riseSince.isFinite, time - current.riseSince < Self.longestFlight {
            current.floorRise = max(current.floorRise, current.risePeak)
        }
        current.riseSince = .nan
        current.floorRise = max(current.floorRise, rise)
    }

    /// Distance from an ankle at `(x, y)` to the nearest planted ankle of `base`; `-inf` when
    /// either side is unknown.
    static func travel(
        x: Double, y: Double, from base: (lx: Double, ly: Double, rx: Double, ry: Double)
    ) -> Double {
        guard x.isFinite else { return -.infinity }
        var nearest = Double.infinity
        if base.lx.isFinite {
            let dx = x - base.lx
            let dy = y - base.ly
            nearest = min(nearest, (dx * dx + dy * dy).squareRoot())
        }
        if base.rx.isFinite {
            let dx = x - base.rx
            let dy = y - base.ry
            nearest = min(nearest, (dx * dx + dy * dy).squareRoot())
        }
        return nearest.isFinite ? nearest : -.infinity
    }

    mutating func judge(_ current: RepInProgress, at time: Double, into events: inout [SquatEvent]) {
        let c = configuration
        let reason: SquatRejectionReason?
        if time - current.startTime < c.minimumRepDuration || current.downSamples < 2 {
            reason = .tooFast
        } else if current.floorRise > c.maximumFloorRise || risingNow(current)
            || airborneRun.last >= current.startTime - 1 || airborneRun.last >= time - 0.2
            || current.hipRise > c.maximumHipRise
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

    /// A floor rise still under way when the rep is judged (the stream ended in it), short
    /// enough to be a flight, that began before the person stood up. (One that began in the
    /// take-off watch is judged there by the feet's airborne mark, as before: single-rep clips
    /// cut 0.2 s after a rep end in the depth cameras' ankle noise.)
    func risingNow(_ current: RepInProgress) -> Bool {
        current.riseSince.isFinite && lastStepTime - current.riseSince < Self.longestFlight
            && current.risePeak > configuration.maximumFloorRise && !(current.riseSince >= current.standTime)
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
