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
            io.print(LiveProofText.matStart(rule, maxSeconds: maxSeconds))
        }
        var shownHint: String?
        let result = try judge.watch(
            source, rule: rule, maxSeconds: maxSeconds,
            onUpdate: { update in
                let judgement = update.result.judgement
                if json {
                    io.printJSON([
                        "event": "frame", "time": .rounded(update.seconds, places: 3),
                        "verdict": .string(judgement.verdict.name), "score": .rounded(judgement.score),
                        "brightness": .rounded(judgement.brightness),
                        "hint": judgement.hint.map(JSONValue.string) ?? .null,
                        "run": .int(update.run),
                    ])
                } else if let line = LiveProofText.matFrame(update, rule: rule, shown: &shownHint) {
                    io.print(line)
                }
            })
        if json {
            io.printJSON([
                "event": "result", "verdict": .string(result.verdict.name), "ending": .string(result.ending.rawValue),
                "judged": .int(result.judged), "frames": .int(result.seen),
                "seconds": .rounded(result.seconds, places: 3),
                "best_score": .rounded(result.bestScore), "camera": .string(source.path),
                "mode": CameraOutput.modeJSON(source.mode),
            ])
        } else {
            io.print(LiveProofText.matResult(result, rule: rule))
        }
        if !result.verdict.isAccepted && arguments.has("strict") { return .rejected }
        return .success
    }
}
