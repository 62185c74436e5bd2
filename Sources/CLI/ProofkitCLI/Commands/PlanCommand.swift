import Proofkit
import ProofkitCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `proofkit plan`: the alarm chains for the coming days, reconciled with a state file.
enum PlanCommand: Subcommand {
    static let name = "plan"
    static let summary = "plan the alarm chains for the coming days"
    static let synopsis = """
        proofkit plan --lat LAT --lon LON [--tz ZONE] [--prayers fajr,maghrib] [--days 7] [--proof-window 30m] [--backups N] [--sound FILE] [--budget N] [--state FILE] [--now ISO8601] [--json]
        """
    static let discussion = """
        Plans a rolling window of --days local dates (today first) of alarm chains for the chosen
        prayers (sunrise is never an alarm). Each chain is a first ring at the prayer time and
        backups over the proof window, close together first and further apart later (30 min:
        +0, 2, 5, 9, 14, 20, 27 min). Ids are stable: prayer.date.HHMM.rRING, e.g.
        fajr.2026-11-30.0512.r0. With --budget N (the system's alarm or notification limit,
        minus --reminders) the nearest chains are kept whole, with room for one more chain so a
        re-sync never goes over; "covered until" is the last date whose alarms are all booked.

        Backups: --proof-window alone keeps that spacing (2 min, then each gap 1 min longer, at
        most 10 min) and as many backups as fit in the window. --backups N spreads N backups
        evenly over the window, the last at its end: --backups 30 over the default 30 min is
        one a minute, 31 alarms a chain; --backups with --proof-window spreads N over that
        window. N is 0...60 (0: the first ring only) and the backups must stay at least 30 s
        apart, so --backups 30 needs a window of at least 15 min. More rings use more of
        --budget: the nearest chains are still kept whole.

        --sound FILE rings every chosen prayer with FILE. It is checked first with the rules of
        'proofkit check' (CAF, WAV or AIFF with 16-bit PCM, shorter than 30 s, not silent); a
        sound that fails is refused with the reason (exit 65; 66 when it is missing) before
        anything is planned or booked, and the state file is not touched. No beep is ever
        planned in its place. Default: the name adhan-<prayer> (the app's own sound).

        --tz is the timetable's zone; --device-tz is where the phone rings [same as --tz]. With
        --clock timetable [default] the alarm rings when the device's clock shows the timetable's
        time (Karachi following a London mosque rings at London's printed 05:12 on Karachi's
        clock); --clock instant rings at the same moment as the timetable.
        --now fixes the current time (ISO-8601 with offset, or a wall time in --device-tz) for
        reproducible output; default the current time.

        \(PrayerOptions.methodHelp)

        --state FILE reads the alarms the system holds from FILE (a missing FILE is a first run: it
        is created; an empty file or {} is an empty state too; any other content must be a proofkit state file: a file that is not,
        or a field of the wrong type, is refused with exit 65 and left as it was; keys proofkit
        does not know are kept), prints the operations reconciliation produces (schedule new chains
        before cancelling old ones, cancel-before-replace for changed content, never touch a
        ringing alarm, cancel unknown ids) and applies them to FILE atomically. State file:
          {"format": "proofkit-alarm-state", "version": 1,
           "fingerprint": "0123456789abcdef" | null,        (settings of the plan last applied in full)
           "chain_fingerprints": {"fajr.2026-11-30": "0123456789abcdef"},  (each chain as last synced)
           "alarms": [{"id": "fajr.2026-11-30.0512.r0", "fire": "2026-11-30T05:12:00+05:00",
                       "sound": "adhan-fajr", "state": "scheduled" | "ringing"}],
           "outcomes": [{"occurrence": "fajr.2026-11-29", "kind": "proof" | "escape",
                         "at": "2026-11-29T05:20:00+05:00"}],
           "postponed": {"<id>": "<ISO-8601>"}, "merged": ["<id>"]}
        "fire" and "sound" may be omitted when unknown. The file keeps its mode and owner, and a
        read-only one is refused (exit 74). One plan at a time: the read, plan and write hold an
        exclusive lock (flock on .FILE.lock beside it); another plan waits up to --lock-wait
        seconds [10], then exits 75. At most 16 MiB is read. Ended chains (outcomes) are not planned
        again; an escape is never counted as a proof. Each chain has a fingerprint of what it is
        (its ids, fire times and sound): a re-plan books again only the chains whose fingerprint
        changed and cancels those that left the plan; alarms that are already right are left
        alone (turning Maghrib off, or --adjust fajr=+3, never touches the other prayer).

        --json prints one object:
          {"now": ISO, "fingerprint": "...", "first_day": "YYYY-MM-DD", "last_day": "...",
           "covered_until": "YYYY-MM-DD" | null, "timetable_zone": "...", "device_zone": "...",
           "alarm_count": N,
           "chains": [{"occurrence": "fajr.2026-11-30", "prayer": "fajr", "date": "2026-11-30",
                       "prayer_time": ISO (timetable zone), "within_budget": true, "fingerprint": "...",
                       "rings": [{"id": "...", "ring": 0, "fire": ISO (device zone), "sound": "..."}]}],
           "unavailable": [{"occurrence": "...", "reason": "polarDay"}],
           and with --state: "operations": [{"op": "schedule" | "cancel", "id": "...",
             "reason": "contentChanged" | "superseded" | "notInPlan" | "unknownID" (cancel),
             "fire": ISO (schedule)}], "full_resync": bool (every held chain booked again),
             "resynced_chains": ["fajr.2026-11-30", ...] (booked again: fingerprint changed), "state": "FILE"}

        Examples:
          proofkit plan --lat 24.8607 --lon 67.0011 --tz Asia/Karachi
          proofkit plan --lat 51.5074 --lon -0.1278 --tz Europe/London --device-tz Asia/Karachi --prayers fajr
          proofkit plan --lat 21.4225 --lon 39.8262 --tz Asia/Riyadh --budget 64 --reminders 14 --state alarms.json --json
        """
    static let options: [OptionSpec] =
        PrayerOptions.specs + [
            .option("device-tz", value: "ZONE", help: "zone the phone rings in [--tz]"),
            .option(
                "clock", value: "MODE", help: "timetable (ring at the timetable's clock reading) or instant [timetable]"
            ),
            .option("prayers", value: "LIST", help: "prayers with alarms [fajr,maghrib]"),
            .option("days", value: "N", help: "days in the window, 1...60 [7]"),
            .option("proof-window", value: "DUR", help: "backups spread over this, e.g. 30m [30m]"),
            .option(
                "backups", value: "N", help: "N backups spread evenly over the proof window, 0...60 [growing gaps]"),
            .option(
                "sound", value: "FILE", help: "alarm sound for every prayer, checked as 'check' does [adhan-<prayer>]"),
            .option("budget", value: "N", help: "the system's alarm limit, e.g. 64 [none]"),
            .option("reminders", value: "N", help: "slots of the budget kept for reminders [0]"),
            .option("state", value: "FILE", help: "JSON state file: reconcile with it and update it"),
            .option("lock-wait", value: "S", help: "wait up to S seconds for another plan's lock on --state [10]"),
            .option("now", value: "ISO8601", help: "the current time, for reproducible output [now]"),
            .flag("json", help: "one JSON object on stdout"),
        ]

    /// Reads the options, plans (reconciling with --state when given) and prints the plan.
    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        guard arguments.positionals.isEmpty else {
            throw UsageError("unexpected argument '\(arguments.positionals[0])'")
        }
        let calculator = try PrayerOptions.calculator(arguments)
        let configuration = try chainConfiguration(arguments, calculator: calculator)
        let planner = try makePlanner(arguments, calculator: calculator, configuration: configuration)
        let now = try planningTime(arguments, zone: configuration.deviceTimeZone)
        let statePath = arguments.value("state")
        let plan: AlarmPlan
        var reconciliation: Reconciliation? = nil
        if let statePath {
            let lockWait = try lockWaitSeconds(arguments)
            let applied = try planAndApply(to: statePath, planner: planner, now: now, lockWait: lockWait)
            plan = applied.plan
            reconciliation = applied.reconciliation
        } else {
            plan = planner.plan(now: now, context: AlarmLedger().planningContext)
        }
        if arguments.has("json") {
            var output = planJSON(plan, planner: planner)
            if let statePath, let reconciliation {
                output.merge(
                    reconciliationJSON(reconciliation, statePath: statePath, zone: configuration.deviceTimeZone)
                ) { _, new in new }
            }
            io.printJSON(.object(output))
        } else {
            printText(plan, planner: planner, reconciliation: reconciliation, io: io)
        }
        return .success
    }

    /// The chain configuration the options ask for: zones, clock, prayers, days, window, backups and budget.
    static func chainConfiguration(
        _ arguments: ParsedArguments, calculator: PrayerTimeCalculator
    ) throws -> AlarmChainConfiguration {
        var configuration = AlarmChainConfiguration(
            deviceTimeZone: arguments.value("device-tz") == nil
                ? calculator.timeZone : try PrayerOptions.zone(arguments, option: "device-tz"))
        if let text = arguments.value("clock") {
            switch text.lowercased() {
            case "timetable": configuration.clockMode = .timetableClock
            case "instant": configuration.clockMode = .sameInstant
            default: throw UsageError("unknown --clock '\(text)'; timetable or instant")
            }
        }
        if let text = arguments.value("prayers") { configuration.prayers = Set(try PrayerOptions.prayers(text)) }
        if let days = try arguments.int("days") { configuration.days = days }
        if let text = arguments.value("proof-window"), text.last.map({ !$0.isLetter }) ?? true {
            throw UsageError("--proof-window needs a unit, e.g. 30m or 1800s, got '\(text)'")
        }
        if let window = try arguments.seconds("proof-window") { configuration.proofWindow = .seconds(window) }
        if let backups = try arguments.int("backups") { configuration.backups = backups }
        if let budget = try arguments.int("budget") {
            configuration.budget.systemLimit = budget
        }
        if let reminders = try arguments.int("reminders") { configuration.budget.reservedForReminders = reminders }
        return configuration
    }

    /// The planner for `configuration`, with `--sound` (checked before anything is planned or
    /// booked) ringing every chosen prayer.
    static func makePlanner(
        _ arguments: ParsedArguments, calculator: PrayerTimeCalculator, configuration: AlarmChainConfiguration
    ) throws -> AlarmChainPlanner {
        var planner: AlarmChainPlanner
        do { planner = try AlarmChainPlanner(calculator: calculator, configuration: configuration) } catch {
            throw UsageError(error.message)
        }
        if let sound = arguments.value("sound") {
            let path = try checkedSound(sound)
            var withSound = planner.configuration
            for prayer in withSound.prayers { withSound.sounds[prayer] = path }
            do { planner = try AlarmChainPlanner(calculator: calculator, configuration: withSound) } catch {
                throw UsageError(error.message)
            }
        }
        return planner
    }

    /// `--now` (ISO-8601 with an offset, or a wall time in `zone`; 1970...2199), else the clock.
    static func planningTime(_ arguments: ParsedArguments, zone: TimeZone) throws(UsageError) -> Date {
        guard let text = arguments.value("now") else {
            return Date()  // the CLI may read the clock; engines may not
        }
        guard let date = parseISO8601(text, defaultZone: zone) else {
            throw UsageError("--now needs ISO-8601 such as 2026-11-30T04:00:00+05:00, got '\(text)'")
        }
        // Plans reach 60 days past --now; keep every date they print within four-digit years.
        guard date >= Date(timeIntervalSince1970: 0), date < Date(timeIntervalSince1970: 7_258_118_400) else {
            throw UsageError("--now must be between 1970 and 2199, got '\(text)'")
        }
        return date
    }

    /// `--lock-wait` in seconds, 0...3600 [10].
    static func lockWaitSeconds(_ arguments: ParsedArguments) throws -> Double {
        let wait = try arguments.seconds("lock-wait") ?? 10
        guard wait >= 0, wait <= 3600 else { throw UsageError("--lock-wait must be between 0 and 3600 seconds") }
        return wait
    }

    /// Plans against the alarms the state file holds and applies the reconciliation to it; the
    /// read-modify-write holds the file's lock from the read to the rename.
    /// - Returns: the plan and the operations applied.
    static func planAndApply(
        to statePath: String, planner: AlarmChainPlanner, now: Date, lockWait: Double
    ) throws -> (plan: AlarmPlan, reconciliation: Reconciliation) {
        let lock = try StateFileLock.acquire(for: statePath, waitSeconds: lockWait)
        defer { withExtendedLifetime(lock) {} }
        var stateFile = try StateFile.read(statePath)
        var ledger = stateFile.ledger
        let plan = planner.plan(now: now, context: ledger.planningContext)
        let configuration = planner.configuration
        let result = AlarmReconciler.reconcile(plan: plan, ledger: ledger, capacity: configuration.budget.capacity)
        // The file is the system here: every step succeeds, and the file is written once,
        // atomically, after all of them.
        _ = ledger.apply(result, perform: { _ in nil })
        ledger.prune(before: plan.firstDay.adding(days: -7))
        stateFile.ledger = ledger
        try stateFile.write(to: statePath, zone: configuration.deviceTimeZone)
        return (plan, result)
    }

    /// The `--json` members of a reconciliation with the state file: its operations, the chains
    /// booked again and the file.
    static func reconciliationJSON(
        _ reconciliation: Reconciliation, statePath: String, zone: TimeZone
    ) -> [String: JSONValue] {
        [
            "operations": .array(reconciliation.operations.map { operationJSON($0, zone: zone) }),
            "full_resync": .bool(reconciliation.isFullResync),
            "resynced_chains": .array(reconciliation.resyncedChains.map { .string($0.description) }),
            "state": .string(statePath),
        ]
    }

    /// The absolute path of `path` once `proofkit check`'s rules accept it.
    /// - Throws: the check's error for a file that cannot be opened (66 missing, 65 undecodable),
    ///   or `.decodeFailed` (65) with the reasons for a sound the rules refuse.
    static func checkedSound(_ path: String) throws(ProofkitError) -> String {
        let report = try AlarmSound.check(path: path)
        if case .rejected(let reason) = report.verdict {
            throw ProofkitError(
                .decodeFailed, "refused as an alarm sound: \(reason.detail); nothing was booked", path: path)
        }
        return try absolutePath(path)
    }

    static func planJSON(_ plan: AlarmPlan, planner: AlarmChainPlanner) -> [String: JSONValue] {
        let device = planner.configuration.deviceTimeZone
        let timetable = planner.calculator.timeZone
        return [
            "now": .string(iso8601(plan.now, in: device)), "fingerprint": .string(plan.fingerprint),
            "first_day": .string(plan.firstDay.description), "last_day": .string(plan.lastDay.description),
            "covered_until": JSONValue(plan.coveredUntil?.description),
            "timetable_zone": .string(timetable.identifier), "device_zone": .string(device.identifier),
            "alarm_count": .int(plan.alarms.count),
            "chains": .array(
                plan.chains.map { chain in
                    .object([
                        "occurrence": .string(chain.occurrence.description),
                        "prayer": .string(chain.occurrence.prayer.rawValue),
                        "date": .string(chain.occurrence.date.description),
                        "prayer_time": .string(
                            iso8601(chain.rings[0].prayerTime.instant(in: timetable), in: timetable)),
                        "within_budget": .bool(chain.isWithinBudget), "fingerprint": .string(chain.fingerprint),
                        "rings": .array(
                            chain.rings.map { ring in
                                .object([
                                    "id": .string(ring.id.rawValue), "ring": .int(ring.ringIndex),
                                    "fire": .string(iso8601(ring.fireDate, in: device)),
                                    "sound": .string(ring.content.sound),
                                ])
                            }),
                    ])
                }),
            "unavailable": PrayerOptions.unavailableJSON(plan.unavailable),
        ]
    }

    static func operationJSON(_ operation: AlarmOperation, zone: TimeZone) -> JSONValue {
        switch operation {
        case .schedule(let alarm):
            .object([
                "op": "schedule", "id": .string(alarm.id.rawValue), "fire": .string(iso8601(alarm.fireDate, in: zone)),
            ])
        case .cancel(let id, let reason):
            .object(["op": "cancel", "id": .string(id.rawValue), "reason": .string(reason.rawValue)])
        }
    }

    static func printText(_ plan: AlarmPlan, planner: AlarmChainPlanner, reconciliation: Reconciliation?, io: CommandIO)
    {
        let device = planner.configuration.deviceTimeZone
        io.print(
            "Alarm plan from \(iso8601(plan.now, in: device)) for \(plan.firstDay) ... \(plan.lastDay) (rings in \(device.identifier))"
        )
        for chain in plan.chains {
            let rings = chain.rings.map { PrayerOptions.clock($0.fireDate, zone: device, date: chain.occurrence.date) }
            let mark = chain.isWithinBudget ? "" : "  [over budget, not booked]"
            io.print(
                "  \(chain.occurrence.prayer.rawValue.padded(toLength: 8))\(chain.occurrence.date)  \(rings.joined(separator: " "))\(mark)"
            )
        }
        for missing in plan.unavailable {
            io.print(
                "  \(missing.occurrence.prayer.rawValue.padded(toLength: 8))\(missing.occurrence.date)  no alarm: \(missing.reason.description)"
            )
        }
        io.print(
            "\(plan.alarms.count) alarms; covered until \(plan.coveredUntil?.description ?? "nothing (not even today)")"
        )
        if let reconciliation {
            let resynced = reconciliation.resyncedChains.count
            let note =
                reconciliation.isFullResync
                ? " (full re-sync: every chain changed)"
                : resynced > 0 ? " (\(resynced) changed chain\(resynced == 1 ? "" : "s") booked again)" : ""
            io.print("\(reconciliation.operations.count) operations\(note):")
            for operation in reconciliation.operations { io.print("  \(operation)") }
        }
    }
}
