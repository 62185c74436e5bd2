public import ProofkitCore
internal import ProofkitSystem

/// The workout by camera: sets of reps with a rest in between that is enforced both ways.
///
/// After a set, the rest lasts at least ``rest`` seconds: frames are not counted until it has
/// passed (a rep made during it does not count). Then the next set must start (its first counted
/// rep begin) within ``startGrace`` seconds (15), or the workout ends as ``LiveProofEnding/restTooLong``.
public struct LiveSquatPlan: Sendable, Equatable {
    /// Reps per set (default 10).
    public var repsPerSet: Int
    /// Sets (default 1).
    public var sets: Int
    /// The rest between sets, seconds: its minimum (default 60).
    public var rest: Double
    /// Seconds after the rest within which the next set must start (default 15).
    public var startGrace: Double

    public init(repsPerSet: Int = 10, sets: Int = 1, rest: Double = 60, startGrace: Double = 15) {
        self.repsPerSet = repsPerSet
        self.sets = sets
        self.rest = rest
        self.startGrace = startGrace
    }
}

/// What happened in one frame of a live squat proof.
public struct LiveSquatUpdate: Sendable {
    /// Seconds since the proof started.
    public var seconds: Double
    /// The counter's events in this frame (reps counted, sets done...).
    public var events: [SquatEvent]
    /// Whether a person was in view.
    public var personInView: Bool
    /// Whether all eight squat joints (shoulders to ankles) were seen with the counter's minimum
    /// confidence: false when the camera sees only part of the person.
    public var wholeBodyInView: Bool
    /// Whether the detector saw more than one person the last time it looked (at the first frame,
    /// when the person was lost, and every ``LiveSquatSession/peopleCountInterval`` seconds): only
    /// the first is followed, so someone else in view may be the one counted.
    public var othersInView: Bool
    /// Seconds of rest still to go (0 when not resting).
    public var restLeft: Double
    /// Frames estimated so far.
    public var frames: Int
}

/// What a live squat proof amounted to.
public struct LiveSquatResult: Sendable {
    /// How it ended.
    public var ending: LiveProofEnding
    /// The counter's result (reps, sets, verdict against the plan's total).
    public var squats: SquatResult
    /// Frames the pose was estimated on.
    public var frames: Int
    /// Frames the camera gave, estimated or not (older frames are dropped when the pose is slower).
    public var seen: Int
    /// Seconds from start to end.
    public var seconds: Double
    /// Frames estimated per second.
    public var framesPerSecond: Double { seconds > 0 ? Double(frames) / seconds : 0 }
}

/// Counts squats live from a camera: each frame's pose (BlazePose, tracked from the previous
/// frame) goes to a ``SquatRepCounter``; each rep is reported as it is counted.
public struct LiveSquatCounter: Sendable {
    /// The counter's settings (its plan's maximum rest is set from the live plan).
    public var configuration: SquatCounterConfiguration
    /// The sets, reps and rest.
    public var plan: LiveSquatPlan

    /// - Parameters:
    ///   - configuration: the counter's thresholds (default: the engine's defaults).
    ///   - plan: sets, reps and rest.
    /// - Throws: `.invalidArgument` when the configuration or plan is invalid.
    public init(
        configuration: SquatCounterConfiguration = SquatCounterConfiguration(), plan: LiveSquatPlan = LiveSquatPlan()
    ) throws(ProofkitError) {
        guard plan.repsPerSet >= 1, plan.sets >= 1, plan.rest >= 0, plan.startGrace > 0 else {
            throw ProofkitError(
                .invalidArgument, "a live squat plan needs reps and sets of 1 or more and a rest of 0 s or more")
        }
        var configuration = configuration
        configuration.plan = SquatWorkoutPlan(
            repsPerSet: plan.repsPerSet, sets: plan.sets, maximumRest: plan.rest + plan.startGrace)
        try configuration.validate()
        self.configuration = configuration
        self.plan = plan
    }

    /// Starts counting: a ``LiveSquatSession`` takes the frames one at a time.
    /// - Parameter start: monotonic seconds at which it starts (default nil: now).
    /// - Throws: `.invalidArgument` when the configuration is invalid.
    public func session(start: Double? = nil) throws(ProofkitError) -> LiveSquatSession {
        LiveSquatSession(
            counter: try SquatRepCounter(configuration: configuration), plan: plan,
            minimumConfidence: configuration.minimumConfidence, start: start ?? POSIX.monotonicSeconds())
    }

    /// Watches `source` until the plan is done, `maxSeconds` pass, the rest runs over, or
    /// `isCancelled` says so.
    /// - Parameters:
    ///   - source: the camera.
    ///   - estimator: the pose models.
    ///   - maxSeconds: the longest it watches, in seconds.
    ///   - isCancelled: asked between frames (at least 5 times a second); true ends it as cancelled.
    ///   - onUpdate: called after each frame (print the reps as they come).
    /// - Returns: the ending and the counter's result.
    /// - Throws: the camera's errors (`.cameraUnplugged`, `.cameraStalled`, `.io`) and the runtime's.
    public func watch(
        _ source: CameraFrameSource, estimator: PoseEstimator, maxSeconds: Double,
        isCancelled: () -> Bool = { false }, onUpdate: (LiveSquatUpdate) -> Void = { _ in }
    ) throws(ProofkitError) -> LiveSquatResult {
        var session = try session()
        let start = session.start
        var seen = 0
        func result(_ ending: LiveProofEnding) -> LiveSquatResult {
            LiveSquatResult(
                ending: ending, squats: session.finish(), frames: session.frames, seen: seen,
                seconds: POSIX.monotonicSeconds() - start)
        }
        while true {
            let now = POSIX.monotonicSeconds()
            if isCancelled() { return result(.cancelled) }
            if now - start >= maxSeconds { return result(.timeUp) }
            let wait = min(0.2, max(0.01, start + maxSeconds - now))
            guard let frame = try source.nextImage(waitingUpTo: wait) else { continue }
            seen += 1
            let (update, ending) = try session.take(frame, estimator: estimator)
            onUpdate(update)
            if let ending { return result(ending) }
        }
    }

    /// The counter's frame of a pose: the eight joints in normalised image coordinates (y down),
    /// with the landmark visibility as confidence; no joint (confidence 0) when nobody is in view.
    public static func poseFrame(_ observation: PoseObservation, time: Double, width: Int, height: Int) -> PoseFrame {
        var frame = PoseFrame(time: time)
        guard let pose = observation.estimate, width > 0, height > 0 else { return frame }
        for joint in PoseJoint.allCases {
            let landmark = pose.landmarks[PoseSkeleton.landmarkIndex(of: joint)]
            frame[joint] = Keypoint(
                x: landmark.x / Double(width), y: landmark.y / Double(height), confidence: landmark.visibility)
        }
        return frame
    }
}

extension PosePhoto {
    /// The pose of a camera frame (format "camera"; the frame is its own full size).
    public init(cameraFrame image: RGBImage, observation: PoseObservation, timings: PoseTimings) {
        self.init(
            observation: observation, width: image.width, height: image.height, fullWidth: image.width,
            fullHeight: image.height, format: "camera", timings: timings)
    }
}

/// A live squat count taken one camera frame at a time (``LiveSquatCounter/session(start:)``):
/// ``LiveSquatCounter/watch(_:estimator:maxSeconds:isCancelled:onUpdate:)`` runs one, and the
/// alarm's camera watcher runs one beside the mat on the same frames.
public struct LiveSquatSession: Sendable {
    private var counter: SquatRepCounter
    /// The sets, reps and rest.
    public let plan: LiveSquatPlan
    private let minimumConfidence: Double
    /// Monotonic seconds at which it started.
    public let start: Double
    /// Frames the pose was estimated on.
    public private(set) var frames = 0
    private var previous: PoseEstimate?
    private var restUntil = -Double.infinity
    private var people = 0
    private var nextPeopleCount = -Double.infinity
    /// Seconds between the detector's looks for other people while one is tracked (2; the
    /// detector alone, without the landmark model, takes a few milliseconds).
    public static let peopleCountInterval = 2.0

    init(counter: SquatRepCounter, plan: LiveSquatPlan, minimumConfidence: Double, start: Double) {
        self.counter = counter
        self.plan = plan
        self.minimumConfidence = minimumConfidence
        self.start = start
    }

    /// Estimates the pose of one frame (tracked from the last) and counts it, unless a rest is
    /// running (then the frame is not counted).
    /// - Parameters:
    ///   - frame: the decoded camera frame.
    ///   - estimator: the pose models.
    /// - Returns: the update to show, and how the workout ended when it did (passed, or the rest ran over).
    /// - Throws: the runtime's errors.
    public mutating func take(_ frame: CameraImage, estimator: PoseEstimator) throws(ProofkitError)
        -> (LiveSquatUpdate, LiveProofEnding?)
    {
        let seconds = frame.time - start
        let observation = try estimator.estimate(image: frame.image, previous: previous)
        previous = observation.estimate
        frames += 1
        if estimator.lastRanDetector {
            (people, nextPeopleCount) = (estimator.lastPeopleDetected, frame.time + Self.peopleCountInterval)
        } else if frame.time >= nextPeopleCount {
            (people, nextPeopleCount) = (
                try estimator.countPeople(in: frame.image), frame.time + Self.peopleCountInterval
            )
        }
        let others = previous != nil && people > 1
        let pose = LiveSquatCounter.poseFrame(
            observation, time: seconds, width: frame.image.width, height: frame.image.height)
        let whole = PoseJoint.allCases.allSatisfy { pose[$0].confidence >= minimumConfidence }
        if frame.time < restUntil {
            let update = LiveSquatUpdate(
                seconds: seconds, events: [], personInView: previous != nil, wholeBodyInView: whole,
                othersInView: others,
                restLeft: restUntil - frame.time, frames: frames)
            return (update, nil)
        }
        let events = counter.process(pose)
        let update = LiveSquatUpdate(
            seconds: seconds, events: events, personInView: previous != nil, wholeBodyInView: whole,
            othersInView: others,
            restLeft: 0, frames: frames)
        for event in events {
            switch event {
            case .workoutCompleted: return (update, .passed)
            case .restTooLong: return (update, .restTooLong)
            case .setCompleted: restUntil = frame.time + plan.rest
            default: break
            }
        }
        return (update, nil)
    }

    /// The counter's result so far (reps, sets, verdict against the plan's total).
    public func finish() -> SquatResult { counter.finish() }
}
