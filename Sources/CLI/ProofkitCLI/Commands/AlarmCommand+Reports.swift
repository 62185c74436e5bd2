import Proofkit
import ProofkitCore
internal import ProofkitSystem

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `proofkit alarm status`, `history` and `install`: what the store says, and the systemd unit.
extension AlarmCommand {
    // MARK: prayers

    /// What `alarm prayers` prints once the store is planned: the rings booked, how far the
    /// alarms are covered, and each prayer time that has no alarm because it does not exist there
    /// (polar day or night), with the option that gives it one. Nothing is missing without a word.
    static func printBooked(
        list: [Prayer], calculator: PrayerTimeCalculator, proof: ProofKind, report: ApplyReport?,
        store: AlarmStore, _ arguments: ParsedArguments, io: CommandIO
    ) throws {
        let covered = try store.setting("prayers.covered_until") ?? "nothing"
        let missing = try store.unavailablePrayerTimes()
        if arguments.has("json") {
            let booked = try store.allRings().filter { $0.state == .scheduled }
                .min { $0.ring.fireDate < $1.ring.fireDate }
            io.printJSON(
                .object([
                    "prayers": .array(list.map { .string($0.rawValue) }), "tz": .string(calculator.timeZone.identifier),
                    "booked": .int(report?.booked.count ?? 0), "cancelled": .int(report?.cancelled.count ?? 0),
                    "failed": .int(report?.failed.count ?? 0), "covered_until": .string(covered),
                    "proof": .string(proof.rawValue),
                    "next_ring": booked.map { .string(iso8601($0.ring.fireDate, in: calculator.timeZone)) } ?? .null,
                    "unavailable": PrayerOptions.unavailableJSON(missing),
                ]))
            return
        }
        io.print(
            "prayer alarms for \(list.map(\.rawValue).joined(separator: ", ")) at \(calculator.coordinates.latitude), \(calculator.coordinates.longitude) (\(calculator.timeZone.identifier)): \(report?.booked.count ?? 0) rings booked, \(report?.cancelled.count ?? 0) cancelled\(report.map { $0.failed.isEmpty ? "" : ", \($0.failed.count) failed" } ?? ""); covered until \(covered)"
        )
        for line in unavailableLines(missing) { io.print(line) }
    }

    /// One line per prayer and reason for the times the plan has none of, e.g. "no fajr alarm on
    /// 2026-12-06 ... 2026-12-12 (7 days): polar night (...)", and the option that gives them one.
    static func unavailableLines(_ missing: [UnavailableOccurrence]) -> [String] {
        var groups: [(prayer: Prayer, reason: UndefinedReason, dates: [LocalDate])] = []
        for missing in missing {
            let (occurrence, reason) = (missing.occurrence, missing.reason)
            if let index = groups.firstIndex(where: { $0.prayer == occurrence.prayer && $0.reason == reason }) {
                groups[index].dates.append(occurrence.date)
            } else {
                groups.append((occurrence.prayer, reason, [occurrence.date]))
            }
        }
        guard !groups.isEmpty else { return [] }
        return groups.map { group in
            let dates = group.dates.sorted()  // never empty: a group starts with one date
            let days =
                dates.count == 1
                ? "on \(dates[0])" : "on \(dates[0]) ... \(dates[dates.count - 1]) (\(dates.count) days)"
            let why =
                group.reason == .polarNight
                ? "polar night (the Sun does not rise)" : "midnight sun (the Sun does not set)"
            return "no \(group.prayer.rawValue) alarm \(days): \(why), so the time is not defined there"
        } + ["  (--polar nearest-latitude or --polar nearest-day gives those days a time)"]
    }

    // MARK: status

    /// Prints the service's state, the active chains with their rings and the last outcomes.
    static func status(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        let store = try openStore(arguments, io: io, access: .readOnly)
        let status = try StatusSnapshot(store: store, io: io)
        if arguments.has("json") {
            io.printJSON(status.json())
        } else {
            status.printText(io: io)
        }
        return .success
    }

    /// What `alarm status` shows, read from the store once: the service, the active chains and
    /// their rings, the last outcomes.
    private struct StatusSnapshot {
        let folder: String
        /// The timetable's zone (the prayers' --tz): rings are shown in it.
        let zone: TimeZone
        /// The machine's zone, shown beside the timetable's when `differs`.
        let machine: TimeZone
        let differs: Bool
        let settings: [String: String]
        /// The playback device the service found, and its status.
        let device: (String, String)?
        /// The microphone's status as the service found it (`nil`: no hands-free report).
        let micStatus: String?
        /// What the service listens for now, or why not.
        let listening: String?
        let skipped: [String]
        let now: Date
        let running: Bool
        /// Writes the running service could not save (a full disk): how many, since when, why.
        let unsaved: (count: Int, since: String, reason: String)?
        let rings: [StoredRing]
        /// The chains still to ring, or ringing.
        let active: [StoredChain]
        let next: StoredRing?
        let covered: String?
        let unavailable: [UnavailableOccurrence]
        let outcomes: [StoredOutcome]
        /// Each active chain's sound checked, once a sound (14 prayer chains share one).
        let soundChecks: [String: String]

        /// Reads the store, the service's settings and a ping of the service.
        init(store: AlarmStore, io: CommandIO) throws {
            folder = store.folder
            // Rings are shown in the timetable's zone (the prayers' --tz), and in the machine's too
            // when that differs.
            let machine = try AlarmCommand.zone(io)
            let zone = try store.setting("prayers.tz").flatMap { TimeZone(identifier: $0) } ?? machine
            self.machine = machine
            self.zone = zone
            differs =
                zone.secondsFromGMT(for: Date()) != machine.secondsFromGMT(for: Date())
                || zone.identifier != machine.identifier
            let settings = try store.settings()
            self.settings = settings
            device = settings["service.device"].map { ($0, settings["service.device_status"] ?? "unknown") }
            micStatus = settings["service.mic_status"]
            listening = settings["service.listening"]
            skipped = try store.invalidRows()
            let now = Date()
            self.now = now
            let ping = try? AlarmControl.send("ping", socketPath: store.socketPath)
            running = ping?.hasPrefix("ok") == true
            unsaved = ping.flatMap(Self.unsavedWrites(inPing:))
            let rings = try store.allRings()
            self.rings = rings
            active = try store.allChains().filter { chain in
                chain.state == .active
                    && (chain.windowEnd >= now
                        || rings.contains { $0.ring.chain == chain.id && [.scheduled, .ringing].contains($0.state) })
            }
            next = rings.filter { $0.state == .scheduled }.min { $0.ring.fireDate < $1.ring.fireDate }
            covered = try store.setting("prayers.covered_until")
            unavailable = try store.unavailablePrayerTimes()
            outcomes = try store.outcomes(limit: 10)
            var checked: [String: String] = [:]
            for chain in active where checked[Self.soundKey(chain)] == nil {
                checked[Self.soundKey(chain)] = Self.checkSound(chain)
            }
            soundChecks = checked
        }

        static func soundKey(_ chain: StoredChain) -> String { chain.sound + "\u{0}" + (chain.keptSound ?? "") }

        /// Why the sound at `path` cannot ring, or `nil` when it can.
        private static func problem(_ path: String) -> String? {
            do {
                let report = try AlarmSound.check(path: path)
                if case .rejected(let reason) = report.verdict { return reason.detail }
                return nil
            } catch {
                return error.description
            }
        }

        /// `ok`, or why the chain's sound is broken, and whether its kept copy (what the service
        /// rings then) can ring in its place.
        private static func checkSound(_ chain: StoredChain) -> String {
            guard let broken = problem(chain.sound) else { return "ok" }
            guard let kept = chain.keptSound else { return "broken: \(broken); no kept copy: it cannot ring" }
            if let keptProblem = problem(kept) {
                return "broken: \(broken); the kept copy cannot ring either (\(keptProblem)): it cannot ring"
            }
            return "broken: \(broken); rings with the kept copy"
        }

        /// The chain's sound check: `ok` or why it is broken (each active chain's is checked in `init`).
        private func soundStatus(of chain: StoredChain) -> String { soundChecks[Self.soundKey(chain)] ?? "ok" }

        /// The input devices whose keys stop a ring, open and missing, as the service last recorded
        /// them (`nil` before a service first ran on the store).
        var stopKeyDevices: (open: [String], missing: [String])? {
            guard let open = settings["service.inputs"] else { return nil }
            func list(_ text: String?) -> [String] { (text ?? "").split(separator: ",").map(String.init) }
            return (list(open), list(settings["service.inputs_missing"]))
        }

        /// The stop-keys line: the devices whose keys stop a ring, and those not there.
        var stopKeysLine: String? {
            stopKeyDevices.map { devices in
                let open =
                    devices.open.isEmpty
                    ? "none open (a keyboard, keypad or presenter; the service's user needs the 'input' group)"
                    : devices.open.joined(separator: ", ")
                let missing =
                    devices.missing.isEmpty
                    ? "" : "; not there: \(devices.missing.joined(separator: ", ")) (tried before each ring)"
                return "keys that stop a ring: \(open)\(missing)"
            }
        }

        /// The hands-free line: the microphone the service found, and what it listens for now (or why not).
        var handsFreeLine: String? {
            micStatus.map { status in
                let mic = settings["service.mic"] ?? "none"
                guard status == "ok" else {
                    return "hands-free listening: off (microphone \(mic): \(status)); typed proofs work as before"
                        + (listening.map { "; \($0)" } ?? "")
                }
                return
                    "hands-free listening: microphone \(mic) ok; \(listening ?? "not listening now (it listens between the rings of a due chain)")"
            }
        }

        /// The chain's rings in the store.
        func rings(of chain: StoredChain) -> [StoredRing] {
            rings.filter { $0.ring.chain == chain.id }
        }

        /// The `--json` report.
        func json() -> JSONValue {
            .object([
                "store": .string(folder), "service": .string(running ? "running" : "stopped"),
                "unsaved": unsaved.map {
                    .object(["count": .int($0.count), "since": .string($0.since), "reason": .string($0.reason)])
                } ?? .null,
                "now": .string(iso8601(now, in: zone)),
                "next_ring": next.map {
                    .object([
                        "id": .string($0.ring.id), "chain": .string($0.ring.chain),
                        "fire": .string(iso8601($0.ring.fireDate, in: zone)),
                    ])
                } ?? .null,
                "covered_until": JSONValue(covered), "unavailable": PrayerOptions.unavailableJSON(unavailable),
                "zone": .string(zone.identifier), "machine_zone": .string(machine.identifier),
                "device": device.map { .object(["name": .string($0.0), "status": .string($0.1)]) } ?? .null,
                "stop_keys": stopKeyDevices.map {
                    .object([
                        "devices": .array($0.open.map { .string($0) }),
                        "missing": .array($0.missing.map { .string($0) }),
                    ])
                } ?? .null,
                "hands_free": micStatus.map { status in
                    .object([
                        "mic": JSONValue(settings["service.mic"]), "mic_status": .string(status),
                        "listening": JSONValue(listening),
                    ])
                } ?? .null,
                "skipped_rows": .array(skipped.map { .string($0) }),
                "chains": .array(active.map(chainJSON)),
                "outcomes": .array(
                    outcomes.map {
                        .object([
                            "chain": .string($0.chain), "kind": .string($0.kind.rawValue),
                            "at": .string(iso8601($0.at, in: zone)),
                            "detail": JSONValue($0.detail),
                        ])
                    }),
            ])
        }

        /// "ok pid 12 unsaved 3 since 2026-12-06T05:02:00Z REASON" → (3, "2026-12-06T05:02:00Z", REASON).
        static func unsavedWrites(inPing reply: String) -> (count: Int, since: String, reason: String)? {
            let words = reply.split(separator: " ", maxSplits: 6, omittingEmptySubsequences: false)
            guard words.count == 7, words[0] == "ok", words[3] == "unsaved", let count = Int(words[4]),
                words[5] == "since"
            else { return nil }
            let rest = words[6].split(separator: " ", maxSplits: 1)
            guard rest.count == 2 else { return nil }
            return (count, String(rest[0]), String(rest[1]))
        }

        /// One active chain in the `--json` report, with its rings.
        private func chainJSON(_ chain: StoredChain) -> JSONValue {
            .object([
                "id": .string(chain.id), "kind": .string(chain.kind.rawValue), "label": JSONValue(chain.label),
                "proof": .string(chain.proof.rawValue), "sound": .string(chain.sound),
                "volume": .rounded(chain.volume, places: 1), "ramp": .rounded(chain.ramp, places: 3),
                "escalate": .bool(chain.escalate), "listen": .string(chain.listen.rawValue),
                "listens": .bool(chain.listens), "text": .string(chain.duaText.name),
                "sound_status": .string(soundStatus(of: chain)),
                "window_end": .string(iso8601(chain.windowEnd, in: zone)),
                "rings": .array(
                    rings(of: chain).map {
                        .object([
                            "id": .string($0.ring.id), "ring": .int($0.ring.ringIndex),
                            "fire": .string(iso8601($0.ring.fireDate, in: zone)),
                            "fire_machine": .string(iso8601($0.ring.fireDate, in: machine)),
                            "state": .string($0.state.rawValue), "detail": JSONValue($0.detail),
                        ])
                    }),
            ])
        }

        /// The text report: the service, the zones, the next ring, the chains, the last outcomes.
        func printText(io: CommandIO) {
            io.print("store \(folder): service \(running ? "running" : "not running")")
            if let unsaved {
                io.print(
                    "  it cannot save to the store since \(unsaved.since) (\(unsaved.reason)): it rings on, and saves \(unsaved.count) waiting change\(unsaved.count == 1 ? "" : "s") once it can (a proof typed meanwhile is kept by the service)"
                )
            }
            if let device {
                io.print("playback device \(device.0): \(device.1) (when the service started)")
            }
            if let stopKeysLine { io.print(stopKeysLine) }
            if let handsFreeLine { io.print(handsFreeLine) }
            io.print("times in \(zone.identifier)\(differs ? "; this machine's zone is \(machine.identifier)" : "")")
            io.print("next ring: \(next.map { "\($0.ring.id) at \(both($0.ring.fireDate))" } ?? "none")")
            if let covered { io.print("prayer alarms covered until \(covered)") }
            for line in AlarmCommand.unavailableLines(unavailable) { io.print(line) }
            io.print("\(active.count) active chain\(active.count == 1 ? "" : "s")")
            for chain in active { printChain(chain, io: io) }
            io.print("last outcomes:")
            for outcome in outcomes {
                io.print(
                    "  \(iso8601(outcome.at, in: zone))  \(outcome.kind.rawValue.padded(toLength: 9))\(outcome.chain)\(outcome.detail.map { " " + $0 } ?? "")"
                )
            }
            if outcomes.isEmpty { io.print("  none") }
            for row in skipped { io.print("skipped (a time out of range): \(row)") }
        }

        /// A time in the timetable's zone, and on the machine's clock when that differs.
        private func both(_ date: Date) -> String {
            iso8601(date, in: zone)
                + (differs ? " (\(iso8601(date, in: machine)) on this machine, \(machine.identifier))" : "")
        }

        /// One active chain's lines: its settings, then its rings' times and states.
        private func printChain(_ chain: StoredChain, io: CommandIO) {
            io.print(
                "  \(chain.id)\(chain.label.map { " (\($0))" } ?? "")  proof \(chain.proof.rawValue)  volume \(decimalText(chain.volume, places: 0))%\(chain.escalate ? " rising to 100%" : "")  ramp \(decimalText(chain.ramp, places: 1))s  \(chain.listens ? "listens for '\(chain.duaText.name)'" : "no listening")  window until \(iso8601(chain.windowEnd, in: zone))  sound \(soundStatus(of: chain))"
            )
            let parts = rings(of: chain).map { ringText($0, of: chain) }
            let offset = iso8601(chain.firstFire, in: zone).suffix(6)
            io.print("    " + parts.joined(separator: ", ") + " (UTC\(offset))")
            if differs {
                io.print("    first ring on this machine's clock: \(iso8601(chain.firstFire, in: machine))")
            }
        }

        /// A ring as `HH:MM[:SS] state (detail)`, with `(+N)` when not on the chain's first day.
        private func ringText(_ ring: StoredRing, of chain: StoredChain) -> String {
            let second = WallClockTime(ring.ring.fireDate, in: zone).second
            return
                "\(PrayerOptions.clock(ring.ring.fireDate, zone: zone, date: WallClockTime(chain.firstFire, in: zone).date))\(second == 0 ? "" : ":" + String(100 + second).dropFirst()) \(ring.state.rawValue)\(ring.detail.map { " (\($0))" } ?? "")"
        }
    }

    // MARK: history

    static func history(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        let days = try arguments.int("days") ?? 30
        guard (1...3660).contains(days) else { throw UsageError("--days must be 1...3660, got \(days)") }
        let plot = arguments.value("plot")
        if plot?.isEmpty == true { throw UsageError("--plot needs a file name") }
        let folder = AlarmStore.folder(explicit: arguments.value("store"), environment: io.environment)
        let store = try AlarmStore(folder: folder, access: .readOnly)
        let report = AlarmHistoryReport(
            folder: folder, chains: try store.historyChains(), days: days, now: Date(), zone: try zone(io))
        if let plot { try writeFileAtomically(report.svg(), to: plot) }
        if arguments.has("json") {
            io.printJSON(report.json())
        } else {
            for line in report.text() { io.print(line) }
            if let plot { io.print("wrote \(plot)") }
        }
        return .success
    }

    // MARK: install

    static func install(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        guard !(arguments.has("user") && arguments.has("system")) else {
            throw UsageError("choose --user or --system, not both")
        }
        let system = arguments.has("system")
        // The unit runs in another folder: every path goes in absolute.
        let folder = try absolutePath(
            AlarmStore.folder(explicit: arguments.value("store"), environment: io.environment))
        var extra = ""
        if let device = arguments.value("device") { extra += " --device \(systemdQuoted(device))" }
        if let seconds = try ringSeconds(arguments) { extra += " --ring-seconds \(decimalText(seconds, places: 1))" }
        if let input = arguments.value("input") { extra += " --input \(systemdQuoted(try absolutePath(input)))" }
        if try stopKey(arguments) != nil, let key = arguments.value("stop-key") {
            extra += " --stop-key \(systemdQuoted(key))"
        }
        if let mic = arguments.value("mic") { extra += " --mic \(systemdQuoted(mic))" }
        if let camera = arguments.value("camera"), !camera.isEmpty { extra += " --camera \(systemdQuoted(camera))" }
        for name in ["accept-sound", "reject-sound"] {
            guard let sound = arguments.value(name) else { continue }
            // A chime that is not there would fail every start of the unit: said now instead.
            let path = try absolutePath(sound)
            guard case .success(let status) = POSIX.status(path), status.isRegular else {
                throw ProofkitError(.notFound, "no such sound file for --\(name)", path: sound)
            }
            extra += " --\(name) \(systemdQuoted(path))"
        }
        // A system unit runs as the user who installs it (root only when root installs it).
        let user =
            system
            ? "User=\(io.environment["SUDO_USER"].flatMap { $0.isEmpty ? nil : $0 } ?? io.environment["USER"] ?? "root")\n"
            : ""
        let binary =
            POSIX.linkTarget("/proc/self/exe").map { String(decoding: $0, as: UTF8.self) } ?? "/usr/local/bin/proofkit"
        let unit = """
            [Unit]
            Description=proofkit alarm: rings at prayer times until the proof passes
            After=sound.target time-sync.target

            [Service]
            \(user)ExecStart=\(systemdQuoted(binary)) alarm run --store \(systemdQuoted(folder))\(extra)
            Restart=always
            RestartSec=2

            [Install]
            WantedBy=\(system ? "multi-user.target" : "default.target")

            """
        if arguments.has("print") {
            io.writeOut(unit)
            return .success
        }
        let path: String
        if system {
            path = "/etc/systemd/system/proofkit-alarm.service"
        } else {
            let config = UserFolders.config(io.environment) ?? "/root/.config"
            let unitFolder = config + "/systemd/user"
            try makeFolders(unitFolder, what: "the folder for the unit")
            path = unitFolder + "/proofkit-alarm.service"
        }
        try writeFileAtomically(unit, to: path)
        io.print("wrote \(path)")
        if system {
            io.print("enable it with: sudo systemctl daemon-reload && sudo systemctl enable --now proofkit-alarm")
        } else {
            io.print("enable it with: systemctl --user daemon-reload && systemctl --user enable --now proofkit-alarm")
            io.print("and let it run without a login: sudo loginctl enable-linger $USER")
        }
        io.print("events: journalctl \(system ? "" : "--user ")-u proofkit-alarm -f")
        return .success
    }
}
