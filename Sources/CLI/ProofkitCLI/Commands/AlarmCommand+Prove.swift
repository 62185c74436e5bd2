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
    static func prove(_ arguments: ParsedArguments, rest: [String], io: CommandIO) throws -> ExitStatus {
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
        guard maxSeconds > 0, maxSeconds <= 3600 else { throw UsageError("--max-seconds must be 0...3600") }
        let store = try openStore(arguments, io: io, access: .existing)
        let now = Date()
        var positionals = rest
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
        func report(_ outcome: ChainProofs.Outcome) {
            if !outcome.serviceWoken {
                io.printError(
                    "proofkit alarm: note: no alarm service is running on \(store.folder); start it with 'proofkit alarm run' (or 'proofkit alarm install')"
                )
            }
            let cancelled = outcome.cancelled.count
            if json {
                io.printJSON(
                    .object([
                        "chain": .string(outcome.chain), "proof": .string(outcome.kind),
                        "verdict": .string(outcome.verdict.rawValue), "cancelled": .int(cancelled),
                    ]))
                return
            }
            let rings = "\(cancelled) ring\(cancelled == 1 ? "" : "s") cancelled"
            switch outcome.verdict {
            case .accepted: io.print("proof accepted: chain \(outcome.chain) ended; \(rings)")
            case .escape: io.print("chain \(outcome.chain) ended by an escape (not a proof); \(rings)")
            case .rejected: io.print("proof rejected: chain \(outcome.chain) goes on; the backups still come")
            }
        }
        if escape {
            report(try proofs.escape(chain, at: Date()))
            return .success
        }
        let evidence = try Evidence(arguments, recording: positionals.first, maxSeconds: maxSeconds)
        guard chain.proof.accepts(evidence.kind) else {
            throw UsageError(
                "chain \(chain.id) asks for the \(chain.proof.rawValue) proof, not \(evidence.kind.rawValue)")
        }
        // A live proof holds the chain's backups off (at most AlarmStore.holdLimit) and stops the ring.
        var hold: ChainProofs.BackupHold?
        if evidence.isLive {
            hold = proofs.holdBackups(of: chain)
            if hold == nil {
                io.printError("proofkit alarm: note: no alarm service to hold the backups off during the live proof")
            }
        }
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
        report(try proofs.record(accepted: accepted, kind: evidence.kind, chain: chain, at: Date()))
        return accepted || !arguments.has("strict") ? .success : .rejected
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
            if let missing = proofs.recognizerMissing() {
                io.printError(
                    "proofkit alarm prove: the built-in recogniser is not available (\(missing)); judging by voice only"
                )
            }
            let outcome = try proofs.judgeRecording(path, for: chain)
            let result = outcome.result
            io.print(
                "\(path): '\(chain.duaText.name)' read for \(formatSeconds(result.gate.voicedSeconds)) of \(formatSeconds(outcome.neededSeconds)) needed"
            )
            if let heard = outcome.recognition?.transcript, !heard.isEmpty { io.print("transcript: " + heard) }
            io.print(ProofText.verdictLine(result.match))
            return result.match.verdict.isAccepted
        case .microphone(let device, let maxSeconds):
            if let missing = proofs.recognizerMissing() {
                io.printError(
                    "proofkit alarm prove: the built-in recogniser is not available (\(missing)); judging by voice only"
                )
            }
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
        case .photo(let path):
            let result = try proofs.judgePhoto(path)
            let judgement = result.judgement
            let score = "score \(decimalText(judgement.score, places: 3))"
            if judgement.verdict.isAccepted {
                io.print("\(path): accepted (\(score))")
            } else {
                io.print("\(path): rejected (\(score)): \(judgement.hint ?? "")")
            }
            return judgement.verdict.isAccepted
        case .camera(let kind, let maxSeconds):
            let source = try CameraOptions.open(arguments, io: io)
            defer { source.close() }
            if kind == .mat {
                let rule = ChainProofs.matRule
                io.print(LiveProofText.matStart(rule, maxSeconds: maxSeconds))
                var shown: String?
                let result = try proofs.judgeMat(watching: source, maxSeconds: maxSeconds) { update in
                    if let line = LiveProofText.matFrame(update, rule: rule, shown: &shown) { io.print(line) }
                }
                io.print(LiveProofText.matResult(result, rule: rule))
                return result.verdict.isAccepted
            }
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
        case .poses(let path, let maxSeconds):
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
        case .video(let path):
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
}
