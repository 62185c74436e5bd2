import ProofkitCore
import SquatCounting
import Testing

/// Runs a counter over all frames and collects every event.
func run(
    _ frames: [PoseFrame], configuration: SquatCounterConfiguration = SquatCounterConfiguration()
) throws -> (result: SquatResult, events: [SquatEvent]) {
    var counter = try SquatRepCounter(configuration: configuration)
    var events: [SquatEvent] = []
    for frame in frames { events += counter.process(frame) }
    return (counter.finish(), events)
}

func reasons(_ result: SquatResult) -> Set<SquatRejectionReason> { Set(result.rejections.map(\.reason)) }

@Suite("Squat counter on synthetic movements")
struct SquatScenarioTests {
    @Test("deep squats are all counted, with start, bottom and end in order")
    func deepSquats() throws {
        let body = SyntheticBody(depth: repProfile(count: 5, depth: 0.6))
        let (result, _) = try run(body.frames(duration: 20))
        #expect(result.repCount == 5)
        for (index, rep) in result.reps.enumerated() {
            #expect(rep.startTime < rep.bottomTime && rep.bottomTime < rep.endTime)
            #expect(rep.depth > 0.5 && rep.depth < 0.7)
            // Rep i is centred on 2 + 3 i + 1 seconds.
            #expect(abs(rep.bottomTime - (3 + 3 * Double(index))) < 0.2)
        }
    }

    @Test("shallow squats (30 % of the leg) still count")
    func shallowSquats() throws {
        let (result, _) = try run(SyntheticBody(depth: repProfile(count: 4, depth: 0.3)).frames(duration: 16))
        #expect(result.repCount == 4)
    }

    @Test("partial dips that never reach the depth threshold are not counted")
    func partialReps() throws {
        let (result, _) = try run(SyntheticBody(depth: repProfile(count: 5, depth: 0.1)).frames(duration: 20))
        #expect(result.repCount == 0)
    }

    @Test("half reps: going down again before standing up counts once")
    func halfReps() throws {
        // Down to 0.6, up only to 0.3, down again, up only to 0.3, then all the way up.
        let body = SyntheticBody(depth: { t in
            guard t >= 2, t < 8 else { return 0 }
            let phase = t - 2
            switch phase {
            case ..<1: return 0.6 * phase
            case ..<2: return 0.6 - 0.3 * (phase - 1)
            case ..<3: return 0.3 + 0.3 * (phase - 2)
            case ..<4: return 0.6 - 0.3 * (phase - 3)
            case ..<5: return 0.3
            default: return 0.3 * (6 - phase)
            }
        })
        let (result, _) = try run(body.frames(duration: 11))
        #expect(result.repCount == 1)
    }

    @Test("a bounce at the bottom does not count twice")
    func bounceAtBottom() throws {
        let base = repProfile(count: 3, depth: 0.55, repDuration: 3)
        let body = SyntheticBody(depth: { t in
            let d = base(t)
            return d > 0.4 ? d + 0.08 * cosine(2 * Double.pi * 4 * t) : d
        })
        let (result, _) = try run(body.frames(duration: 16))
        #expect(result.repCount == 3)
    }

    @Test("a single-frame spike to full depth never completes a rep")
    func singleFrameSpike() throws {
        var body = SyntheticBody()
        body.edit = { index, frame in
            guard index % 60 == 45 else { return }
            frame.leftHip.y += 0.2
            frame.rightHip.y += 0.2
        }
        let (result, _) = try run(body.frames(duration: 20))
        #expect(result.repCount == 0)
    }

    @Test("dropped keypoints are skipped and reported; the reps around them still count")
    func droppedKeypoints() throws {
        var body = SyntheticBody(depth: repProfile(count: 4, depth: 0.5))
        body.edit = { index, frame in
            if index % 10 == 3 {
                frame.leftHip = .missing
                frame.rightHip = .missing
            }
            if index % 17 == 5 { frame.leftAnkle.confidence = 0.1 }  // one ankle still seen
        }
        let (result, _) = try run(body.frames(duration: 16))
        #expect(result.repCount == 4)
        #expect(result.skippedFrames[.missingJoints] == 48)
    }

    @Test("a rep is never completed across a long gap in the keypoints")
    func noRepInventedFromMissingData() throws {
        // The person goes down; the tracker loses them for 1.5 s; they are seen again standing.
        var body = SyntheticBody(depth: repProfile(count: 1, depth: 0.6, repDuration: 2.5))
        body.edit = { index, frame in
            let t = frame.time
            if t > 3.0 && t < 4.5 { frame = PoseFrame(time: t) }
            _ = index
        }
        let (result, _) = try run(body.frames(duration: 8))
        #expect(result.repCount == 0)
        #expect(reasons(result) == [.trackingLost])
        #expect(result.skippedFrameCount > 0)
    }

    @Test("fast reps (0.9 s) count; 0.3 s bounces do not")
    func fastReps() throws {
        let fast = try run(
            SyntheticBody(depth: repProfile(count: 6, depth: 0.5, repDuration: 0.9, pause: 0.4))
                .frames(duration: 12))
        #expect(fast.result.repCount == 6)
        let bounces = try run(
            SyntheticBody(depth: repProfile(count: 6, depth: 0.5, repDuration: 0.3, pause: 0.5))
                .frames(duration: 10))
        #expect(bounces.result.repCount == 0)
        #expect(reasons(bounces.result) == [.tooFast])
    }

    @Test("slow reps (6 s each) count")
    func slowReps() throws {
        let (result, _) = try run(
            SyntheticBody(depth: repProfile(count: 3, depth: 0.6, repDuration: 6))
                .frames(duration: 26))
        #expect(result.repCount == 3)
    }

    @Test("a 60 fps stream counts the same as 30 fps")
    func frameRateIndependent() throws {
        var body = SyntheticBody(depth: repProfile(count: 4, depth: 0.45))
        body.fps = 60
        #expect(try run(body.frames(duration: 16)).result.repCount == 4)
        body.fps = 12
        #expect(try run(body.frames(duration: 16)).result.repCount == 4)
    }

    @Test("stepping closer to the camera between reps keeps the count")
    func cameraDistanceChange() throws {
        var body = SyntheticBody(depth: repProfile(count: 4, depth: 0.45, pause: 3))
        // Between the 2nd and 3rd rep (t 9...11 s) the person grows 1.0 -> 1.5 (closer), their
        // hips and feet lower in the image, feet moving as they walk.
        body.legLength = 0.3
        body.floorY = 0.7
        body.scale = { t in t < 8.6 ? 1 : (t > 10.6 ? 1.5 : 1 + 0.25 * (t - 8.6)) }
        body.floorShift = { t in t < 8.6 ? 0 : (t > 10.6 ? 0.2 : 0.1 * (t - 8.6)) }
        let (result, _) = try run(body.frames(duration: 24))
        #expect(result.repCount == 4)
        #expect(reasons(result).isSubset(of: [.feetMoved]))
    }

    @Test("a side view counts the same")
    func sideView() throws {
        var body = SyntheticBody(depth: repProfile(count: 5, depth: 0.55))
        body.view = .side
        let (result, _) = try run(body.frames(duration: 18))
        #expect(result.repCount == 5)
    }

    @Test("sitting down once (and staying down) is not a squat")
    func sittingDown() throws {
        let body = SyntheticBody(depth: { t in t < 2 ? 0 : min(0.5, 0.5 * (t - 2)) })
        let (result, events) = try run(body.frames(duration: 20))
        #expect(result.repCount == 0)
        #expect(reasons(result) == [.tooLong])
        #expect(events.contains { if case .rejected(let r) = $0 { r.reason == .tooLong } else { false } })
    }

    @Test("bending over to touch the floor is not a squat")
    func bendingOver() throws {
        var body = SyntheticBody(depth: repProfile(count: 3, depth: 0.08))
        let bend = repProfile(count: 3, depth: 1.0)
        body.lean = { t in bend(t) }
        let (result, _) = try run(body.frames(duration: 12))
        #expect(result.repCount == 0)
        // Even with bent knees (hips lower), the shoulders at hip level reject it.
        var deeper = body
        deeper.depth = repProfile(count: 3, depth: 0.3)
        let (bent, _) = try run(deeper.frames(duration: 12))
        #expect(bent.repCount == 0)
        #expect(reasons(bent).contains(.bentOver))
    }

    @Test("lunges are not squats (front and side views)")
    func lunges() throws {
        for view in [SyntheticBody.View.front, .side] {
            var body = SyntheticBody(depth: repProfile(count: 3, depth: 0.45, repDuration: 2.5))
            body.view = view
            let step = repProfile(count: 3, depth: 1.4, repDuration: 2.5)
            body.rightFootStep = { t in min(0.7, step(t)) }
            let (result, _) = try run(body.frames(duration: 14))
            #expect(result.repCount == 0, "view \(view) \(result.reps.map(\.checks))")
            #expect(!result.rejections.isEmpty)
        }
    }

    @Test("jumping (take-off and landing with bent knees) is not a squat")
    func jumping() throws {
        var body = SyntheticBody()
        // Every 1.5 s: a 0.25 s dip, 0.4 s in the air, a landing dip.
        body.depth = { t in
            guard t > 2 else { return 0 }
            let phase = (t - 2).truncatingRemainder(dividingBy: 1.5)
            if phase < 0.25 { return 0.3 * (1 - cosine(2 * Double.pi * phase / 0.25)) / 2 }
            if phase > 0.65 && phase < 1.0 { return 0.3 * (1 - cosine(2 * Double.pi * (phase - 0.65) / 0.35)) / 2 }
            return 0
        }
        body.lift = { t in
            guard t > 2 else { return 0 }
            let phase = (t - 2).truncatingRemainder(dividingBy: 1.5)
            return phase > 0.25 && phase < 0.65 ? 0.3 * (1 - cosine(2 * Double.pi * (phase - 0.25) / 0.8)) : 0
        }
        let (result, _) = try run(body.frames(duration: 14))
        #expect(result.repCount == 0, "\(result.reps) \(result.rejections)")
    }

    @Test("jumping jacks (feet out and in, small dip) are not squats")
    func jumpingJacks() throws {
        var body = SyntheticBody(depth: repProfile(count: 8, depth: 0.2, repDuration: 0.8, pause: 0.2))
        let spread = repProfile(count: 8, depth: 0.45, repDuration: 0.8, pause: 0.2)
        body.footSpread = spread
        body.lift = { t in 0.1 * spread(t) }
        let (result, _) = try run(body.frames(duration: 12))
        #expect(result.repCount == 0)
    }

    @Test("standing still: the pose is learned and nothing is counted")
    func standingStill() throws {
        var body = SyntheticBody()
        var noise: UInt64 = 12345
        body.edit = { _, frame in
            // Deterministic jitter of about 0.3 % of the image.
            noise = noise &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let jitter = Double(noise >> 40) / Double(1 << 24) * 0.006 - 0.003
            frame.leftHip.y += jitter
            frame.rightHip.y += jitter
        }
        let (result, events) = try run(body.frames(duration: 30))
        #expect(result.repCount == 0)
        #expect(result.rejections.isEmpty)
        #expect(result.standingReference.map { abs($0 - 0.36) < 0.01 } == true)
        #expect(events.first.map { if case .calibrated = $0 { true } else { false } } == true)
    }

    @Test("walking away from and back towards the camera is not a squat")
    func walkingAwayAndBack() throws {
        var body = SyntheticBody()
        // 3 s standing, 4 s walking away (size 1 -> 0.6, feet rising in the image), 3 s there,
        // 4 s walking back.
        let size: (Double) -> Double = { t in
            switch t {
            case ..<3: 1
            case ..<7: 1 - 0.1 * (t - 3)
            case ..<10: 0.6
            case ..<14: 0.6 + 0.1 * (t - 10)
            default: 1
            }
        }
        body.scale = size
        body.floorShift = { t in -0.25 * (1 - size(t)) }
        body.centerX = 0.5
        let (result, _) = try run(body.frames(duration: 17))
        #expect(result.repCount == 0)
    }

    @Test("sets and rest: set events, a too-long rest, and the workout end")
    func setsAndRest() throws {
        // Two sets of 3 reps; the rest between them is 25 s; the plan allows 15 s.
        let first = repProfile(count: 3, depth: 0.5)
        let second = repProfile(count: 3, depth: 0.5, lead: 36)
        let body = SyntheticBody(depth: { t in max(first(t), second(t)) })
        let plan = SquatWorkoutPlan(repsPerSet: 3, sets: 2, maximumRest: 15)
        let (result, events) = try run(body.frames(duration: 48), configuration: SquatCounterConfiguration(plan: plan))
        #expect(result.repCount == 6)
        #expect(result.sets.map(\.reps) == [3, 3])
        #expect(result.reps.map(\.set) == [1, 1, 1, 2, 2, 2])
        #expect(result.longRests.count == 1)
        #expect(result.longRests.first?.set == 1)
        #expect(result.verdict == .accepted(score: 6))
        let kinds = events.compactMap { event -> String? in
            switch event {
            case .setCompleted: "set"
            case .restTooLong: "rest"
            case .workoutCompleted: "done"
            default: nil
            }
        }
        #expect(kinds == ["set", "rest", "set", "done"])
    }

    @Test("the verdict is rejected with the shortfall, or as insufficient input")
    func verdicts() throws {
        let short = try run(
            SyntheticBody(depth: repProfile(count: 2, depth: 0.5)).frames(duration: 10),
            configuration: SquatCounterConfiguration(plan: SquatWorkoutPlan(repsPerSet: 5)))
        #expect(short.result.verdict == .rejected(reason: RejectionReason(.incomplete, "2 of 5 squats")))
        let nobody = try run((0..<100).map { PoseFrame(time: Double($0) / 30) })
        #expect(nobody.result.verdict.isAccepted == false)
        if case .rejected(let reason) = nobody.result.verdict { #expect(reason.kind == .insufficientInput) }
        #expect(nobody.result.skippedFrames[.missingJoints] == 100)
    }

    @Test("NaN coordinates and non-increasing time are skipped and counted")
    func invalidFrames() throws {
        var frames = SyntheticBody(depth: repProfile(count: 2, depth: 0.5)).frames(duration: 10)
        frames[40].leftKnee.x = .nan
        frames[41].time = .infinity
        frames.insert(frames[50], at: 51)  // the same time twice
        let (result, _) = try run(frames)
        #expect(result.repCount == 2)
        #expect(result.skippedFrames[.invalidValues] == 2)
        #expect(result.skippedFrames[.timeNotIncreasing] == 1)
    }

    @Test("a person who starts moving at once is still counted (replay after calibration)")
    func startsImmediately() throws {
        // No standing lead-in: the first rep starts at t = 0; standing still comes only after it.
        let body = SyntheticBody(depth: repProfile(count: 2, depth: 0.5, lead: 0))
        let (result, _) = try run(body.frames(duration: 7))
        #expect(result.repCount == 2)
        #expect(result.reps.first.map { $0.bottomTime < 1.5 } == true)
    }

    @Test("configuration ranges are checked")
    func configurationValidation() {
        #expect(throws: ProofkitError.self) {
            try SquatRepCounter(configuration: SquatCounterConfiguration(depthThreshold: 0.1, standThreshold: 0.2))
        }
        #expect(throws: ProofkitError.self) {
            try SquatRepCounter(configuration: SquatCounterConfiguration(minimumConfidence: .nan))
        }
        #expect(throws: ProofkitError.self) {
            try SquatRepCounter(configuration: SquatCounterConfiguration(plan: SquatWorkoutPlan(repsPerSet: 0)))
        }
    }
}

@Suite("Squat counter: standing reference, take-off and knee gate")
struct SquatRobustnessTests {
    @Test("a rep that begins in the first second, with no calm start, is counted")
    func repAtOnce() throws {
        for lead in [0.0, 0.1, 0.3] {
            let body = SyntheticBody(depth: repProfile(count: 1, depth: 0.5, repDuration: 2, lead: lead))
            let (result, _) = try run(body.frames(duration: lead + 2.6))
            #expect(result.repCount == 1, "lead \(lead) s")
        }
    }

    @Test("a slow start of the descent (still enough for the window) does not set the standing height low")
    func slowStart() throws {
        // 0.4 s of a very slow sink (4 % of the leg), then the rep; the clip ends soon after.
        let body = SyntheticBody(depth: { t in
            t < 0.4
                ? 0.1 * t
                : repProfile(count: 1, depth: 0.3, repDuration: 2, lead: 0.4)(t) + 0.04 * max(0, 1 - (t - 0.4))
        })
        let (result, _) = try run(body.frames(duration: 3))
        #expect(result.repCount == 1)
    }

    @Test("a person never still long enough is measured from the whole sequence at the end")
    func neverStill() throws {
        var configuration = SquatCounterConfiguration()
        configuration.standingWindow = 10
        let body = SyntheticBody(depth: repProfile(count: 2, depth: 0.5, lead: 0.5))
        let (result, _) = try run(body.frames(duration: 6.5), configuration: configuration)
        #expect(result.repCount == 2)
        #expect(result.standingReference != nil)
    }

    @Test("a knee bend followed by a jump (tennis serve, jump squat) is not counted")
    func bendThenJump() throws {
        var body = SyntheticBody(depth: repProfile(count: 1, depth: 0.35, repDuration: 1.2, lead: 2))
        // Take-off right after standing up: hips and feet rise 0.3 of the leg for 0.4 s.
        body.lift = { t in t > 3.25 && t < 3.65 ? 0.3 : 0 }
        let (result, _) = try run(body.frames(duration: 6))
        #expect(result.repCount == 0)
        #expect(reasons(result).contains(.jumped))
    }

    @Test("hips that go down with straight knees: rejected by the knee gate when it is on")
    func kneeGate() throws {
        var body = SyntheticBody(depth: repProfile(count: 3, depth: 0.3, lead: 2))
        // The knees move down with the hips (the thigh stays vertical): no knee bend at all.
        body.edit = { _, frame in
            frame.leftKnee.y = frame.leftHip.y + 0.18
            frame.rightKnee.y = frame.rightHip.y + 0.18
        }
        var gated = SquatCounterConfiguration()
        gated.minimumKneeBend = 30
        let (result, _) = try run(body.frames(duration: 12), configuration: gated)
        #expect(result.repCount == 0)
        #expect(reasons(result) == [.kneesStraight])
        // Real squats bend the thighs far past the gate and still count with it on.
        let (squats, _) = try run(
            SyntheticBody(depth: repProfile(count: 3, depth: 0.5)).frames(duration: 12),
            configuration: gated)
        #expect(squats.repCount == 3)
        #expect(squats.reps.allSatisfy { $0.checks.kneeBend > 45 })
    }

    @Test("the new settings' ranges are checked")
    func newRanges() {
        for bad in [
            SquatCounterConfiguration(minimumKneeBend: 81), SquatCounterConfiguration(minimumKneeBend: -1),
            SquatCounterConfiguration(maximumHipRise: 0), SquatCounterConfiguration(takeOffWatch: 2.5),
            SquatCounterConfiguration(takeOffWatch: .nan),
        ] {
            #expect(throws: ProofkitError.self) { try SquatRepCounter(configuration: bad) }
        }
        #expect(
            (try? SquatRepCounter(configuration: SquatCounterConfiguration(minimumKneeBend: 80, takeOffWatch: 0)))
                != nil)
    }
}
