import AlarmScheduling
import Foundation
import ImageIO
import PrayerPlanning
import Proofkit
import ProofkitCore
import TestSupport
import Testing

/// The zone the scripted month is written and read in (the history's days are its days).
private let chicago = TimeZone(identifier: "America/Chicago")!
private let zoneEnvironment = ["TZ": "America/Chicago"]

/// A month of mornings written through the real store API, relative to today in Chicago:
/// fajr at 05:10 (a proof of `mat` on even days back, `voice` on odd ones, after 60 s + 10 s
/// per day back, a Stop press every third day; escapes 20 and 8 days back, missed while the
/// machine was down 16 days back, no alarm 10 and 5 days back) and isha at 19:30 (voice
/// proofs after 200 s 3 and 2 days back, an escape yesterday).
private struct ScriptedMonth {
    let store: AlarmStore
    let sound: String
    let today = WallClockTime(Date(), in: chicago).date
    /// The rings booked 16 days back (all logged as missed).
    var missedRings = 0

    init(folder: String, sound: String) throws {
        store = try AlarmStore(folder: folder)
        self.sound = sound
    }

    func first(_ daysBack: Int, _ hour: Int, _ minute: Int) -> Date {
        WallClockTime(date: today.adding(days: -daysBack), hour: hour, minute: minute).instant(in: chicago)
    }

    func book(_ label: String, _ first: Date) throws -> (String, [BookedRing]) {
        try store.addOneOff(
            first: first, window: .seconds(1800), firstGap: .seconds(60), gapGrowth: .seconds(60), sound: sound,
            keptSound: nil, proof: .any, label: label, now: first.addingTimeInterval(-3600))
    }

    /// Rings that came before `seconds` played; `stops` Stop presses; then the chain ends.
    func morning(
        _ label: String, _ first: Date, end kind: AlarmRecordKind, detail: String?, after seconds: Double, stops: Int
    )
        throws
    {
        let (id, rings) = try book(label, first)
        try store.write { () throws(ProofkitError) in
            for ring in rings where ring.fireDate < first.addingTimeInterval(seconds) {
                try store.setRingState(ring.id, .rang, at: ring.fireDate)
            }
            for k in 0..<stops {
                try store.record(
                    chain: id, kind: .stopped, at: first.addingTimeInterval(5 + Double(k)), detail: rings[0].id)
            }
        }
        _ = try store.end(chain: id, kind: kind, at: first.addingTimeInterval(seconds), detail: detail)
    }

    /// Writes the month into `rig`'s store and closes it: its -wal is checkpointed away, as
    /// after the last command.
    static func writeAndClose(_ rig: AlarmRig) throws {
        var month = try ScriptedMonth(folder: rig.store, sound: rig.sound)
        try month.write()
    }

    mutating func write() throws {
        for back in 1...29 where ![10, 5].contains(back) {
            let at = first(back, 5, 10)
            switch back {
            case 20, 8:
                try morning("fajr", at, end: .escape, detail: nil, after: 20, stops: 0)
            case 16:
                let (id, rings) = try book("fajr", at)
                try store.write { () throws(ProofkitError) in
                    for ring in rings {
                        try store.setRingState(ring.id, .missed)
                        try store.record(chain: id, kind: .missed, at: at.addingTimeInterval(1900), detail: ring.id)
                    }
                }
                missedRings = rings.count
            default:
                try morning(
                    "fajr", at, end: .proof, detail: back % 2 == 0 ? "mat" : "voice", after: 60 + 10 * Double(back),
                    stops: back % 3 == 0 ? 1 : 0)
            }
        }
        for back in [3, 2] {
            try morning("isha", first(back, 19, 30), end: .proof, detail: "voice", after: 200, stops: 0)
        }
        try morning("isha", first(1, 19, 30), end: .escape, detail: nil, after: 30, stops: 0)
    }
}

private func jsonObject(_ text: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not JSON: \(text)")
}

/// A pose file of 14 squats (the 7-squat fixture twice, the second 36 s later): passes the
/// squat proof's 10.
func fourteenSquats(in folder: String) throws -> String {
    let lines = try String(contentsOfFile: TestEnvironment.fixture("squat/sqf_video16_squat.jsonl"), encoding: .utf8)
        .split(separator: "\n")
    var out = ""
    for copy in 0..<2 {
        for line in lines {
            var object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            object["t"] = (object["t"] as? Double ?? 0) + 36 * Double(copy)
            out += String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self) + "\n"
        }
    }
    let path = folder + "/squats.jsonl"
    try out.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// The database file's bytes and modification time.
private func stamp(_ path: String) throws -> (Data, Date) {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (try Data(contentsOf: URL(fileURLWithPath: path)), attributes[.modificationDate] as? Date ?? .distantPast)
}

@Suite(
    "proofkit alarm history: the store's mornings, streaks, the summary and the heat map",
    .serialized, .enabled(if: TestEnvironment.hasProofkitBinary, "build proofkit first"), .offThePool)
struct AlarmHistoryCommandTests {
    @Test("a scripted month (store API, and today through the service): the expected lines, streaks and summary")
    func scriptedMonth() throws {
        let rig = try AlarmRig()
        var month = try ScriptedMonth(folder: rig.store, sound: rig.sound)
        try month.write()
        // Today, through the real service: fajr rings, is stopped, and a squat proof ends it;
        // then isha rings once (no window) and nobody proves it.
        try rig.startService(ringSeconds: 20, environment: zoneEnvironment)
        let (fajr, fajrFirst) = try rig.add(in: 2, window: 60, gap: 30, extra: ["--label", "fajr"])
        _ = try #require(rig.firstSound(by: fajrFirst.addingTimeInterval(5)), "fajr did not ring: \(rig.log)")
        #expect(try rig.alarm(["stop"]).status == 0)
        let proof = try rig.alarm(["prove", fajr, "--squat", try fourteenSquats(in: rig.folder)])
        #expect(proof.status == 0, "\(proof.stdout) \(proof.stderr)")
        let (isha, ishaFirst) = try rig.add(in: 2, window: 0, gap: 1, extra: ["--label", "isha"])
        // The service records the ring as ringing once it plays (it rings for 20 s).
        var ishaState: String?
        while Date() < ishaFirst.addingTimeInterval(10) && ishaState != "ringing" {
            usleep(50_000)
            let chains = try rig.status()["chains"] as? [[String: Any]] ?? []
            let rings = chains.first { $0["id"] as? String == isha }?["rings"] as? [[String: Any]]
            ishaState = rings?.first?["state"] as? String
        }
        try #require(ishaState == "ringing", "isha did not ring: \(rig.log)")
        let closed = ishaFirst.addingTimeInterval(6).timeIntervalSinceNow  // the window and its 5 s grace
        if closed > 0 { usleep(useconds_t(closed * 1_000_000)) }

        let result = try rig.alarm(["history", "--json"], environment: zoneEnvironment)
        #expect(result.status == 0, "\(result.stderr)")
        let json = try jsonObject(result.stdout)
        let today = month.today
        func back(_ n: Int) -> String { today.adding(days: -n).description }
        #expect(json["from"] as? String == back(29) && json["to"] as? String == back(0))
        #expect(json["zone"] as? String == "America/Chicago" && json["period_days"] as? Int == 30)

        let chains = json["chains"] as? [[String: Any]] ?? []
        #expect(chains.filter { $0["series"] as? String == "fajr" }.count == 28)
        #expect(chains.filter { $0["series"] as? String == "isha" }.count == 4)
        #expect(!chains.contains { $0["date"] as? String == back(10) || $0["date"] as? String == back(5) })
        let sixBack = try #require(chains.first { $0["date"] as? String == back(6) })
        #expect(sixBack["status"] as? String == "proof" && sixBack["proof"] as? String == "mat")
        #expect(sixBack["how"] as? String == "typed" && sixBack["seconds_to_proof"] as? Double == 120)
        #expect(sixBack["stops"] as? Int == 1 && sixBack["rings"] as? Int == 2 && sixBack["missed_rings"] as? Int == 0)
        let sixteen = try #require(chains.first { $0["date"] as? String == back(16) })
        #expect(sixteen["status"] as? String == "missed" && sixteen["rings"] as? Int == 0)
        #expect(sixteen["missed_rings"] as? Int == month.missedRings && month.missedRings > 1)
        #expect(chains.first { $0["date"] as? String == back(8) }?["status"] as? String == "escape")
        let todayFajr = try #require(chains.first { $0["id"] as? String == fajr })
        #expect(todayFajr["status"] as? String == "proof" && todayFajr["proof"] as? String == "squat")
        #expect(todayFajr["stops"] as? Int == 1 && (todayFajr["rings"] as? Int ?? 0) >= 1)
        let todaySeconds = try #require(todayFajr["seconds_to_proof"] as? Double)
        #expect(todaySeconds > 0 && todaySeconds < 60)
        let todayIsha = try #require(chains.first { $0["id"] as? String == isha })
        #expect(todayIsha["status"] as? String == "missed" && todayIsha["rings"] as? Int == 1)
        // Every field of a line is there.
        #expect(
            Set(todayFajr.keys) == [
                "id", "date", "series", "status", "proof", "how", "first_ring", "ended_at", "seconds_to_proof",
                "stops", "rings", "missed_rings",
            ])

        let streaks = json["streaks"] as? [[String: Any]] ?? []
        #expect(streaks.map { $0["series"] as? String } == ["fajr", "isha"])
        let fajrStreak = try #require(streaks.first)
        #expect(fajrStreak["current"] as? Int == 7 && fajrStreak["current_since"] as? String == back(7))
        #expect(fajrStreak["longest"] as? Int == 9)
        #expect(fajrStreak["longest_from"] as? String == back(29) && fajrStreak["longest_to"] as? String == back(21))
        #expect((fajrStreak["last_break"] as? [String: Any])?["date"] as? String == back(8))
        #expect((fajrStreak["last_break"] as? [String: Any])?["by"] as? String == "escape")
        let ishaStreak = try #require(streaks.last)
        #expect(ishaStreak["current"] as? Int == 0 && ishaStreak["longest"] as? Int == 2)
        #expect(ishaStreak["longest_from"] as? String == back(3) && ishaStreak["longest_to"] as? String == back(2))
        #expect((ishaStreak["last_break"] as? [String: Any])?["by"] as? String == "missed")
        let overall = try #require(json["overall_streak"] as? [String: Any])
        #expect(overall["current"] as? Int == 0 && overall["longest"] as? Int == 9)
        #expect((overall["last_break"] as? [String: Any])?["date"] as? String == back(0))

        #expect(json["proofs_by_kind"] as? [String: Int] == ["mat": 10, "voice": 16, "squat": 1])
        #expect(json["proofs_by_how"] as? [String: Int] == ["typed": 27])
        let pace = try #require(json["median_time_to_proof"] as? [String: [String: Any]])
        // This week: 120, 100, 90, 80, 70 (fajr), 200, 200 (isha) and today's squat: median 95.
        #expect(pace["this_week"]?["median_seconds"] as? Double == 95 && pace["this_week"]?["proofs"] as? Int == 8)
        // Last week (13 to 7 days back): 190, 180, 170, 150, 130.
        #expect(pace["last_week"]?["median_seconds"] as? Double == 170 && pace["last_week"]?["proofs"] as? Int == 5)
        let days = json["days"] as? [[String: Any]] ?? []
        #expect(days.count == 30 && days.first?["date"] as? String == back(29))
        #expect(days.first { $0["date"] as? String == back(1) }?["escapes"] as? Int == 1)

        // The text: one line per chain, then the summary.
        let text = try rig.alarm(["history"], environment: zoneEnvironment)
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "alarm history of \(rig.store): \(back(29)) to \(back(0)) (30 days, America/Chicago)")
        let words = lines.map { $0.split(separator: " ").map(String.init) }
        #expect(words.contains([back(6), "fajr", "proof", "mat", "typed", "2m", "00s", "1", "2"]))
        #expect(words.contains([back(8), "fajr", "escape", "-", "-", "-", "0", "1"]))
        #expect(words.filter { $0.first?.hasPrefix("20") == true }.count == 32)
        #expect(
            lines.contains {
                $0.hasPrefix("  fajr ")
                    && $0.hasSuffix(
                        "now 7 days (since \(back(7))), longest 9 days (\(back(29)) to \(back(21))); last broken \(back(8)) by an escape"
                    )
            }, "\(text.stdout)")
        #expect(lines.contains("proofs by kind: voice 16, mat 10, squat 1 (typed 27)"), "\(text.stdout)")
        #expect(lines.last?.hasPrefix("median time to proof: this week 1m 35s (8 proofs") == true, "\(text.stdout)")
    }

    @Test("prayer chains count under their prayer, with how each proof was given; a dropped chain's record lines count")
    func prayerChains() throws {
        let rig = try AlarmRig()
        let today = WallClockTime(Date(), in: chicago).date
        do {
            let store = try AlarmStore(folder: rig.store)
            try store.write { () throws(ProofkitError) in
                try store.put([
                    "prayers.lat": "41.8781", "prayers.lon": "-87.6298", "prayers.tz": "America/Chicago",
                    "prayers.method": "mwl", "prayers.list": "fajr,isha", "prayers.window": "1800",
                    "prayers.proof": "any", "prayers.sound": rig.sound,
                ])
            }
            // Booked as the service would have three days ago, after midnight.
            let booked = WallClockTime(date: today.adding(days: -3), hour: 0, minute: 30).instant(in: chicago)
            try #require(try store.replanPrayers(now: booked, deviceZone: chicago) != nil)
            func chain(_ prayer: String, _ back: Int) throws -> StoredChain {
                try #require(try store.chain(id: "\(prayer).\(today.adding(days: -back))"), "\(prayer) \(back)")
            }
            let fajr3 = try chain("fajr", 3)
            _ = try store.end(
                chain: fajr3.id, kind: .proof, at: fajr3.firstFire.addingTimeInterval(100), detail: "mat")
            let isha3 = try chain("isha", 3)
            _ = try store.end(
                chain: isha3.id, kind: .proof, at: isha3.firstFire.addingTimeInterval(50), detail: "voice hands-free")
            let fajr2 = try chain("fajr", 2)
            _ = try store.end(chain: fajr2.id, kind: .escape, at: fajr2.firstFire.addingTimeInterval(10))
            // A prayer chain of 20 days back that the store no longer holds left a Stop press.
            let old = WallClockTime(date: today.adding(days: -20), hour: 5, minute: 30).instant(in: chicago)
            try store.write { () throws(ProofkitError) in
                try store.record(chain: "fajr.\(today.adding(days: -20))", kind: .stopped, at: old, detail: "r0")
            }
        }
        let result = try rig.alarm(["history", "--json"], environment: zoneEnvironment)
        #expect(result.status == 0, "\(result.stderr)")
        let chains = try jsonObject(result.stdout)["chains"] as? [[String: Any]] ?? []
        func line(_ prayer: String, _ back: Int) -> [String: Any]? {
            chains.first { $0["id"] as? String == "\(prayer).\(today.adding(days: -back))" }
        }
        #expect(line("fajr", 3)?["series"] as? String == "fajr" && line("fajr", 3)?["proof"] as? String == "mat")
        #expect(line("fajr", 3)?["how"] as? String == "typed" && line("fajr", 3)?["seconds_to_proof"] as? Double == 100)
        #expect(line("isha", 3)?["series"] as? String == "isha" && line("isha", 3)?["how"] as? String == "hands-free")
        #expect(line("fajr", 2)?["status"] as? String == "escape")
        #expect(line("fajr", 1)?["status"] as? String == "missed" && line("isha", 1)?["status"] as? String == "missed")
        let dropped = try #require(line("fajr", 20), "\(chains.map { $0["id"] ?? "" })")
        #expect(dropped["status"] as? String == "missed" && dropped["stops"] as? Int == 1)
        #expect(dropped["date"] as? String == today.adding(days: -20).description)
        // The chains booked for the days to come are not history.
        #expect(!chains.contains { ($0["date"] as? String ?? "") > today.description })
    }

    @Test(
        "reading the history changes nothing, and works on a store on a read-only disk (tmpfs remounted ro)",
        .enabled(if: getuid() == 0, "needs root to mount"))
    func readOnlyDisk() throws {
        let rig = try AlarmRig()
        try FileManager.default.createDirectory(atPath: rig.store, withIntermediateDirectories: true)
        try #require(AudioTestTools.mountTmpfs(at: rig.store, kilobytes: 4096), "cannot mount a tmpfs")
        defer { AudioTestTools.unmount(rig.store) }
        try ScriptedMonth.writeAndClose(rig)
        let database = rig.store + "/alarms.sqlite3"
        let writable = try rig.alarm(["history", "--json"], environment: zoneEnvironment)
        #expect(writable.status == 0, "\(writable.stderr)")
        let remount = try AudioTestTools.run("mount", ["-o", "remount,ro", rig.store])
        try #require(remount.status == 0, "\(remount.stderr)")
        let before = try stamp(database)
        let files = try FileManager.default.contentsOfDirectory(atPath: rig.store).sorted()
        let plot = rig.folder + "/history.svg"
        let result = try rig.alarm(["history", "--json", "--plot", plot], environment: zoneEnvironment)
        #expect(result.status == 0, "\(result.stderr)")
        // The same history as before the disk turned read-only.
        let json = try jsonObject(result.stdout)
        let earlier = try jsonObject(writable.stdout)
        #expect((json["chains"] as? [[String: Any]] ?? []).count == 30)
        for key in ["chains", "streaks", "overall_streak", "proofs_by_kind", "days"] {
            #expect((json[key] as? NSObject) == (earlier[key] as? NSObject), "\(key)")
        }
        #expect(FileManager.default.fileExists(atPath: plot))
        let after = try stamp(database)
        #expect(after.0 == before.0 && after.1 == before.1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: rig.store).sorted() == files)
        // A command that writes is refused on the same store, as before.
        #expect(try rig.alarm(["prove", "a1", "--escape"]).status == 73)
    }

    @Test(
        "history works on a store folder and file without write permission (0555, 0444)",
        .enabled(if: getuid() != 0, "root is not stopped by file modes: see the read-only disk test"))
    func readOnlyModes() throws {
        let rig = try AlarmRig()
        try ScriptedMonth.writeAndClose(rig)
        let database = rig.store + "/alarms.sqlite3"
        chmod(database, 0o444)
        chmod(rig.store, 0o555)
        defer { chmod(rig.store, 0o700) }
        let before = try stamp(database)
        let result = try rig.alarm(["history", "--json"], environment: zoneEnvironment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect((try jsonObject(result.stdout)["chains"] as? [[String: Any]] ?? []).count == 30)
        let after = try stamp(database)
        #expect(after.0 == before.0 && after.1 == before.1)
    }

    @Test("on a writable store, history leaves the database file's bytes and modification time as they were")
    func leavesTheFile() throws {
        let rig = try AlarmRig()
        try ScriptedMonth.writeAndClose(rig)
        let database = rig.store + "/alarms.sqlite3"
        let before = try stamp(database)
        for arguments in [
            ["history"], ["history", "--json", "--days", "400"], ["history", "--plot", rig.folder + "/h.svg"],
        ] {
            let result = try rig.alarm(arguments, environment: zoneEnvironment)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        let after = try stamp(database)
        #expect(after.0 == before.0 && after.1 == before.1)
        // An independent XML parser reads the heat map: a square with a tooltip for each of the
        // 30 days, and 11 legend swatches.
        let check = try AudioTestTools.run(
            "python3",
            [
                "-c",
                """
                import sys, xml.etree.ElementTree as ET
                ns = '{http://www.w3.org/2000/svg}'
                root = ET.parse(sys.argv[1]).getroot()
                assert root.tag == ns + 'svg', root.tag
                groups = root.findall(ns + 'g')
                days = [g for g in groups if g.find(ns + 'title') is not None]
                print(len(days), len(groups) - len(days))
                """, rig.folder + "/h.svg",
            ])
        #expect(check.status == 0 && check.stdout == "30 11\n", "\(check.stdout) \(check.stderr)")
    }

    @Test("no store: one line, exit 66, and no store is created; a corrupt store: exit 76, left as it was")
    func missingAndCorrupt() throws {
        let rig = try AlarmRig()
        let result = try rig.alarm(["history"])
        #expect(result.status == 66, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1 && result.stdout.isEmpty)
        #expect(result.stderr.contains("no alarm store"))
        #expect(!FileManager.default.fileExists(atPath: rig.store))
        try FileManager.default.createDirectory(atPath: rig.store, withIntermediateDirectories: true)
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: rig.store + "/alarms.sqlite3"))
        let corrupt = try rig.alarm(["history", "--json"])
        #expect(corrupt.status == 76, "\(corrupt.stderr)")
        #expect(corrupt.stderr.split(separator: "\n").count == 1 && corrupt.stdout.isEmpty)
        #expect(FileManager.default.contents(atPath: rig.store + "/alarms.sqlite3") == garbage)
    }

    @Test("bad options: --days 0, --days x, an empty --plot: exit 64")
    func badOptions() throws {
        let rig = try AlarmRig()
        for (arguments, message) in [
            (["history", "--days", "0"], "--days must be 1...3660, got 0"), (["history", "--days", "x"], "--days"),
            (["history", "--plot", ""], "--plot needs a file name"),
        ] {
            let result = try rig.alarm(arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            // The message, then the usage lines every usage error prints.
            #expect(result.stderr.split(separator: "\n").first?.contains(message) == true, "\(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        #expect(!FileManager.default.fileExists(atPath: rig.store))
    }

    @Test(
        "the heat map renders in headless Chromium: a screenshot that is not blank, with the scale's, the escape's and the miss's colours",
        .enabled(if: TestEnvironment.hasTool("chromium"), "needs Debian's chromium (bash .ci/setup)"))
    func heatMapInChromium() throws {
        let rig = try AlarmRig()
        try ScriptedMonth.writeAndClose(rig)
        let svg = rig.folder + "/history.svg"
        let result = try rig.alarm(["history", "--plot", svg], environment: zoneEnvironment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("wrote \(svg)"))
        let text = try String(contentsOfFile: svg, encoding: .utf8)
        let size = try #require(
            text.firstMatch(of: /width="(\d+)" height="(\d+)"/).map { (Int($0.1)!, Int($0.2)!) }, "no size in the SVG")
        let png = rig.folder + "/history.png"
        let shot = try AudioTestTools.run(
            "chromium",
            [
                "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", "--screenshot=\(png)",
                "--window-size=\(size.0),\(size.1)", "file://" + svg,
            ])
        #expect(shot.status == 0, "\(shot.stderr)")
        let image = try ImageDecoder().decode(contentsOf: png).image
        #expect(image.width == size.0 && image.height == size.1)
        var counts: [UInt32: Int] = [:]
        for i in stride(from: 0, to: image.pixels.count, by: 3) {
            let rgb = UInt32(image.pixels[i]) << 16 | UInt32(image.pixels[i + 1]) << 8 | UInt32(image.pixels[i + 2])
            counts[rgb, default: 0] += 1
        }
        // Not blank: many colours, and white is not all of it.
        #expect(counts.count > 50, "\(counts.count) colours")
        #expect((counts[0xffffff] ?? 0) < image.width * image.height * 9 / 10)
        // The squares' fills, each over at least a few squares' worth of pixels: the time scale
        // (this month's proofs took 1-5 min: two greens), the escape, the miss, a day without an alarm.
        for color: UInt32 in [0x66bd63, 0xa6d96a, 0x7b3294, 0xd73027, 0xebedf0] {
            #expect((counts[color] ?? 0) > 100, "colour \(String(color, radix: 16)): \(counts[color] ?? 0) pixels")
        }
    }
}
