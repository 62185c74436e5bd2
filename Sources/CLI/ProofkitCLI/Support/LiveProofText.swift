import Proofkit
import ProofkitCore

/// What a live proof by camera prints as it watches, shared by `mat --camera`, `squat --camera`
/// and `alarm prove --camera`.
enum LiveProofText {
    /// The mat watch's opening line.
    static func matStart(_ rule: LiveMatRule, maxSeconds: Double) -> String {
        "watching for the mat: hold it in view, laid flat (passes at \(rule.passingFrames) frames in a row; up to \(decimalText(maxSeconds, places: 0)) s)"
    }

    /// The mat watch's line for a judged frame: the run of passing frames, or the hint when it
    /// changed since `shown` (which it updates); `nil` when nothing new is to be said.
    static func matFrame(_ update: LiveMatUpdate, rule: LiveMatRule, shown: inout String?) -> String? {
        let judgement = update.result.judgement
        let at = "\(decimalText(update.seconds, places: 1)) s"
        if judgement.verdict.isAccepted {
            shown = nil
            return
                "\(at): mat in view (\(update.run) of \(rule.passingFrames)), score \(decimalText(judgement.score, places: 2))"
        }
        guard let hint = judgement.hint, hint != shown else { return nil }
        shown = hint
        return "\(at): not yet: \(hint)"
    }

    /// The mat watch's verdict line.
    static func matResult(_ result: LiveMatResult, rule: LiveMatRule) -> String {
        let seconds = decimalText(result.seconds, places: 1)
        if result.verdict.isAccepted {
            return
                "accepted: the mat held in view for \(rule.passingFrames) frames in a row; \(result.judged) frames judged in \(seconds) s"
        }
        let reason: String
        if case .rejected(let why) = result.verdict { reason = why.detail } else { reason = "" }
        return
            "rejected: no steady view of the mat in \(seconds) s (\(result.judged) frames judged, best score \(decimalText(result.bestScore, places: 2))): \(reason)"
    }

    /// The squat watch's opening line.
    static func squatStart(_ plan: LiveSquatPlan, maxSeconds: Double) -> String {
        let sets = plan.sets == 1 ? "" : " in each of \(plan.sets) sets, rest \(decimalText(plan.rest, places: 0)) s"
        return "counting squats: \(plan.repsPerSet) reps\(sets) (up to \(decimalText(maxSeconds, places: 0)) s)"
    }

    /// What the squat watch says of a frame, before its events: who is in view (when it changed
    /// since `view`; someone else in view is said before only part of you), the rest left between
    /// sets (every 10 s and the last 3), "go" when a rest ends. `resting` is set while the update
    /// falls in a rest: its events are then not reported.
    static func squatFrame(
        _ update: LiveSquatUpdate, view: inout String?, restShown: inout Int, resting: inout Bool
    ) -> [String] {
        var lines: [String] = []
        let now =
            if !update.personInView {
                "nobody in view: stand where the camera sees you, feet to head"
            } else if update.othersInView {
                "someone else is in view: the camera follows one person, so squat alone in front of it"
            } else if update.wholeBodyInView {
                "person in view"
            } else {
                "only part of you is in view: step back until the camera sees you from shoulders to feet"
            }
        if now != view { lines.append(now) }
        view = now
        resting = update.restLeft > 0
        if resting {
            let left = Int(update.restLeft.rounded(.up))
            if left % 10 == 0 || left <= 3, left != restShown { lines.append("rest: \(left) s left") }
            restShown = left
            return lines
        }
        if restShown >= 0 {
            restShown = -1
            lines.append("go: next set")
        }
        return lines
    }

    /// The squat watch's closing line: how it ended, frames and rate.
    static func squatEnding(_ result: LiveSquatResult, maxSeconds: Double) -> String {
        let ending =
            switch result.ending {
            case .passed: "the workout is done"
            case .timeUp: "--max-seconds (\(decimalText(maxSeconds, places: 0)) s) reached"
            case .cancelled: "cancelled"
            case .restTooLong: "the rest between sets was too long"
            }
        return
            "\(ending): \(result.frames) frames in \(decimalText(result.seconds, places: 1)) s (\(decimalText(result.framesPerSecond, places: 1)) fps)"
    }
}
