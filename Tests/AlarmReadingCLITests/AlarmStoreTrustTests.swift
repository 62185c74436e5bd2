import Foundation
import TestSupport
import Testing

// The alarm store under bad input and outside hands: damaged, foreign or newer databases, planted
// links, a store removed or replaced under a running service, refused writes, kept sound copies.
// Split from AlarmTrustTests (the 40 KB rule); the service runs as a child process, as there.

@Suite(
    "the alarm store trusts nothing it finds: damaged, foreign, newer, linked, removed, full",
    .serialized, .enabled(if: TestEnvironment.hasProofkitBinary, "build proofkit first"), .offThePool)
struct AlarmStoreTrustTests {
    @Test(
        "bad stores: a time out of range is skipped and logged (never a crash); a foreign database, a missing table or a newer schema is 76 with nothing written",
        .enabled(if: hasPython, "needs python3 (its sqlite3 module edits the store)"))
    func badStores() throws {
        let rig = try AlarmRig()
        let (id, _) = try rig.add(in: 60, window: 60, gap: 30)
        let edit = "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute(sys.argv[2]); db.commit()"
        let database = rig.store + "/alarms.sqlite3"
        #expect(try python(edit, [database, "UPDATE rings SET fire = -1e300 WHERE id = '\(id).r1'"]).status == 0)
        let status = try rig.status()
        #expect((status["skipped_rows"] as? [String]) == ["ring \(id).r1"])
        // A state no proofkit wrote (an edited store): shown as failed, with what the store held;
        // the chain and its other rings go on.
        #expect(try python(edit, [database, "UPDATE rings SET state = 'bogus' WHERE id = '\(id).r2'"]).status == 0)
        let odd = try #require(rings(of: id, in: try rig.status()).first { $0["id"] as? String == "\(id).r2" })
        #expect(odd["state"] as? String == "failed" && odd["detail"] as? String == "unknown state 'bogus' in the store")
        #expect(rings(of: id, in: try rig.status()).first?["state"] as? String == "scheduled")
        try rig.startService(ringSeconds: 1)
        #expect(rig.log.contains("row-skipped - ring \(id).r1"), "\(rig.log)")
        #expect(try rig.status()["service"] as? String == "running")
        rig.stopService()

        // An unrelated SQLite database where the store should be: refused before anything is written.
        let foreign = try AlarmRig()
        try FileManager.default.createDirectory(atPath: foreign.store, withIntermediateDirectories: true)
        let other = foreign.store + "/alarms.sqlite3"
        #expect(try python(edit, [other, "CREATE TABLE notes(x)"]).status == 0)
        let bytes = FileManager.default.contents(atPath: other)
        for arguments in [["status"], ["add", "--at", "+60s", "--sound", foreign.sound], ["run"]] {
            let result = try foreign.alarm(arguments)
            #expect(
                result.status == 76 && result.stderr.contains("not a proofkit alarm store"),
                "\(arguments): \(result.stderr)")
        }
        #expect(FileManager.default.contents(atPath: other) == bytes)
        #expect(!FileManager.default.fileExists(atPath: foreign.store + "/sounds"))

        // A store written by a newer proofkit: read by none of the actions, and left as it is
        // (status once read it as if it were its own).
        let newer = try AlarmRig()
        _ = try newer.add(in: 3600, window: 60, gap: 30)
        let newerDatabase = newer.store + "/alarms.sqlite3"
        #expect(try python(edit, [newerDatabase, "PRAGMA user_version = 99"]).status == 0)
        let newerBytes = FileManager.default.contents(atPath: newerDatabase)
        for arguments in [["status"], ["history"], ["add", "--at", "+60s", "--sound", newer.sound], ["stop"]] {
            let result = try newer.alarm(arguments)
            #expect(
                result.status == 76
                    && result.stderr.contains("written by a newer proofkit (schema 99; this one reads up to 3)"),
                "\(arguments): \(result.status) \(result.stderr)")
        }
        #expect(FileManager.default.contents(atPath: newerDatabase) == newerBytes)

        // A store whose rings table was dropped: prayers refuses it and changes nothing.
        #expect(try python(edit, [database, "DROP TABLE rings"]).status == 0)
        let dropped = FileManager.default.contents(atPath: database)
        let prayers = try rig.alarm(
            ["prayers", "--lat", "21.42", "--lon", "39.83", "--tz", "Asia/Riyadh", "--sound", rig.sound])
        #expect(prayers.status == 76 && prayers.stderr.contains("no 'rings' table"), "\(prayers.stderr)")
        #expect(FileManager.default.contents(atPath: database) == dropped)
    }

    @Test(
        "a write-ahead log of another database beside the store is refused (76) before SQLite reads it: nothing changes, no -shm appears; the store's own log is fine",
        .enabled(if: hasPython, "needs python3 (its sqlite3 module writes the logs)"))
    func foreignLog() throws {
        let rig = try AlarmRig()
        let (id, _) = try rig.add(in: 3600, window: 60, gap: 30)
        let database = rig.store + "/alarms.sqlite3"
        // The store's own log, left by a writer that keeps its connection open: status reads through it.
        let own = """
            import sqlite3, subprocess, sys
            db = sqlite3.connect(sys.argv[1]); db.execute('PRAGMA wal_autocheckpoint=0')
            db.execute("INSERT INTO settings VALUES('own', 'log')"); db.commit()
            r = subprocess.run(sys.argv[2:], capture_output=True, text=True); print(r.returncode); print(r.stdout)
            """
        let status = try python(
            own, [database, TestEnvironment.proofkitBinary, "alarm", "status", "--store", rig.store])
        #expect(status.stdout.hasPrefix("0\n") && status.stdout.contains(id), "\(status.stdout) \(status.stderr)")
        // Another database's log, copied beside the store (its connection still open, so it exists).
        let copy = """
            import shutil, sqlite3, sys
            db = sqlite3.connect(sys.argv[1]); db.execute('PRAGMA journal_mode=wal'); db.execute('PRAGMA wal_autocheckpoint=0')
            db.execute('CREATE TABLE chains(x)'); db.execute("INSERT INTO chains VALUES('not yours')"); db.commit()
            shutil.copy(sys.argv[1] + '-wal', sys.argv[2])
            """
        #expect(try python(copy, [rig.folder + "/other.db", database + "-wal"]).status == 0)
        try? FileManager.default.removeItem(atPath: database + "-shm")
        let before = [database, database + "-wal"].map { FileManager.default.contents(atPath: $0) }
        for arguments in [["status"], ["add", "--at", "+60s", "--sound", rig.sound], ["history"], ["run"]] {
            let result = try rig.alarm(arguments)
            #expect(
                result.status == 76 && result.stderr.contains("write-ahead log belongs to another database"),
                "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
        }
        #expect([database, database + "-wal"].map { FileManager.default.contents(atPath: $0) } == before)
        #expect(!FileManager.default.fileExists(atPath: database + "-shm"))
    }

    @Test(
        "symlinks planted in the store are never followed, and as root a store another user owns is refused",
        .enabled(if: getuid() == 0, "needs root to hand the store to another user"))
    func plantedLinksAndOwners() throws {
        let rig = try AlarmRig()
        _ = try rig.add(in: 60, window: 60, gap: 30)
        let victim = rig.folder + "/victim.txt"
        try "precious\n".write(toFile: victim, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: rig.store + "/service.lock", withDestinationPath: victim)
        let run = try rig.alarm(["run"])
        #expect(run.status == 73, "\(run.stderr)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        try FileManager.default.removeItem(atPath: rig.store + "/service.lock")
        // A planted sounds -> folder link receives nothing.
        let elsewhere = rig.folder + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.removeItem(atPath: rig.store + "/sounds")
        try FileManager.default.createSymbolicLink(atPath: rig.store + "/sounds", withDestinationPath: elsewhere)
        let add = try rig.alarm(["add", "--at", "+60s", "--sound", rig.sound])
        #expect(add.status != 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
        try FileManager.default.removeItem(atPath: rig.store + "/sounds")
        // A database planted as a link to another SQLite file (or any file): never opened through it.
        let database = rig.store + "/alarms.sqlite3"
        try FileManager.default.moveItem(atPath: database, toPath: rig.folder + "/real.sqlite3")
        try FileManager.default.createSymbolicLink(atPath: database, withDestinationPath: rig.folder + "/real.sqlite3")
        let real = FileManager.default.contents(atPath: rig.folder + "/real.sqlite3")
        for arguments in [["status"], ["add", "--at", "+60s", "--sound", rig.sound], ["history"]] {
            let result = try rig.alarm(arguments)
            #expect(
                result.status == 73 && result.stderr.contains("a symbolic link, which proofkit never follows"),
                "\(arguments): \(result.status) \(result.stderr)")
        }
        #expect(FileManager.default.contents(atPath: rig.folder + "/real.sqlite3") == real)
        try FileManager.default.removeItem(atPath: database)
        try FileManager.default.moveItem(atPath: rig.folder + "/real.sqlite3", toPath: database)
        // The store itself as a link: refused, and said so (it was "special").
        try FileManager.default.createSymbolicLink(atPath: rig.folder + "/linked", withDestinationPath: rig.store)
        let linked = try TestEnvironment.runProofkit(["alarm", "status", "--store", rig.folder + "/linked"])
        #expect(linked.status == 73 && linked.stderr.contains("is a symbolic link"), "\(linked.stderr)")
        // The store handed to another user: root refuses it.
        #expect(chown(rig.store, 65534, 65534) == 0)
        let refused = try rig.alarm(["status"])
        #expect(refused.status == 73 && refused.stderr.contains("belongs to user 65534"), "\(refused.stderr)")
    }

    @Test(
        "a store removed or replaced while the service runs: at the fire time it rings nothing from the old store, says so and exits 66; started again, it reads the store now there",
        .enabled(if: hasPython, "needs python3 (its sqlite3 module saves a copy of the store)"))
    func storeRemovedOrReplaced() throws {
        // Removed: the folder deleted to start afresh, with the service still running.
        let removed = try AlarmRig()
        let (_, first) = try removed.add(in: 3, window: 60, gap: 30)
        try removed.startService(ringSeconds: 1)
        try FileManager.default.removeItem(atPath: removed.store)
        let service = try #require(removed.service)
        let deadline = first.addingTimeInterval(10)
        while service.isRunning && Date() < deadline { usleep(50_000) }
        #expect(!service.isRunning && service.terminationStatus == 66, "\(removed.log)")
        #expect(removed.log.contains("store-gone - \(removed.store)/alarms.sqlite3 was removed or replaced"))
        #expect(!removed.log.contains("ring-due"), "\(removed.log)")
        #expect(
            !FileManager.default.fileExists(atPath: removed.out)
                || FileManager.default.contents(atPath: removed.out)!.isEmpty)

        // Replaced: a saved copy of the store moved in while the service runs.
        let replaced = try AlarmRig()
        let (id, fire) = try replaced.add(in: 4, window: 60, gap: 30)
        try replaced.startService(ringSeconds: 1)
        let save = """
            import os, sqlite3, sys
            src = sqlite3.connect(sys.argv[1]); dst = sqlite3.connect(sys.argv[1] + '.saved')
            src.backup(dst); dst.close(); os.replace(sys.argv[1] + '.saved', sys.argv[1])
            """
        #expect(try python(save, [replaced.store + "/alarms.sqlite3"]).status == 0)
        let second = try #require(replaced.service)
        while second.isRunning && Date() < fire.addingTimeInterval(10) { usleep(50_000) }
        #expect(!second.isRunning && second.terminationStatus == 66, "\(replaced.log)")
        #expect(replaced.log.contains("store-gone"), "\(replaced.log)")
        // Its socket and lock went with it; a service started again rings the copy's alarm.
        #expect(!FileManager.default.fileExists(atPath: replaced.store + "/control.sock"))
        replaced.service = nil
        try replaced.startService(ringSeconds: 1)
        #expect(replaced.firstSound(by: Date().addingTimeInterval(5)) != nil, "\(replaced.log)")
        #expect(replaced.log.contains("ring-due \(id)"), "\(replaced.log)")
    }

    @Test("a store write that the system refuses (a file size limit, as a full disk) is 74 and names the reason")
    func systemReasonNamed() throws {
        let rig = try AlarmRig()
        let (id, _) = try rig.add(in: 3600, window: 60, gap: 30)
        // With no other connection open, SQLite sizes its shared-memory file again (4 KiB), past a
        // 1 KiB file size limit: EFBIG (SIGXFSZ ignored). SQLite's own message says only "disk I/O
        // error".
        let limited = try runProcess(
            "/bin/bash",
            [
                "-c", "ulimit -f 1; trap '' XFSZ; exec \"$0\" alarm prove \"$1\" --escape --store \"$2\"",
                TestEnvironment.proofkitBinary, id, rig.store,
            ])
        #expect(limited.status == 74, "\(limited.stderr)")
        #expect(limited.stderr.contains("(File too large)"), "\(limited.stderr)")
        #expect(limited.stderr.split(separator: "\n").count == 1, "\(limited.stderr)")
        // Nothing was half written: the chain is still active, and the escape goes through now.
        #expect(try rig.alarm(["prove", id, "--escape"]).status == 0)
    }

    @Test(
        "a proof rejected while the store cannot take its record (a file size limit, as a full disk) still gives its verdict: 0, or 2 with --strict, and says it is not recorded"
    )
    func rejectedWhileFull() throws {
        let rig = try AlarmRig()
        let (id, first) = try rig.add(in: 1, window: 600, gap: 300)
        // The running service keeps SQLite's shared-memory file open, as on a disk that filled
        // while it ran; a first connection would make that file again, past the 1 KiB limit.
        try rig.startService(ringSeconds: 1)
        let wait = first.timeIntervalSinceNow + 0.2
        if wait > 0 { usleep(useconds_t(wait * 1_000_000)) }
        for strict in [false, true] {
            let limited = try runProcess(
                "/bin/bash",
                [
                    "-c", "ulimit -f 1; trap '' XFSZ; exec \"$0\" alarm prove \"$1\" --voice \"$2\" --store \"$3\" $4",
                    TestEnvironment.proofkitBinary, id, TestEnvironment.fixture("odd_silence_001.wav"), rig.store,
                    strict ? "--strict" : "",
                ])
            #expect(limited.status == (strict ? 2 : 0), "\(limited.stderr)")
            #expect(limited.stdout.contains("proof rejected: chain \(id) goes on"), "\(limited.stdout)")
            // (SQLite names the errno only when it still holds it: "disk I/O error" here.)
            #expect(
                limited.stderr.contains("note: this rejected attempt is not recorded in the store (SQLite: "),
                "\(limited.stderr)")
        }
        // The chain is as it was, and nothing was recorded; without the limit the attempt is.
        let status = try rig.alarm(["status", "--json"])
        #expect(!status.stdout.contains("\"rejected\""), "\(status.stdout)")
        let normal = try rig.alarm(["prove", id, "--voice", TestEnvironment.fixture("odd_silence_001.wav"), "--json"])
        #expect(normal.status == 0 && normal.stdout.contains("\"recorded\":true"), "\(normal.stdout) \(normal.stderr)")
        #expect(try rig.alarm(["status", "--json"]).stdout.contains("\"rejected\""))
    }

    @Test("doctor names the alarm store, whether a service runs on it, and the room on its disk (as stat -f counts it)")
    func doctorShowsStore() throws {
        let rig = try AlarmRig()
        // An empty models folder: doctor then hashes no model (about 1 s of CPU each run).
        let noModels = rig.folder + "/no-models"
        try FileManager.default.createDirectory(atPath: noModels, withIntermediateDirectories: true)
        func doctor() throws -> [String: Any] {
            let result = try TestEnvironment.runProofkit(
                ["doctor", "--json"], environment: ["PROOFKIT_ALARM_DIR": rig.store, "PROOFKIT_MODELS": noModels])
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            return try #require(object?["alarm_store"] as? [String: Any], "\(result.stdout) \(result.stderr)")
        }
        var store = try doctor()
        #expect(store["folder"] as? String == rig.store && store["exists"] as? Bool == false)
        _ = try rig.add(in: 3600, window: 60, gap: 30)
        store = try doctor()
        #expect(store["exists"] as? Bool == true && store["service"] as? String == "stopped")
        try rig.startService(ringSeconds: 1)
        store = try doctor()
        #expect(store["service"] as? String == "running")
        // stat(1): free blocks for unprivileged users times the fundamental block size.
        let stat = try runProcess("/usr/bin/stat", ["-f", "-c", "%a %S", rig.store]).stdout.split(separator: " ")
        let expected = Int64(stat[0])! * Int64(stat[1].trimmingCharacters(in: .whitespacesAndNewlines))!
        let free = try #require((store["free_bytes"] as? NSNumber)?.int64Value)
        #expect(abs(free - expected) < 64 << 20, "\(free) against \(expected)")
        let text = try TestEnvironment.runProofkit(
            ["doctor"], environment: ["PROOFKIT_ALARM_DIR": rig.store, "PROOFKIT_MODELS": noModels]
        ).stdout
        #expect(text.contains("alarm store: \(rig.store) (service running); "), "\(text)")
    }

    @Test("a relative XDG_STATE_HOME is ignored (the XDG rule): the store is HOME's, wherever the command runs")
    func relativeStateHomeIgnored() throws {
        let rig = try AlarmRig()
        let environment = ["HOME": rig.folder, "XDG_STATE_HOME": "state", "PROOFKIT_ALARM_DIR": ""]
        let status = try runProcess(
            TestEnvironment.proofkitBinary, ["alarm", "status", "--json"], environment: environment,
            currentDirectory: rig.folder)
        #expect(status.status == 66, "no store yet: \(status.stderr)")
        #expect(status.stderr.contains("no alarm store in \(rig.folder)/.local/state/proofkit;"), "\(status.stderr)")
    }

    @Test(
        "without HOME (cron, env -i), the store is in the user's home from the user database (getent), not /root's",
        .enabled(
            if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/getent"), "needs root, setpriv and getent"))
    func homeFromUserDatabase() throws {
        let rig = try AlarmRig()
        // A copy that another user may run, in a folder it may enter.
        chmod(rig.folder, 0o755)
        let binary = rig.folder + "/proofkit"
        try FileManager.default.copyItem(atPath: TestEnvironment.proofkitBinary, toPath: binary)
        for (user, group) in [("0", "0"), ("65534", "65534")] {
            let entry = try runProcess("/usr/bin/getent", ["passwd", user])
            let home = try #require(
                entry.stdout.split(separator: ":", omittingEmptySubsequences: false).dropFirst(5).first)
            for unset in [["-u", "HOME"], ["HOME=relative"]] {
                let status = try runProcess(
                    "/usr/bin/setpriv",
                    ["--reuid", user, "--regid", group, "--clear-groups", "/usr/bin/env"]
                        + ["-u", "XDG_STATE_HOME", "-u", "PROOFKIT_ALARM_DIR"] + unset + [binary, "alarm", "status"])
                #expect(status.status == 66, "user \(user), \(unset): \(status.stderr)")
                #expect(
                    status.stderr == "proofkit alarm: no alarm store in \(home)/.local/state/proofkit; "
                        + "'proofkit alarm add' or 'proofkit alarm prayers' creates one\n",
                    "user \(user), \(unset): \(status.stderr)")
            }
        }
    }

    /// Whether a small tmpfs can be mounted in a mount namespace of its own (root, `unshare -m`):
    /// a disk that fills up, without touching the machine's mounts.
    static let canMountTmpfs: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"),
            let folder = try? TestFolder.make()
        else { return false }
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let probe = try? runProcess(
            "/usr/bin/unshare", ["-m", "/bin/sh", "-c", "mount -t tmpfs -o size=64k tmpfs \"$0\"", folder])
        return probe?.status == 0
    }()

    @Test(
        "a disk that fills under the running service: every ring still rings, the writes wait, and land in order once there is room",
        .enabled(if: canMountTmpfs, "needs root and unshare -m, for a small tmpfs that fills up"))
    func fullDiskRingsOn() throws {
        let rig = try AlarmRig()
        let small = rig.folder + "/small"
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
        // In a mount namespace of its own: a 600 KiB tmpfs holds the store; it is filled 1 s in,
        // before the first ring (3 s), freed 8 s in, and the status read 14 s in. The rings come
        // every 3 s and last 1 s.
        let script = """
            set -e
            mount -t tmpfs -o size=600k tmpfs "$1"
            "$0" alarm add --store "$1/store" --at +3s --sound "$2" --window 1m --gap 3s --gap-growth 0s
            service=$$
            (sleep 1; head -c 2000000 /dev/zero > "$1/fill" 2>/dev/null || true
             PROOFKIT_ALARM_DIR="$1/store" PROOFKIT_MODELS="$3" "$0" doctor > "$3/doctor.txt" 2>&1 || true
             sleep 2.5; "$0" alarm status --store "$1/store" > "$3/status-full.txt" 2>&1 || true
             sleep 4.5; rm "$1/fill"
             sleep 6; "$0" alarm status --store "$1/store" --json > "$3/status.json"
             kill -TERM $service) &
            exec "$0" alarm run --store "$1/store" --device speaker --ring-seconds 1 --mic none 2>> "$3/service.log"
            """
        let run = try runProcess(
            "/usr/bin/unshare",
            ["-m", "/bin/bash", "-c", script, TestEnvironment.proofkitBinary, small, rig.sound, rig.folder],
            environment: ["PROOFKIT_ALSA_CONFIG": rig.config])
        #expect(run.status == 0, "\(run.stderr) \(rig.log)")
        let log = rig.log
        #expect(
            log.contains("store-write-failed - a1.r0 ringing: ") && log.contains("database or disk is full"), "\(log)")
        #expect(log.contains("store-saved - the store takes writes again"), "\(log)")
        // Rung while the disk was full (3 s, 6 s) and after (9 s, 12 s): each ring once.
        for ring in 0..<4 {
            #expect(log.components(separatedBy: "ring-end a1 a1.r\(ring) ").count == 2, "a1.r\(ring): \(log)")
        }
        // doctor says the disk is full, and that the service runs on.
        let doctor = try String(contentsOfFile: rig.folder + "/doctor.txt", encoding: .utf8)
        #expect(
            doctor.contains("alarm store: \(small)/store (service running); 0.0 MB free on its disk (low: "),
            "\(doctor)")
        // status, read while the disk was full, says the service cannot save, and why.
        let full = try String(contentsOfFile: rig.folder + "/status-full.txt", encoding: .utf8)
        #expect(full.contains("store \(small)/store: service running\n"), "\(full)")
        #expect(
            full.contains("  it cannot save to the store since ") && full.contains("database or disk is full")
                && full.contains(": it rings on, and saves "), "\(full)")
        // Before, the service ended with 74 at its first refused write, a fifth of a second into the ring.
        #expect(!log.contains("proofkit alarm: "), "\(log)")
        let text = try String(contentsOfFile: rig.folder + "/status.json", encoding: .utf8)
        let status = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let states = rings(of: "a1", in: status).compactMap { $0["state"] as? String }
        #expect(Array(states.prefix(4)) == ["rang", "rang", "rang", "rang"], "\(states)")
        #expect(states.dropFirst(4).allSatisfy { $0 == "scheduled" }, "\(states)")

        // Started on a disk already full (a restart under systemd): the store is still read (its
        // -wal and -shm were kept), and the ring rings. Before, it exited 74 at once: SQLite could
        // not make the -shm file again. An escape typed then (3.5 s) cannot be written either: the
        // service takes it over its socket, and the backup at 5 s never rings.
        let again = rig.folder + "/again.log"
        let restart = """
            mount -t tmpfs -o size=600k tmpfs "$1"
            "$0" alarm add --store "$1/store" --at +2s --sound "$2" --window 1m --gap 3s --gap-growth 0s
            head -c 2000000 /dev/zero > "$1/fill" 2>/dev/null
            (sleep 3.5; "$0" alarm prove a1 --escape --store "$1/store" > "$3.prove" 2>&1; echo "exit=$?" >> "$3.prove") &
            timeout 7 "$0" alarm run --store "$1/store" --device speaker --ring-seconds 1 --mic none 2>> "$3"
            """
        let restarted = try runProcess(
            "/usr/bin/unshare",
            ["-m", "/bin/bash", "-c", restart, TestEnvironment.proofkitBinary, small, rig.sound, again],
            environment: ["PROOFKIT_ALSA_CONFIG": rig.config])
        let second = (try? String(contentsOfFile: again, encoding: .utf8)) ?? ""
        #expect(restarted.status == 124, "ran until timeout(1) ended it: \(restarted.stderr) \(second)")
        #expect(second.contains("store-write-failed") && second.contains("ring-end a1 a1.r0 "), "\(second)")
        let prove = (try? String(contentsOfFile: again + ".prove", encoding: .utf8)) ?? ""
        #expect(
            prove.contains("chain a1 ended by an escape (not a proof); the store cannot be written")
                && prove.contains("exit=0"), "\(prove)")
        #expect(second.contains("escape-typed a1 held by the service"), "\(second)")
        #expect(!second.contains("ring-due a1 a1.r1 "), "the backup rang after the escape: \(second)")
    }

    @Test(
        "orphaned sound copies (a booking killed mid-way) are removed when the service starts; kept ones stay, whatever spelling of the store booked them",
        .enabled(if: hasPython, "needs python3 (its sqlite3 module edits the store)"))
    func orphanedSoundsRemoved() throws {
        let rig = try AlarmRig()
        _ = try rig.add(in: 60, window: 60, gap: 30)
        // Booked with a relative store ("./store/" from the rig's folder), as a user types it; the
        // service opens it by its absolute path. The copy was once recorded as spelled, so the
        // service took it for an orphan and removed it.
        let relative = try TestEnvironment.runProofkit(
            ["alarm", "add", "--at", "+90s", "--sound", "quiet.wav", "--store", "./store/"],
            currentDirectory: rig.folder)
        #expect(relative.status != 0, "no such sound yet: \(relative.stderr)")
        let quiet = (0..<8000).map { Int16(truncatingIfNeeded: ($0 % 40) * 100) }
        try TestAudio.writeWAV(quiet, rate: 16000, to: rig.folder + "/quiet.wav")
        let booked = try TestEnvironment.runProofkit(
            ["alarm", "add", "--at", "+90s", "--sound", "quiet.wav", "--store", "./store/"],
            currentDirectory: rig.folder)
        #expect(booked.status == 0, "\(booked.stderr)")
        let kept = try FileManager.default.contentsOfDirectory(atPath: rig.store + "/sounds").sorted()
        #expect(kept.count == 2)
        let orphan = rig.store + "/sounds/oneoff-1.wav"
        try Data(repeating: 1, count: 100).write(to: URL(fileURLWithPath: orphan))
        for file in kept.map({ rig.store + "/sounds/" + $0 }) + [orphan] {
            try FileManager.default.setAttributes(
                [.modificationDate: Date().addingTimeInterval(-600)], ofItemAtPath: file)
        }
        try rig.startService(ringSeconds: 1)
        #expect(!FileManager.default.fileExists(atPath: orphan), "\(rig.log)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: rig.store + "/sounds").sorted() == kept, "\(rig.log)")
        rig.stopService()
        // A store from before: each copy recorded by its path, relative or absolute. Read by its name.
        let edit = "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute(sys.argv[2]); db.commit()"
        #expect(
            try python(
                edit,
                [
                    rig.store + "/alarms.sqlite3",
                    "UPDATE chains SET kept_sound = 'elsewhere/store/sounds/' || kept_sound",
                ]
            ).status == 0)
        try rig.startService(ringSeconds: 1)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: rig.store + "/sounds").sorted() == kept, "\(rig.log)")
    }
}
