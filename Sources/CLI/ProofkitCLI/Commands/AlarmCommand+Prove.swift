import Proofkit
import ProofkitCore
internal import ProofkitSystem

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `proofkit alarm prove`: a typed proof (or an escape) for a due chain.
extension AlarmCommand {
    /// Checks the options, finds the due chain, judges the evidence and records the verdict.
    static func prove(_ arguments: ParsedArguments, rest: [String], io: CommandIO) throws -> ExitStatus {
        let maxSeconds = try checkProveOptions(arguments)
        let store = try openStore(arguments, io: io, access: .existing)
        let now = Date()
        let (named, recording) = try namedChain(rest, arguments, in: store)
        // Only a due chain takes a proof: nothing is proven the night before. An escape is recorded
        // as what it is, so it may end a chain at any time.
        let escape = arguments.has("escape")
        let proofs = ChainProofs(store: store, environment: io.environment)
        let chain: StoredChain
        switch try proofs.target(named: named, escape: escape, now: now) {
        case .ended(let ended):
            io.print("chain \(ended.id) has already ended")
            return .success
        case .due(let due):
            chain = due
        }
        let json = arguments.has("json")
        if escape {
            report(try proofs.escape(chain, at: Date()), store: store, json: json, io: io)
            return .success
        }
        let evidence = try Evidence(arguments, recording: recording, maxSeconds: maxSeconds)
        guard chain.proof.accepts(evidence.kind) else {
            throw UsageError(
                "chain \(chain.id) asks for the \(chain.proof.rawValue) proof, not \(evidence.kind.rawValue)")
        }
        let hold = evidence.isLive ? holdBackups(of: chain, proofs: proofs, io: io) : nil
        defer { hold?.release() }
        let shown = json ? io.discardingOutput : io
        let accepted: Bool
        do {
            accepted = try judge(evidence, arguments, chain: chain, proofs: proofs, io: shown)
        } catch let error as ProofkitError {
            io.printError("proofkit alarm prove: \(error.description)")
            return ExitStatus(for: error.code)
        }
        // The chain may have left its window during a long proof: a proof that began while it was
        // due still counts.
        report(
            try proofs.record(accepted: accepted, kind: evidence.kind, chain: chain, at: Date()), store: store,
            json: json, io: io)
        return accepted || !arguments.has("strict") ? .success : .rejected
    }

    /// Checks that one kind of evidence was given and reads `--max-seconds` (0...3600).
    /// - Returns: `--max-seconds`, or ``AlarmStore/holdLimit``.
    private static func checkProveOptions(_ arguments: ParsedArguments) throws -> Double {
        let kinds = [
            arguments.has("voice"), arguments.value("photo") != nil, arguments.value("squat") != nil,
            arguments.has("escape"),
        ]
        guard kinds.filter({ $0 }).count == 1 else {
            throw UsageError(
                "prove needs one of --voice [REC], --photo PHOTO, --squat POSES|-, --squat --video VIDEO, --escape")
        }
        // `--squat --video` followed by another option: the parser took that option as the VIDEO.
        if let video = arguments.value("video"), video.isEmpty || (video.hasPrefix("--") && video.count > 2) {
            throw UsageError("--squat --video needs a VIDEO file, not '\(video)'")
        }
        let maxSeconds = try arguments.seconds("max-seconds") ?? AlarmStore.holdLimit
        guard maxSeconds > 0, maxSeconds <= 3600 else {
            throw UsageError("--max-seconds must be more than 0 and at most 3600, got \(maxSeconds)")
        }
        return maxSeconds
    }

    /// The chain named first among `positionals` (if it is one), and the recording after it
    /// (`--voice` only).
    private static func namedChain(
        _ positionals: [String], _ arguments: ParsedArguments, in store: AlarmStore
    ) throws -> (chain: StoredChain?, recording: String?) {
        var positionals = positionals
        var named: StoredChain? = nil
        if let first = positionals.first, let found = try store.chain(id: first) {
            named = found
            positionals.removeFirst()
        } else if let first = positionals.first, !arguments.has("voice") {
            throw ProofkitError(.notFound, "no alarm chain '\(first)'; 'proofkit alarm status' lists them")
        }
        guard positionals.count <= (arguments.has("voice") ? 1 : 0) else {
            throw UsageError("unexpected argument '\(positionals.last!)'")
        }
        return (named, positionals.first)
    }

    /// Holds the chain's backups off during a live proof (at most ``AlarmStore/holdLimit``) and
    /// stops the ring; says so when no service runs to hold them.
    private static func holdBackups(
        of chain: StoredChain, proofs: ChainProofs, io: CommandIO
    ) -> ChainProofs.BackupHold? {
        let hold = proofs.holdBackups(of: chain)
        if hold == nil {
            io.printError("proofkit alarm: note: no alarm service to hold the backups off during the live proof")
        }
        return hold
    }

    /// Prints what the proof (or the escape) did to the chain, and a note when no service runs.
    private static func report(_ outcome: ChainProofs.Outcome, store: AlarmStore, json: Bool, io: CommandIO) {
        if !outcome.serviceWoken {
            io.printError(
                "proofkit alarm: note: no alarm service is running on \(store.folder); start it with 'proofkit alarm run' (or 'proofkit alarm install')"
            )
        }
        if let reason = outcome.notRecorded {
            io.printError("proofkit alarm: note: this rejected attempt is not recorded in the store (\(reason))")
        }
        let cancelled = outcome.cancelled.count
        if json {
            io.printJSON(
                .object([
                    "chain": .string(outcome.chain), "proof": .string(outcome.kind),
                    "verdict": .string(outcome.verdict.rawValue), "cancelled": .int(cancelled),
                    "held_by_service": .bool(outcome.heldByService), "recorded": .bool(outcome.notRecorded == nil),
                ]))
            return
        }
        let rings =
            outcome.heldByService
            ? "the store cannot be written (a full disk?): the running service holds it, rings no more of the chain, and saves it once it can"
            : "\(cancelled) ring\(cancelled == 1 ? "" : "s") cancelled"
        switch outcome.verdict {
        case .accepted: io.print("proof accepted: chain \(outcome.chain) ended; \(rings)")
        case .escape: io.print("chain \(outcome.chain) ended by an escape (not a proof); \(rings)")
        case .rejected: io.print("proof rejected: chain \(outcome.chain) goes on; the backups still come")
        }
    }

    /// What `alarm prove` was given to judge.
    enum Evidence {
        case recording(String)
        case microphone(device: String, maxSeconds: Double)
        case photo(String)
        /// The mat (`.mat`) or squats (`.squat`) by camera.
        case camera(ProofKind, maxSeconds: Double)
        /// Squats from pose lines (a file, or `-`: a live stream on stdin).
        case poses(String, maxSeconds: Double)
        /// Squats from a video file.
        case video(String)

        var kind: ProofKind {
            switch self {
            case .recording, .microphone: .voice
            case .photo: .mat
            case .camera(let kind, _): kind
            case .poses, .video: .squat
            }
        }

        var isLive: Bool {
            switch self {
            case .microphone, .camera: true
            case .poses(let path, _): path == "-"
            case .recording, .photo, .video: false
            }
        }

        init(_ arguments: ParsedArguments, recording: String?, maxSeconds: Double) throws {
            if let video = arguments.value("video") {
                guard arguments.value("squat") == "", arguments.value("camera") == nil else {
                    throw UsageError("--video goes with --squat alone: --squat --video VIDEO")
                }
                self = .video(video)
            } else if CameraOptions.isLive(arguments) {
                let squat = arguments.value("squat") == ""
                guard squat || arguments.value("photo") == "" else {
                    throw UsageError("--camera takes --photo or --squat without a file")
                }
                self = .camera(squat ? .squat : .mat, maxSeconds: maxSeconds)
            } else if let photo = arguments.value("photo") {
                guard !photo.isEmpty else { throw UsageError("--photo needs a PHOTO, or --camera") }
                self = .photo(photo)
            } else if let poses = arguments.value("squat") {
                guard !poses.isEmpty else { throw UsageError("--squat needs POSES or -, or --camera") }
                self = .poses(poses, maxSeconds: maxSeconds)
            } else if let recording {
                self = .recording(recording)
            } else {
                self = .microphone(device: arguments.value("device") ?? "default", maxSeconds: maxSeconds)
            }
        }
    }

    /// Judges the evidence with the chain's settings (the voice proofs read the chain's text),
    /// printing what the proof saw.
    /// - Returns: whether it passed.
    /// - Throws: the proof's `ProofkitError`.
    static func judge(
        _ evidence: Evidence, _ arguments: ParsedArguments, chain: StoredChain, proofs: ChainProofs, io: CommandIO
    ) throws -> Bool {
        switch evidence {
        case .recording(let path):
            return try judgeRecording(path, chain: chain, proofs: proofs, io: io)
        case .microphone(let device, let maxSeconds):
            return try judgeListening(on: device, maxSeconds: maxSeconds, chain: chain, proofs: proofs, io: io)
        case .photo(let path):
            return try judgePhoto(path, proofs: proofs, io: io)
        case .camera(let kind, let maxSeconds):
            let source = try CameraOptions.open(arguments, io: io)
            defer { source.close() }
            if kind == .mat {
                return try judgeMat(watching: source, maxSeconds: maxSeconds, proofs: proofs, io: io)
            }
            return try judgeSquats(watching: source, maxSeconds: maxSeconds, proofs: proofs, io: io)
        case .poses(let path, let maxSeconds):
            return try judgePoseLines(path, maxSeconds: maxSeconds, proofs: proofs, io: io)
        case .video(let path):
            return try judgeVideo(path, proofs: proofs, io: io)
        }
    }

    /// Says when the built-in recogniser is missing: the voice proofs then judge by voice only.
    private static func warnIfNoRecognizer(_ proofs: ChainProofs, io: CommandIO) {
        if let missing = proofs.recognizerMissing() {
            io.printError(
                "proofkit alarm prove: the built-in recogniser is not available (\(missing)); judging by voice only"
            )
        }
    }

    /// The chain's text read in a recording: the time read, what was heard and the verdict.
    private static func judgeRecording(
        _ path: String, chain: StoredChain, proofs: ChainProofs, io: CommandIO
    ) throws -> Bool {
        warnIfNoRecognizer(proofs, io: io)
        let outcome = try proofs.judgeRecording(path, for: chain)
        let result = outcome.result
        io.print(
            "\(path): '\(chain.duaText.name)' read for \(formatSeconds(result.gate.voicedSeconds)) of \(formatSeconds(outcome.neededSeconds)) needed"
        )
        if let heard = outcome.recognition?.transcript, !heard.isEmpty { io.print("transcript: " + heard) }
        io.print(ProofText.verdictLine(result.match))
        return result.match.verdict.isAccepted
    }

    /// The chain's text read aloud on the microphone, shown as it is heard.
    private static func judgeListening(
        on device: String, maxSeconds: Double, chain: StoredChain, proofs: ChainProofs, io: CommandIO
    ) throws -> Bool {
        warnIfNoRecognizer(proofs, io: io)
        let live = try proofs.openLiveReading(device: device, maxSeconds: maxSeconds, for: chain)
        let proof = live.proof
        io.print("listening on \(device): read '\(proof.configuration.text.name)' aloud")
        let view = LiveView(
            io: io, json: false, text: proof.configuration.text, usesRecognizer: live.usesWhisper,
            neededSeconds: proof.neededSeconds, frameSeconds: proof.configuration.gate.frameDuration.seconds)
        let conclusion = try proofs.judgeLiveReading(live) { view.show($0) }
        view.finish()
        if !conclusion.heardText.isEmpty { io.print("transcript: " + conclusion.heardText) }
        io.print(ProofText.verdictLine(conclusion.result.match))
        return conclusion.result.match.verdict.isAccepted
    }

    /// A photo of the mat: the verdict with its score, and the hint when rejected.
    private static func judgePhoto(_ path: String, proofs: ChainProofs, io: CommandIO) throws -> Bool {
        let result = try proofs.judgePhoto(path)
        let judgement = result.judgement
        let score = "score \(decimalText(judgement.score, places: 3))"
        if judgement.verdict.isAccepted {
            io.print("\(path): accepted (\(score))")
        } else {
            io.print("\(path): rejected (\(score)): \(judgement.hint ?? "")")
        }
        return judgement.verdict.isAccepted
    }

    /// The mat watched by the camera until the rule passes or the time is up.
    private static func judgeMat(
        watching source: CameraFrameSource, maxSeconds: Double, proofs: ChainProofs, io: CommandIO
    ) throws -> Bool {
        let rule = ChainProofs.matRule
        io.print(LiveProofText.matStart(rule, maxSeconds: maxSeconds))
        var shown: String?
        let result = try proofs.judgeMat(watching: source, maxSeconds: maxSeconds) { update in
            if let line = LiveProofText.matFrame(update, rule: rule, shown: &shown) { io.print(line) }
        }
        io.print(LiveProofText.matResult(result, rule: rule))
        return result.verdict.isAccepted
    }

    /// Squats watched by the camera: each rep as it comes, then the summary and how it ended.
    private static func judgeSquats(
        watching source: CameraFrameSource, maxSeconds: Double, proofs: ChainProofs, io: CommandIO
    ) throws -> Bool {
        io.print(LiveProofText.squatStart(ChainProofs.squatPlan, maxSeconds: maxSeconds))
        var view: String?
        var restShown = -1
        var reps = 0
        let result = try proofs.judgeSquats(watching: source, maxSeconds: maxSeconds) { update in
            var resting = false
            for line in LiveProofText.squatFrame(update, view: &view, restShown: &restShown, resting: &resting) {
                io.print(line)
            }
            if resting { return }
            for event in update.events {
                if case .rep = event { reps += 1 }
                SquatOutput.report(event, json: false, io: io)
            }
        }
        for rep in result.squats.reps.dropFirst(reps) { SquatOutput.report(.rep(rep), json: false, io: io) }
        SquatOutput.printSummary(result.squats, name: source.path, io: io)
        io.print(LiveProofText.squatEnding(result, maxSeconds: maxSeconds))
        return result.ending == .passed && result.squats.verdict.isAccepted
    }

    /// Squats from pose lines (a file, or `-`: a live stream on stdin), within `maxSeconds`.
    private static func judgePoseLines(
        _ path: String, maxSeconds: Double, proofs: ChainProofs, io: CommandIO
    ) throws -> Bool {
        let name = path == "-" ? "stdin" : displayName(path)
        let (result, timedOut) = try proofs.judgeSquats(poseLinesAt: path, maxSeconds: maxSeconds) { event in
            SquatOutput.report(event, json: false, io: io)
        }
        if timedOut {
            io.printError(
                "proofkit alarm prove: --max-seconds (\(decimalText(maxSeconds, places: 0)) s) reached; the verdict is on what came"
            )
        }
        SquatOutput.printSummary(result, name: name, io: io)
        return result.verdict.isAccepted
    }

    /// Squats from a video file, with its progress; a video cut short is judged on the frames before.
    private static func judgeVideo(_ path: String, proofs: ChainProofs, io: CommandIO) throws -> Bool {
        let progress = ReportedProgress(io: io, label: "pose \(displayName(path))")
        defer { progress.finish() }
        let (result, stop) = try proofs.judgeSquats(videoAt: path, progress: progress.report) { event in
            SquatOutput.report(event, json: false, io: io)
        }
        if let stop {
            io.printError(
                "proofkit alarm prove: \(displayName(path)): \(stop); the verdict is on the frames before it")
        }
        SquatOutput.printSummary(result, name: displayName(path), io: io)
        return result.verdict.isAccepted
    }
}
