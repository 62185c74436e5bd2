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

/// Settings of ``AlarmService``.
public struct AlarmServiceOptions: Sendable {
    /// The ALSA playback device ["default"].
    public var device = "default"
    /// The devices: the machine's, or those of `PROOFKIT_ALSA_CONFIG` [``SoundDevices/machine``].
    public var soundDevices = SoundDevices.machine
    /// How long one ring lasts, in seconds [60].
    public var ringSeconds = 60.0
    /// The process environment (TZ, for the device's zone).
    public var environment: [String: String] = [:]
    /// Where event lines go (one line each, no newline) [stderr].
    public var log: @Sendable (String) -> Void = { line in
        _ = POSIX.writeAll(2, Array((line + "\n").utf8))
    }

    public init() {}
}

/// The alarm service (`proofkit alarm run`): holds the store's lock, listens on its control
/// socket, wakes at each fire time (a CLOCK_REALTIME timerfd with TFD_TIMER_CANCEL_ON_SET, so a
/// clock jump or resume wakes it too), rings through ALSA on a thread of its own, and re-plans
/// the prayer chains after midnight, a zone change (inotify on /etc/localtime), a clock change or
/// new settings. Timing decisions come from the pure ``AlarmRingScheduler``.
public final class AlarmService {
    let store: AlarmStore
    let options: AlarmServiceOptions
    let lockFD: Int32
    let listenFD: Int32
    let timerFD: Int32
    let eventFD: Int32
    let inotifyFD: Int32
    /// Live proofs holding a chain: connection → chain.
    var holds: [Int32: String] = [:]
    var current: Ringing?
    /// A ring that should start once the current one has stopped.
    var clockWasSet = false

    final class Ringing: @unchecked Sendable {
        let ring: BookedRing
        let stopRequested = Mutex(false)
        let finished = Mutex<(RingReport?, String?)?>(nil)
        init(ring: BookedRing) { self.ring = ring }
    }

    /// Takes the store's lock and opens the socket, the timer and the watches.
    /// - Throws: ``AlarmFailure`` `.serviceRunning` when another service holds the store.
    public init(store: AlarmStore, options: AlarmServiceOptions) throws {
        self.store = store
        self.options = options
        let lockFD: Int32
        switch POSIX.open(store.lockPath, [.readWrite, .create], mode: 0o600) {
        case .success(let fd): lockFD = fd
        case .failure(let errno):
            throw AlarmFailure(.readOnlyStore, "\(store.lockPath): cannot open the service lock (\(errno))")
        }
        self.lockFD = lockFD
        if case .failure = POSIX.lockExclusive(lockFD, wait: false) {
            let held = (try? POSIX.readPrefix(lockFD, count: 31).get()) ?? []
            let pid = held.isEmpty ? "?" : String(decoding: held, as: UTF8.self).filter { !$0.isWhitespace }
            POSIX.closeDescriptor(lockFD)
            throw AlarmFailure(
                .serviceRunning, "another alarm service (pid \(pid)) is already running on \(store.folder)")
        }
        _ = POSIX.truncate(lockFD, to: 0)
        _ = POSIX.writeAll(lockFD, Array("\(POSIX.processID)\n".utf8), at: 0)

        do throws(SystemCallFailure) {
            listenFD = try UnixSocket.listen(at: store.socketPath)  // mode 0600
        } catch {
            throw AlarmFailure(.readOnlyStore, "\(store.socketPath): cannot create the control socket (\(error))")
        }
        guard case .success(let timer) = WakeUp.makeTimer(), case .success(let event) = WakeUp.makeEvent() else {
            throw ProofkitError(.internal, "cannot create the service's timer (timerfd/eventfd)")
        }
        timerFD = timer
        eventFD = event
        inotifyFD = WakeUp.watchFolder("/etc") ?? -1
    }

    func log(_ event: String, _ chain: String = "-", _ detail: String = "") {
        AlarmService.log(options.log, event, chain, detail)
    }

    static func log(_ sink: @Sendable (String) -> Void, _ event: String, _ chain: String, _ detail: String) {
        let now = Date()
        let millis = Int((now.timeIntervalSince1970 * 1000).truncatingRemainder(dividingBy: 1000))
        let stamp =
            iso8601(now, in: TimeZone(identifier: "UTC")!).prefix(19) + "." + String(1000 + millis).dropFirst() + "Z"
        sink("\(stamp) \(event) \(chain)\(detail.isEmpty ? "" : " " + detail)")
    }

    /// Runs until the process is killed (systemd stops it with SIGTERM; the store is always
    /// consistent, so nothing needs saving).
    public func run() throws -> Never {
        // systemd stops the service with SIGTERM: make sure it is neither blocked nor ignored
        // (a parent may have passed either on), so that the default action ends the process.
        WakeUp.restoreTerminationSignals()
        log(
            "start", "-",
            "store=\(store.folder) pid=\(POSIX.processID) device=\(options.device) ring_seconds=\(options.ringSeconds)")
        try store.write {
            for ring in try store.rings(where: "state = 'ringing'") {
                try store.setRingState(ring.ring.id, "rang")
                log("ring-interrupted", ring.ring.chain, ring.ring.id)
            }
        }
        try tick()
        while true {
            let holdFDs = holds.keys.sorted()
            let ready: [Bool]
            do throws(Errno) {
                ready = try POSIX.waitReadable([timerFD, listenFD, eventFD, inotifyFD] + holdFDs, milliseconds: -1)
            } catch {
                throw ProofkitError(.internal, "poll failed: \(error)", operation: "poll", underlying: error.code)
            }
            var due = false
            if ready[0] {
                if WakeUp.clockWasSet(timerFD) {
                    clockWasSet = true
                    log("clock-set")
                }
                due = true
            }
            if ready[2] {
                WakeUp.drain(eventFD)
                try finishRing()
                due = true
            }
            if ready[3] {
                let events = String(decoding: WakeUp.pendingEvents(inotifyFD), as: UTF8.self)
                if events.contains("localtime") || events.contains("timezone") {
                    log("zone-file-changed")
                    due = true
                }
            }
            for (index, fd) in holdFDs.enumerated() where ready[4 + index] {
                if !UnixSocket.peerStillOpen(fd) {
                    let chain = holds.removeValue(forKey: fd) ?? "-"
                    POSIX.closeDescriptor(fd)
                    log("hold-end", chain)
                    due = true
                }
            }
            if ready[1] { due = try accept() || due }
            if due { try tick() }
        }
    }

    /// Handles one control connection. Returns whether a tick is due.
    func accept() throws -> Bool {
        guard let fd = UnixSocket.accept(listenFD) else { return false }
        guard AlarmControl.peerAllowed(fd) else {
            log("control-refused", "-", "peer of another user")
            POSIX.closeDescriptor(fd)
            return false
        }
        UnixSocket.setReceiveTimeout(fd, seconds: 2)
        let request = UnixSocket.readLine(fd) ?? ""
        let words = request.split(separator: " ").map(String.init)
        var reply = "error unknown request '\(request)'"
        var keepOpen = false
        var due = false
        switch words.first ?? "" {
        case "ping":
            reply = "ok pid \(POSIX.processID)"
        case "reload":
            reply = "ok"
            due = true
        case "stop":
            if let current {
                current.stopRequested.withLock { $0 = true }
                try store.write {
                    try store.record(chain: current.ring.chain, kind: "stopped", at: Date(), detail: current.ring.id)
                }
                log("stop", current.ring.chain, current.ring.id)
                reply = "ok stopped \(current.ring.chain) \(current.ring.id)"
                // The ring thread notices within one period (20-50 ms): reply once it is quiet,
                // so that the store says so when the command returns.
                for _ in 0..<100 where current.finished.withLock({ $0 }) == nil { POSIX.sleep(microseconds: 10_000) }
                try finishRing()
            } else {
                reply = "ok nothing ringing"
            }
        case "hold" where words.count == 2:
            holds[fd] = words[1]
            keepOpen = true
            log("hold", words[1])
            if let current, current.ring.chain == words[1] {
                current.stopRequested.withLock { $0 = true }
                log("stop", current.ring.chain, "\(current.ring.id) (live proof)")
            }
            reply = "ok held \(words[1])"
        default:
            break
        }
        try? AlarmControl.writeLine(fd, reply)
        if !keepOpen { POSIX.closeDescriptor(fd) }
        return due
    }

    /// Re-plans when due, marks missed rings, starts due rings, and arms the timer.
    func tick() throws {
        let now = Date()
        let zone = currentDeviceZone(environment: options.environment)
        if let planner = try store.prayerPlanner(deviceZone: zone),
            let reason = AlarmRingScheduler.replanReason(
                last: try store.prayerStamp(), now: now, zone: zone,
                fingerprint: planner.fingerprint, clockWasSet: clockWasSet)
        {
            let report = try store.replanPrayers(now: now, deviceZone: zone)
            log(
                "replan", "-",
                "reason=\(reason.rawValue) booked=\(report?.booked.count ?? 0) cancelled=\(report?.cancelled.count ?? 0) failed=\(report?.failed.count ?? 0)"
            )
            for failure in report?.failed ?? [] { log("booking-failed", failure.operation.id.rawValue, failure.reason) }
        }
        clockWasSet = false

        // A ringing chain that ended (proof, escape) stops at once.
        if let current, let chain = try store.chain(id: current.ring.chain), chain.state != "active" {
            current.stopRequested.withLock { $0 = true }
        }
        let chains = Dictionary(
            try store.chains(where: "state = 'active'").map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let scheduled = try store.rings(where: "state = 'scheduled'")
        var held: [String: Date] = [:]
        for chain in holds.values { held[chain] = Date.distantFuture }
        let decision = AlarmRingScheduler.decide(
            now: now, rings: scheduled.map(\.ring), windowEnds: chains.mapValues(\.windowEnd), heldUntil: held)
        try store.write {
            for ring in decision.missed {
                try store.setRingState(ring.id, "missed")
                try store.record(chain: ring.chain, kind: "missed", at: now, detail: ring.id)
                log("missed", ring.chain, "\(ring.id) fire=\(iso8601(ring.fireDate, in: zone))")
            }
            for ring in decision.merged {
                try store.setRingState(ring.id, "merged", at: now)
                log("merged", ring.chain, ring.id)
            }
        }
        var pending = false
        for ring in decision.ring {
            if let current {
                if current.ring.chain == ring.chain && current.stopRequested.withLock({ !$0 }) {
                    try store.write { try store.setRingState(ring.id, "merged", at: now) }
                    log("merged", ring.chain, "\(ring.id) (chain already ringing)")
                } else {
                    current.stopRequested.withLock { $0 = true }  // the newer chain rings next
                    pending = true
                }
                continue
            }
            try start(ring, chain: chains[ring.chain], now: now)
        }
        // Arm the timer: the next ring or hold end, or midnight for the prayer re-plan, at least daily.
        var wake = decision.nextWake ?? now.addingTimeInterval(86_400)
        wake = min(wake, AlarmRingScheduler.nextMidnight(after: now, in: zone).addingTimeInterval(1))
        if pending { wake = min(wake, now.addingTimeInterval(0.05)) }
        wake = max(wake, now.addingTimeInterval(0.001))
        WakeUp.arm(timerFD, at: wake.timeIntervalSince1970)
    }

    /// Starts ringing `ring` on a thread of its own.
    func start(_ ring: BookedRing, chain: StoredChain?, now: Date) throws {
        guard let chain else { return }
        let original = try store.rings(where: "id = ?", [.text(ring.id)]).first?.sound ?? chain.sound
        // The chosen sound, or (when it broke since booking) the last good copy; never a beep.
        var clip: AudioClip? = nil
        var source = original
        for (index, path) in [original, chain.keptSound].compactMap({ $0 }).enumerated() {
            do {
                let report = try AlarmSound.check(path: path)
                if case .rejected(let reason) = report.verdict {
                    throw ProofkitError(.decodeFailed, reason.detail, path: path)
                }
                var reader = try AudioFileReader(path: path)
                clip = try reader.readClip(maxFrames: reader.format.sampleRate * 30)
                reader.close()
                source = path
                break
            } catch {
                log(index == 0 ? "sound-broken" : "sound-unplayable", chain.id, "\(error)")
            }
        }
        guard let clip else {
            try store.write { try store.setRingState(ring.id, "failed", at: now) }
            return
        }
        let ringing = Ringing(ring: ring)
        current = ringing
        let options = self.options
        let eventFD = self.eventFD
        let lateness = Int((now.timeIntervalSince(ring.fireDate) * 1000).rounded())
        log("ring-due", chain.id, "\(ring.id) decided_late_ms=\(lateness) sound=\(source)")
        let sink = options.log
        let log: @Sendable (String, String, String) -> Void = { event, chain, detail in
            AlarmService.log(sink, event, chain, detail)
        }
        runOnDedicatedThread {
            var result: (RingReport?, String?) = (nil, nil)
            do throws(ProofkitError) {
                var player = try SoundPlayer(device: options.device, configuration: options.soundDevices.configuration)
                let report = try player.ring(
                    clip, seconds: options.ringSeconds, shouldStop: { ringing.stopRequested.withLock { $0 } },
                    started: {
                        let late = Int((Date().timeIntervalSince(ring.fireDate) * 1000).rounded())
                        log("ring", ring.chain, "\(ring.id) late_ms=\(late)")
                    })
                result = (report, nil)
            } catch {
                result = (nil, error.description)
            }
            ringing.finished.withLock { $0 = result }
            WakeUp.signal(eventFD)
        }
        // Recorded once the ring is under way: an alarm rings first, and a commit (synchronous=FULL)
        // can wait seconds behind other writers' I/O. A kill -9 in between leaves the ring
        // "scheduled", so a restart inside the window rings it again rather than losing it.
        try store.write { try store.setRingState(ring.id, "ringing", at: now) }
    }

    /// Records the end of the ring that finished.
    func finishRing() throws {
        guard let ringing = current, let result = ringing.finished.withLock({ $0 }) else { return }
        current = nil
        try store.write { try store.setRingState(ringing.ring.id, "rang") }
        if let report = result.0 {
            log(
                "ring-end", ringing.ring.chain,
                "\(ringing.ring.id) seconds=\(decimalText(report.seconds, places: 1))\(report.wasStopped ? " stopped" : "")"
            )
        } else {
            log("ring-failed", ringing.ring.chain, "\(ringing.ring.id) \(result.1 ?? "")")
        }
    }
}
