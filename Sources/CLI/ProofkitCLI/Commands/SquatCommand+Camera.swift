import Proofkit
import ProofkitCore

extension SquatCommand {
    /// `squat --camera`: counts squats live from the camera, printing each rep as it is counted,
    /// until the plan is done or --max-seconds pass.
    static func watch(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        guard arguments.positionals.isEmpty else {
            throw UsageError("--camera counts the camera's frames; give no POSES.jsonl")
        }
        guard arguments.value("plot") == nil else { throw UsageError("--plot applies to a file, not --camera") }
        let configuration = try configuration(arguments)
        let plan = LiveSquatPlan(
            repsPerSet: configuration.plan.repsPerSet, sets: configuration.plan.sets,
            rest: configuration.plan.maximumRest)
        let counter: LiveSquatCounter
        do {
            counter = try LiveSquatCounter(configuration: configuration, plan: plan)
        } catch {
            throw UsageError(error.message)
        }
        let maxSeconds = try CameraOptions.maxSeconds(arguments, default: 300)
        let threads = try arguments.threads(default: 1, allowsZero: true)
        let json = arguments.has("json")
        let estimator = try PoseEstimator(store: ModelStore(environment: io.environment), threads: threads)
        let source = try CameraOptions.open(arguments, io: io)
        defer { source.close() }
        if !json { io.print(LiveProofText.squatStart(plan, maxSeconds: maxSeconds)) }
        var reps = 0
        var view: String?
        var restShown = -1
        let result: LiveSquatResult
        do throws(ProofkitError) {
            result = try counter.watch(
                source, estimator: estimator, maxSeconds: maxSeconds,
                onUpdate: { update in
                    var resting = false
                    let lines = LiveProofText.squatFrame(
                        update, view: &view, restShown: &restShown, resting: &resting)
                    if !json { for line in lines { io.print(line) } }
                    if resting { return }
                    for event in update.events {
                        if case .rep = event { reps += 1 }
                        SquatOutput.report(event, json: json, io: io)
                    }
                })
        } catch {
            if error.code == .cameraUnplugged || error.code == .cameraStalled {
                io.printError("proofkit squat: \(reps) rep\(reps == 1 ? "" : "s") counted before the camera stopped")
            }
            throw error
        }
        for rep in result.squats.reps.dropFirst(reps) { SquatOutput.report(.rep(rep), json: json, io: io) }
        if json {
            var object = SquatOutput.resultJSON(result.squats, file: source.path)
            object["event"] = "result"
            object["ending"] = .string(result.ending.rawValue)
            object["fps"] = .rounded(result.framesPerSecond, places: 2)
            object["camera_frames"] = .int(result.seen)
            object["mode"] = CameraOutput.modeJSON(source.mode)
            io.printJSON(.object(object))
        } else {
            SquatOutput.printSummary(result.squats, name: source.path, io: io)
            io.print(LiveProofText.squatEnding(result, maxSeconds: maxSeconds))
        }
        let accepted = result.ending == .passed && result.squats.verdict.isAccepted
        if !accepted && arguments.has("strict") { return .rejected }
        return .success
    }
}
