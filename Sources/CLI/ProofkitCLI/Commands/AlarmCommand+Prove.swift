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
        var chain: StoredChain? = nil
        if let first = positionals.first, let found = try store.chain(id: first) {
            chain = found
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
        if let named = chain {
            guard named.state == .active else {
                io.print("chain \(named.id) has already ended")
                return .success
            }
            let due = try store.isDue(named, now: now)
            guard escape || due else { throw try store.notDue(named, now: now) }
        } else {
            let due = try store.dueChain(now: now)
            chain = due == nil && escape ? try store.currentChain(now: now) : due
        }
        guard let chain else { throw try store.notDue(nil, now: now) }
        let json = arguments.has("json")
        func report(_ verdict: String, _ kind: String, cancelled: [String]) {
            if json {
                io.printJSON(
                    .object([
                        "chain": .string(chain.id), "proof": .string(kind), "verdict": .string(verdict),
                        "cancelled": .int(cancelled.count),
                    ]))
                return
            }
            switch verdict {
            case "accepted":
                io.print(
                    "proof accepted: chain \(chain.id) ended; \(cancelled.count) ring\(cancelled.count == 1 ? "" : "s") cancelled"
                )
            case "escape":
                io.print(
                    "chain \(chain.id) ended by an escape (not a proof); \(cancelled.count) ring\(cancelled.count == 1 ? "" : "s") cancelled"
                )
            default:
                io.print("proof rejected: chain \(chain.id) goes on; the backups still come")
            }
        }
        if arguments.has("escape") {
            let cancelled = try store.end(chain: chain.id, kind: "escape", at: Date()) ?? []
            poke(store, io: io)
            report("escape", "escape", cancelled: cancelled)
            return .success
        }
        let proof: (ProofKind, any Subcommand.Type, [String], Bool)
        if let video = arguments.value("video") {
            guard arguments.value("squat") == "", arguments.value("camera") == nil else {
                throw UsageError("--video goes with --squat alone: --squat --video VIDEO")
            }
            proof = (.squat, SquatCommand.self, ["--video", video, "--strict"], false)
        } else if let camera = arguments.value("camera") {
            let command: any Subcommand.Type = arguments.value("squat") == "" ? SquatCommand.self : MatCommand.self
            guard arguments.value("squat") == "" || arguments.value("photo") == "" else {
                throw UsageError("--camera takes --photo or --squat without a file")
            }
            let passed = ["camera-format", "record"].flatMap { name in
                arguments.value(name).map { ["--\(name)", $0] } ?? []
            }
            proof = (
                command == MatCommand.self ? .mat : .squat, command,
                ["--camera=\(camera)", "--strict", "--max-seconds", "\(maxSeconds)s"] + passed, true
            )
        } else if let photo = arguments.value("photo") {
            guard !photo.isEmpty else { throw UsageError("--photo needs a PHOTO, or --camera") }
            proof = (.mat, MatCommand.self, [photo, "--strict"], false)
        } else if let poses = arguments.value("squat") {
            guard !poses.isEmpty else { throw UsageError("--squat needs POSES or -, or --camera") }
            let limit = ["--max-seconds", "\(maxSeconds)s"]
            proof = (.squat, SquatCommand.self, [poses, "--strict"] + (poses == "-" ? limit : []), poses == "-")
        } else if let recording = positionals.first {
            proof = (.voice, VoiceCommand.self, [recording, "--strict"], false)
        } else {
            proof = (
                .voice, VoiceCommand.self,
                ["--live", "--strict", "--max-seconds", "\(maxSeconds)s"]
                    + (arguments.value("device").map { ["--device", $0] } ?? []), true
            )
        }
        guard chain.proof.accepts(proof.0) else {
            throw UsageError("chain \(chain.id) asks for the \(chain.proof.rawValue) proof, not \(proof.0.rawValue)")
        }
        // A live proof holds the chain's backups off (at most AlarmStore.holdLimit) and stops the ring.
        var holdFD: Int32 = -1
        if proof.3 {
            do { holdFD = try AlarmControl.hold(chain: chain.id, socketPath: store.socketPath) } catch {
                io.printError("proofkit alarm: note: no alarm service to hold the backups off during the live proof")
            }
        }
        defer { if holdFD >= 0 { POSIX.closeDescriptor(holdFD) } }
        let status = ProofkitCLI.execute(proof.1, proof.2, io: json ? io.discardingOutput : io, as: "alarm prove")
        switch status {
        case .success:
            // The chain may have left its window during a long proof: a proof that began while it
            // was due still counts.
            let cancelled = try store.end(chain: chain.id, kind: "proof", at: Date(), detail: proof.0.rawValue) ?? []
            poke(store, io: io)
            report("accepted", proof.0.rawValue, cancelled: cancelled)
            return .success
        case .rejected:
            try store.write {
                try store.record(chain: chain.id, kind: "rejected", at: Date(), detail: proof.0.rawValue)
            }
            poke(store, io: io)
            report("rejected", proof.0.rawValue, cancelled: [])
            return arguments.has("strict") ? .rejected : .success
        default:
            return status
        }
    }
}
