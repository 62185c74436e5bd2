import AlarmScheduling
import AudioIO
import PrayerPlanning
import ProofkitCore
internal import ProofkitSystem
import Storage
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the provers reported, from their threads, waiting for the service loop.
final class HandsFreeReports: Sendable {
    let list = Mutex<[(String, HandsFreeReport)]>([])
}

/// The hands-free slot (issue 35): when a ring of a due chain ends, the service listens between
/// its rings for the chain's du'a, and a pass ends the chain as a voice proof given hands-free.
///
/// Rules: never while a ring sounds (a ring due stops the slot first, so the alarm's own sound is
/// never heard as reading); never during a typed live proof's hold (that proof has the
/// microphone); only inside the chain's proof window; only for a chain that listens
/// (``StoredChain/listens``). The slot's end is ``AlarmRingScheduler/listeningEnd(now:scheduledRings:windowEnd:minimumSeconds:)``.
/// Audio stays in memory. `status` shows what the slot listens for (setting `service.listening`).
extension AlarmService {
    /// An open slot: the chain it proves and its provers (the voice listener, the camera watcher).
    struct Slot {
        var chain: String
        var until: Date
        var provers: [any HandsFreeProver]
        var running: Int
        /// Whether its provers were asked to stop.
        var stopping = false
        /// What each prover said it proves (`status` shows them).
        var details: [String] = []
    }

    /// Checks at start whether the microphone opens, and records it (`status` shows it).
    func checkMicrophone() throws(ProofkitError) {
        guard let mic = options.microphone else {
            try save("the microphone's status", isStatus: true) { [store] () throws(ProofkitError) in
                try store.put(["service.mic": nil, "service.mic_status": "off (--mic none)"])
            }
            return
        }
        var found = "ok"
        if let error = microphoneProblem(mic) {
            found = "not found: \(error.message)"
            log("mic-missing", "-", "\(mic): \(error.message); hands-free listening is off until it opens")
        }
        if found == "ok" {
            // The recogniser loads in the background now (seconds on a Pi), so that the first words
            // after a ring are heard; a failure is reported when a slot opens.
            let recognizers = self.recognizers
            let options = self.options
            runOnDedicatedThread {
                let clock = ContinuousClock()
                let start = clock.now
                do throws(ProofkitError) {
                    _ = try recognizers.load()
                    let seconds = (clock.now - start).components.seconds
                    AlarmService.log(options, "recognizer-loaded", "-", "seconds=\(seconds)")
                } catch {
                    AlarmService.log(
                        options, "recognizer-missing", "-", "\(error.message); hands-free listening is off")
                }
            }
        }
        try save("the microphone's status", isStatus: true) { [store] () throws(ProofkitError) in
            try store.put(["service.mic": mic, "service.mic_status": found])
        }
    }

    /// Opens and closes the capture device `mic` (nothing is captured).
    /// - Returns: why it cannot be opened, or `nil` when it opens.
    func microphoneProblem(_ mic: String) -> ProofkitError? {
        do throws(ProofkitError) {
            let capture = try MicrophoneCapture(device: mic, configuration: options.soundDevices.configuration)
            try capture.close()
            return nil
        } catch {
            return error
        }
    }

    /// Stops the open slot (a ring is due, a typed proof holds the chain, the chain ended). Its
    /// provers release their devices shortly after (``HandsFreeReport/ended``).
    func stopSlot(reason: String) {
        guard var open = slot, open.running > 0, !open.stopping else { return }
        for prover in open.provers { prover.stop() }
        open.stopping = true
        slot = open
        log("listen-stop", open.chain, "reason=\(reason)")
    }

    /// Opens the slot for the chain whose ring ended last, when it may (see the rules above).
    func openSlotIfDue(now: Date, held: [String: Date]) throws(ProofkitError) {
        guard current == nil, slot == nil, let id = listenChain else { return }
        guard let chain = try store.chain(id: id), chain.state == .active, now < chain.windowEnd else {
            listenChain = nil
            try save("the listening status", isStatus: true) { [store] () throws(ProofkitError) in
                try store.put(["service.listening": nil])
            }
            return
        }
        guard chain.listens || chain.watches, held[id] == nil else { return }
        if let retry = listenRetry[id], now < retry { return }
        let scheduled = try store.rings(where: "chain = ? AND state = 'scheduled'", [.text(id)]).map(\.ring)
        guard
            let until = AlarmRingScheduler.listeningEnd(
                now: now, scheduledRings: scheduled, windowEnd: chain.windowEnd)
        else { return }
        var provers: [any HandsFreeProver] = []
        var off: [String] = []
        if chain.listens {
            if let mic = options.microphone {
                // The microphone may have been unplugged (or plugged in) since: a quick open says
                // which, before the recogniser is asked for anything.
                if let error = microphoneProblem(mic) {
                    off.append("the microphone \(mic) cannot be opened (\(error.message))")
                } else {
                    provers.append(
                        VoiceListener(
                            text: chain.duaText, device: mic, soundDevices: options.soundDevices,
                            environment: options.environment, recognizers: recognizers, chimes: chimes))
                }
            } else {
                off.append("no microphone (--mic none)")
            }
        }
        if chain.watches && options.watchesCamera {
            if options.camera != nil || !Cameras.list().isEmpty {
                var proofs: CameraWatcher.Proofs = []
                if chain.watchesMat { proofs.insert(.mat) }
                if chain.watchesSquats { proofs.insert(.squats) }
                let watcher = CameraWatcher(
                    proofs: proofs, camera: options.camera, environment: options.environment, chimes: chimes)
                provers.append(watcher)
            } else if !chain.listens {
                off.append("no camera")
            }
        }
        guard !provers.isEmpty else {
            try noteListeningOff(id, off.joined(separator: "; "), until: until)
            return
        }
        for reason in off { log("listen-off", id, reason) }
        slot = Slot(chain: id, until: until, provers: provers, running: provers.count)
        let reports = self.reports
        let event = self.event
        for prover in provers {
            prover.start(until: until) { report in
                reports.list.withLock { $0.append((id, report)) }
                WakeUp.signal(event.raw)
            }
        }
    }

    /// Records that the slot cannot listen, and why, until `until` (the next ring tries again).
    func noteListeningOff(_ chain: String, _ reason: String, until: Date) throws(ProofkitError) {
        listenRetry[chain] = until
        try save("the listening status", isStatus: true) { [store] () throws(ProofkitError) in
            try store.put(["service.listening": "\(chain): off, \(reason)"])
        }
        log("listen-off", chain, reason)
    }

    /// Handles what the provers reported. Returns whether a tick is due.
    func handleReports() throws(ProofkitError) -> Bool {
        let waiting = reports.list.withLock { list in
            defer { list.removeAll() }
            return list
        }
        var due = false
        for (chain, report) in waiting {
            switch report {
            case .started(let detail):
                if var open = slot, open.chain == chain {
                    open.details.append(detail)
                    slot = open
                }
                let all = slot?.details.joined(separator: "; ") ?? detail
                // Status first, then the log: whoever reads the line finds it in `status`.
                try save("the listening status", isStatus: true) { [store] () throws(ProofkitError) in
                    try store.put(["service.listening": "\(chain): \(all)"])
                }
                log("listen", chain, detail)
            case .rejected(let kind, let detail):
                let now = options.now()
                try save("a rejected reading of \(chain)") { [store] () throws(ProofkitError) in
                    try store.record(chain: chain, kind: .rejected, at: now, detail: "\(kind) hands-free \(detail)")
                }
                due = true
            case .accepted(let kind, let detail):
                // A pass that began while the chain was due counts, as a typed proof's does.
                let (now, options) = (options.now(), options)
                try save("the hands-free proof of \(chain)", chains: [chain], transaction: false) {
                    [store] () throws(ProofkitError) in
                    let cancelled = try store.end(
                        chain: chain, kind: .proof, at: now, detail: "\(kind) hands-free \(detail)")
                    AlarmService.log(options, "proof-hands-free", chain, "cancelled=\(cancelled?.count ?? 0)")
                }
                if listenChain == chain { listenChain = nil }
                due = true
            case .unavailable(let reason):
                // One prover that cannot run leaves the others running; the last one says so.
                if let open = slot, open.chain == chain, open.running > 1 {
                    log("listen-off", chain, reason)
                } else {
                    try noteListeningOff(chain, reason, until: slot?.until ?? options.now())
                }
            case .ended:
                guard var open = slot, open.chain == chain else { continue }
                open.running -= 1
                slot = open.running > 0 ? open : nil
                if slot == nil {
                    log("listen-end", chain)
                    try save("the listening status", isStatus: true) { [store] () throws(ProofkitError) in
                        let now = try store.setting("service.listening") ?? ""
                        if now.hasPrefix("\(chain): listening") || now.hasPrefix("\(chain): watching") {
                            try store.put(["service.listening": nil])
                        }
                    }
                }
                due = true
            }
        }
        return due
    }
}
