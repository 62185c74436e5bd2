import DuaMatching
public import ProofkitCore
internal import ProofkitSystem
import SquatCounting
import Synchronization

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// "Prove chain X with this evidence": the typed proofs of `proofkit alarm prove`, as one facade
/// call per step.
///
/// - ``target(named:escape:now:)`` finds the chain: only a due chain takes a proof (nothing is
///   proven the night before); an escape may end the current chain at any time.
/// - The evidence is judged by the proof's own entry, with the chain's settings: the reading
///   proof of the chain's text (``judgeRecording(_:for:)``, ``openLiveReading(device:maxSeconds:for:)``),
///   the photo proof (``judgePhoto(_:)``).
/// - ``record(accepted:kind:chain:at:)`` ends the chain (its later rings cancelled) or records the
///   rejection, and wakes the service; ``escape(_:at:)`` ends it as an escape.
/// - While a live proof runs, ``holdBackups(of:)`` holds the chain's backups off (at most
///   `AlarmStore.holdLimit`) and silences the ring.
///
/// ```swift
/// let proofs = ChainProofs(store: store, environment: environment)
/// guard case .due(let chain) = try proofs.target(named: nil, escape: false, now: Date()) else { return }
/// let outcome = try proofs.judgeRecording("reading.wav", for: chain)
/// let recorded = try proofs.record(
///     accepted: outcome.result.match.verdict.isAccepted, kind: .voice, chain: chain, at: Date())
/// ```
public struct ChainProofs: Sendable {
    /// The alarm store.
    public let store: AlarmStore
    /// The environment the models and devices are found by (`PROOFKIT_MODELS`,
    /// `PROOFKIT_ALSA_CONFIG`...), as the caller was given it.
    public let environment: [String: String]

    /// Makes the proofs of `store`'s chains.
    public init(store: AlarmStore, environment: [String: String]) {
        self.store = store
        self.environment = environment
    }

    /// The chain a proof or an escape goes to.
    public enum Target: Sendable {
        /// This chain takes it.
        case due(StoredChain)
        /// The chain named has already ended: nothing to do.
        case ended(StoredChain)
    }

    /// Finds the chain a proof (or an escape) goes to.
    /// - Parameters:
    ///   - named: the chain the user named, or `nil` for the one due now (for an escape: else the
    ///     current one, see `AlarmStore.currentChain(now:)`).
    ///   - escape: whether this is an escape, which may end an active chain at any time.
    ///   - now: the time of the request.
    /// - Returns: the chain, or that the named chain already ended.
    /// - Throws: ``ProofkitError`` `.notDue` (exit 3) naming the next ring when no chain is due
    ///   (nothing is changed); the store's errors.
    public func target(named: StoredChain?, escape: Bool, now: Date) throws(ProofkitError) -> Target {
        if let named {
            guard named.state == .active else { return .ended(named) }
            if !escape, try !store.isDue(named, now: now) { throw try store.notDue(named, now: now) }
            return .due(named)
        }
        let due = try store.dueChain(now: now)
        guard let chain = due == nil && escape ? try store.currentChain(now: now) : due else {
            throw try store.notDue(nil, now: now)
        }
        return .due(chain)
    }

    /// How a typed proof ended.
    public enum Verdict: String, Sendable {
        /// The proof passed: the chain ended.
        case accepted
        /// The proof failed: the chain goes on, its backups still come.
        case rejected
        /// An escape (not a proof) ended the chain.
        case escape
    }

    /// What ``record(accepted:kind:chain:at:)`` and ``escape(_:at:)`` did.
    public struct Outcome: Sendable {
        /// The chain's id.
        public var chain: String
        /// The proof's kind (`voice`, `mat`, `squat`), or `escape`.
        public var kind: String
        /// How it ended.
        public var verdict: Verdict
        /// The rings cancelled (none for a rejection).
        public var cancelled: [String]
        /// Whether a service runs on the store and was told to re-read it.
        public var serviceWoken: Bool
        /// Whether the store could not take the end (a full disk) and the running service holds
        /// it instead, saving it once it can: the chain rings no more either way. Its cancelled
        /// rings are then not known here.
        public var heldByService: Bool = false
        /// Why a rejection could not be recorded (the store cannot be written now: a full disk, a
        /// read-only disk), or `nil` when it was. The verdict stands; only its record is lost.
        public var notRecorded: String? = nil
    }

    /// Records a judged proof: an acceptance ends the chain and cancels its later rings (a proof
    /// that began while the chain was due counts even if it left its window meanwhile); a
    /// rejection is recorded (when the store can be written: see ``Outcome/notRecorded``) and the
    /// chain goes on. The service is then told.
    /// - Parameters:
    ///   - accepted: the proof's verdict.
    ///   - kind: the proof's kind.
    ///   - chain: the chain (from ``target(named:escape:now:)``).
    ///   - at: when the proof ended.
    /// - Returns: the outcome.
    /// - Throws: the store's errors (`.storeReadOnly`, `.storeCorrupt`...).
    public func record(accepted: Bool, kind: ProofKind, chain: StoredChain, at: Date) throws(ProofkitError) -> Outcome {
        if accepted {
            guard let cancelled = try end(chain, kind: .proof, at: at, detail: kind.rawValue) else {
                return Outcome(
                    chain: chain.id, kind: kind.rawValue, verdict: .accepted, cancelled: [], serviceWoken: true,
                    heldByService: true)
            }
            return Outcome(
                chain: chain.id, kind: kind.rawValue, verdict: .accepted, cancelled: cancelled,
                serviceWoken: wakeService())
        }
        do throws(ProofkitError) {
            try store.write { () throws(ProofkitError) in
                try store.record(chain: chain.id, kind: .rejected, at: at, detail: kind.rawValue)
            }
        } catch  where AlarmService.cannotWriteNow(error) {
            // Nothing of the chain changes on a rejection: the user still needs the verdict.
            return Outcome(
                chain: chain.id, kind: kind.rawValue, verdict: .rejected, cancelled: [], serviceWoken: wakeService(),
                notRecorded: error.message)
        }
        return Outcome(
            chain: chain.id, kind: kind.rawValue, verdict: .rejected, cancelled: [], serviceWoken: wakeService())
    }

    /// Ends `chain` by an escape, recorded as what it is (not a proof), and tells the service.
    /// - Returns: the outcome (its rings cancelled).
    /// - Throws: the store's errors.
    public func escape(_ chain: StoredChain, at: Date) throws(ProofkitError) -> Outcome {
        guard let cancelled = try end(chain, kind: .escape, at: at, detail: nil) else {
            return Outcome(
                chain: chain.id, kind: "escape", verdict: .escape, cancelled: [], serviceWoken: true,
                heldByService: true)
        }
        return Outcome(
            chain: chain.id, kind: "escape", verdict: .escape, cancelled: cancelled, serviceWoken: wakeService())
    }

    /// Ends `chain` in the store, or, when the store cannot be written now (a full disk) and a
    /// service runs, hands the end to the service (`end CHAIN KIND TIME [DETAIL]`), which stops
    /// ringing the chain at once and saves the end once it can.
    /// - Returns: the cancelled rings, or `nil` when the service holds the end.
    /// - Throws: the store's failure when no service takes it.
    private func end(_ chain: StoredChain, kind: AlarmRecordKind, at: Date, detail: String?) throws(ProofkitError)
        -> [String]?
    {
        do {
            return try store.end(chain: chain.id, kind: kind, at: at, detail: detail) ?? []
        } catch  where AlarmService.cannotWriteNow(error) {
            let request = "end \(chain.id) \(kind) \(at.timeIntervalSince1970)" + (detail.map { " " + $0 } ?? "")
            guard (try? AlarmControl.send(request, socketPath: store.socketPath))?.hasPrefix("ok") == true else {
                throw error
            }
            return nil
        }
    }

    /// Tells the store's service to re-read the store. - Returns: whether one runs.
    private func wakeService() -> Bool {
        (try? AlarmControl.send("reload", socketPath: store.socketPath)) != nil
    }

    /// A hold on a chain's backups while a live proof runs: the service silences the ring and
    /// rings no backup of the chain until the hold is released (``release()``, or this object
    /// going away, or the process ending), at most `AlarmStore.holdLimit`.
    public final class BackupHold: @unchecked Sendable {
        private let descriptor = Mutex<Int32>(-1)

        init(descriptor: Int32) { self.descriptor.withLock { $0 = descriptor } }

        /// Releases the hold (the backups that fell inside it ring at once). Idempotent.
        public func release() {
            let fd = descriptor.withLock { fd in
                defer { fd = -1 }
                return fd
            }
            if fd >= 0 { POSIX.closeDescriptor(fd) }
        }

        deinit { release() }
    }

    /// Holds `chain`'s backups off while a live proof runs (see ``BackupHold``).
    /// - Returns: the hold, or `nil` when no service runs on the store (nothing rings then).
    public func holdBackups(of chain: StoredChain) -> BackupHold? {
        guard let fd = try? AlarmControl.hold(chain: chain.id, socketPath: store.socketPath) else { return nil }
        return BackupHold(descriptor: fd)
    }

    // MARK: - The evidence, judged by the proofs' own entries

    /// Why the built-in recogniser cannot hear a voice proof (then the proof judges by voice
    /// alone, as `proofkit voice` does by default), or `nil` when it is installed.
    public func recognizerMissing() -> String? {
        do throws(ProofkitError) {
            try WhisperRecognizer.checkInstalled(store: ModelStore(environment: environment))
            return nil
        } catch {
            return error.message
        }
    }

    /// The reading proof's settings for a chain's `text` (typed or hands-free): the default gate,
    /// and the recogniser when installed (without it, read-twice and voice-only apply).
    static func readingConfiguration(text: DuaText, usesRecognizer: Bool) -> ReadingProofConfiguration {
        ReadingProofConfiguration(
            text: text, usesRecognizer: usesRecognizer, voiceDetection: .preferred,
            allowsReadTwice: !usesRecognizer, vetoesUnlikeSpeech: true)
    }

    /// The reading proof of `chain`'s text over a recording, as `proofkit voice REC --text TEXT`
    /// judges it: the default gate (Silero when installed), the built-in recogniser when
    /// installed (see ``recognizerMissing()``), the default forced-score rule.
    /// - Parameters:
    ///   - path: the recording (any format the reader reads).
    ///   - chain: the chain whose text is read.
    /// - Returns: the outcome (``ReadingProofRecording/Outcome``).
    /// - Throws: ``ProofkitError``: the recording's (`.notFound` 66, `.decodeFailed` 65...),
    ///   a damaged model (`.modelInvalid` 78).
    public func judgeRecording(_ path: String, for chain: StoredChain) throws(ProofkitError)
        -> ReadingProofRecording.Outcome
    {
        // The input first: a bad recording is refused before any model loads.
        let recording = try ReadingProofRecording.Recording(path: path)
        let store = ModelStore(environment: environment)
        let whisper = recognizerMissing() == nil ? WhisperRecognizer.Loading(store: store, threads: 2) : nil
        do throws(ProofkitError) {
            let outcome = try ReadingProofRecording.run(
                recording: recording,
                configuration: Self.readingConfiguration(text: chain.duaText, usesRecognizer: whisper != nil),
                sileroModelPath: ReadingProofSession.sileroModelPath(environment: environment), fallback: .always,
                recognize: whisper.map { loading in
                    ReadingProofRecording.wholeReadingRecognizer { () throws(ProofkitError) in try loading.wait() }
                })
            _ = try whisper?.wait()  // a damaged model is an error even when no voice was heard
            return outcome
        } catch {
            _ = try? whisper?.wait()
            throw error.path == nil ? error.at(path: path) : error
        }
    }

    /// Opens the reading proof of `chain`'s text on a capture device, as
    /// `proofkit voice --live --hands-free --text TEXT` does: capture starts here; judge it with
    /// ``judgeLiveReading(_:observe:)``.
    /// - Parameters:
    ///   - device: the ALSA capture device (of `PROOFKIT_ALSA_CONFIG` when set).
    ///   - maxSeconds: the most listening, in seconds.
    ///   - chain: the chain whose text is read.
    /// - Returns: the live proof, listening.
    /// - Throws: ``ProofkitError``: `.runtimeUnavailable` (69: the device is missing or busy;
    ///   a bad `PROOFKIT_ALSA_CONFIG`), a damaged model (`.modelInvalid` 78).
    public func openLiveReading(device: String, maxSeconds: Double, for chain: StoredChain) throws(ProofkitError)
        -> LiveReadingProof
    {
        let whisper =
            recognizerMissing() == nil
            ? try WhisperRecognizer(store: ModelStore(environment: environment), threads: 2) : nil
        var options = LiveReadingProof.Options()
        options.device = device
        options.soundDevices = try SoundDevices(environment: environment)
        options.maxSeconds = maxSeconds
        options.sileroModelPath = ReadingProofSession.sileroModelPath(environment: environment)
        options.fallback = .always
        options.keepsAudio = whisper != nil
        return try LiveReadingProof(
            configuration: Self.readingConfiguration(text: chain.duaText, usesRecognizer: whisper != nil),
            options: options,
            whisper: whisper)
    }

    /// Listens with a live reading proof (``openLiveReading(device:maxSeconds:for:)``) and judges
    /// it: listening ends when the proof passes, at the first pause after a whole reading
    /// (``ReadingEnd``), or after its most seconds; a whole reading the live transcript rejects
    /// is judged again as a recording.
    /// - Parameters:
    ///   - live: the live proof.
    ///   - observe: each update while listening, on the listening thread.
    /// - Returns: the conclusion (verdict and what decided it).
    /// - Throws: ``ProofkitError``: the device's failure while listening, the recogniser's.
    public func judgeLiveReading(
        _ live: LiveReadingProof, observe: @escaping @Sendable (LiveReadingProof.Update) -> Void
    ) throws(ProofkitError) -> LiveReadingProof.Conclusion {
        let reading = ReadingEnd()
        let summary = live.run { update in
            observe(update)
            if reading.observe(update) { live.stop() }  // a pass, or a whole reading's pause
        }
        if let failure = live.captureFailure ?? summary.failure { throw failure }
        return try live.conclude(
            heardSeconds: summary.heardSeconds, forcedScore: ForcedScoreRule.recordingDefault,
            asRecordingWhenRejected: reading.wholeReading)
    }

    /// The mat proof by camera, as `proofkit mat --camera` judges it: frames judged a few times a
    /// second until the mat is held in view (`LiveMatRule`'s default: 3 passing frames in a row)
    /// or `maxSeconds` pass.
    /// - Parameters:
    ///   - source: the camera, opened (`CameraFrameSource`); the caller closes it.
    ///   - maxSeconds: the most watching, in seconds.
    ///   - onUpdate: each judged frame.
    /// - Returns: the result (its verdict, how it ended).
    /// - Throws: ``ProofkitError``: the model's (69, 78), the camera's (`.cameraUnplugged`,
    ///   `.cameraStalled`...).
    public func judgeMat(
        watching source: CameraFrameSource, maxSeconds: Double, onUpdate: (LiveMatUpdate) -> Void
    ) throws(ProofkitError) -> LiveMatResult {
        var judge = try PhotoJudge(
            options: PhotoJudgeOptions(loadsClassNames: false), store: ModelStore(environment: environment))
        return try judge.watch(source, rule: Self.matRule, maxSeconds: maxSeconds, onUpdate: onUpdate)
    }

    /// The rule a mat proof by camera passes by (the default `LiveMatRule`).
    public static let matRule = LiveMatRule()

    /// The squats a chain's squat proof asks for: one set of 10 (the hands-free watcher's too).
    public static let squatPlan = LiveSquatPlan(repsPerSet: 10, sets: 1)

    /// The squat proof by camera, as `proofkit squat --camera` counts it: ``squatPlan``, each rep
    /// as it is counted, until the plan is done or `maxSeconds` pass.
    /// - Parameters:
    ///   - source: the camera, opened (`CameraFrameSource`); the caller closes it.
    ///   - maxSeconds: the most watching, in seconds.
    ///   - onUpdate: each frame's update (who is in view, the reps counted).
    /// - Returns: the result; the proof passed when its ending is `.passed` and its squats'
    ///   verdict accepted.
    /// - Throws: ``ProofkitError``: the pose models' (69, 78), the camera's.
    public func judgeSquats(
        watching source: CameraFrameSource, maxSeconds: Double, onUpdate: (LiveSquatUpdate) -> Void
    ) throws(ProofkitError) -> LiveSquatResult {
        let estimator = try PoseEstimator(store: ModelStore(environment: environment), threads: 1)
        return try LiveSquatCounter(plan: Self.squatPlan).watch(
            source, estimator: estimator, maxSeconds: maxSeconds, onUpdate: onUpdate)
    }

    /// The squat proof of pose JSON Lines, as `proofkit squat POSES --reps 10` counts them: a
    /// file read whole (its events handed over once every line was read), or `-`, a live stream on
    /// standard input, ending when the 10 squats are done, the input ends or `maxSeconds` pass.
    /// - Parameters:
    ///   - path: the pose lines (`proofkit pose --json`'s format), or `-` for standard input.
    ///   - maxSeconds: the most waiting for a live stream, in seconds.
    ///   - onEvent: each rep, rejection and set as it is counted.
    /// - Returns: the result, and whether `maxSeconds` ended a live stream.
    /// - Throws: ``ProofkitError``: `.notFound` (66), `.decodeFailed` (65: a bad line, no frame),
    ///   `.io` (74).
    public func judgeSquats(
        poseLinesAt path: String, maxSeconds: Double, onEvent: (SquatEvent) -> Void
    ) throws(ProofkitError) -> (result: SquatResult, timedOut: Bool) {
        let live = path == "-"
        let fd = live ? 0 : try PoseLineReader.openInput(path)
        defer { if !live { POSIX.closeDescriptor(fd) } }
        var counting = PoseLineCounting(
            counter: try squatCounter(), name: live ? "stdin" : displayName(path), live: live)
        let timedOut = try counting.read(
            fd: fd, deadline: live ? POSIX.monotonicSeconds() + maxSeconds : nil, onEvent: onEvent)
        return (try counting.finish(path: path, onEvent: onEvent), timedOut)
    }

    /// The squat proof of a video file, as `proofkit squat --video VIDEO --reps 10` counts it:
    /// every frame through the pose models with tracking, each frame's `pose --json` line counted
    /// as ``judgeSquats(poseLinesAt:maxSeconds:onEvent:)`` counts a file's.
    /// - Parameters:
    ///   - path: the video (any container and codec FFmpeg's libraries read).
    ///   - progress: ``PoseVideoLines/run(path:estimator:joints:offset:progress:each:)``'s.
    ///   - onEvent: each rep, rejection and set, once every frame was read.
    /// - Returns: the result, and where the frames ended early, if they did.
    /// - Throws: ``ProofkitError``: the video's (65, 66, 69, 74; `.decodeFailed` when no frame
    ///   decodes), the pose models' (69, 78).
    public func judgeSquats(
        videoAt path: String, progress: (Int) -> Void = { _ in }, onEvent: (SquatEvent) -> Void
    ) throws(ProofkitError) -> (result: SquatResult, stop: String?) {
        let estimator = try PoseEstimator(store: ModelStore(environment: environment))
        var counting = PoseLineCounting(counter: try squatCounter(), name: displayName(path), live: false)
        let stop = try counting.read(videoAt: path, estimator: estimator, progress: progress, onEvent: onEvent)
        return (try counting.finish(path: path, whenEmpty: "no frame of the video decodes", onEvent: onEvent), stop)
    }

    /// A counter for ``squatPlan``.
    private func squatCounter() throws(ProofkitError) -> SquatRepCounter {
        try SquatRepCounter(
            configuration: SquatCounterConfiguration(
                plan: SquatWorkoutPlan(
                    repsPerSet: Self.squatPlan.repsPerSet, sets: Self.squatPlan.sets, maximumRest: Self.squatPlan.rest))
        )
    }

    /// The photo proof of a photo, as `proofkit mat PHOTO` judges it (the default engine, rule
    /// and threshold, the learned head when installed).
    /// - Parameter path: the photo (JPEG or PNG).
    /// - Returns: the result.
    /// - Throws: ``ProofkitError``: the photo's (`.notFound` 66, `.decodeFailed` 65...), the
    ///   model's (`.runtimeUnavailable` 69, `.modelInvalid` 78).
    public func judgePhoto(_ path: String) throws(ProofkitError) -> PhotoProofResult {
        var judge = try PhotoJudge(
            options: PhotoJudgeOptions(loadsClassNames: false), store: ModelStore(environment: environment),
            prefetching: path)
        do throws(ProofkitError) {
            return try judge.judge(contentsOf: path)
        } catch {
            throw error.path == nil ? error.at(path: path) : error
        }
    }
}
