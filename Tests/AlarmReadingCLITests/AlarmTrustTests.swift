import Foundation
import TestSupport
import Testing

// Issue 32: the alarm cannot be proven ahead or outwaited, rings at the prayer's instant in any
// zone, tells the truth in status, and survives bad input. The service runs as a child process
// with the file-plugin speaker, at real fire times.

let hasPython = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")

/// Runs a Python script with `arguments` (its sqlite3 module: an independent client of the store).
func python(_ script: String, _ arguments: [String]) throws -> ProcessResult {
    try runProcess("/usr/bin/python3", ["-c", script] + arguments)
}

private func json(_ text: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
}

@Suite(
    "the alarm you can trust: due proofs, bounded holds, zones, honest status, bad input",
    .serialized, .enabled(if: TestEnvironment.hasProofkitBinary, "build proofkit first"), .offThePool)
struct AlarmTrustTests {
    static let squatFile = TestEnvironment.fixture("squat/pna_1048_jumping_jacks.jsonl")

    @Test("a proof the night before changes nothing: exit 3, the next ring named, the chain untouched")
    func proofAheadChangesNothing() throws {
        let rig = try AlarmRig()
        let tomorrow = ISO8601DateFormatter().string(from: Date().addingTimeInterval(86_400))
        let added = try rig.alarm(["add", "--at", tomorrow, "--sound", rig.sound, "--json"])
        #expect(added.status == 0, "\(added.stderr)")
        let id = try #require(try json(added.stdout)["id"] as? String)
        let before = try rig.status()
        for arguments in [["prove", "--squat", Self.squatFile], ["prove", id, "--squat", Self.squatFile]] {
            let proof = try rig.alarm(arguments)
            #expect(proof.status == 3, "\(arguments): \(proof.stdout) \(proof.stderr)")
            #expect(
                proof.stderr.contains("nothing was changed") && proof.stderr.contains("\(id).r0"), "\(proof.stderr)")
            #expect(proof.stderr.split(separator: "\n").count == 1)
        }
        let after = try rig.status()
        #expect(
            rings(of: id, in: after).map { $0["state"] as? String }
                == rings(of: id, in: before).map { $0["state"] as? String })
        #expect(rings(of: id, in: after).count == 7)
        #expect((after["outcomes"] as? [[String: Any]] ?? []).isEmpty)
    }

    @Test("a live proof that sends nothing cannot outwait the alarm: when it ends, the held backup rings at once")
    func heldBackupRingsAtOnce() throws {
        let rig = try AlarmRig()
        try rig.startService(ringSeconds: 30)
        // Rings at +0 and +4 s; the window ends at +6 s (+11 s with its grace).
        let (id, first) = try rig.add(in: 2, window: 6, gap: 4)
        _ = try #require(rig.firstSound(by: first.addingTimeInterval(2)), "the first ring was not heard: \(rig.log)")
        let (prove, input) = try rig.startLiveSquatProof(id)
        // Nothing comes on stdin, past the backup's time and past the window's end and grace.
        usleep(500_000)
        #expect(rig.staysQuiet(for: max(1, first.addingTimeInterval(12.5).timeIntervalSinceNow)), "\(rig.log)")
        try? FileManager.default.removeItem(atPath: rig.out)
        try input.fileHandleForWriting.close()  // the person gives up: end of input
        let released = Date()
        prove.waitUntilExit()
        #expect(prove.terminationStatus == 0)  // rejected (no --strict)
        let heard = try #require(
            rig.firstSound(by: released.addingTimeInterval(3)), "the held backup did not ring: \(rig.log)")
        #expect(heard.timeIntervalSince(released) <= 1.5, "\(rig.log)")
        #expect(rig.log.contains("hold \(id)") && rig.log.contains("hold-end \(id) reason=closed"), "\(rig.log)")
        #expect(rig.log.contains("rejected \(id) squat"), "\(rig.log)")
        #expect(!rig.log.contains("missed"), "a held backup was marked missed: \(rig.log)")
        let states = rings(of: id, in: try rig.status()).compactMap { $0["state"] as? String }
        #expect(states.first == "rang" && states.last == "ringing" && !states.contains("missed"), "\(states)")
    }

    @Test(
        "prayer chains ring at the prayer's instant for --tz, whatever the machine's zone (Karachi; Sydney in DST)",
        arguments: [("Asia/Karachi", "24.8607", "67.0011"), ("Australia/Sydney", "-33.8688", "151.2093")])
    func prayerInstantInAnyZone(zone: String, lat: String, lon: String) throws {
        let rig = try AlarmRig()
        let place = ["--lat", lat, "--lon", lon, "--tz", zone]
        let bookedAt = Date()
        let booked = try rig.alarm(["prayers"] + place + ["--sound", rig.sound], environment: ["TZ": "UTC"])
        #expect(booked.status == 0, "\(booked.stderr)")
        let times = try TestEnvironment.runProofkit(["times"] + place + ["--days", "9", "--json"])
        var fajr: [String: Date] = [:]  // date -> the timetable's Fajr instant
        let parser = ISO8601DateFormatter()
        for line in times.stdout.split(separator: "\n") {
            let object = try json(String(line))
            let date = try #require(object["date"] as? String)
            fajr[date] = ((object["times"] as? [String: Any])?["fajr"] as? String).flatMap { parser.date(from: $0) }
        }
        let status = try json(try rig.alarm(["status", "--json"], environment: ["TZ": "UTC"]).stdout)
        #expect(status["zone"] as? String == zone && status["machine_zone"] as? String != zone)
        let chains = status["chains"] as? [[String: Any]] ?? []
        #expect(chains.count >= 6)
        for chain in chains {
            let id = try #require(chain["id"] as? String)  // fajr.YYYY-MM-DD
            let first = try #require(rings(of: id, in: status).first)
            let fire = try #require((first["fire"] as? String).flatMap { parser.date(from: $0) })
            let expected = try #require(fajr[String(id.dropFirst(5))], "\(id)")
            let shown = "\(id): booked \(first["fire"] ?? "") for \(expected)"
            if first["ring"] as? Int == 0 {
                #expect(abs(fire.timeIntervalSince(expected)) < 1, "\(shown)")
            } else {
                // Booked during this chain's window: its past rings are left out, so the first one
                // left is a backup after the prayer's instant and after the booking.
                #expect(expected < bookedAt && fire > bookedAt, "\(shown)")
            }
            // The ring shown in the timetable's zone carries its offset, and on the machine's clock too.
            #expect((first["fire"] as? String)?.hasSuffix("+00:00") == false)
            #expect((first["fire_machine"] as? String)?.hasSuffix("+00:00") == true)
        }
        let text = try rig.alarm(["status"], environment: ["TZ": "UTC"])
        #expect(text.stdout.contains("times in \(zone); this machine's zone is"), "\(text.stdout)")
    }

    @Test("prayers takes the calculation options of 'times' (--madhab, --adjust) and the service plans with them")
    func prayersCalculationOptions() throws {
        let rig = try AlarmRig()
        let place = ["--lat", "24.8607", "--lon", "67.0011", "--tz", "Asia/Karachi", "--madhab", "hanafi"]
        let booked = try rig.alarm(
            ["prayers"] + place + ["--adjust", "asr=+2", "--prayers", "asr", "--sound", rig.sound],
            environment: ["TZ": "UTC"])
        #expect(booked.status == 0, "\(booked.stderr)")
        let times = try TestEnvironment.runProofkit(
            ["times"] + place + ["--adjust", "asr=+2", "--days", "3", "--json"])
        let parser = ISO8601DateFormatter()
        var asr: [String: Date] = [:]
        for line in times.stdout.split(separator: "\n") {
            let object = try json(String(line))
            asr[object["date"] as? String ?? ""] =
                ((object["times"] as? [String: Any])?["asr"] as? String).flatMap { parser.date(from: $0) }
        }
        let status = try rig.status()
        var compared = 0
        for chain in status["chains"] as? [[String: Any]] ?? [] {
            let id = try #require(chain["id"] as? String)
            guard let expected = asr[String(id.dropFirst(4))] else { continue }
            let first = try #require(rings(of: id, in: status).first)
            // A chain booked inside its own window has lost its past rings: only a first ring is compared.
            guard first["ring"] as? Int == 0 else { continue }
            let fire = try #require((first["fire"] as? String).flatMap { parser.date(from: $0) })
            #expect(abs(fire.timeIntervalSince(expected)) < 1, "\(id)")
            compared += 1
        }
        #expect(compared >= 2)
        let help = try TestEnvironment.runProofkit(["alarm", "--help"])
        #expect(help.stdout.contains("mwl (Muslim World League)"))  // the methods the --method help points to
    }

    @Test("re-running prayers applies the new proof to every chain, and a prayer turned off leaves no chain")
    func prayersApplyNewSettings() throws {
        let rig = try AlarmRig()
        let place = ["--lat", "21.4225", "--lon", "39.8262", "--tz", "Asia/Riyadh", "--sound", rig.sound]
        #expect(try rig.alarm(["prayers"] + place + ["--prayers", "fajr,maghrib"]).status == 0)
        var chains = try rig.status()["chains"] as? [[String: Any]] ?? []
        #expect(chains.contains { ($0["id"] as? String)?.hasPrefix("maghrib.") == true })
        let again = try rig.alarm(["prayers"] + place + ["--prayers", "fajr", "--proof", "squat", "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try json(again.stdout)["proof"] as? String == "squat")
        chains = try rig.status()["chains"] as? [[String: Any]] ?? []
        #expect(!chains.isEmpty)
        #expect(
            chains.allSatisfy { ($0["id"] as? String)?.hasPrefix("fajr.") == true }, "\(chains.map { $0["id"] ?? "" })")
        #expect(chains.allSatisfy { $0["proof"] as? String == "squat" })
    }

    @Test(
        "bad --at: out of range is 64 and books nothing; an unknown TZ is 64; another action's option is 64; a bad label is 64; a repeated prayer counts once"
    )
    func badTimesAndOptions() throws {
        let rig = try AlarmRig()
        for at in ["+9223372036854775807s", "+1e9s", "9999-01-01T05:00:00Z", "+367d"] {
            let result = try rig.alarm(["add", "--at", at, "--sound", rig.sound])
            #expect(result.status == 64, "\(at): \(result.stderr)")
            #expect(result.stderr.contains("usage: proofkit alarm add "), "\(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: rig.store))  // nothing booked, no store made
        let zone = try rig.alarm(["add", "--at", "+60s", "--sound", rig.sound], environment: ["TZ": "Mars/Olympus"])
        #expect(zone.status == 64 && zone.stderr.contains("unknown time zone TZ='Mars/Olympus'"))
        _ = try rig.add(in: 60, window: 60, gap: 30)
        let stray = try rig.alarm(["status", "--ring-seconds", "5", "--system", "--label", "foo"])
        #expect(stray.status == 64 && stray.stderr.contains("alarm status does not take"), "\(stray.stderr)")
        #expect(stray.stderr.contains("usage: proofkit alarm status"))
        // A label is one short line of text: a long one, or one with a line break or an escape, is 64.
        for label in [String(repeating: "a", count: 101), "two\nlines", "bell\u{07}", "\u{1B}[31mred"] {
            let result = try rig.alarm(["add", "--at", "+60s", "--sound", rig.sound, "--label", label])
            #expect(result.status == 64 && result.stderr.contains("--label takes at most 100"), "\(result.stderr)")
        }
        let named = try rig.alarm([
            "add", "--at", "+60s", "--sound", rig.sound, "--label", String(repeating: "ف", count: 100),
        ])
        #expect(named.status == 0, "\(named.stderr)")
        // A repeated prayer is booked and reported once.
        let prayers = try rig.alarm([
            "prayers", "--lat", "21.4", "--lon", "39.8", "--tz", "Asia/Riyadh", "--sound", rig.sound, "--prayers",
            "fajr,FAJR, fajr",
        ])
        #expect(prayers.status == 0 && prayers.stdout.contains("prayer alarms for fajr at"), "\(prayers.stdout)")
        // An option no action takes is refused while parsing: still the action's own usage line.
        let unknown = try rig.alarm(["add", "--bogus", "--sound", rig.sound])
        #expect(unknown.status == 64 && unknown.stderr.contains("unknown option '--bogus'"), "\(unknown.stderr)")
        #expect(unknown.stderr.contains("usage: proofkit alarm add --at TIME"), "\(unknown.stderr)")
    }

    @Test("a DST-ambiguous or skipped local --at is booked by the documented rule, and the output says so")
    func daylightSavingAt() throws {
        let rig = try AlarmRig()
        // America/New_York's next fall-back and spring-forward days: find them from the zone itself.
        let zone = try #require(TimeZone(identifier: "America/New_York"))
        var fallBack: Date?
        var springForward: Date?
        var day = Date().addingTimeInterval(86_400)
        while fallBack == nil || springForward == nil, day < Date().addingTimeInterval(365 * 86_400) {
            let change = zone.nextDaylightSavingTimeTransition(after: day)!
            if zone.isDaylightSavingTime(for: change) {
                springForward = springForward ?? change
            } else {
                fallBack = fallBack ?? change
            }
            day = change.addingTimeInterval(3600)
        }
        let formatter = DateFormatter()
        formatter.timeZone = zone
        formatter.dateFormat = "yyyy-MM-dd"
        let environment = ["TZ": "America/New_York"]
        let twice = try rig.alarm(
            [
                "add", "--at", formatter.string(from: try #require(fallBack)) + "T01:30:00", "--sound", rig.sound,
                "--json",
            ],
            environment: environment)
        #expect(
            twice.status == 0 && twice.stderr.contains("happens twice") && twice.stderr.contains("booked the first"))
        #expect((try json(twice.stdout)["first"] as? String)?.hasSuffix("T01:30:00-04:00") == true, "\(twice.stdout)")
        let skipped = try rig.alarm(
            [
                "add", "--at", formatter.string(from: try #require(springForward)) + "T02:30:00", "--sound", rig.sound,
                "--json",
            ],
            environment: environment)
        #expect(skipped.status == 0 && skipped.stderr.contains("does not exist"), "\(skipped.stderr)")
        #expect(
            (try json(skipped.stdout)["first"] as? String)?.hasSuffix("T03:30:00-04:00") == true, "\(skipped.stdout)")
    }

    @Test("a store path over the socket limit works: add, run, status, and SIGTERM exits 0 removing socket and lock")
    func longStorePathAndCleanExit() throws {
        let rig = try AlarmRig(store: String(repeating: "d", count: 70) + "/" + String(repeating: "e", count: 40))
        #expect(rig.store.utf8.count + "/control.sock".utf8.count > 108)
        try rig.startService(ringSeconds: 1)
        let status = try rig.status()
        #expect(status["service"] as? String == "running")
        let device = status["device"] as? [String: Any]
        #expect(device?["status"] as? String == "ok", "\(status)")
        let service = try #require(rig.service)
        kill(service.processIdentifier, SIGTERM)
        service.waitUntilExit()
        #expect(service.terminationReason == .exit && service.terminationStatus == 0)
        #expect(!FileManager.default.fileExists(atPath: rig.store + "/control.sock"))
        #expect(!FileManager.default.fileExists(atPath: rig.store + "/service.lock"))
        #expect(rig.log.contains("exit - signal=15"))
        rig.service = nil
    }

    @Test(
        "20 clients that send half a request and wait delay neither status nor a ring",
        .enabled(if: hasPython, "needs python3"))
    func stalledClients() throws {
        let rig = try AlarmRig()
        try rig.startService(ringSeconds: 1)
        let stalled = Process()
        stalled.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        stalled.arguments = [
            "-c",
            """
            import socket, sys, time
            held = []
            for _ in range(20):
                s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.send(b'pi'); held.append(s)
            print('ready', flush=True); time.sleep(15)
            """,
            rig.store + "/control.sock",
        ]
        let ready = Pipe()
        stalled.standardOutput = ready
        try stalled.run()
        defer { stalled.terminate() }
        _ = ready.fileHandleForReading.availableData  // "ready": the 20 connections are open
        let asked = Date()
        #expect(try rig.status()["service"] as? String == "running")
        #expect(Date().timeIntervalSince(asked) < 2, "status waited on the stalled clients")
        let (id, first) = try rig.add(in: 2, window: 0, gap: 1)
        _ = try #require(rig.firstSound(by: first.addingTimeInterval(4)), "nothing rang: \(rig.log)")
        let logged = rig.log.components(separatedBy: " ring \(id) \(id).r0 late_ms=").dropFirst().first
        let late = try #require(logged.flatMap { Int($0.prefix { $0 == "-" || $0.isNumber }) }, "\(rig.log)")
        #expect(late <= 1000, "the ring started \(late) ms late behind stalled clients")
    }

    @Test("a ring that cannot play is 'failed' with the reason, and status says the device was not found")
    func failedRingIsReported() throws {
        let rig = try AlarmRig()
        try rig.startService(ringSeconds: 1, device: "nosuchdevice")
        let (id, first) = try rig.add(in: 1, window: 30, gap: 20)  // the chain stays in status
        let deadline = first.addingTimeInterval(10)
        var state: String?
        repeat {
            usleep(100_000)
            state = rings(of: id, in: try rig.status()).first?["state"] as? String
        } while state != "failed" && Date() < deadline
        let status = try rig.status()
        let ring = try #require(rings(of: id, in: status).first)
        #expect(ring["state"] as? String == "failed", "\(status) \(rig.log)")
        #expect((ring["detail"] as? String)?.isEmpty == false)
        #expect(((status["device"] as? [String: Any])?["status"] as? String)?.hasPrefix("not found") == true)
        #expect(rig.log.contains("ring-failed \(id)"))
    }

    @Test("install carries --device, --ring-seconds and the store into the unit; --system writes User=")
    func installCarriesOptions() throws {
        let rig = try AlarmRig()
        let unit = try rig.alarm(
            ["install", "--print", "--system", "--device", "plughw:1,0", "--ring-seconds", "120"],
            environment: ["SUDO_USER": "fajr"])
        #expect(unit.status == 0, "\(unit.stderr)")
        #expect(unit.stdout.contains("User=fajr"))
        #expect(
            unit.stdout.contains("alarm run --store \(rig.store) --device plughw:1,0 --ring-seconds 120"),
            "\(unit.stdout)")
    }

    @Test(
        "install carries every option of run, with relative paths made absolute (the unit runs elsewhere); a missing chime is 66, a bad key 64"
    )
    func installMakesPathsAbsolute() throws {
        let rig = try AlarmRig()
        let unit = try TestEnvironment.runProofkit(
            [
                "alarm", "install", "--print", "--store", "store", "--input", "keys", "--stop-key", "space", "--mic",
                "none", "--camera", "none", "--accept-sound", "tone.wav",
            ], currentDirectory: rig.folder)
        #expect(unit.status == 0, "\(unit.stderr)")
        #expect(
            unit.stdout.contains(
                "alarm run --store \(rig.store) --input \(rig.folder)/keys --stop-key space --mic none --camera none --accept-sound \(rig.sound)"
            ), "\(unit.stdout)")
        let missing = try TestEnvironment.runProofkit(
            ["alarm", "install", "--print", "--reject-sound", "nothing.wav"], currentDirectory: rig.folder)
        #expect(missing.status == 66 && missing.stderr.contains("nothing.wav"), "\(missing.stderr)")
        let key = try rig.alarm(["install", "--print", "--stop-key", "banana"])
        #expect(key.status == 64 && key.stderr.contains("unknown --stop-key 'banana'"), "\(key.stderr)")
        let seconds = try rig.alarm(["install", "--print", "--ring-seconds", "0"])
        #expect(seconds.status == 64 && seconds.stderr.contains("more than 0 and at most 3600"), "\(seconds.stderr)")
    }

    @Test(
        "a key is a Stop button: a press read as Linux input events silences the ring within 200 ms; the backups still come"
    )
    func keyStopsRing() throws {
        let rig = try AlarmRig()
        let keys = rig.folder + "/keys"
        #expect(mkfifo(keys, 0o600) == 0)
        try rig.startService(ringSeconds: 20, arguments: ["--input", keys, "--stop-key", "space"])
        #expect(rig.log.contains("stop_keys=\(keys)"), "\(rig.log)")
        let (id, first) = try rig.add(in: 2, window: 30, gap: 15)
        _ = try #require(rig.firstSound(by: first.addingTimeInterval(3)), "the first ring was not heard: \(rig.log)")
        let writer = try #require(FileHandle(forWritingAtPath: keys))
        // Another key (Enter) does not stop it; then Space (press, then release and a sync report).
        writer.write(Self.inputEvent(type: 1, code: 28, value: 1))
        usleep(300_000)
        #expect(!rig.log.contains("by key"), "\(rig.log)")
        let pressed = Date()
        writer.write(
            Self.inputEvent(type: 1, code: 57, value: 1) + Self.inputEvent(type: 1, code: 57, value: 0)
                + Self.inputEvent(type: 0, code: 0, value: 0))
        try writer.close()
        let deadline = Date().addingTimeInterval(3)
        while !rig.log.contains("ring-end \(id) \(id).r0") && Date() < deadline { usleep(10_000) }
        // The service's own clock: the ring ended within 200 ms of the press.
        let line = try #require(rig.log.split(separator: "\n").first { $0.contains("ring-end \(id) \(id).r0") })
        let stamp = try #require(ISO8601DateFormatter.withFractions.date(from: String(line.prefix(24))))
        #expect(stamp.timeIntervalSince(pressed) <= 0.2, "\(line); pressed \(pressed)")
        #expect(line.hasSuffix("stopped") && rig.log.contains("stop \(id) \(id).r0 by key 57"), "\(rig.log)")
        #expect(rig.staysQuiet(for: 1), "the ring went on after the key")
        let backup = first.addingTimeInterval(15)
        _ = try #require(
            rig.firstSound(by: backup.addingTimeInterval(3), fresh: true), "the backup did not ring: \(rig.log)")
        let unknown = try rig.alarm(["run", "--stop-key", "banana"])
        #expect(unknown.status == 64 && unknown.stderr.contains("unknown --stop-key 'banana'"))
    }

    /// One `struct input_event` (64-bit): time, type, code, value, little-endian.
    static func inputEvent(type: UInt16, code: UInt16, value: Int32) -> Data {
        var bytes = Data(count: 16)
        withUnsafeBytes(of: type.littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: code.littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    @Test(
        "--input: a file, /dev/null or a folder is refused at start (65, 66), never read as endless ends of file; one not there yet is logged, opened before the next ring, and its keys stop it"
    )
    func inputDevicesChecked() throws {
        let rig = try AlarmRig()
        let file = rig.folder + "/keys.txt"
        try Data(Self.inputEvent(type: 1, code: 57, value: 1)).write(to: URL(fileURLWithPath: file))
        for (path, status) in [(file, 65), ("/dev/null", 65), (rig.folder, 66)] {
            // Under timeout(1): a refusal that regressed would run the service for ever (124).
            let refused = try runProcess(
                "/usr/bin/timeout",
                ["10", TestEnvironment.proofkitBinary, "alarm", "run", "--store", rig.store, "--input", path])
            #expect(
                refused.status == status && refused.stderr.contains("keys are read from a keyboard"),
                "\(path): \(refused.status) \(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        }
        let keys = rig.folder + "/keys"
        try rig.startService(ringSeconds: 20, arguments: ["--input", keys, "--stop-key", "space"])
        #expect(rig.log.contains("input-missing - \(keys): No such file or directory"), "\(rig.log)")
        /// `status --json`'s stop_keys: the devices open and those missing.
        func stopKeys() throws -> (devices: [String], missing: [String]) {
            let status = try rig.alarm(["status", "--json"])
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
            let keys = try #require(object["stop_keys"] as? [String: Any], "\(status.stdout)")
            return (keys["devices"] as? [String] ?? ["?"], keys["missing"] as? [String] ?? ["?"])
        }
        #expect(try stopKeys() == ([], [keys]))
        let text = try rig.alarm(["status"])
        #expect(text.stdout.contains("keys that stop a ring: none open"), "\(text.stdout)")
        #expect(text.stdout.contains("not there: \(keys) (tried before each ring)"), "\(text.stdout)")
        #expect(mkfifo(keys, 0o600) == 0)
        let (id, first) = try rig.add(in: 2, window: 30, gap: 15)
        _ = try #require(rig.firstSound(by: first.addingTimeInterval(3)), "the first ring was not heard: \(rig.log)")
        #expect(rig.log.contains("input-opened - \(keys)"), "\(rig.log)")
        #expect(try stopKeys() == ([keys], []))
        let writer = try #require(FileHandle(forWritingAtPath: keys))
        writer.write(
            Self.inputEvent(type: 1, code: 57, value: 1) + Self.inputEvent(type: 1, code: 57, value: 0)
                + Self.inputEvent(type: 0, code: 0, value: 0))
        try writer.close()
        let deadline = Date().addingTimeInterval(5)
        while !rig.log.contains("stop \(id) \(id).r0 by key 57") && Date() < deadline { usleep(10_000) }
        #expect(rig.log.contains("stop \(id) \(id).r0 by key 57"), "\(rig.log)")
    }
}

extension ISO8601DateFormatter {
    /// Reads the service log's stamps (`2026-12-04T05:41:00.123Z`).
    static var withFractions: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
