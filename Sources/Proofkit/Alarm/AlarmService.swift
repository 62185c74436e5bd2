import AlarmScheduling
import AudioIO
import PrayerPlanning
import ProofkitCore
internal import ProofkitSystem
import Storage
import Synchronization

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
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
    /// Linux input devices whose keys are a Stop button (`/dev/input/eventN`, or a FIFO of
    /// `struct input_event`s); `nil` for every readable `/dev/input/event*` [nil].
    public var inputs: [String]? = nil
    /// Which key stops a ring [any].
    public var stopKey = StopKey.any
    /// The ALSA capture device the service listens on between rings (hands-free proofs), or
    /// `nil` to never listen ["default"].
    public var microphone: String? = "default"
    /// The camera the service watches between rings for the mat or squats (hands-free), or `nil` for the
    /// first video capture device when there is one [nil].
    public var camera: String? = nil
    /// Whether the service watches a camera at all (`--camera none` turns it off) [true].
    public var watchesCamera = true
    /// A sound played when a hands-free proof passes, instead of the generated rising chime [nil].
    public var acceptSound: String? = nil
    /// A sound played when a whole hands-free reading is rejected, instead of the falling chime [nil].
    public var rejectSound: String? = nil
    /// The wall clock behind every decision of the service: when a ring is due or missed, a hold's
    /// end, the re-plan at midnight, the times recorded in the store and the log's stamps [the
    /// system's clock]. The timer still wakes the service on the system's clock, so another clock
    /// is for driving the decisions by hand (tests call `tick()` at chosen instants).
    public var now: @Sendable () -> Date = { Date() }
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
///
/// Control connections are read without blocking, each with a 2 s deadline, so clients that
/// stall never delay a ring or another client. A live proof's hold lasts at most
/// ``AlarmStore/holdLimit``; the backups that fell inside a hold ring at once when it ends
/// without a proof. SIGTERM, SIGINT and SIGHUP end the service cleanly (exit 0), removing its
/// socket and lock. A store removed or replaced while it runs ends it too (exit 66,
/// `checkStoreFile()`).
public final class AlarmService {
    let store: AlarmStore
    let options: AlarmServiceOptions
    /// The descriptors the service owns (closed when it goes): the store's lock, the control
    /// socket, the wall-clock timer, the event the ring and prover threads signal, the zone
    /// watch (-1 without inotify) and the termination signals.
    let lock: OwnedDescriptor
    let listener: OwnedDescriptor
    let timer: OwnedDescriptor
    let event: OwnedDescriptor
    let zoneWatch: OwnedDescriptor
    let signals: OwnedDescriptor
    var lockFD: Int32 { lock.raw }
    var listenFD: Int32 { listener.raw }
    var timerFD: Int32 { timer.raw }
    var eventFD: Int32 { event.raw }
    var inotifyFD: Int32 { zoneWatch.raw }
    var signalFD: Int32 { signals.raw }
    /// When the timer was last armed to wake the service (``tick()``), on ``AlarmServiceOptions/now``'s clock.
    var nextWake: Date?
    /// The database file the service opened (device, inode), checked at every ``tick()``.
    var storeFile: (device: UInt64, inode: UInt64)?
    /// Writes the store refused, oldest first, and since when (see AlarmService+Unsaved.swift).
    var unsaved: [UnsavedWrite] = []
    var unsavedSince: (date: Date, reason: String)?

    /// A live proof holding a chain's backups off.
    struct Hold {
        var chain: String
        var since: Date
        var until: Date { since.addingTimeInterval(AlarmStore.holdLimit) }
    }
    /// Live proofs holding a chain: connection → hold.
    var holds: [Int32: Hold] = [:]
    /// Chains whose hold ended without a proof, with when: the backups due meanwhile ring at once.
    var released: [String: Date] = [:]

    /// A control connection whose request line is still arriving. Its deadline is on the
    /// system's clock (it bounds a socket read, not an alarm decision).
    struct PendingRequest {
        var bytes: [UInt8] = []
        var deadline: Date
    }
    var pending: [Int32: PendingRequest] = [:]
    /// How long a client has to send its request line, in seconds: 2.
    static let requestDeadline: TimeInterval = 2

    /// An open input device: its path, the bytes of a partial event, and whether it is a FIFO.
    typealias OpenInput = (path: String, pending: [UInt8], isFIFO: Bool)
    /// The open input devices, by descriptor.
    var inputs: [Int32: OpenInput] = [:]
    /// Input devices that are not open now, with why: a named one (`--input`) missing at start (a
    /// USB keypad not plugged in yet), or any that went away since. Each tick tries them again.
    var missingInputs: [String: String] = [:]

    var current: Ringing?
    /// The hands-free slot now open (see AlarmService+HandsFree.swift).
    var slot: Slot?
    /// The chain whose ring ended last: its slot opens when nothing rings.
    var listenChain: String?
    /// Chains whose prover could not run, with when to try again (after their next ring).
    var listenRetry: [String: Date] = [:]
    /// What the provers reported, from their threads (the event descriptor wakes the loop).
    let reports = HandsFreeReports()
    /// The built-in recogniser, loaded on the first listen.
    let recognizers: RecognizerCache
    /// The chimes of the hands-free proofs.
    let chimes: Chimes
    var clockWasSet = false
    /// The last history line logged (outcomes written by other commands are logged as they appear).
    var loggedOutcome: Int64 = 0

    final class Ringing: @unchecked Sendable {
        let ring: BookedRing
        let stopRequested = Mutex(false)
        let finished = Mutex<(RingReport?, String?)?>(nil)
        init(ring: BookedRing) { self.ring = ring }
    }

    /// Takes the store's lock and opens the socket, the timer, the signals and the watches.
    /// - Throws: ``ProofkitError`` `.serviceRunning` when another service holds the store,
    ///   `.storeReadOnly` when the lock or the socket cannot be made (or the lock is not a
    ///   regular file: a planted symlink is never followed); `ProofkitError` when a chime sound
    ///   (``AlarmServiceOptions/acceptSound``, ``AlarmServiceOptions/rejectSound``) cannot be read.
    public init(store: AlarmStore, options: AlarmServiceOptions) throws(ProofkitError) {
        self.store = store
        self.options = options
        // Named input devices first, so that a wrong one fails before anything is made. They are
        // closed here unless the service takes them (`inputs`) at the end.
        var named: [Int32: OpenInput] = [:]
        var namedTaken = false
        defer { if !namedTaken { for fd in named.keys { POSIX.closeDescriptor(fd) } } }
        for path in options.inputs ?? [] {
            switch Self.openInputDevice(path) {
            case .opened(let fd, let isFIFO): named[fd] = (path, [], isFIFO)
            case .missing(let reason): missingInputs[path] = reason
            case .refused(let error): throw error
            }
        }
        recognizers = RecognizerCache(environment: options.environment)
        func chime(_ path: String?, rising: Bool) throws(ProofkitError) -> AudioClip {
            guard let path else { return Chimes.generated(rising: rising) }
            var reader = try AudioFileReader(path: path)
            let clip = try reader.readClip(maxFrames: reader.format.sampleRate * 10)
            reader.close()
            return clip
        }
        chimes = Chimes(
            device: options.device, soundDevices: options.soundDevices,
            accepted: try chime(options.acceptSound, rising: true),
            rejected: try chime(options.rejectSound, rising: false))
        let lockFD: Int32
        switch POSIX.open(store.lockPath, [.readWrite, .create, .noFollow, .nonBlocking], mode: 0o600) {
        case .success(let fd): lockFD = fd
        case .failure(let errno):
            throw ProofkitError(.storeReadOnly, "\(store.lockPath): cannot open the service lock (\(errno))")
        }
        guard case .success(let info) = POSIX.status(descriptor: lockFD), info.isRegular else {
            POSIX.closeDescriptor(lockFD)
            throw ProofkitError(.storeReadOnly, "\(store.lockPath): the service lock is not a regular file")
        }
        lock = OwnedDescriptor(lockFD)
        if case .failure = POSIX.lockExclusive(lockFD, wait: false) {
            let held = (try? POSIX.readPrefix(lockFD, count: 31).get()) ?? []
            let pid = held.isEmpty ? "?" : String(decoding: held, as: UTF8.self).filter { !$0.isWhitespace }
            throw ProofkitError(
                .serviceRunning, "another alarm service (pid \(pid)) is already running on \(store.folder)")
        }
        _ = POSIX.truncate(lockFD, to: 0)
        _ = POSIX.writeAll(lockFD, Array("\(POSIX.processID)\n".utf8), at: 0)
        if case .success(let file) = POSIX.status(store.databasePath) { storeFile = (file.device, file.inode) }

        do throws(SystemCallFailure) {
            listener = OwnedDescriptor(try UnixSocket.listen(at: store.socketPath))  // mode 0600
            POSIX.setNonBlocking(listener.raw, true)  // every waiting connection is accepted, then none blocks
        } catch {
            throw ProofkitError(.storeReadOnly, "\(store.socketPath): cannot create the control socket (\(error))")
        }
        guard case .success(let timer) = WakeUp.makeTimer(), case .success(let event) = WakeUp.makeEvent(),
            case .success(let signals) = WakeUp.terminationSignals()
        else {
            throw ProofkitError(.internal, "cannot create the service's timer (timerfd/eventfd/signalfd)")
        }
        self.timer = OwnedDescriptor(timer)
        self.event = OwnedDescriptor(event)
        self.signals = OwnedDescriptor(signals)
        zoneWatch = OwnedDescriptor(WakeUp.watchFolder("/etc") ?? -1)
        if options.inputs != nil {
            inputs = named
            namedTaken = true
        } else {
            // Every keyboard, keypad or presenter there is; what cannot be opened is left out.
            let paths = POSIX.folderEntries("/dev/input").map { FilePath.string(fromBytes: $0) }
                .filter { $0.hasPrefix("event") }.sorted().map { "/dev/input/" + $0 }
            for path in paths {
                if case .opened(let fd, let isFIFO) = Self.openInputDevice(path) { inputs[fd] = (path, [], isFIFO) }
            }
        }
    }

    /// Closes the connections and input devices the service holds; its own descriptors close with
    /// their owners. The socket and lock files stay (``shutDown(signal:)`` removes them).
    deinit {
        for fd in Array(holds.keys) + Array(pending.keys) + Array(inputs.keys) { POSIX.closeDescriptor(fd) }
    }

    /// Silences the ring now sounding (the backups still come) and records who stopped it.
    /// - Returns: the stopped ring, or `nil` when nothing was ringing.
    @discardableResult
    func stopRing(by who: String) throws(ProofkitError) -> BookedRing? {
        guard let current else { return nil }
        current.stopRequested.withLock { $0 = true }
        let (chain, ring, now) = (current.ring.chain, current.ring.id, options.now())
        try save("the stop of \(ring)") { [store] () throws(ProofkitError) in
            try store.record(chain: chain, kind: .stopped, at: now, detail: ring)
        }
        log("stop", current.ring.chain, "\(current.ring.id) by \(who)")
        // The ring thread notices within one period (20-50 ms): return once it is quiet, so that
        // the store says so.
        for _ in 0..<100 where current.finished.withLock({ $0 }) == nil { POSIX.sleep(microseconds: 10_000) }
        try finishRing()
        return current.ring
    }

    func log(_ event: String, _ chain: String = "-", _ detail: String = "") {
        AlarmService.log(options, event, chain, detail)
    }

    /// Writes one event line to `options.log`, stamped with `options.now()` in UTC.
    static func log(_ options: AlarmServiceOptions, _ event: String, _ chain: String, _ detail: String) {
        let now = options.now()
        let millis = Int((now.timeIntervalSince1970 * 1000).truncatingRemainder(dividingBy: 1000))
        let stamp =
            iso8601(now, in: TimeZone(identifier: "UTC")!).prefix(19) + "." + String(1000 + millis).dropFirst() + "Z"
        options.log("\(stamp) \(event) \(chain)\(detail.isEmpty ? "" : " " + detail)")
    }

    /// Runs until SIGTERM, SIGINT or SIGHUP (then exits 0, removing the socket and the lock). The
    /// store is always consistent, so a kill -9 loses nothing either.
    public func run() throws(ProofkitError) -> Never {
        log(
            "start", "-",
            "store=\(store.folder) pid=\(POSIX.processID) device=\(options.device) ring_seconds=\(options.ringSeconds) stop_keys=\(inputs.isEmpty ? "none" : inputs.values.map(\.path).sorted().joined(separator: ","))"
        )
        for (path, reason) in missingInputs.sorted(by: { $0.key < $1.key }) {
            log("input-missing", "-", "\(path): \(reason); its keys stop no ring until it is there")
        }
        try checkDevice()
        try checkMicrophone()
        let interrupted = try store.rings(where: "state = 'ringing'")
        for ring in interrupted { log("ring-interrupted", ring.ring.chain, ring.ring.id) }
        if !interrupted.isEmpty {
            try save("interrupted rings", rings: Set(interrupted.map(\.ring.id))) { [store] () throws(ProofkitError) in
                for ring in interrupted { try store.setRingState(ring.ring.id, .rang) }
            }
        }
        for row in try store.invalidRows() { log("row-skipped", "-", "\(row): a time out of range") }
        for path in (try? store.removeOrphanedSounds(now: options.now())) ?? [] {
            log("sound-orphan-removed", "-", path)
        }
        loggedOutcome = try store.outcomes(limit: 1).first?.sequence ?? 0
        try tick()
        while true {
            let holdFDs = holds.keys.sorted()
            let pendingFDs = pending.keys.sorted()
            let inputFDs = inputs.keys.sorted()
            let fixed = [timerFD, listenFD, eventFD, inotifyFD, signalFD]
            let now = Date()
            // A request's deadline, and the retry of writes the store refused.
            let deadlines = pending.values.map(\.deadline) + (unsaved.isEmpty ? [] : [now + Self.unsavedRetry])
            let timeout =
                deadlines.min().map { Int32(max(0, min(Self.unsavedRetry * 1000, $0.timeIntervalSince(now) * 1000))) }
                ?? -1
            let ready: [Bool]
            do throws(Errno) {
                ready = try POSIX.waitReadable(fixed + holdFDs + pendingFDs + inputFDs, milliseconds: timeout)
            } catch {
                throw ProofkitError(.internal, "poll failed: \(error)", operation: "poll", underlying: error.code)
            }
            if ready[4], let number = WakeUp.pendingSignal(signalFD) { shutDown(signal: number) }
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
                _ = try handleReports()
                due = true
            }
            if ready[3] {
                let events = String(decoding: WakeUp.pendingEvents(inotifyFD), as: UTF8.self)
                if events.contains("localtime") || events.contains("timezone") {
                    log("zone-file-changed")
                    due = true
                }
            }
            for (index, fd) in holdFDs.enumerated() where ready[fixed.count + index] {
                if !UnixSocket.peerStillOpen(fd) {
                    endHold(fd, reason: "closed")
                    due = true
                }
            }
            for (index, fd) in pendingFDs.enumerated() {
                due = try readRequest(fd, readable: ready[fixed.count + holdFDs.count + index]) || due
            }
            for (index, fd) in inputFDs.enumerated() where ready[fixed.count + holdFDs.count + pendingFDs.count + index]
            {
                due = try readInput(fd) || due
            }
            if ready[1] { acceptConnections() }
            if due || !unsaved.isEmpty { try tick() }
        }
    }

    /// Opens the playback device once at start and records what it found (`alarm status` shows it).
    func checkDevice() throws(ProofkitError) {
        let found: String
        do throws(ProofkitError) {
            _ = try SoundPlayer(device: options.device, configuration: options.soundDevices.configuration)
            found = "ok"
        } catch {
            found = "not found: \(error.message)"
            log("device-missing", "-", "\(options.device): \(error.message)")
        }
        let record = inputsRecord.merging([
            "service.device": options.device, "service.device_status": found,
            "service.started": iso8601(options.now(), in: TimeZone(identifier: "UTC")!),
        ]) { _, new in new }
        try save("the playback device's status", isStatus: true) { [store] () throws(ProofkitError) in
            try store.put(record)
        }
    }

    /// Ends the service on a termination signal: the ring stops, the socket and the lock go, exit 0.
    func shutDown(signal number: Int32) -> Never {
        log("exit", "-", "signal=\(number)")
        windDown()
        POSIX.exitImmediately(0)
    }

    /// Stops the ring and the hands-free slot, and removes the socket and the lock while they are
    /// still this service's (the store's folder may have been removed and made again).
    func windDown() {
        stopSlot(reason: "exit")
        if let current {
            current.stopRequested.withLock { $0 = true }
            for _ in 0..<100 where current.finished.withLock({ $0 }) == nil { POSIX.sleep(microseconds: 10_000) }
            try? finishRing()
        }
        guard case .success(let held) = POSIX.status(descriptor: lockFD),
            case .success(let there) = POSIX.status(store.lockPath),
            held.device == there.device, held.inode == there.inode
        else { return }
        POSIX.remove(store.socketPath)
        POSIX.remove(store.lockPath)
    }

    /// Ends the service when its database was removed or replaced while it ran (the store's folder
    /// removed to start afresh, or a saved copy moved in): the alarms of a store nobody can see
    /// any more must not ring, and a replaced one is read again from the start. Under systemd
    /// (`Restart=always`) the service starts again on the store now there.
    /// - Throws: ``ProofkitError`` `.notFound` (exit 66), after logging `store-gone`.
    func checkStoreFile() throws(ProofkitError) {
        guard let storeFile else { return }
        if case .success(let file) = POSIX.status(store.databasePath), file.device == storeFile.device,
            file.inode == storeFile.inode
        {
            return
        }
        log("store-gone", "-", "\(store.databasePath) was removed or replaced; the service stops")
        windDown()
        throw ProofkitError(
            .notFound,
            "\(store.databasePath): the alarm store was removed or replaced while the service ran; it stopped, and rings nothing from the old store (systemd starts it again on the store now there)"
        )
    }

    /// Accepts every waiting connection; each is read without blocking until its line or deadline.
    func acceptConnections() {
        while let fd = UnixSocket.accept(listenFD) {
            guard AlarmControl.peerAllowed(fd) else {
                log("control-refused", "-", "peer of another user")
                POSIX.closeDescriptor(fd)
                continue
            }
            POSIX.setNonBlocking(fd, true)
            pending[fd] = PendingRequest(deadline: Date().addingTimeInterval(Self.requestDeadline))
            if pending.count > 256, let oldest = pending.min(by: { $0.value.deadline < $1.value.deadline })?.key {
                dropPending(oldest)
            }
        }
    }

    func dropPending(_ fd: Int32) {
        pending.removeValue(forKey: fd)
        POSIX.closeDescriptor(fd)
    }

    /// Reads what a pending connection sent; answers once its line is complete. Returns whether a
    /// tick is due.
    func readRequest(_ fd: Int32, readable: Bool) throws(ProofkitError) -> Bool {
        guard var request = pending[fd] else { return false }
        if readable {
            var buffer = [UInt8](repeating: 0, count: 512)
            switch buffer.withUnsafeMutableBytes({ POSIX.read(fd, into: $0) }) {
            case .success(let count) where count > 0:
                request.bytes += buffer[0..<count]
            case .failure(let errno) where errno == .wouldBlock:
                break
            default:
                dropPending(fd)
                return false
            }
        }
        if let end = request.bytes.firstIndex(of: 0x0A) {
            pending.removeValue(forKey: fd)
            POSIX.setNonBlocking(fd, false)
            return try answer(fd, String(decoding: request.bytes[..<end], as: UTF8.self))
        }
        if request.bytes.count > 4096 || request.deadline <= Date() {
            dropPending(fd)
            return false
        }
        pending[fd] = request
        return false
    }

    /// Answers one request line. Returns whether a tick is due.
    func answer(_ fd: Int32, _ request: String) throws(ProofkitError) -> Bool {
        let words = request.split(separator: " ").map(String.init)
        var reply = "error unknown request '\(request.prefix(80))'"
        var keepOpen = false
        var due = false
        switch words.first ?? "" {
        case "ping":
            reply = "ok pid \(POSIX.processID)" + unsavedNote
        case "reload":
            reply = "ok"
            due = true
        case "end" where words.count >= 4 && ["proof", "escape"].contains(words[2]):
            let kind: AlarmRecordKind = words[2] == "proof" ? .proof : .escape
            // A typed proof or escape the store could not take (a full disk): kept here, and saved
            // once it can. A proof only for a chain that is due, an escape for any active one, as
            // the command itself checks.
            let (chain, detail) = (words[1], words.count > 4 ? words[4...].joined(separator: " ") : nil)
            guard let at = Double(words[3]), at.isFinite, let stored = try? store.chain(id: chain),
                stored.state == .active, kind == .escape || (try? store.isDue(stored, now: options.now())) == true
            else {
                reply = "error no chain '\(chain.prefix(80))' is due"
                break
            }
            let options = options
            try save("the \(kind) of \(chain)", chains: [chain], transaction: false) {
                [store] () throws(ProofkitError) in
                let cancelled = try store.end(
                    chain: chain, kind: kind, at: Date(timeIntervalSince1970: at), detail: detail)
                AlarmService.log(options, "\(kind)-saved", chain, "cancelled=\(cancelled?.count ?? 0)")
            }
            log(
                kind == .proof ? "proof-typed" : "escape-typed", chain,
                "held by the service: the store cannot take it yet")
            reply = "ok ended \(chain)"
            due = true
        case "stop":
            if let ring = try stopRing(by: "alarm stop") {
                reply = "ok stopped \(ring.chain) \(ring.id)"
            } else {
                reply = "ok nothing ringing"
            }
        case "hold" where words.count == 2:
            let now = options.now()
            holds[fd] = Hold(chain: words[1], since: now)
            keepOpen = true
            due = true
            log(
                "hold", words[1],
                "until=\(iso8601(now.addingTimeInterval(AlarmStore.holdLimit), in: TimeZone(identifier: "UTC")!))")
            if let current, current.ring.chain == words[1] {
                current.stopRequested.withLock { $0 = true }
                log("stop", current.ring.chain, "\(current.ring.id) (live proof)")
            }
            // The typed live proof needs the microphone: the hands-free slot gives it up.
            if slot?.chain == words[1] { stopSlot(reason: "typed live proof") }
            reply = "ok held \(words[1]) \(Int(AlarmStore.holdLimit))"
        default:
            break
        }
        try? AlarmControl.writeLine(fd, reply)
        if !keepOpen { POSIX.closeDescriptor(fd) }
        return due
    }

    /// Ends a hold (its connection closed, or its time ran out): the backups that fell inside it
    /// ring at once.
    func endHold(_ fd: Int32, reason: String) {
        guard let hold = holds.removeValue(forKey: fd) else { return }
        POSIX.closeDescriptor(fd)
        released[hold.chain] = options.now()
        log("hold-end", hold.chain, "reason=\(reason)")
    }

    /// Re-plans when due, marks missed rings, starts due rings, and arms the timer.
    func tick() throws(ProofkitError) {
        try checkStoreFile()
        try saveUnsaved()
        reopenMissingInputs()
        let now = options.now()
        let zone = currentDeviceZone(environment: options.environment)
        for (fd, hold) in holds where hold.until <= now { endHold(fd, reason: "limit") }
        try replanIfDue(now: now, zone: zone)
        clockWasSet = false
        logNewOutcomes()

        // A ringing chain that ended (proof, escape) stops at once; so does its hands-free slot.
        // Rings and ends that wait to be saved count as they will be.
        let (settled, ended) = (unsavedRings, unsavedEnds)
        /// Whether `chain` ended: waiting to be saved as ended, or no longer active in the store.
        func hasEnded(_ chain: String) throws(ProofkitError) -> Bool {
            if ended.contains(chain) { return true }
            return try store.chain(id: chain)?.state != .active
        }
        if let current, try hasEnded(current.ring.chain) {
            current.stopRequested.withLock { $0 = true }
        }
        if let slot, try hasEnded(slot.chain) {
            stopSlot(reason: "chain ended")
        }
        let chains = Dictionary(
            try store.chains(where: "state = 'active'").filter { !ended.contains($0.id) }.map { ($0.id, $0) },
            uniquingKeysWith: { a, _ in a })
        let scheduled = try store.rings(where: "state = 'scheduled'").filter {
            !settled.contains($0.ring.id) && !ended.contains($0.ring.chain)
        }
        var held: [String: Date] = [:]
        for hold in holds.values { held[hold.chain] = max(held[hold.chain] ?? hold.until, hold.until) }
        let decision = AlarmRingScheduler.decide(
            now: now, rings: scheduled.map(\.ring), windowEnds: chains.mapValues(\.windowEnd), heldUntil: held,
            releasedHolds: released)
        for ring in decision.missed { log("missed", ring.chain, "\(ring.id) fire=\(iso8601(ring.fireDate, in: zone))") }
        for ring in decision.merged { log("merged", ring.chain, ring.id) }
        if !decision.missed.isEmpty || !decision.merged.isEmpty {
            try save("missed and merged rings", rings: Set((decision.missed + decision.merged).map(\.id))) {
                [store] () throws(ProofkitError) in
                for ring in decision.missed {
                    try store.setRingState(ring.id, .missed)
                    try store.record(chain: ring.chain, kind: .missed, at: now, detail: ring.id)
                }
                for ring in decision.merged { try store.setRingState(ring.id, .merged, at: now) }
            }
        }
        let (pendingRing, waiting) = try startDue(decision.ring, chains: chains, now: now)
        // A released hold is spent once its backup has rung (or nothing of it was due).
        released = released.filter { waiting.contains($0.key) }
        try openSlotIfDue(now: now, held: held)
        // Arm the timer: the next ring or hold end, or midnight for the prayer re-plan, at least daily.
        var wake = decision.nextWake ?? now.addingTimeInterval(86_400)
        wake = min(wake, AlarmRingScheduler.nextMidnight(after: now, in: zone).addingTimeInterval(1))
        for hold in holds.values { wake = min(wake, hold.until) }
        if pendingRing { wake = min(wake, now.addingTimeInterval(0.05)) }
        wake = max(wake, now.addingTimeInterval(0.001))
        nextWake = wake
        WakeUp.arm(timerFD, at: wake.timeIntervalSince1970)
    }

    /// Re-plans the prayer alarms when AlarmRingScheduler says it is due (a new day, new
    /// settings, a clock or zone change). A store that cannot be written now is logged and
    /// tried again at the next wake; the chains already booked ring on.
    func replanIfDue(now: Date, zone: TimeZone) throws(ProofkitError) {
        guard let planner = try store.prayerPlanner(deviceZone: zone),
            let reason = AlarmRingScheduler.replanReason(
                last: try store.prayerStamp(), now: now, zone: zone,
                fingerprint: planner.fingerprint, clockWasSet: clockWasSet)
        else { return }
        let report: ApplyReport?
        do throws(ProofkitError) {
            report = try store.replanPrayers(now: now, deviceZone: zone)
        } catch  where Self.cannotWriteNow(error) {
            report = nil
            log("replan-failed", "-", "reason=\(reason.rawValue) \(error)")
        }
        log(
            "replan", "-",
            "reason=\(reason.rawValue) booked=\(report?.booked.count ?? 0) cancelled=\(report?.cancelled.count ?? 0) failed=\(report?.failed.count ?? 0)"
        )
        for failure in report?.failed ?? [] { log("booking-failed", failure.operation.id.rawValue, failure.reason) }
    }

    /// Starts the rings that are due: never while listening (the slot stops first), a ring of
    /// the chain already ringing is merged into it, a ring of another chain waits for the
    /// current one to stop.
    /// - Returns: whether a ring waits (wake again soon), and the chains whose rings wait.
    func startDue(_ rings: [BookedRing], chains: [String: StoredChain], now: Date) throws(ProofkitError) -> (
        pendingRing: Bool, waiting: Set<String>
    ) {
        var pendingRing = false
        var waiting: Set<String> = []
        for ring in rings {
            // Never listening while it rings: the slot stops capturing (within a chunk of audio,
            // 40 ms) and the ring starts at once; it waits only for a chime still playing.
            if let slot {
                stopSlot(reason: "ring due")
                if slot.provers.contains(where: \.usesSpeaker) {
                    pendingRing = true
                    continue
                }
            }
            if let current {
                if current.ring.chain == ring.chain && current.stopRequested.withLock({ !$0 }) {
                    try save("\(ring.id) merged", rings: [ring.id]) { [store] () throws(ProofkitError) in
                        try store.setRingState(ring.id, .merged, at: now)
                    }
                    log("merged", ring.chain, "\(ring.id) (chain already ringing)")
                } else {
                    current.stopRequested.withLock { $0 = true }  // the newer chain rings next
                    pendingRing = true
                    waiting.insert(ring.chain)
                }
                continue
            }
            try start(ring, chain: chains[ring.chain], now: now)
        }
        return (pendingRing, waiting)
    }

    /// Logs the history lines other commands wrote since the last look (proofs, rejections, escapes).
    func logNewOutcomes() {
        guard let fresh = try? store.outcomes(limit: 100, after: loggedOutcome) else { return }
        for outcome in fresh.reversed() where outcome.kind != .missed && outcome.kind != .stopped {
            log(outcome.kind.rawValue, outcome.chain, outcome.detail ?? "")
        }
        loggedOutcome = max(loggedOutcome, fresh.first?.sequence ?? 0)
    }

    /// Starts ringing `ring` on a thread of its own.
    func start(_ ring: BookedRing, chain: StoredChain?, now: Date) throws(ProofkitError) {
        guard let chain else { return }
        let original = try store.rings(where: "id = ?", [.text(ring.id)]).first?.sound ?? chain.sound
        // The chosen sound, or (when it broke since booking) the last good copy; never a beep.
        var clip: AudioClip? = nil
        var source = original
        var problems: [String] = []
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
                problems.append("\(error)")
                log(index == 0 ? "sound-broken" : "sound-unplayable", chain.id, "\(error)")
            }
        }
        guard let clip else {
            let reason = "no playable sound: " + problems.joined(separator: "; ")
            try save("\(ring.id) failed", rings: [ring.id]) { [store] () throws(ProofkitError) in
                try store.setRingState(ring.id, .failed, at: now, detail: reason)
            }
            log("ring-failed", chain.id, "\(ring.id) \(reason)")
            return
        }
        let ringing = Ringing(ring: ring)
        current = ringing
        let options = self.options
        let ringCount =
            try store.rings(where: "chain = ?", [.text(chain.id)]).map(\.ring.ringIndex).max().map { $0 + 1 } ?? 1
        let volume = AlarmRingScheduler.ringVolume(
            volume: chain.volume, ringIndex: ring.ringIndex, ringCount: ringCount, escalate: chain.escalate)
        let ramp = chain.ramp
        let wake = self.event  // kept open while the ring thread may signal it
        let lateness = Int((now.timeIntervalSince(ring.fireDate) * 1000).rounded())
        log(
            "ring-due", chain.id,
            "\(ring.id) decided_late_ms=\(lateness) sound=\(source) volume=\(decimalText(volume, places: 0)) ramp=\(decimalText(ramp, places: 1))"
        )
        let log: @Sendable (String, String, String) -> Void = { event, chain, detail in
            AlarmService.log(options, event, chain, detail)
        }
        runOnDedicatedThread {
            var result: (RingReport?, String?) = (nil, nil)
            do throws(ProofkitError) {
                var player = try SoundPlayer(device: options.device, configuration: options.soundDevices.configuration)
                let report = try player.ring(
                    clip, seconds: options.ringSeconds, volume: Float(volume / 100), rampSeconds: ramp,
                    shouldStop: { ringing.stopRequested.withLock { $0 } },
                    started: {
                        let late = Int((options.now().timeIntervalSince(ring.fireDate) * 1000).rounded())
                        log("ring", ring.chain, "\(ring.id) late_ms=\(late)")
                    })
                result = (report, nil)
            } catch {
                result = (nil, error.description)
            }
            ringing.finished.withLock { $0 = result }
            WakeUp.signal(wake.raw)
        }
        // Recorded once the ring is under way: an alarm rings first, and a commit (synchronous=FULL)
        // can wait seconds behind other writers' I/O. A kill -9 in between leaves the ring
        // "scheduled", so a restart inside the window rings it again rather than losing it.
        try save("\(ring.id) ringing", rings: [ring.id]) { [store] () throws(ProofkitError) in
            try store.setRingState(ring.id, .ringing, at: now)
        }
    }

    /// Records the end of the ring that finished: `rang`, or `failed` with the reason.
    func finishRing() throws(ProofkitError) {
        guard let ringing = current, let result = ringing.finished.withLock({ $0 }) else { return }
        current = nil
        listenChain = ringing.ring.chain
        listenRetry.removeValue(forKey: ringing.ring.chain)
        if let report = result.0 {
            let id = ringing.ring.id
            try save("\(id) rang", rings: [id]) { [store] () throws(ProofkitError) in
                try store.setRingState(id, .rang)
            }
            log(
                "ring-end", ringing.ring.chain,
                "\(ringing.ring.id) seconds=\(decimalText(report.seconds, places: 1))\(report.wasStopped ? " stopped" : "")"
            )
        } else {
            let reason = result.1 ?? "unknown"
            let id = ringing.ring.id
            try save("\(id) failed", rings: [id]) { [store] () throws(ProofkitError) in
                try store.setRingState(id, .failed, detail: reason)
            }
            log("ring-failed", ringing.ring.chain, "\(ringing.ring.id) \(reason)")
        }
    }
}
