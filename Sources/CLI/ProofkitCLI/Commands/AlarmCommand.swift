import Proofkit
import ProofkitCore
internal import ProofkitSystem

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `proofkit alarm`: the alarm that rings on Linux until the proof passes.
enum AlarmCommand: Subcommand {
    static let name = "alarm"
    static let summary = "the alarm service: ring at prayer times or set times until the proof passes"
    static let synopsis = """
        proofkit alarm run [--device D] [--ring-seconds 60]
               proofkit alarm prayers --lat LAT --lon LON --tz ZONE [--method M] [--prayers fajr,...] [--proof-window 30m] [--sound FILE] [--proof any]
               proofkit alarm add --at TIME --sound FILE [--window 30m] [--proof voice|mat|squat|any] [--label L]
               proofkit alarm stop
               proofkit alarm prove [ID] (--voice [REC] | --photo PHOTO | --squat POSES|- | --escape)
               proofkit alarm status [--json]
               proofkit alarm history [--days 30] [--json] [--plot FILE.svg]
               proofkit alarm install [--user|--system] [--print]
        (every action takes --store DIR)
        """
    static let discussion = """
        The store is a folder (--store DIR, else $PROOFKIT_ALARM_DIR, else
        $XDG_STATE_HOME/proofkit, else ~/.local/state/proofkit) holding alarms.sqlite3 (SQLite,
        write-ahead log, every change one transaction: the alarm list, the chains and the history),
        the service's lock (service.lock), its control socket (control.sock, mode 0600, same user
        or root only) and the kept copies of the sounds (sounds/).

        run      the service, in the foreground (systemd runs it; see install). It wakes at each
                 fire time (a CLOCK_REALTIME timerfd that also notices clock changes), rings the
                 sound through ALSA looped with a 3 s volume ramp for --ring-seconds [60], and
                 keeps the prayer chains booked for a rolling 7 days, planning again after
                 midnight, a zone change (/etc/localtime, TZ), a clock change or new settings. A
                 ring missed while the machine was down still rings while its chain is inside its
                 proof window; after that it is logged as missed. One line per event on stderr:
                   TIME EVENT CHAIN [details]   (start, replan, ring, ring-end, stop, hold,
                   hold-end, missed, merged, sound-broken, clock-set, ...)
                 PROOFKIT_ALSA_CONFIG=FILE plays through that ALSA configuration instead.
        prayers  stores the prayer settings (sunrise never rings) and books the chains at once: a
                 first ring at the prayer time and backups over the proof window (30 min: +0, 2,
                 5, 9, 14, 20, 27 min), with stable ids (fajr.2026-11-30.0512.r0). The new
                 chain is booked before the old one is cancelled; a ringing alarm is never
                 touched; unknown ids are cancelled; one failed booking does not stop the rest.
        add      a one-off chain (id a1, a2, ...). TIME is ISO-8601 (2026-12-01T05:10:00+03:00,
                 or without offset in the device's zone), HH:MM (the next such time), or relative
                 (+10s, +5m). --gap and --gap-growth set the backup pattern [2m, 1m].
        stop     silences the ring now sounding, like a Stop button. The backups still come.
        prove    runs the proof for chain ID (default: the one ringing, else the latest in its
                 window): --photo PHOTO (the mat proof), --voice [REC] (live without REC),
                 --squat POSES.jsonl or - (a live keypoint stream on stdin). A passing proof ends
                 the chain and cancels its remaining rings. During a live proof the ring stops and
                 the chain's backups are held off; if the proof fails, the later backups come.
                 --escape ends the chain and records an escape, never counted as a proof.
        status   the next ring, covered-until, each active chain with its rings, a sound that
                 broke since booking, and the last outcomes (proof, escape, missed, stopped).
        history  one line per chain of the last --days [30] days: the date, the prayer or label,
                 the result (proof, escape, missed, or open while its window runs), the proof's
                 kind and how it was given (typed; hands-free once proofs can be), the time from
                 the first ring to the proof, the stops and the rings. Then the streaks of proven
                 days per prayer (or label) and for every alarm together, counted over the whole
                 store: an escape or a missed chain breaks a streak, a day without an alarm does
                 not; the proofs by kind; the median time to proof over the last 7 days against
                 the 7 before. --plot writes an SVG calendar heat map of the period (the colour is
                 the time to proof; escapes and misses are marked). It opens the store read-only:
                 it never changes it, works on a read-only disk, and a missing store is exit 66.
        install  writes a systemd unit (Restart=always) for the user (--user, default) or the
                 system (--system), or prints it (--print), and prints how to enable it.

        Sounds are checked when booked with 'proofkit check' rules (CAF/WAV/AIFF 16-bit PCM,
        under 30 s, not silent); a copy is kept in the store. If the file breaks later, status
        says so and it rings with the kept copy; never a beep in its place.

        Exit codes: 0 ok, 2 proof rejected, 64 bad option or --at, 65 sound refused, 66 unknown
        id or missing file, 69 no service running (stop) or ALSA/libsqlite3 missing, 73 store
        not writable (read-only disk), 75 another service runs on the store, 76 store corrupt.

        JSON (status --json): {"store":DIR,"service":"running"|"stopped","now":ISO,
          "next_ring":{"id","chain","fire"}|null,"covered_until":"YYYY-MM-DD"|null,
          "chains":[{"id","kind","label","proof","sound","sound_status":"ok"|"broken: ...",
                     "window_end","rings":[{"id","ring","fire","state"}]}],
          "outcomes":[{"chain","kind","at","detail"}]}
        JSON (history --json): {"store","now","zone","from","to","period_days",
          "chains":[{"id","date","series","status","proof","how","first_ring","ended_at",
                     "seconds_to_proof","stops","rings","missed_rings"}],
          "streaks":[{"series","current","current_since","longest","longest_from","longest_to",
                      "last_break":{"date","by"}|null}],"overall_streak":{...},
          "proofs_by_kind":{"mat":N,...},"proofs_by_how":{"typed":N,...},
          "median_time_to_proof":{"this_week":{"from","to","median_seconds","proofs"},"last_week":{...}},
          "days":[{"date","chains","proofs","escapes","missed","open","median_seconds_to_proof"}]}

        Examples:
          proofkit alarm prayers --lat 24.8607 --lon 67.0011 --tz Asia/Karachi --prayers fajr --sound adhan.caf
          proofkit alarm install --user
          proofkit alarm add --at +10s --sound adhan.caf --window 5m
          proofkit alarm prove --photo mat.jpg
          proofkit alarm history --days 90 --plot mornings.svg
        """
    static let options: [OptionSpec] =
        [
            .option("store", value: "DIR", help: "the store folder [$PROOFKIT_ALARM_DIR or ~/.local/state/proofkit]"),
            .option("device", value: "D", help: "run: ALSA playback device; prove --voice: capture device [default]"),
            .option("ring-seconds", value: "S", help: "run: how long one ring lasts [60]"),
            .option("at", value: "TIME", help: "add: ISO-8601, HH:MM or +DURATION"),
            .option("sound", value: "FILE", help: "add, prayers: the alarm sound"),
            .option("window", value: "DUR", help: "add: the proof window [30m]"),
            .option("gap", value: "DUR", help: "add: first gap between rings [2m]"),
            .option("gap-growth", value: "DUR", help: "add: growth of each next gap [1m]"),
            .option("proof", value: "KIND", help: "add, prayers: voice, mat, squat or any [any]"),
            .option("label", value: "L", help: "add: a label shown in status"),
            .flag("voice", help: "prove: the voice proof (REC as argument, else live)"),
            .option("photo", value: "PHOTO", help: "prove: the mat proof on a photo"),
            .option("squat", value: "POSES", help: "prove: squats from a keypoint file, or - for live"),
            .flag("escape", help: "prove: record an escape (ends the chain, not a proof)"),
            .flag("json", help: "status, add, history: one JSON object"),
            .option("days", value: "N", help: "history: the days shown, up to today [30]"),
            .option("plot", value: "FILE.svg", help: "history: write an SVG calendar heat map"),
            .flag("user", help: "install: a user unit [default]"),
            .flag("system", help: "install: a system unit"),
            .flag("print", help: "install: print the unit instead of writing it"),
            .option("prayers", value: "LIST", help: "prayers: prayers with alarms [fajr]"),
            .option("proof-window", value: "DUR", help: "prayers: backups spread over this [30m]"),
        ] + PrayerOptions.specs.filter { ["lat", "lon", "tz", "method"].contains($0.name) }

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        guard let action = arguments.positionals.first else {
            throw UsageError("missing action: run, prayers, add, stop, prove, status, history or install")
        }
        let rest = Array(arguments.positionals.dropFirst())
        do {
            switch action {
            case "run": return try runService(arguments, io: io)
            case "prayers": return try prayers(arguments, io: io)
            case "add": return try add(arguments, io: io)
            case "stop": return try stop(arguments, io: io)
            case "prove": return try prove(arguments, rest: rest, io: io)
            case "status": return try status(arguments, io: io)
            case "install": return try install(arguments, io: io)
            case "history": return try history(arguments, io: io)
            default:
                throw UsageError(
                    "unknown action '\(action)'; run, prayers, add, stop, prove, status, history or install")
            }
        } catch let failure as AlarmFailure {
            io.printError("proofkit alarm: \(failure.message)")
            return exitStatus(failure.kind)
        }
    }

    static func exitStatus(_ kind: AlarmFailure.Kind) -> ExitStatus {
        switch kind {
        case .corruptStore: .storeCorrupt
        case .readOnlyStore: .storeReadOnly
        case .serviceRunning: .serviceRunning
        case .noService: .unavailable
        case .unknownID: .noInput
        }
    }

    static func openStore(_ arguments: ParsedArguments, io: CommandIO) throws -> AlarmStore {
        try AlarmStore(folder: AlarmStore.folder(explicit: arguments.value("store"), environment: io.environment))
    }

    /// Asks the service to re-read the store; says so when none runs.
    static func poke(_ store: AlarmStore, io: CommandIO) {
        if (try? AlarmControl.send("reload", socketPath: store.socketPath)) == nil {
            io.printError(
                "proofkit alarm: note: no alarm service is running on \(store.folder); start it with 'proofkit alarm run' (or 'proofkit alarm install')"
            )
        }
    }

    static func zone(_ io: CommandIO) -> TimeZone {
        PrayerOptions.keepICUTimeZonesLinked()
        return currentDeviceZone(environment: io.environment)
    }

    static func text(_ date: Date, _ io: CommandIO) -> String { iso8601(date, in: zone(io)) }

    // MARK: run

    static func runService(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        var options = AlarmServiceOptions()
        options.device = arguments.value("device") ?? "default"
        options.soundDevices = try SoundDevices(environment: io.environment)
        if let seconds = try arguments.double("ring-seconds") {
            guard seconds > 0, seconds <= 3600 else {
                throw UsageError("--ring-seconds must be 0...3600, got \(seconds)")
            }
            options.ringSeconds = seconds
        }
        options.environment = io.environment
        let store = try openStore(arguments, io: io)
        let service = try AlarmService(store: store, options: options)
        try service.run()
    }

    // MARK: booking

    static func proofKind(_ arguments: ParsedArguments) throws(UsageError) -> String {
        let proof = arguments.value("proof") ?? "any"
        guard ["voice", "mat", "squat", "any"].contains(proof) else {
            throw UsageError("unknown --proof '\(proof)'; voice, mat, squat or any")
        }
        return proof
    }

    /// Checks the sound with check's rules; refuses it with the reason.
    static func checkSound(_ path: String) throws {
        let report = try AlarmSound.check(path: path)
        if case .rejected(let reason) = report.verdict {
            throw ProofkitError(.decodeFailed, "the sound is refused: \(reason.detail)", path: path)
        }
    }

    static func parseAt(_ text: String, now: Date, zone: TimeZone) throws(UsageError) -> Date {
        if text.hasPrefix("+") {
            guard let seconds = parseDuration(String(text.dropFirst())), seconds >= 0 else {
                throw UsageError("--at '\(text)' is not a relative time such as +10s or +5m")
            }
            return now.addingTimeInterval(seconds)
        }
        let parts = text.split(separator: ":")
        if parts.count == 2, text.count == 5, let h = Int(parts[0]), let m = Int(parts[1]), (0..<24).contains(h),
            (0..<60).contains(m)
        {
            let today = WallClockTime(now, in: zone).date
            var date = WallClockTime(date: today, hour: h, minute: m).instant(in: zone)
            if date <= now { date = WallClockTime(date: today.adding(days: 1), hour: h, minute: m).instant(in: zone) }
            return date
        }
        guard let date = parseISO8601(text, defaultZone: zone) else {
            throw UsageError("--at '\(text)' is not a time: use ISO-8601 (2026-12-01T05:10:00+03:00), HH:MM or +10s")
        }
        guard date > now.addingTimeInterval(-1) else {
            throw UsageError("--at \(text) is in the past")
        }
        return date
    }

    static func add(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        guard let atText = arguments.value("at") else { throw UsageError("add needs --at TIME") }
        guard let sound = arguments.value("sound") else { throw UsageError("add needs --sound FILE") }
        let now = Date()
        let zone = zone(io)
        let first = try parseAt(atText, now: now, zone: zone)
        let window = try arguments.seconds("window") ?? 1800
        guard (0...4 * 3600).contains(window) else { throw UsageError("--window must be 0...4h") }
        let gap = try arguments.seconds("gap") ?? 120
        let growth = try arguments.seconds("gap-growth") ?? 60
        guard gap >= 0.5, growth >= 0 else {
            throw UsageError("--gap must be at least 0.5s and --gap-growth not negative")
        }
        let proof = try proofKind(arguments)
        try checkSound(sound)
        let store = try openStore(arguments, io: io)
        let absolute = sound.hasPrefix("/") ? sound : (FileManager.default.currentDirectoryPath + "/" + sound)
        let kept = try store.keepCopy(of: absolute, name: "oneoff-\(Int(now.timeIntervalSince1970 * 1000))")
        func duration(_ s: Double) -> Duration { .milliseconds(Int64((s * 1000).rounded())) }
        let (id, rings) = try store.addOneOff(
            first: first, window: duration(window), firstGap: duration(gap),
            gapGrowth: duration(growth), sound: absolute, keptSound: kept, proof: proof,
            label: arguments.value("label"), now: now)
        poke(store, io: io)
        if arguments.has("json") {
            io.printJSON(
                .object([
                    "id": .string(id),
                    "rings": .array(
                        rings.map {
                            .object(["id": .string($0.id), "fire": .string(iso8601($0.fireDate, in: zone))])
                        }),
                ]))
        } else {
            io.print(
                "booked \(id): \(rings.count) ring\(rings.count == 1 ? "" : "s") from \(iso8601(first, in: zone)) (\(rings.map { PrayerOptions.clock($0.fireDate, zone: zone, date: WallClockTime(first, in: zone).date) }.joined(separator: " "))), proof \(proof)"
            )
        }
        return .success
    }

    static func prayers(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        // The service stores place, zone and method (the options `alarm` declares); the
        // calculator reads every prayer option, so it is given exactly those, the rest at defaults.
        var place = ParsedArguments(declaredNames: Set(PrayerOptions.specs.map(\.name)))
        for name in ["lat", "lon", "tz", "method"] { place.values[name] = arguments.value(name).map { [$0] } }
        let calculator = try PrayerOptions.calculator(place)
        guard arguments.value("tz") != nil else { throw UsageError("prayers needs --tz ZONE (the timetable's zone)") }
        var list: [Prayer] = [.fajr]
        if let text = arguments.value("prayers") {
            list = []
            for name in text.split(separator: ",") {
                guard let prayer = Prayer(rawValue: name.lowercased()), prayer != .sunrise else {
                    throw UsageError("unknown prayer '\(name)' in --prayers; fajr, dhuhr, asr, maghrib, isha")
                }
                list.append(prayer)
            }
        }
        let window = try arguments.seconds("proof-window") ?? 1800
        guard (0...4 * 3600).contains(window) else { throw UsageError("--proof-window must be 0...4h") }
        let proof = try proofKind(arguments)
        var sound = arguments.value("sound")
        if let path = sound {
            try checkSound(path)
            sound = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        }
        let store = try openStore(arguments, io: io)
        if sound == nil {
            // Keep the sound booked before; there is no built-in sound (never a beep).
            guard try store.setting("prayers.sound") != nil else {
                throw UsageError("prayers needs --sound FILE: the alarm sound (see 'proofkit trim' to make one)")
            }
        }
        let kept = try sound.map { try store.keepCopy(of: $0, name: "prayers") }
        try store.write {
            try store.put([
                "prayers.lat": String(calculator.coordinates.latitude),
                "prayers.lon": String(calculator.coordinates.longitude),
                "prayers.tz": calculator.timeZone.identifier, "prayers.method": arguments.value("method") ?? "mwl",
                "prayers.list": list.map(\.rawValue).joined(separator: ","), "prayers.window": String(Int(window)),
                "prayers.proof": proof,
            ])
            if let sound { try store.put(["prayers.sound": sound, "prayers.kept_sound": kept]) }
        }
        let zone = zone(io)
        let report = try store.replanPrayers(now: Date(), deviceZone: zone)
        poke(store, io: io)
        let covered = try store.setting("prayers.covered_until") ?? "nothing"
        io.print(
            "prayer alarms for \(list.map(\.rawValue).joined(separator: ", ")) at \(calculator.coordinates.latitude), \(calculator.coordinates.longitude) (\(calculator.timeZone.identifier)): \(report?.booked.count ?? 0) rings booked, \(report?.cancelled.count ?? 0) cancelled\(report.map { $0.failed.isEmpty ? "" : ", \($0.failed.count) failed" } ?? ""); covered until \(covered)"
        )
        return .success
    }

    // MARK: stop and prove

    static func stop(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        let store = try openStore(arguments, io: io)
        let reply = try AlarmControl.send("stop", socketPath: store.socketPath)
        guard reply.hasPrefix("ok") else { throw ProofkitError(.internal, "the service answered: \(reply)") }
        io.print(
            reply == "ok nothing ringing"
                ? "nothing is ringing"
                : "stopped \(reply.split(separator: " ").dropFirst(2).joined(separator: " ")); the backups still come")
        return .success
    }

    static func prove(_ arguments: ParsedArguments, rest: [String], io: CommandIO) throws -> ExitStatus {
        let store = try openStore(arguments, io: io)
        let now = Date()
        var positionals = rest
        var chain: StoredChain? = nil
        if let first = positionals.first, let found = try store.chain(id: first) {
            chain = found
            positionals.removeFirst()
        } else if let first = positionals.first, !arguments.has("voice") {
            throw AlarmFailure(.unknownID, "no alarm chain '\(first)'; 'proofkit alarm status' lists them")
        }
        if chain == nil { chain = try store.currentChain(now: now) }
        guard let chain else {
            throw AlarmFailure(.unknownID, "no active alarm chain to prove; 'proofkit alarm status' lists them")
        }
        let kinds = [
            arguments.has("voice"), arguments.value("photo") != nil, arguments.value("squat") != nil,
            arguments.has("escape"),
        ]
        guard kinds.filter({ $0 }).count == 1 else {
            throw UsageError("prove needs one of --voice [REC], --photo PHOTO, --squat POSES|-, --escape")
        }
        guard positionals.count <= (arguments.has("voice") ? 1 : 0) else {
            throw UsageError("unexpected argument '\(positionals.last!)'")
        }
        guard chain.state == "active" else {
            io.print("chain \(chain.id) has already ended")
            return .success
        }
        if arguments.has("escape") {
            let cancelled = try store.end(chain: chain.id, kind: "escape", at: now) ?? []
            poke(store, io: io)
            io.print(
                "chain \(chain.id) ended by an escape (not a proof); \(cancelled.count) ring\(cancelled.count == 1 ? "" : "s") cancelled"
            )
            return .success
        }
        let proof: (String, any Subcommand.Type, [String], Bool)
        if let photo = arguments.value("photo") {
            proof = ("mat", MatCommand.self, [photo, "--strict"], false)
        } else if let poses = arguments.value("squat") {
            proof = ("squat", SquatCommand.self, [poses, "--strict"], poses == "-")
        } else if let recording = positionals.first {
            proof = ("voice", VoiceCommand.self, [recording, "--strict"], false)
        } else {
            proof = (
                "voice", VoiceCommand.self,
                ["--live", "--strict"] + (arguments.value("device").map { ["--device", $0] } ?? []), true
            )
        }
        guard chain.proof == "any" || chain.proof == proof.0 else {
            throw UsageError("chain \(chain.id) asks for the \(chain.proof) proof, not \(proof.0)")
        }
        // A live proof holds the chain's backups off and stops the ring while it runs.
        var holdFD: Int32 = -1
        if proof.3 {
            do { holdFD = try AlarmControl.hold(chain: chain.id, socketPath: store.socketPath) } catch {
                io.printError("proofkit alarm: note: no alarm service to hold the backups off during the live proof")
            }
        }
        defer { if holdFD >= 0 { POSIX.closeDescriptor(holdFD) } }
        let status = ProofkitCLI.execute(proof.1, proof.2, io: io)
        switch status {
        case .success:
            let cancelled = try store.end(chain: chain.id, kind: "proof", at: Date(), detail: proof.0) ?? []
            poke(store, io: io)
            io.print(
                "proof accepted: chain \(chain.id) ended; \(cancelled.count) ring\(cancelled.count == 1 ? "" : "s") cancelled"
            )
            return .success
        case .rejected:
            io.print("proof rejected: chain \(chain.id) goes on; the backups still come")
            return .rejected
        default:
            return status
        }
    }

    // MARK: status

    static func status(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        let store = try openStore(arguments, io: io)
        let zone = zone(io)
        let now = Date()
        let running = (try? AlarmControl.send("ping", socketPath: store.socketPath))?.hasPrefix("ok") == true
        let rings = try store.allRings()
        let chains = try store.allChains()
        let active = chains.filter { chain in
            chain.state == "active"
                && (chain.windowEnd >= now
                    || rings.contains { $0.ring.chain == chain.id && ["scheduled", "ringing"].contains($0.state) })
        }
        let next = rings.filter { $0.state == "scheduled" }.min { $0.ring.fireDate < $1.ring.fireDate }
        let covered = try store.setting("prayers.covered_until")
        let outcomes = try store.outcomes(limit: 10)
        var checked: [String: String] = [:]  // each sound checked once (14 prayer chains share one)
        func soundStatus(_ chain: StoredChain) -> String {
            if let known = checked[chain.sound] { return known }
            let verdict: String
            do {
                let report = try AlarmSound.check(path: chain.sound)
                if case .rejected(let reason) = report.verdict {
                    verdict = "broken: \(reason.detail); rings with the kept copy"
                } else {
                    verdict = "ok"
                }
            } catch {
                verdict = "broken: \(error.description); rings with the kept copy"
            }
            checked[chain.sound] = verdict
            return verdict
        }
        if arguments.has("json") {
            io.printJSON(
                .object([
                    "store": .string(store.folder), "service": .string(running ? "running" : "stopped"),
                    "now": .string(iso8601(now, in: zone)),
                    "next_ring": next.map {
                        .object([
                            "id": .string($0.ring.id), "chain": .string($0.ring.chain),
                            "fire": .string(iso8601($0.ring.fireDate, in: zone)),
                        ])
                    } ?? .null,
                    "covered_until": JSONValue(covered),
                    "chains": .array(
                        active.map { chain in
                            .object([
                                "id": .string(chain.id), "kind": .string(chain.kind), "label": JSONValue(chain.label),
                                "proof": .string(chain.proof), "sound": .string(chain.sound),
                                "sound_status": .string(soundStatus(chain)),
                                "window_end": .string(iso8601(chain.windowEnd, in: zone)),
                                "rings": .array(
                                    rings.filter { $0.ring.chain == chain.id }.map {
                                        .object([
                                            "id": .string($0.ring.id), "ring": .int($0.ring.ringIndex),
                                            "fire": .string(iso8601($0.ring.fireDate, in: zone)),
                                            "state": .string($0.state),
                                        ])
                                    }),
                            ])
                        }),
                    "outcomes": .array(
                        outcomes.map {
                            .object([
                                "chain": .string($0.chain), "kind": .string($0.kind),
                                "at": .string(iso8601($0.at, in: zone)),
                                "detail": JSONValue($0.detail),
                            ])
                        }),
                ]))
            return .success
        }
        io.print("store \(store.folder): service \(running ? "running" : "not running")")
        io.print("next ring: \(next.map { "\($0.ring.id) at \(iso8601($0.ring.fireDate, in: zone))" } ?? "none")")
        if let covered { io.print("prayer alarms covered until \(covered)") }
        io.print("\(active.count) active chain\(active.count == 1 ? "" : "s")")
        for chain in active {
            io.print(
                "  \(chain.id)\(chain.label.map { " (\($0))" } ?? "")  proof \(chain.proof)  window until \(iso8601(chain.windowEnd, in: zone))  sound \(soundStatus(chain))"
            )
            let parts = rings.filter { $0.ring.chain == chain.id }.map {
                "\(PrayerOptions.clock($0.ring.fireDate, zone: zone, date: WallClockTime(chain.firstFire, in: zone).date))\(WallClockTime($0.ring.fireDate, in: zone).second == 0 ? "" : ":" + String(100 + WallClockTime($0.ring.fireDate, in: zone).second).dropFirst()) \($0.state)"
            }
            io.print("    " + parts.joined(separator: ", "))
        }
        io.print("last outcomes:")
        for outcome in outcomes {
            io.print(
                "  \(iso8601(outcome.at, in: zone))  \(outcome.kind.padded(toLength: 8))\(outcome.chain)\(outcome.detail.map { " " + $0 } ?? "")"
            )
        }
        if outcomes.isEmpty { io.print("  none") }
        return .success
    }

    // MARK: history

    static func history(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        let days = try arguments.int("days") ?? 30
        guard (1...3660).contains(days) else { throw UsageError("--days must be 1...3660, got \(days)") }
        let plot = arguments.value("plot")
        if plot?.isEmpty == true { throw UsageError("--plot needs a file name") }
        let folder = AlarmStore.folder(explicit: arguments.value("store"), environment: io.environment)
        let store = try AlarmStore(readingOnly: folder)
        let report = AlarmHistoryReport(
            folder: folder, chains: try store.historyChains(), days: days, now: Date(), zone: zone(io))
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
        let folder = AlarmStore.folder(explicit: arguments.value("store"), environment: io.environment)
        let binary =
            POSIX.linkTarget("/proc/self/exe").map { String(decoding: $0, as: UTF8.self) } ?? "/usr/local/bin/proofkit"
        let unit = """
            [Unit]
            Description=proofkit alarm: rings at prayer times until the proof passes
            After=sound.target time-sync.target

            [Service]
            ExecStart=\(binary) alarm run --store \(folder)
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
            let config =
                io.environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
                ?? ((io.environment["HOME"] ?? "/root") + "/.config")
            let unitFolder = config + "/systemd/user"
            do { try FileManager.default.createDirectory(atPath: unitFolder, withIntermediateDirectories: true) } catch
            {
                throw ProofkitError(.io, "cannot create the folder for the unit", path: unitFolder)
            }
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
