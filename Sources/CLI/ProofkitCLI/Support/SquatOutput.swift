import Proofkit
import ProofkitCore
import SquatCounting

/// The squat proof's output, shared by the commands that count squats (`squat`, `alarm prove
/// --squat`): one line (or JSON object) per event, the result's JSON and its summary.
enum SquatOutput {
    static func seconds(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return "\(rounded) s"
    }

    static func fraction(_ value: Double) -> String { "\((value * 100).rounded() / 100)" }

    static func report(_ event: SquatEvent, json: Bool, io: CommandIO) {
        switch event {
        case .rep(let rep):
            if json {
                var object = repJSON(rep)
                object["event"] = "rep"
                io.printJSON(.object(object))
            } else {
                io.print(
                    "rep \(rep.number): start \(seconds(rep.startTime)), bottom \(seconds(rep.bottomTime)), end \(seconds(rep.endTime)), depth \(fraction(rep.depth))"
                )
            }
        case .rejected(let rejection):
            if json {
                var object = rejectionJSON(rejection)
                object["event"] = "rejected"
                io.printJSON(.object(object))
            } else {
                io.print(
                    "not counted (\(rejection.reason.rawValue)): \(seconds(rejection.startTime)) to \(seconds(rejection.endTime)), depth \(fraction(rejection.depth))"
                )
            }
        case .setCompleted(let set):
            if json {
                io.printJSON([
                    "event": "set", "number": .int(set.number), "reps": .int(set.reps),
                    "start": .rounded(set.startTime, places: 3), "end": .rounded(set.endTime, places: 3),
                ])
            } else {
                io.print("set \(set.number) done: \(set.reps) reps at \(seconds(set.endTime))")
            }
        case .restTooLong(let set, let rest, let time):
            if json {
                io.printJSON([
                    "event": "restTooLong", "set": .int(set), "rest": .rounded(rest, places: 3),
                    "time": .rounded(time, places: 3),
                ])
            } else {
                io.print("rest after set \(set) is too long: \(seconds(rest)) at \(seconds(time))")
            }
        case .calibrated(let time, let reference):
            if json {
                io.printJSON([
                    "event": "calibrated", "time": .rounded(time, places: 3),
                    "standingReference": .rounded(reference),
                ])
            }
        case .workoutCompleted(let time):
            if !json { io.print("workout done at \(seconds(time))") }
        }
    }

    static func repJSON(_ rep: SquatRep) -> [String: JSONValue] {
        [
            "number": .int(rep.number), "set": .int(rep.set), "start": .rounded(rep.startTime, places: 3),
            "bottom": .rounded(rep.bottomTime, places: 3), "end": .rounded(rep.endTime, places: 3),
            "depth": .rounded(rep.depth, places: 3), "checks": .object(checksJSON(rep.checks)),
        ]
    }

    static func checksJSON(_ checks: SquatChecks) -> [String: JSONValue] {
        [
            "footTravel": .rounded(checks.footTravel, places: 3), "floorRise": .rounded(checks.floorRise, places: 3),
            "kneeAsymmetry": .rounded(checks.kneeAsymmetry, places: 3),
            "torsoUprightness": checks.torsoUprightness.isFinite ? .rounded(checks.torsoUprightness, places: 3) : .null,
            "kneeBend": checks.kneeBend.isFinite ? .rounded(checks.kneeBend, places: 1) : .null,
            "hipRise": .rounded(checks.hipRise, places: 3),
        ]
    }

    static func rejectionJSON(_ rejection: SquatRejection) -> [String: JSONValue] {
        [
            "reason": .string(rejection.reason.rawValue), "start": .rounded(rejection.startTime, places: 3),
            "end": .rounded(rejection.endTime, places: 3), "depth": .rounded(rejection.depth, places: 3),
            "checks": .object(checksJSON(rejection.checks)),
        ]
    }

    static func resultJSON(_ result: SquatResult, file: String) -> [String: JSONValue] {
        var skipped: [String: JSONValue] = [:]
        for (reason, count) in result.skippedFrames { skipped[reason.rawValue] = .int(count) }
        var reason: JSONValue = .null
        if case .rejected(let why) = result.verdict { reason = .string(why.detail) }
        return [
            "file": .string(file),
            "frames": .int(result.frameCount),
            "reps": .int(result.repCount),
            "target": .int(result.target),
            "verdict": .string(result.verdict.name),
            "reason": reason,
            "repList": .array(result.reps.map { .object(repJSON($0)) }),
            "rejected": .array(result.rejections.map { .object(rejectionJSON($0)) }),
            "sets": .array(
                result.sets.map {
                    [
                        "number": .int($0.number), "reps": .int($0.reps),
                        "start": .rounded($0.startTime, places: 3), "end": .rounded($0.endTime, places: 3),
                    ]
                }),
            "longRests": .array(result.longRests.map { ["set": .int($0.set), "rest": .rounded($0.rest, places: 3)] }),
            "skippedFrames": .int(result.skippedFrameCount),
            "skipped": .object(skipped),
            "standingReference": result.standingReference.map { .rounded($0) } ?? .null,
        ]
    }

    static func printSummary(_ result: SquatResult, name: String, io: CommandIO) {
        io.print(
            "\(name): \(result.repCount) squat\(result.repCount == 1 ? "" : "s") (target \(result.target)): \(result.verdict.name)"
                + (result.verdict.isAccepted ? "" : " (\(reasonText(result.verdict)))"))
        var skippedText = "skipped \(result.skippedFrameCount) of \(result.frameCount) frames"
        if result.skippedFrameCount > 0 {
            let parts = SquatSkipReason.allCases.compactMap { reason in
                result.skippedFrames[reason].map { "\(reason.rawValue) \($0)" }
            }
            skippedText += " (" + parts.joined(separator: ", ") + ")"
        }
        io.print(skippedText)
    }

    static func reasonText(_ verdict: Verdict) -> String {
        if case .rejected(let reason) = verdict { return reason.detail }
        return ""
    }
}
