public import Camera
public import ProofkitCore
internal import ProofkitSystem

/// How a live proof by camera ended.
public enum LiveProofEnding: String, Sendable, Equatable {
    /// The proof passed: the mat held in view, or the squats done.
    case passed
    /// `maxSeconds` passed first.
    case timeUp
    /// The caller cancelled it (a voice proof passed meanwhile, the alarm was stopped).
    case cancelled
    /// The rest between two sets was longer than allowed (squats).
    case restTooLong
}

/// The rule of the mat by camera.
///
/// Frames are judged at most ``judgedPerSecond`` a second (4: the judge takes about 50 ms of CPU a
/// frame here, so this stays near 0.2 of a core, Benchmarks/CAMERA.md; the frames in between are
/// dropped undecoded); the proof passes when ``passingFrames`` (3)
/// judged frames **in a row** pass, which at 4 a second is a mat held steadily in view for at
/// least half a second, and on a slower machine (2 a second) for a second. A failing frame in
/// between starts the run again, so a mat swept past the camera does not pass.
public struct LiveMatRule: Sendable, Equatable {
    /// Passing frames in a row needed (default 3).
    public var passingFrames: Int
    /// The most frames judged per second (default 4).
    public var judgedPerSecond: Double

    public init(passingFrames: Int = 3, judgedPerSecond: Double = 4) {
        self.passingFrames = passingFrames
        self.judgedPerSecond = judgedPerSecond
    }
}

/// One judged frame of a live mat proof.
public struct LiveMatUpdate: Sendable {
    /// Seconds since the proof started.
    public var seconds: Double
    /// The frame's judgement.
    public var result: PhotoProofResult
    /// Passing frames in a row so far.
    public var run: Int
    /// Frames judged so far.
    public var judged: Int
}

/// What a live mat proof amounted to.
public struct LiveMatResult: Sendable {
    /// How it ended.
    public var ending: LiveProofEnding
    /// Accepted (with the last passing frame's score) when it passed; otherwise rejected with
    /// the last hint ("too dark: turn on a light", "show the whole mat laid flat", ...).
    public var verdict: Verdict
    /// Frames judged.
    public var judged: Int
    /// Frames the camera gave (judged or not).
    public var seen: Int
    /// Seconds from start to end.
    public var seconds: Double
    /// The best mat score of any judged frame, 0...1.
    public var bestScore: Double
}

/// A live mat proof taken one camera frame at a time: ``PhotoJudge/watch(_:rule:maxSeconds:isCancelled:onUpdate:)``
/// runs one, and the alarm's camera watcher runs one beside a squat count on the same frames.
public struct LiveMatSession: Sendable {
    /// When it passes.
    public let rule: LiveMatRule
    /// Monotonic seconds at which it started.
    public let start: Double
    /// Passing frames in a row so far.
    public private(set) var run = 0
    /// Frames judged so far.
    public private(set) var judged = 0
    /// The best mat score of any judged frame, 0...1.
    public private(set) var bestScore = 0.0
    /// The hint of the last failing frame ("too dark: turn on a light", ...).
    public private(set) var hint = MatProofPolicy.notAMatHint
    /// The verdict of the last judged frame.
    public private(set) var lastVerdict: Verdict?
    private var lastJudged = -Double.infinity

    /// - Parameters:
    ///   - rule: when it passes (default 3 frames in a row, at most 4 judged a second).
    ///   - start: monotonic seconds at which it starts (default nil: now).
    public init(rule: LiveMatRule = LiveMatRule(), start: Double? = nil) {
        self.rule = rule
        self.start = start ?? POSIX.monotonicSeconds()
    }

    /// Monotonic seconds before which a frame is not judged (the rest are dropped undecoded).
    public var nextDue: Double { lastJudged + 1 / rule.judgedPerSecond }

    /// Whether the mat was held in view: ``LiveMatRule/passingFrames`` passing frames in a row.
    public var passed: Bool { run >= rule.passingFrames }

    /// Judges one frame (call it for frames at or after ``nextDue``).
    /// - Parameters:
    ///   - frame: the camera frame, as sent.
    ///   - name: what to call it in messages.
    ///   - judge: the photo judge.
    /// - Returns: the update to show.
    /// - Throws: the judge's errors (a frame it cannot decode, the runtime's).
    public mutating func take(_ frame: CameraFrame, name: String, judge: inout PhotoJudge) throws(ProofkitError)
        -> LiveMatUpdate
    {
        lastJudged = frame.time
        let judgement = try judge.judge(frame: frame, name: name)
        judged += 1
        bestScore = max(bestScore, judgement.judgement.score)
        lastVerdict = judgement.judgement.verdict
        if judgement.judgement.verdict.isAccepted {
            run += 1
        } else {
            run = 0
            hint = judgement.judgement.hint ?? hint
        }
        return LiveMatUpdate(seconds: frame.time - start, result: judgement, run: run, judged: judged)
    }
}

extension PhotoJudge {
    /// Judges camera frames until the mat is held in view (``LiveMatRule``), `maxSeconds` pass or
    /// `isCancelled` says so.
    /// - Parameters:
    ///   - source: the camera.
    ///   - rule: when it passes (default 3 frames in a row, at most 4 judged a second).
    ///   - maxSeconds: the longest it watches, in seconds.
    ///   - isCancelled: asked between frames (at least 5 times a second); true ends it as cancelled.
    ///   - onUpdate: called after each judged frame (to print the hint that applies).
    /// - Returns: the ending, the verdict and the counts.
    /// - Throws: the camera's errors (`.cameraUnplugged`, `.cameraStalled`, `.io`) and the runtime's.
    public mutating func watch(
        _ source: CameraFrameSource, rule: LiveMatRule = LiveMatRule(), maxSeconds: Double,
        isCancelled: () -> Bool = { false }, onUpdate: (LiveMatUpdate) -> Void = { _ in }
    ) throws(ProofkitError) -> LiveMatResult {
        var session = LiveMatSession(rule: rule)
        let start = session.start
        let counted = source.frameCount + source.droppedFrames
        func result(_ ending: LiveProofEnding, _ verdict: Verdict) -> LiveMatResult {
            LiveMatResult(
                ending: ending, verdict: verdict, judged: session.judged,
                seen: source.frameCount + source.droppedFrames - counted,
                seconds: POSIX.monotonicSeconds() - start, bestScore: session.bestScore)
        }
        func rejected(_ detail: String) -> Verdict { .rejected(reason: RejectionReason(.belowThreshold, detail)) }
        while true {
            let now = POSIX.monotonicSeconds()
            if isCancelled() { return result(.cancelled, rejected("cancelled")) }
            if now - start >= maxSeconds { return result(.timeUp, rejected(session.hint)) }
            let wait = min(0.2, max(0.01, start + maxSeconds - now))
            // Frames between two judged ones are dropped undecoded.
            guard let frame = try source.nextFrame(waitingUpTo: wait, notBefore: session.nextDue) else { continue }
            onUpdate(try session.take(frame, name: "\(source.path) frame \(frame.sequence)", judge: &self))
            if session.passed, let verdict = session.lastVerdict {
                return result(.passed, verdict)
            }
        }
    }
}
