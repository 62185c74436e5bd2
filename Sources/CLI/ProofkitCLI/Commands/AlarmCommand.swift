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
        proofkit alarm run [--device D] [--ring-seconds 60] [--input DEVICE] [--stop-key any|KEY] [--mic DEVICE|none] [--camera DEVICE|none] [--accept-sound FILE] [--reject-sound FILE]
               proofkit alarm prayers --lat LAT --lon LON --tz ZONE --sound FILE [--method M] [--prayers fajr,...] [--proof-window 30m] [--proof any] [--volume 100] [--ramp 3s] [--escalate] [--listen auto|on|off] [--text NAME] [--json]
               proofkit alarm add --at TIME --sound FILE [--window 30m] [--proof voice|mat|squat|any] [--label L] [--volume 100] [--ramp 3s] [--escalate] [--listen auto|on|off] [--text NAME] [--json]
               proofkit alarm stop [--json]
               proofkit alarm prove [ID] (--voice [REC] | --photo PHOTO | --squat POSES|- | --squat --video VIDEO | --escape) [--max-seconds 180] [--strict] [--json]
               proofkit alarm prove [ID] (--photo | --squat) --camera [DEVICE]
               proofkit alarm status [--json]
               proofkit alarm history [--days 30] [--json] [--plot FILE.svg]
               proofkit alarm install [--user|--system] [--print] [any option of run]
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
                   hold-end, missed, merged, sound-broken, clock-set, store-write-failed,
                 store-saved, store-gone, ...)
                 If the store cannot be written (a full disk), it rings on and saves what
                 waited once it can. If the store is removed or replaced while it runs, it rings
                 nothing more from it and exits 66 (systemd starts it again on the store then
                 there).
                 PROOFKIT_ALSA_CONFIG=FILE plays through that ALSA configuration instead.
        prayers  stores the prayer settings (sunrise never rings) and books the chains at once: a
                 first ring at the prayer time and backups over the proof window (30 min: +0, 2,
                 5, 9, 14, 20, 27 min), with stable ids (fajr.2026-11-30.0512.r0). The new
                 chain is booked before the old one is cancelled; a ringing alarm is never
                 touched; unknown ids are cancelled; one failed booking does not stop the rest.
                 A prayer rings at its instant for the place and --tz, whatever the machine's
                 zone; a zone change of the machine never moves it. Running prayers again applies
                 the new settings (proof, sound, window, method, prayers) to every chain that is
                 not ringing; a prayer left out keeps no chain.
        add      a one-off chain (id a1, a2, ...). TIME is ISO-8601 (2026-12-01T05:10:00+03:00,
                 or without offset in the device's zone), HH:MM (the next such time), or relative
                 (+10s, +5m); at most a year ahead. A local time that a DST change skips rings at
                 the same time after the change (02:30 on a day that jumps from 02:00 to 03:00
                 rings at 03:30); one that happens twice rings at the first; the output says so.
                 --gap and --gap-growth set the backup pattern [2m, 1m].
                 add and prayers: --volume PERCENT (1-100) [100] is the gain on the sound's own
                 samples, kept with the chain (it works on any device, one without a mixer too;
                 try a level first with 'proofkit play SOUND --volume 40'); --ramp DURATION
                 (0-60 s) [3s] is each ring's fade-in, from 30 % of the volume; --escalate makes
                 each backup louder than the one before, in equal steps from --volume at the
                 first ring to 100 % at the last (a 7-ring chain at 40 %: 40, 50, 60, 70, 80, 90,
                 100).
        stop     silences the ring now sounding, like a Stop button. The backups still come.
                 A key is a Stop button too: any key of a USB keyboard, keypad or presenter
                 (Linux input events, /dev/input/event*: every one the service can read, or
                 --input DEVICE) silences the ring within a moment; --stop-key names one key.
                 Reading /dev/input needs the 'input' group (or root). An --input device that is
                 not there yet (or unplugged later) is logged and tried again before each ring;
                 one that is not an input device (a file, /dev/null) is refused at start (65).
        hands-free
                 When a ring of a due chain ends (by itself, by 'alarm stop' or by a key), the
                 service listens on --mic [default] until the chain's next ring or the end of
                 its window, and runs the reading proof on what it hears: the same gate,
                 recogniser (Whisper), forced score and matcher as 'proofkit voice --live'. A
                 reading is judged when the voice has been quiet for 1.5 s after the text's
                 reading time of voice, or for 4 s before it (a breath does not cut a long
                 du'a): a pass ends the chain (a voice proof, hands-free; a rising chime),
                 a rejection plays a falling chime and listening goes on. It never listens while
                 a ring sounds, so its own sound is never heard as reading, and it gives the
                 microphone up to a typed live proof. --listen auto [default] listens for chains
                 whose proof is voice or any; on, off. --text NAME (add, prayers) is the du'a to
                 read, from the built-in texts, ~/.config/proofkit/duas.json or --texts FILE; it
                 is kept with the chain [waking]. --mic none never listens. --accept-sound and
                 --reject-sound replace the chimes. Audio is held in memory only, never written.
                 status says what it listens for and until when, or why it cannot (no
                 microphone, no recogniser): typed proofs work as before. With a camera (run
                 --camera DEVICE, default the first video capture device; none for never), a
                 chain whose proof is mat, squat or any is also watched between rings: the mat
                 held in view (as 'proofkit mat --camera' judges it) or 10 squats (as 'proofkit
                 squat --camera' counts them) ends the chain (a mat or squat proof, hands-free).
        prove    runs the proof for chain ID (default: the one ringing, else the latest due).
                 Only a due chain takes a proof: its first ring has come and its proof window
                 has not ended. With nothing due, nothing changes: it says when the next ring
                 is and exits 3. --photo PHOTO (the mat proof), --voice [REC] (live without
                 REC), --squat POSES.jsonl or - (a live keypoint stream on stdin), --squat
                 --video VIDEO (the squats of a video file, as 'proofkit squat --video'); --photo
                 or --squat with --camera [DEVICE]: live from a camera (see mat, squat). A passing
                 proof ends the chain and cancels its remaining rings. During a live proof the
                 ring stops and the chain's backups are held off for at most 3 min; a live proof
                 ends when it passes or at --max-seconds [180]. When a hold ends without a
                 proof (time out, end of input, the process killed) the backup that fell inside
                 it rings at once and the later ones keep their times; a held backup is never
                 missed. --escape ends the chain (due or not: a night away) and records an
                 escape, never a proof. The voice proof reads the chain's text (add --text),
                 judged as 'proofkit voice' does; live, it ends at the first pause after a
                 whole reading, as the hands-free listener does.
        status   the next ring, covered-until, each active chain with its rings (in the
                 timetable's zone with its offset, and in the machine's when that differs), a
                 ring that failed and why, whether the service found its playback device, the
                 input devices whose keys stop a ring (and a named one not there yet), a
                 sound that broke since booking, and the last outcomes (proof, rejected, escape,
                 missed, stopped). It only reads the store (works on a read-only disk); only
                 run, add and prayers create a store.
        history  one line per chain of the last --days [30] days: the date, the prayer or label,
                 the result (proof, escape, missed, or open while its window runs), the proof's
                 kind and how it was given (typed, or hands-free), the time from
                 the first ring to the proof, the stops and the rings. Then the streaks of proven
                 days per prayer (or label) and for every alarm together, counted over the whole
                 store: an escape or a missed chain breaks a streak, a day without an alarm does
                 not; the proofs by kind; the median time to proof over the last 7 days against
                 the 7 before. --plot writes an SVG calendar heat map of the period (the colour is
                 the time to proof; escapes and misses are marked). It opens the store read-only:
                 it never changes it, works on a read-only disk, and a missing store is exit 66.
        install  writes a systemd unit (Restart=always) for the user (--user, default) or the
                 system (--system, with User= the user who ran it), or prints it (--print), and
                 prints how to enable it. The store and any option of run given here (--device,
                 --ring-seconds, --input, --stop-key, --mic, --camera, the chimes) go into the
                 unit's command line, paths made absolute; a chime that is not there is exit 66.

        Sounds are checked when booked with 'proofkit check' rules (CAF/WAV/AIFF 16-bit PCM,
        under 30 s, not silent); a copy is kept in the store. If the file breaks later, status
        says so and it rings with the kept copy; never a beep in its place.

        An option that belongs to another action is a usage error (64). An unknown zone (--tz,
        or TZ) is a usage error too.

        prayers takes the calculation options of 'proofkit times' (--method, --madhab, --high-lat,
        --polar, --rounding, --adjust, --fajr-angle, --isha-angle, --isha-interval, --shafaq) and
        keeps them for the service.
        \(PrayerOptions.methodHelp)

        Exit codes: 0 ok (a rejected proof too, unless --strict), 2 proof rejected with
        --strict, 3 nothing due (prove), 64 bad option or --at, 65 sound or --input refused, 66
        unknown id, missing file or no store, 69 no service running (stop) or ALSA/libsqlite3
        missing, 73 store not writable (read-only disk, or as root a store another user owns), 74
        an --input device this user may not read, 75 another service runs on the store, 76 store
        corrupt or not a proofkit store.

        JSON (status --json): {"store":DIR,"service":"running"|"stopped","now":ISO,
          "unsaved":{"count","since","reason"}|null (changes the service cannot save yet),
          "next_ring":{"id","chain","fire"}|null,"covered_until":"YYYY-MM-DD"|null,
          "unavailable":[{"occurrence":"fajr.YYYY-MM-DD","reason":"polarNight"|"polarDay"}],
          "zone":ZONE,"machine_zone":ZONE,"device":{"name","status"}|null,
          "stop_keys":{"devices":[PATH],"missing":[PATH]}|null,
          "chains":[{"id","kind","label","proof","sound","sound_status":"ok"|"broken: ...",
                     "window_end","rings":[{"id","ring","fire","fire_machine","state","detail"}]}],
          "outcomes":[{"chain","kind","at","detail"}],"skipped_rows":[...]}
        JSON (add, prayers, stop, prove --json): one object with the result.
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
            .option(
                "device", value: "D",
                help: "run, install: ALSA playback device; prove --voice: capture device [default]"),
            .option("ring-seconds", value: "S", help: "run, install: how long one ring lasts [60]"),
            .option(
                "input", value: "DEVICE",
                help:
                    "run, install: a keyboard, keypad or presenter (/dev/input/eventN) whose keys stop a ring [every one]"
            ),
            .option(
                "stop-key", value: "KEY",
                help: "run, install: the key that stops a ring: any, or space, enter, pagedown... [any]"),
            .option(
                "mic", value: "DEVICE", help: "run, install: capture device for hands-free proofs, or none [default]"),
            .option(
                "accept-sound", value: "FILE",
                help: "run, install: played when a hands-free proof passes [a rising chime]"),
            .option(
                "reject-sound", value: "FILE",
                help: "run, install: played when a hands-free reading is rejected [a falling chime]"),
            .option(
                "listen", value: "MODE", choices: ["auto", "on", "off"],
                help: "add, prayers: listen for the reading between rings: auto, on, off [auto]"),
            .option("text", value: "NAME", help: "add, prayers: the du'a the reading proof asks for [waking]"),
            .option("texts", value: "FILE", help: "add, prayers: more du'a texts (see 'proofkit dua --help')"),
            .option("at", value: "TIME", help: "add: ISO-8601, HH:MM or +DURATION"),
            .option("sound", value: "FILE", help: "add, prayers: the alarm sound"),
            .option("window", value: "DUR", help: "add: the proof window [30m]"),
            .option("gap", value: "DUR", help: "add: first gap between rings [2m]"),
            .option("gap-growth", value: "DUR", help: "add: growth of each next gap [1m]"),
            .option("proof", value: "KIND", help: "add, prayers: voice, mat, squat or any [any]"),
            .option("label", value: "L", help: "add: a label shown in status (up to 100 characters)"),
            .option("volume", value: "PERCENT", help: "add, prayers: ring volume, 1-100 [100]"),
            .option("ramp", value: "DUR", help: "add, prayers: each ring's fade-in, 0-60s [3s]"),
            .flag("escalate", help: "add, prayers: each backup louder than the last, up to 100%"),
            .flag("voice", help: "prove: the voice proof (REC as argument, else live)"),
            .optionalValue("photo", value: "PHOTO", help: "prove: the mat proof on a photo (none with --camera)"),
            .optionalValue(
                "squat", value: "POSES", help: "prove: squats from keypoints, - for stdin (none with --camera)"),
            .flag("escape", help: "prove: record an escape (ends the chain, not a proof)"),
            .option("video", value: "VIDEO", help: "prove: with --squat, the squats of a video file"),
            .option("max-seconds", value: "S", help: "prove: a live proof gives up after S seconds [180]"),
            .flag("strict", help: "prove: exit 2 when the proof is rejected"),
            .flag("json", help: "status, add, prayers, stop, prove, history: one JSON object"),
            .option("days", value: "N", help: "history: the days shown, up to today [30]"),
            .option("plot", value: "FILE.svg", help: "history: write an SVG calendar heat map"),
            .flag("user", help: "install: a user unit [default]"),
            .flag("system", help: "install: a system unit"),
            .flag("print", help: "install: print the unit instead of writing it"),
            .option("prayers", value: "LIST", help: "prayers: prayers with alarms [fajr]"),
            .option("proof-window", value: "DUR", help: "prayers: backups spread over this [30m]"),
        ] + PrayerOptions.specs + CameraOptions.specs

    /// The options each action takes (besides --store); any other is a usage error.
    static let actionOptions: [String: Set<String>] = [
        "run": ["device", "ring-seconds", "input", "stop-key", "mic", "camera", "accept-sound", "reject-sound"],
        "prayers": Set(
            [
                "lat", "lon", "tz", "prayers", "proof-window", "sound", "proof", "json", "volume", "ramp", "escalate",
                "listen", "text", "texts",
            ]
                + CalculationParameters.optionNames),
        "add": [
            "at", "sound", "window", "gap", "gap-growth", "proof", "label", "json", "volume", "ramp", "escalate",
            "listen",
            "text", "texts",
        ],
        "stop": ["json"],
        "prove": Set(
            ["voice", "photo", "squat", "video", "escape", "device", "max-seconds", "strict", "json"]
                + CameraOptions.specs.map(\.name)),
        "status": ["json"],
        "history": ["json", "days", "plot"],
        "install": [
            "user", "system", "print", "device", "ring-seconds", "input", "stop-key", "mic", "camera", "accept-sound",
            "reject-sound",
        ],
    ]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        guard let action = arguments.positionals.first else {
            throw UsageError("missing action: run, prayers, add, stop, prove, status, history or install")
        }
        let rest = Array(arguments.positionals.dropFirst())
        do {
            if let allowed = actionOptions[action] {
                let given = arguments.flags.union(arguments.values.keys).subtracting(["store"])
                if let stray = given.subtracting(allowed).sorted().first {
                    throw UsageError("alarm \(action) does not take --\(stray)")
                }
            }
            guard action == "prove" || rest.isEmpty else {
                throw UsageError("alarm \(action) takes no argument, got '\(rest[0])'")
            }
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
        } catch var error as UsageError {
            // The usage line of the action that was asked for, not the first one.
            error.usage = ProofkitCLI.usageLine(of: AlarmCommand.self, tokens: [action])
            throw error
        }
    }

    static func openStore(
        _ arguments: ParsedArguments, io: CommandIO, access: AlarmStore.Access = .create
    ) throws -> AlarmStore {
        try AlarmStore(
            folder: AlarmStore.folder(explicit: arguments.value("store"), environment: io.environment), access: access)
    }

    /// Asks the service to re-read the store; says so when none runs.
    static func poke(_ store: AlarmStore, io: CommandIO) {
        if (try? AlarmControl.send("reload", socketPath: store.socketPath)) == nil {
            io.printError(
                "proofkit alarm: note: no alarm service is running on \(store.folder); start it with 'proofkit alarm run' (or 'proofkit alarm install')"
            )
        }
    }

    /// The machine's zone; an unknown `TZ` is a usage error, never UTC without a word.
    static func zone(_ io: CommandIO) throws(UsageError) -> TimeZone {
        PrayerOptions.keepICUTimeZonesLinked()
        if let name = io.environment["TZ"], !name.isEmpty,
            TimeZone(identifier: name.hasPrefix(":") ? String(name.dropFirst()) : name) == nil
        {
            throw UsageError("unknown time zone TZ='\(name)' (use an IANA name such as Asia/Karachi, or unset TZ)")
        }
        return currentDeviceZone(environment: io.environment)
    }

    // MARK: run

    static func runService(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        var options = AlarmServiceOptions()
        options.device = arguments.value("device") ?? "default"
        options.soundDevices = try SoundDevices(environment: io.environment)
        if let seconds = try ringSeconds(arguments) { options.ringSeconds = seconds }
        options.environment = io.environment
        if let input = arguments.value("input") { options.inputs = [input] }
        if let key = try stopKey(arguments) { options.stopKey = key }
        if let mic = arguments.value("mic") { options.microphone = mic == "none" ? nil : mic }
        if let camera = arguments.value("camera") {
            options.watchesCamera = camera != "none"
            options.camera = camera.isEmpty || camera == "none" ? nil : camera
        }
        options.acceptSound = arguments.value("accept-sound")
        options.rejectSound = arguments.value("reject-sound")
        _ = try zone(io)
        let store = try openStore(arguments, io: io)
        let service = try AlarmService(store: store, options: options)
        try service.run()
    }

    /// `--ring-seconds`, checked: more than 0 and at most 3600 (run and install).
    static func ringSeconds(_ arguments: ParsedArguments) throws(UsageError) -> Double? {
        guard let seconds = try arguments.double("ring-seconds") else { return nil }
        guard seconds > 0, seconds <= 3600 else {
            throw UsageError("--ring-seconds must be more than 0 and at most 3600, got \(seconds)")
        }
        return seconds
    }

    /// `--stop-key`, checked (run and install).
    static func stopKey(_ arguments: ParsedArguments) throws(UsageError) -> StopKey? {
        guard let text = arguments.value("stop-key") else { return nil }
        guard let key = StopKey(text) else {
            throw UsageError(
                "unknown --stop-key '\(text)'; any, a key name (\(StopKey.names.keys.sorted().prefix(8).joined(separator: ", ")), ...) or a code 1-767"
            )
        }
        return key
    }

    // MARK: booking

    static func proofKind(_ arguments: ParsedArguments) throws(UsageError) -> ProofKind {
        let text = arguments.value("proof") ?? "any"
        guard let proof = ProofKind(rawValue: text) else {
            throw UsageError("unknown --proof '\(text)'; voice, mat, squat or any")
        }
        return proof
    }

    /// The ring level of `add` and `prayers`: --volume, --ramp, --escalate.
    static func ringLevel(_ arguments: ParsedArguments) throws(UsageError) -> RingLevel {
        var level = RingLevel()
        if let volume = try arguments.percent("volume") { level.volume = volume }
        if let ramp = try arguments.seconds("ramp") {
            guard (0...60).contains(ramp) else { throw UsageError("--ramp must be 0...60s, got \(ramp) s") }
            level.ramp = ramp
        }
        level.escalate = arguments.has("escalate")
        return level
    }

    /// The hands-free settings of `add` and `prayers`: --listen, --text (checked against the
    /// catalogue now, and kept with the chain).
    static func handsFree(_ arguments: ParsedArguments, proof: ProofKind, io: CommandIO) throws -> HandsFree {
        var result = HandsFree()
        if let text = arguments.value("listen") {
            guard let listen = HandsFree.Listen(rawValue: text) else {
                throw UsageError("--listen must be auto, on or off, not '\(text)'")
            }
            guard listen != .on || proof.accepts(.voice) else {
                throw UsageError(
                    "--listen on hears the voice proof; the chain's proof is \(proof.rawValue) (use --proof voice or any)"
                )
            }
            result.listen = listen
        }
        if let name = arguments.value("text") {
            result.text = try DuaTexts.find(name, in: try DuaTexts.loadCatalog(arguments, io: io))
        } else if arguments.value("texts") != nil {
            throw UsageError("--texts goes with --text NAME")
        }
        return result
    }

    /// Checks the sound with check's rules; refuses it with the reason.
    static func checkSound(_ path: String) throws {
        let report = try AlarmSound.check(path: path)
        if case .rejected(let reason) = report.verdict {
            throw ProofkitError(.decodeFailed, "the sound is refused: \(reason.detail)", path: path)
        }
    }

    /// How far ahead `--at` may be: a year (366 days).
    static let maxAhead: TimeInterval = 366 * 86_400

    /// The instant `--at` names, and a note when a DST change made the local reading ambiguous
    /// (or skipped it).
    /// - Throws: ``UsageError`` for a malformed, past, or more than a year ahead time.
    static func parseAt(_ text: String, now: Date, zone: TimeZone) throws(UsageError) -> (Date, note: String?) {
        let date = try parseAtInstant(text, now: now, zone: zone)
        guard date.timeIntervalSince(now) <= maxAhead else {
            throw UsageError("--at \(text) is more than a year ahead; nothing was booked")
        }
        // A local reading (no offset given) that DST makes ambiguous or skips: say which instant.
        guard let wall = localReading(text, now: now, zone: zone) else { return (date, nil) }
        switch wall.occurrences(in: zone).count {
        case 0:
            return (
                date,
                "note: \(wall) does not exist in \(zone.identifier) (a DST change skips it); booked \(iso8601(date, in: zone))"
            )
        case 2:
            return (
                date,
                "note: \(wall) happens twice in \(zone.identifier) (a DST change); booked the first, \(iso8601(date, in: zone))"
            )
        default:
            return (date, nil)
        }
    }

    /// The local clock reading `--at` asked for, when it gave one without an offset (HH:MM, or
    /// ISO-8601 without offset).
    static func localReading(_ text: String, now: Date, zone: TimeZone) -> WallClockTime? {
        let parts = text.split(separator: ":")
        if parts.count == 2, text.count == 5, let h = Int(parts[0]), let m = Int(parts[1]) {
            let today = WallClockTime(now, in: zone).date
            let reading = WallClockTime(date: today, hour: h, minute: m)
            return reading.instant(in: zone) <= now
                ? WallClockTime(date: today.adding(days: 1), hour: h, minute: m) : reading
        }
        guard text.count >= 16, !text.hasSuffix("Z"), !text.hasSuffix("z"),
            !text.dropFirst(16).contains(where: { $0 == "+" || $0 == "-" }),
            let day = LocalDate(iso: String(text.prefix(10))), let h = Int(text.dropFirst(11).prefix(2)),
            let m = Int(text.dropFirst(14).prefix(2))
        else { return nil }
        let s = text.count >= 19 ? Int(text.dropFirst(17).prefix(2)) ?? 0 : 0
        return WallClockTime(date: day, hour: h, minute: m, second: s)
    }

    static func parseAtInstant(_ text: String, now: Date, zone: TimeZone) throws(UsageError) -> Date {
        if text.hasPrefix("+") {
            guard let seconds = parseDuration(String(text.dropFirst())), seconds >= 0, seconds <= maxAhead else {
                throw UsageError("--at '\(text)' is not a relative time such as +10s or +5m, at most a year ahead")
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
        let zone = try zone(io)
        let (first, note) = try parseAt(atText, now: now, zone: zone)
        let window = try arguments.seconds("window") ?? 1800
        guard (0...4 * 3600).contains(window) else { throw UsageError("--window must be 0...4h") }
        let gap = try arguments.seconds("gap") ?? 120
        let growth = try arguments.seconds("gap-growth") ?? 60
        guard gap >= 0.5, growth >= 0 else {
            throw UsageError("--gap must be at least 0.5s and --gap-growth not negative")
        }
        let proof = try proofKind(arguments)
        let level = try ringLevel(arguments)
        let handsFree = try handsFree(arguments, proof: proof, io: io)
        if let label = arguments.value("label") {
            // Status prints the label on a line of its own: keep it a short line of text.
            guard label.count <= maximumLabelLength,
                !label.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else {
                throw UsageError("--label takes at most \(maximumLabelLength) characters and no control characters")
            }
        }
        try checkSound(sound)
        let store = try openStore(arguments, io: io)
        let absolute = try absolutePath(sound)
        let kept = try store.keepCopy(of: absolute, prefix: "oneoff")
        func duration(_ s: Double) -> Duration { .milliseconds(Int64((s * 1000).rounded())) }
        let (id, rings) = try store.addOneOff(
            first: first, window: duration(window), firstGap: duration(gap),
            gapGrowth: duration(growth), sound: absolute, keptSound: kept, proof: proof,
            label: arguments.value("label"), level: level, handsFree: handsFree, now: now)
        poke(store, io: io)
        if let note { io.printError("proofkit alarm: \(note)") }
        if arguments.has("json") {
            io.printJSON(
                .object([
                    "id": .string(id), "first": .string(iso8601(first, in: zone)), "proof": .string(proof.rawValue),
                    "volume": .rounded(level.volume, places: 1), "ramp": .rounded(level.ramp, places: 3),
                    "escalate": .bool(level.escalate), "listen": .string(handsFree.listen.rawValue),
                    "text": .string(handsFree.text?.name ?? DuaCatalog.defaultName),
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

    /// The longest `--label`, in characters.
    static let maximumLabelLength = 100

    static func prayers(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        // The service stores the place, the zone and every calculation option as given (the same
        // options as `times` and `plan`), and plans with exactly those.
        let calculator = try PrayerOptions.calculator(arguments)
        guard arguments.value("tz") != nil else { throw UsageError("prayers needs --tz ZONE (the timetable's zone)") }
        let list = try arguments.value("prayers").map(PrayerOptions.prayers) ?? [.fajr]
        let window = try arguments.seconds("proof-window") ?? 1800
        guard (0...4 * 3600).contains(window) else { throw UsageError("--proof-window must be 0...4h") }
        let proof = try proofKind(arguments)
        let level = try ringLevel(arguments)
        let handsFree = try handsFree(arguments, proof: proof, io: io)
        var sound = arguments.value("sound")
        if let path = sound {
            try checkSound(path)
            sound = try absolutePath(path)
        }
        let store = try openStore(arguments, io: io)
        if sound == nil {
            // Keep the sound booked before; there is no built-in sound (never a beep).
            guard try store.setting("prayers.sound") != nil else {
                throw UsageError("prayers needs --sound FILE: the alarm sound (see 'proofkit trim' to make one)")
            }
        }
        let kept = try sound.map { try store.keepCopy(of: $0, prefix: "prayers") }
        try store.write { () throws(ProofkitError) in
            try store.put([
                "prayers.lat": String(calculator.coordinates.latitude),
                "prayers.lon": String(calculator.coordinates.longitude),
                "prayers.tz": calculator.timeZone.identifier, "prayers.method": arguments.value("method") ?? "mwl",
                "prayers.list": list.map(\.rawValue).joined(separator: ","), "prayers.window": String(Int(window)),
                "prayers.proof": proof.rawValue, "prayers.volume": String(level.volume),
                "prayers.ramp": String(level.ramp),
                "prayers.escalate": level.escalate ? "1" : "0", "prayers.listen": handsFree.listen.rawValue,
                "prayers.text": handsFree.text?.name, "prayers.text_json": handsFree.textJSON,
            ])
            try store.put(
                Dictionary(
                    uniqueKeysWithValues: CalculationParameters.optionNames.filter { $0 != "method" }.map {
                        ("prayers.option.\($0)", arguments.value($0))
                    }))
            if let sound { try store.put(["prayers.sound": sound, "prayers.kept_sound": kept]) }
        }
        let zone = try zone(io)
        let report = try store.replanPrayers(now: Date(), deviceZone: zone)
        poke(store, io: io)
        try printBooked(
            list: list, calculator: calculator, proof: proof, report: report, store: store, arguments, io: io)
        return .success
    }

    // MARK: stop and prove

    static func stop(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        let store = try openStore(arguments, io: io, access: .existing)
        let reply = try AlarmControl.send("stop", socketPath: store.socketPath)
        guard reply.hasPrefix("ok") else { throw ProofkitError(.internal, "the service answered: \(reply)") }
        if arguments.has("json") {
            let words = reply.split(separator: " ").map(String.init)
            io.printJSON(
                .object([
                    "stopped": .bool(reply != "ok nothing ringing"),
                    "chain": words.count > 3 ? .string(words[2]) : .null,
                    "ring": words.count > 3 ? .string(words[3]) : .null,
                ]))
            return .success
        }
        io.print(
            reply == "ok nothing ringing"
                ? "nothing is ringing"
                : "stopped \(reply.split(separator: " ").dropFirst(2).joined(separator: " ")); the backups still come")
        return .success
    }

    /// `text` as one word of a systemd command line (quoted when it holds a space, quote or backslash).
    static func systemdQuoted(_ text: String) -> String {
        guard text.contains(where: { " \t\"'\\".contains($0) }) else { return text }
        return "\"" + text.map { $0 == "\\" || $0 == "\"" ? "\\\($0)" : String($0) }.joined() + "\""
    }
}
