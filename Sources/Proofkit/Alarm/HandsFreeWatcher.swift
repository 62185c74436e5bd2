import ProofkitCore
internal import ProofkitSystem
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The stop and chime state every prover shares: a stop asked for, and a chime playing.
final class ProverControl: Sendable {
    private let state = Mutex<(stopped: Bool, chiming: Bool)>((false, false))

    func stop() { state.withLock { $0.stopped = true } }
    var stopped: Bool { state.withLock { $0.stopped } }
    var chiming: Bool { state.withLock { $0.chiming } }

    /// Plays a chime unless a stop was asked for (a ring is due: the speaker is the ring's).
    func chime(_ kind: Chimes.Kind, with chimes: Chimes) {
        let go = state.withLock { state in
            state.chiming = !state.stopped
            return state.chiming
        }
        guard go else { return }
        chimes.play(kind)
        state.withLock { $0.chiming = false }
    }
}

/// The hands-free mat proof: the camera watched between rings, as `proofkit mat --camera` does
/// (``PhotoJudge/watch(_:rule:maxSeconds:isCancelled:onUpdate:)``: a few frames judged a second,
/// passing on a steady run). Frames stay in memory. A pass ends the chain (rising chime).
final class MatWatcher: HandsFreeProver, @unchecked Sendable {
    let kind = "mat"
    /// The camera, or `nil` for the first video capture device.
    let camera: String?
    let environment: [String: String]
    let chimes: Chimes
    let control = ProverControl()

    init(camera: String?, environment: [String: String], chimes: Chimes) {
        self.camera = camera
        self.environment = environment
        self.chimes = chimes
    }

    func stop() { control.stop() }
    var usesSpeaker: Bool { control.chiming }

    func start(until: Date, report: @escaping @Sendable (HandsFreeReport) -> Void) {
        runOnDedicatedThread { [self] in
            watch(until: until, report: report)
            report(.ended)
        }
    }

    private func watch(until: Date, report: @Sendable (HandsFreeReport) -> Void) {
        let control = self.control
        do throws(ProofkitError) {
            var judge = try PhotoJudge(options: PhotoJudgeOptions(), store: PhotoModelStore(environment: environment))
            let source = try CameraFrameSource(device: camera)
            defer { source.close() }
            report(
                .started(
                    "watching \(source.path) for the mat until \(iso8601(until, in: TimeZone(identifier: "UTC")!))"))
            let result = try judge.watch(
                source, maxSeconds: until.timeIntervalSinceNow, isCancelled: { control.stopped })
            guard result.ending == .passed else { return }
            report(
                .accepted(
                    kind: "mat",
                    detail:
                        "camera=\(source.path) judged=\(result.judged) score=\(decimalText(result.bestScore, places: 2))"
                ))
            control.chime(.accepted, with: chimes)
        } catch {
            report(.unavailable("the camera cannot watch for the mat (\(error.message))"))
        }
    }
}
