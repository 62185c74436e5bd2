import Proofkit
import ProofkitCore
internal import ProofkitSystem

extension PoseCommand {
    /// `pose --camera`: the pose of each camera frame as it comes (the newest frame when the
    /// models are slower than the camera), tracked from the frame before, until --max-seconds.
    /// With --json the lines are squat's keypoint format, "t" in seconds since the start, so
    /// `proofkit pose --camera --json | proofkit squat -` counts live too.
    static func watch(
        _ estimator: PoseEstimator, _ arguments: ParsedArguments, json: Bool, joints: [(name: String, index: Int)],
        io: CommandIO
    ) throws -> ExitStatus {
        guard arguments.value("plot") == nil else { throw UsageError("--plot draws a photo, not --camera") }
        let maxSeconds = try CameraOptions.maxSeconds(arguments, default: 30)
        let source = try CameraOptions.open(arguments, io: io)
        defer { source.close() }
        let start = POSIX.monotonicSeconds()
        var previous: PoseEstimate?
        while POSIX.monotonicSeconds() - start < maxSeconds {
            let left = start + maxSeconds - POSIX.monotonicSeconds()
            guard let frame = try source.nextImage(waitingUpTo: max(0.01, min(0.2, left))) else { continue }
            let observation = try estimator.estimate(image: frame.image, previous: previous)
            previous = observation.estimate
            let photo = PosePhoto(cameraFrame: frame.image, observation: observation, timings: estimator.lastTimings)
            let name = "\(source.path) frame \(frame.sequence)"
            if json {
                io.printJSON(line(photo, time: .rounded(frame.time - start, places: 3), path: name, joints: joints))
            } else {
                printText(photo, path: name, joints: joints, io: io)
            }
        }
        return .success
    }
}
