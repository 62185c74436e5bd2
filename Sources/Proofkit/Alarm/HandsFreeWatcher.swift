internal import Camera
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
        guard claimChime() else { return }
        playClaimed(kind, with: chimes)
    }

    /// Claims the speaker for a chime unless a stop was asked for. A claimed chime plays even if a
    /// stop comes meanwhile: a pass claims it before reporting, because the report ends the chain
    /// and the service then stops the slot; a due ring waits for it (``chiming``).
    func claimChime() -> Bool {
        state.withLock { state in
            state.chiming = !state.stopped
            return state.chiming
        }
    }

    /// Plays a chime claimed by ``claimChime()``, then gives the speaker back.
    func playClaimed(_ kind: Chimes.Kind, with chimes: Chimes) {
        chimes.play(kind)
        state.withLock { $0.chiming = false }
    }
}

/// The hands-free camera proofs: the camera watched between rings for the mat in view (as
/// `proofkit mat --camera` judges it: a few frames a second, passing on a steady run, ``LiveMatSession``)
/// and for squats counted (as `proofkit squat --camera` counts them: every frame's pose,
/// ``LiveSquatSession``, ``ChainProofs/squatPlan``), one or both on the same frames as the chain's proof
/// allows. Frames stay in memory. A pass ends the chain (rising chime).
final class CameraWatcher: HandsFreeProver, @unchecked Sendable {
    /// What it watches for.
    struct Proofs: OptionSet, Sendable {
        let rawValue: Int
        static let mat = Proofs(rawValue: 1)
        static let squats = Proofs(rawValue: 2)
    }

    let proofs: Proofs
    /// The camera, or `nil` for the first video capture device.
    let camera: String?
    let environment: [String: String]
    let chimes: Chimes
    let control = ProverControl()

    init(proofs: Proofs, camera: String?, environment: [String: String], chimes: Chimes) {
        self.proofs = proofs
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
        let store = ModelStore(environment: environment)
        do throws(ProofkitError) {
            var judge = proofs.contains(.mat) ? try PhotoJudge(options: PhotoJudgeOptions(), store: store) : nil
            let estimator = proofs.contains(.squats) ? try PoseEstimator(store: store, threads: 1) : nil
            var squats = try estimator.map { _ throws(ProofkitError) in
                try LiveSquatCounter(plan: ChainProofs.squatPlan).session()
            }
            var mat = LiveMatSession()
            let source = try CameraFrameSource(device: camera)
            defer { source.close() }
            let wanted = [
                judge != nil ? "the mat" : nil, squats != nil ? "\(ChainProofs.squatPlan.repsPerSet) squats" : nil,
            ]
            report(
                .started(
                    "watching \(source.path) for \(wanted.compactMap { $0 }.joined(separator: " or ")) until "
                        + iso8601(until, in: TimeZone(identifier: "UTC")!)))
            var passed = false
            var claimed = false
            // The chime is claimed before the pass is reported (see ProverControl.claimChime).
            func pass(_ kind: String, _ detail: String) {
                claimed = control.claimChime()
                report(.accepted(kind: kind, detail: "camera=\(source.path) \(detail)"))
                passed = true
            }
            while !passed, !control.stopped, until.timeIntervalSinceNow > 0 {
                let wait = min(0.2, max(0.01, until.timeIntervalSinceNow))
                // Frames the mat judge skips are dropped undecoded when no squats are counted.
                let notBefore = squats == nil ? mat.nextDue : -.infinity
                guard let frame = try source.nextFrame(waitingUpTo: wait, notBefore: notBefore) else { continue }
                if judge != nil, frame.time >= mat.nextDue {
                    _ = try mat.take(frame, name: "\(source.path) frame \(frame.sequence)", judge: &judge!)
                    if mat.passed {
                        pass("mat", "judged=\(mat.judged) score=\(decimalText(mat.bestScore, places: 2))")
                        continue
                    }
                }
                if let estimator, var session = squats, let image = source.image(of: frame) {
                    let (_, ending) = try session.take(image, estimator: estimator)
                    squats = session
                    if ending == .passed { pass("squat", "reps=\(session.finish().repCount) frames=\(session.frames)") }
                }
            }
            if claimed { control.playClaimed(.accepted, with: chimes) }
        } catch {
            report(.unavailable("the camera cannot watch (\(error.message))"))
        }
    }
}
