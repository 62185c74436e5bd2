import AudioDSP
import AudioIO
import DuaMatching
import ProofkitCore
internal import ProofkitSystem
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a hands-free prover tells the alarm service, on the prover's own thread.
enum HandsFreeReport: Sendable {
    /// The device is open and it proves until the slot's end (what it listens or looks for).
    case started(String)
    /// A whole attempt that did not pass (a reading heard to its end); it goes on. `kind` is the
    /// proof (`voice`), `detail` what was judged.
    case rejected(kind: String, detail: String)
    /// The proof passed: the chain ends. `kind` is the proof (`voice`), `detail` what decided it.
    case accepted(kind: String, detail: String)
    /// It could not prove at all (no microphone, no recogniser): the reason, one line.
    case unavailable(String)
    /// It has stopped and released its device (always the last report).
    case ended
}

/// One prover of the alarm's hands-free slot: it runs on a thread of its own between rings, from
/// ``start(until:report:)`` until the slot's end or ``stop()``: the voice listener, and the
/// camera watcher (the mat in view, squats counted) beside it.
protocol HandsFreeProver: AnyObject, Sendable {
    /// Starts proving until `until` (returns at once); `report` is called on the prover's thread,
    /// ending with ``HandsFreeReport/ended``.
    func start(until: Date, report: @escaping @Sendable (HandsFreeReport) -> Void)
    /// Asks it to stop and release its device (returns at once; ``HandsFreeReport/ended`` follows).
    /// Capture stops within one chunk of audio; judging what was already heard may go on.
    func stop()
    /// Whether it is playing feedback on the speaker now (a ring waits for that, never for judging).
    var usesSpeaker: Bool { get }
}

/// The built-in recogniser, loaded on the first hands-free listen and kept for the next ones.
final class RecognizerCache: Sendable {
    private let slot = Mutex<WhisperRecognizer?>(nil)
    let environment: [String: String]
    init(environment: [String: String]) { self.environment = environment }

    /// The recogniser.
    /// - Throws: `.runtimeUnavailable` (not installed, no ONNX Runtime), `.modelInvalid`.
    func load() throws(ProofkitError) -> WhisperRecognizer {
        // Loaded under the lock: a listener that asks while the start-up load runs waits for it.
        let environment = self.environment
        return try slot.withLock { (loaded: inout WhisperRecognizer?) throws(ProofkitError) -> WhisperRecognizer in
            if let loaded { return loaded }
            let recognizer = try WhisperRecognizer(store: ModelStore(environment: environment), threads: 2)
            loaded = recognizer
            return recognizer
        }
    }
}

/// The hands-free reading proof: the same gate, recogniser, forced score and matcher as
/// `proofkit voice --live`, on the capture device, paced by the clock. A reading ends at a pause
/// (``ReadingEnd``: 1.5 s once the text's reading time of voice was heard, else 4 s); it is then
/// judged, and a whole reading the live recogniser rejects is judged again as a recording (the
/// audio kept in memory, `LiveReadingProof.conclude(heardSeconds:forcedScore:asRecordingWhenRejected:)`),
/// so it gets the verdict `proofkit voice FILE` would give. A pass ends the chain (rising
/// chime); a rejection of a whole reading (at least half the text's reading time of voice) plays
/// the falling chime; listening then starts afresh. Audio is held in memory only; nothing is
/// written.
final class VoiceListener: HandsFreeProver, @unchecked Sendable {
    let text: DuaText
    let device: String
    let soundDevices: SoundDevices
    let environment: [String: String]
    let recognizers: RecognizerCache
    let chimes: Chimes
    /// The live proof now listening.
    private let live = Mutex<LiveReadingProof?>(nil)
    let control = ProverControl()

    init(
        text: DuaText, device: String, soundDevices: SoundDevices, environment: [String: String],
        recognizers: RecognizerCache, chimes: Chimes
    ) {
        self.text = text
        self.device = device
        self.soundDevices = soundDevices
        self.environment = environment
        self.recognizers = recognizers
        self.chimes = chimes
    }

    func stop() {
        control.stop()
        live.withLock { $0 }?.stop()
    }

    var stopped: Bool { control.stopped }

    var usesSpeaker: Bool { control.chiming }

    private func chime(_ kind: Chimes.Kind) { control.chime(kind, with: chimes) }

    func start(until: Date, report: @escaping @Sendable (HandsFreeReport) -> Void) {
        runOnDedicatedThread { [self] in
            listen(until: until, report: report)
            report(.ended)
        }
    }

    private func listen(until: Date, report: @Sendable (HandsFreeReport) -> Void) {
        let whisper: WhisperRecognizer
        do throws(ProofkitError) {
            whisper = try recognizers.load()
        } catch {
            report(.unavailable("the recogniser cannot run (\(error.message))"))
            return
        }
        // The same for every reading of the slot (the Silero model is looked up once).
        var options = LiveReadingProof.Options()
        options.device = device
        options.soundDevices = soundDevices
        options.pacedByClock = true
        options.sileroModelPath = ReadingProofSession.sileroModelPath(environment: environment)
        options.fallback = .always
        options.keepsAudio = true  // a whole reading rejected live is judged again as a recording
        let configuration = ChainProofs.readingConfiguration(text: text, usesRecognizer: true)
        var announced = false
        while !stopped, until.timeIntervalSinceNow > 1 {
            options.maxSeconds = until.timeIntervalSinceNow
            let live: LiveReadingProof
            do throws(ProofkitError) {
                live = try LiveReadingProof(configuration: configuration, options: options, whisper: whisper)
            } catch {
                report(.unavailable("the microphone \(device) cannot listen (\(error.message))"))
                return
            }
            self.live.withLock { $0 = live }
            if stopped { live.stop() }
            if !announced {
                announced = true
                report(
                    .started(
                        "listening on \(device) for '\(text.name)' until \(iso8601(until, in: TimeZone(identifier: "UTC")!))"
                    ))
            }
            let reading = ReadingEnd()
            let summary = live.run { update in
                if reading.observe(update) { live.stop() }
            }
            self.live.withLock { $0 = nil }
            let wasStopped = stopped
            // Stopped for a ring (or a typed proof) mid-way: a reading not yet ended is not judged,
            // so the ring is not kept waiting for the recogniser.
            if wasStopped && !reading.wholeReading { return }
            if let failure = live.captureFailure ?? summary.failure {
                report(.unavailable("the microphone \(device) stopped (\(failure.message))"))
                return
            }
            func accept(rule: String, asRecording: Bool) {
                // The chime is claimed before the report: the report ends the chain, and the service
                // then stops the slot, which must not silence the pass's own chime.
                let claimed = control.claimChime()
                let path = asRecording ? " judged=as-recording" : ""
                report(.accepted(kind: "voice", detail: "text=\(text.name) rule=\(rule)\(path)"))
                if claimed { control.playClaimed(.accepted, with: chimes) }
            }
            // A pass heard while listening is answered at once; only then is the recogniser's run
            // under way waited for (and nothing more transcribed), so the ring does not go on for
            // a run that cannot change the verdict.
            let heard = live.finish().match
            if heard.verdict.isAccepted {
                accept(rule: heard.rule.rawValue, asRecording: false)
                _ = try? live.finishTranscriber(transcribingRest: false)
                return
            }
            let conclusion: LiveReadingProof.Conclusion
            do throws(ProofkitError) {
                conclusion = try live.conclude(
                    heardSeconds: summary.heardSeconds, forcedScore: ForcedScoreRule.recordingDefault,
                    asRecordingWhenRejected: reading.wholeReading)
            } catch {
                report(.unavailable("the recogniser failed (\(error.message))"))
                return
            }
            let match = conclusion.result.match
            if match.verdict.isAccepted {
                accept(rule: match.rule.rawValue, asRecording: conclusion.acceptedAsRecording)
                return
            }
            guard reading.wholeReading else { return }  // the slot ended, or a stop
            // A cough or a word is not a reading: only a whole one is answered.
            guard conclusion.result.gate.voicedSeconds >= 0.5 * live.proof.neededSeconds else { continue }
            let voiced = decimalText(conclusion.result.gate.voicedSeconds, places: 1)
            report(.rejected(kind: "voice", detail: "text=\(text.name) voiced=\(voiced)s"))
            chime(.rejected)
        }
    }
}

extension ReadingEnd {
    /// Takes one update of a live proof (its events, and for audio the time it reached).
    /// - Returns: whether listening should end now.
    public func observe(_ update: LiveReadingProof.Update) -> Bool {
        switch update {
        case .audio(let end, let events): observe(events, at: end)
        case .transcript(_, _, let events): observe(events, at: nil)
        default: false
        }
    }
}

/// The hands-free feedback: a short rising chime for a pass, a falling one for a rejection
/// (generated), or the sounds given instead (`alarm run --accept-sound / --reject-sound`).
struct Chimes: Sendable {
    enum Kind: Sendable { case accepted, rejected }
    var device: String
    var soundDevices: SoundDevices
    var accepted: AudioClip
    var rejected: AudioClip

    /// The generated chime (``Chime``), at 16 kHz.
    static func generated(rising: Bool) -> AudioClip {
        AudioClip(samples: Chime.samples(rising: rising), channels: 1, sampleRate: 16_000)
    }

    /// Plays a chime on the calling thread; a device that cannot play it is logged by the caller's
    /// absence of sound only (a chime is feedback, never a reason to stop proving).
    func play(_ kind: Kind) {
        guard var player = try? SoundPlayer(device: device, configuration: soundDevices.configuration) else { return }
        _ = try? player.play(kind == .accepted ? accepted : rejected)
    }
}
