import Proofkit
import ProofkitCore

extension MatCommand {
    /// `mat --camera`: judges the camera's frames until the mat is held in view (``LiveMatRule``)
    /// or --max-seconds pass; prints the hint that applies each time it changes.
    static func watch(_ judge: inout PhotoJudge, _ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        let maxSeconds = try CameraOptions.maxSeconds(arguments, default: 60)
        let json = arguments.has("json")
        let source = try CameraOptions.open(arguments, io: io)
        defer { source.close() }
        let rule = LiveMatRule()
        if !json {
            io.print(
                "watching for the mat: hold it in view, laid flat (passes at \(rule.passingFrames) frames in a row; up to \(decimalText(maxSeconds, places: 0)) s)"
            )
        }
        var shownHint: String?
        let result = try judge.watch(
            source, rule: rule, maxSeconds: maxSeconds,
            onUpdate: { update in
                let judgement = update.result.judgement
                let at = "\(decimalText(update.seconds, places: 1)) s"
                if json {
                    io.printJSON([
                        "event": "frame", "time": .rounded(update.seconds, places: 3),
                        "verdict": .string(judgement.verdict.name), "score": .rounded(judgement.score),
                        "brightness": .rounded(judgement.brightness),
                        "hint": judgement.hint.map(JSONValue.string) ?? .null,
                        "run": .int(update.run),
                    ])
                } else if judgement.verdict.isAccepted {
                    io.print(
                        "\(at): mat in view (\(update.run) of \(rule.passingFrames)), score \(decimalText(judgement.score, places: 2))"
                    )
                    shownHint = nil
                } else if let hint = judgement.hint, hint != shownHint {
                    io.print("\(at): not yet: \(hint)")
                    shownHint = hint
                }
            })
        let seconds = decimalText(result.seconds, places: 1)
        if json {
            io.printJSON([
                "event": "result", "verdict": .string(result.verdict.name), "ending": .string(result.ending.rawValue),
                "judged": .int(result.judged), "frames": .int(result.seen),
                "seconds": .rounded(result.seconds, places: 3),
                "best_score": .rounded(result.bestScore), "camera": .string(source.path),
                "mode": CameraCommand.modeJSON(source.mode),
            ])
        } else if result.verdict.isAccepted {
            io.print(
                "accepted: the mat held in view for \(rule.passingFrames) frames in a row; \(result.judged) frames judged in \(seconds) s"
            )
        } else {
            let reason: String
            if case .rejected(let why) = result.verdict { reason = why.detail } else { reason = "" }
            io.print(
                "rejected: no steady view of the mat in \(seconds) s (\(result.judged) frames judged, best score \(decimalText(result.bestScore, places: 2))): \(reason)"
            )
        }
        if !result.verdict.isAccepted && arguments.has("strict") { return .rejected }
        return .success
    }
}
