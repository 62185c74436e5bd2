import Foundation
import ProofkitCLI
import TestSupport
import Testing

/// Runs `proofkit` in process: (status, stdout, stderr).
private func run(_ arguments: [String]) -> (status: Int32, out: String, err: String) {
    let captured = CapturedIO()
    let status = ProofkitCLI.run(arguments: ["proofkit"] + arguments, io: captured.io)
    return (status, captured.stdout, captured.stderr)
}

private func object(_ line: Substring) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
}

/// The first line of `out` as a JSON object.
private func firstObject(_ out: String) throws -> [String: Any] {
    let line = try #require(out.split(separator: "\n").first)
    return try object(line)
}

/// The adhan reference cases of `Fixtures/prayer_times/sample.jsonl` as command lines.
struct TimesCase: Sendable, CustomTestStringConvertible {
    let id: String
    let arguments: [String]
    let expected: [String: String]?  // nil: polar day
    var testDescription: String { id }

    static let all: [TimesCase] = {
        let methods = [
            "MuslimWorldLeague": "mwl", "NorthAmerica": "isna", "Egyptian": "egyptian", "Karachi": "karachi",
            "UmmAlQura": "makkah", "Dubai": "dubai", "Qatar": "qatar", "Kuwait": "kuwait",
            "MoonsightingCommittee": "msc", "Singapore": "singapore", "Turkey": "turkey",
        ]
        let rules = ["MiddleOfTheNight": "middle", "SeventhOfTheNight": "seventh", "TwilightAngle": "twilight"]
        guard
            let text = try? String(
                contentsOfFile: TestEnvironment.fixture("prayer_times/sample.jsonl"), encoding: .utf8)
        else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let r = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                r["library"] as? String == "adhanpy", let method = methods[r["method"] as! String]
            else { return nil }
            let singapore = method == "singapore"
            let times = (r[singapore ? "times_round_up" : "times_half_up"] as? [String: Any])?
                .compactMapValues { $0 as? String }
            return TimesCase(
                id: r["case_id"] as! String,
                arguments: [
                    "times", "--lat", "\(r["latitude"]!)", "--lon", "\(r["longitude"]!)",
                    "--tz", r["timezone"] as! String, "--date", r["date"] as! String, "--method", method,
                    "--madhab", (r["madhab"] as! String).lowercased(),
                    "--high-lat", rules[r["high_latitude_rule"] as! String]!, "--json",
                ],
                expected: (r["error"] is NSNull) ? times : nil)
        }
    }()
}

@Suite("proofkit times and plan", .offThePool)
struct TimesPlanCommandTests {
    @Test("times --json reproduces every adhan reference case to the minute", arguments: TimesCase.all)
    func timesMatchReference(_ reference: TimesCase) throws {
        let result = run(reference.arguments)
        #expect(result.status == 0 && result.err.isEmpty)
        let lines = result.out.split(separator: "\n")
        #expect(lines.count == 1)
        let day = try object(try #require(lines.first))
        let times = try #require(day["times"] as? [String: Any])
        if let expected = reference.expected {
            for prayer in ["fajr", "sunrise", "dhuhr", "asr", "maghrib", "isha"] {
                #expect(times[prayer] as? String == expected[prayer], "\(prayer)")
            }
            #expect(times["midnight"] is String && day["undefined"] is NSNull)
        } else {
            #expect(times.values.allSatisfy { $0 is NSNull } && times.count == 7)
            let undefined = try #require(day["undefined"] as? [String: Any])
            #expect(undefined["reason"] as? String == "polarDay")
            #expect((undefined["message"] as? String)?.contains("polar day") == true)
        }
    }

    @Test("times over several days, and in text with next-day marks")
    func timesDays() throws {
        let json = run([
            "times", "--lat", "48.8566", "--lon", "2.3522", "--tz", "Europe/Paris", "--date", "2026-07-03",
            "--days", "3", "--high-lat", "middle", "--json",
        ])
        let lines = json.out.split(separator: "\n")
        #expect(json.status == 0 && lines.count == 3)
        #expect(try lines.map { try object($0)["date"] as? String } == ["2026-07-03", "2026-07-04", "2026-07-05"])
        let paris = try object(lines[1])
        #expect((paris["times"] as? [String: Any])?["fajr"] as? String == "2026-07-04T02:22:00+02:00")
        #expect((paris["times"] as? [String: Any])?["isha"] as? String == "2026-07-05T00:53:00+02:00")
        let text = run([
            "times", "--lat", "48.8566", "--lon", "2.3522", "--tz", "Europe/Paris", "--date", "2026-07-04",
            "--high-lat", "middle",
        ])
        #expect(text.status == 0)
        #expect(text.out.contains("2026-07-04  02:22") && text.out.contains("00:53(+1)"))
    }

    @Test("times --adjust moves single prayers; --polar resolves a polar day; --rounding none keeps seconds")
    func timesOptions() throws {
        let base = [
            "times", "--lat", "24.8607", "--lon", "67.0011", "--tz", "Asia/Karachi", "--date", "2026-11-30",
            "--method", "karachi", "--json",
        ]
        let plain = try #require(try firstObject(run(base).out)["times"] as? [String: String?])
        let moved = try #require(
            try firstObject(run(base + ["--adjust", "fajr=+2,isha=-3"]).out)["times"] as? [String: String?])
        let offset = { (a: String??, b: String??) -> Double? in
            guard let a = a ?? nil, let b = b ?? nil, let x = parseISO(a), let y = parseISO(b) else { return nil }
            return x.timeIntervalSince(y) / 60
        }
        #expect(offset(moved["fajr"], plain["fajr"]) == 2 && offset(moved["isha"], plain["isha"]) == -3)
        #expect(offset(moved["dhuhr"], plain["dhuhr"]) == 0)
        let unrounded = try #require(
            try firstObject(run(base + ["--rounding", "none"]).out)["times"] as? [String: String?])
        #expect(unrounded.values.contains { ($0 ?? "").dropLast(6).hasSuffix(":00") == false })

        let murmansk = [
            "times", "--lat", "68.9585", "--lon", "33.0827", "--tz", "Europe/Moscow", "--date", "2026-06-25", "--json",
        ]
        let resolved = try firstObject(run(murmansk + ["--polar", "nearest-latitude"]).out)
        let resolution = try #require(resolved["polar_resolution"] as? [String: Any])
        #expect((resolution["nearest_latitude"] as? Double).map { $0 < 66.5 } == true)
        #expect(resolved["undefined"] is NSNull)
        let byDay = try firstObject(run(murmansk + ["--polar", "nearest-day"]).out)
        #expect((byDay["polar_resolution"] as? [String: Any])?["nearest_day"] is String)
    }

    @Test(
        "bad input is a one-line usage error with exit 64",
        arguments: [
            ["times", "--lat", "91", "--lon", "0"],
            ["times", "--lat", "10", "--lon", "-181"],
            ["times", "--lat", "10"],
            ["times", "--lat", "10", "--lon", "10", "--tz", "Mars/Olympus_Mons"],
            ["times", "--lat", "10", "--lon", "10", "--method", "sundial"],
            ["times", "--lat", "10", "--lon", "10", "--date", "2026-02-30"],
            ["times", "--lat", "10", "--lon", "10", "--days", "0"],
            ["times", "--lat", "10", "--lon", "10", "--madhab", "maliki-ish"],
            ["times", "--lat", "10", "--lon", "10", "--method", "custom"],
            ["plan", "--lat", "10", "--lon", "10", "--prayers", "fajr,sunrise"],
            ["plan", "--lat", "10", "--lon", "10", "--days", "0"],
            ["plan", "--lat", "10", "--lon", "10", "--now", "yesterday"],
            ["plan", "--lat", "10", "--lon", "10", "--device-tz", "Nowhere/Else"],
        ])
    func badInput(_ arguments: [String]) {
        let result = run(arguments)
        #expect(result.status == 64)
        #expect(result.out.isEmpty)
        let first = result.err.split(separator: "\n").first ?? ""
        #expect(first.hasPrefix("proofkit \(arguments[0]): "), "\(result.err)")
    }

    @Test("plan --now is reproducible and reports the chains and covered-until")
    func planReproducible() throws {
        let arguments = [
            "plan", "--lat", "24.8607", "--lon", "67.0011", "--tz", "Asia/Karachi",
            "--now", "2026-11-30T04:00:00+05:00", "--json",
        ]
        let a = run(arguments)
        let b = run(arguments)
        #expect(a.status == 0 && a.out == b.out && a.err.isEmpty)
        let plan = try firstObject(a.out)
        #expect(plan["first_day"] as? String == "2026-11-30" && plan["covered_until"] as? String == "2026-12-06")
        let chains = try #require(plan["chains"] as? [[String: Any]])
        #expect(chains.count == 14 && plan["alarm_count"] as? Int == 98)
        let rings = try #require(chains[0]["rings"] as? [[String: Any]])
        #expect((rings[0]["id"] as? String)?.hasPrefix("fajr.2026-11-30.") == true)
        #expect(rings.map { $0["ring"] as? Int } == [0, 1, 2, 3, 4, 5, 6])
    }

    @Test("Karachi following a London mosque: rings at London's printed time on Karachi's clock")
    func planFollowsClock() throws {
        let result = run([
            "plan", "--lat", "51.5074", "--lon", "-0.1278", "--tz", "Europe/London",
            "--device-tz", "Asia/Karachi", "--prayers", "fajr", "--days", "2",
            "--now", "2026-11-30T00:00:00+05:00", "--json",
        ])
        #expect(result.status == 0)
        let plan = try firstObject(result.out)
        for chain in try #require(plan["chains"] as? [[String: Any]]) {
            let printed = try #require(chain["prayer_time"] as? String)  // 2026-11-30T05:41:00+00:00
            let fire = try #require((chain["rings"] as? [[String: Any]])?.first?["fire"] as? String)
            #expect(fire == String(printed.prefix(19)) + "+05:00")
        }
    }

    @Test("plan --state: books, then does nothing, re-syncs on a structure change, keeps ringing alarms")
    func planState() throws {
        try withTemporaryFolder { folder in
            let state = folder + "/alarms.json"
            try "{}".write(toFile: state, atomically: true, encoding: .utf8)
            let base = [
                "plan", "--lat", "24.8607", "--lon", "67.0011", "--tz", "Asia/Karachi", "--days", "2",
                "--now", "2026-11-30T04:00:00+05:00", "--state", state, "--json",
            ]
            let first = run(base)
            #expect(first.status == 0)
            let firstPlan = try firstObject(first.out)
            let operations = try #require(firstPlan["operations"] as? [[String: Any]])
            #expect(operations.count == 28 && operations.allSatisfy { $0["op"] as? String == "schedule" })
            let saved = try object(Substring(try String(contentsOfFile: state, encoding: .utf8)))
            #expect(
                (saved["alarms"] as? [Any])?.count == 28
                    && saved["fingerprint"] as? String == firstPlan["fingerprint"] as? String)

            // Idempotent.
            let second = run(base)
            #expect((try firstObject(second.out)["operations"] as? [Any])?.isEmpty == true)

            // A ringing alarm and an unknown id appear in the file.
            var edited = saved
            var alarms = try #require(saved["alarms"] as? [[String: Any]])
            alarms.append(["id": "isha.2026-11-29.1900.r2", "state": "ringing"])
            alarms.append(["id": "OLD_BUILD_7"])
            edited["alarms"] = alarms
            try JSONSerialization.data(withJSONObject: edited).write(to: URL(fileURLWithPath: state))
            let third = run(base)
            let thirdOps = try #require(try firstObject(third.out)["operations"] as? [[String: Any]])
            #expect(
                thirdOps.count == 1 && thirdOps[0]["id"] as? String == "OLD_BUILD_7"
                    && thirdOps[0]["reason"] as? String == "unknownID")
            let afterThird = try String(contentsOfFile: state, encoding: .utf8)
            #expect(afterThird.contains("isha.2026-11-29.1900.r2") && !afterThird.contains("OLD_BUILD_7"))

            // A longer proof window changes the structure: a full re-sync, ringing still untouched.
            let fourth = run(base + ["--proof-window", "45m"])
            let fourthPlan = try firstObject(fourth.out)
            #expect(fourthPlan["full_resync"] as? Bool == true)
            let fourthOps = try #require(fourthPlan["operations"] as? [[String: Any]])
            #expect(!fourthOps.contains { ($0["id"] as? String)?.hasPrefix("isha") == true })
            #expect(try String(contentsOfFile: state, encoding: .utf8).contains("isha.2026-11-29.1900.r2"))
            // The text output lists the operations too.
            let text = run(Array(base.dropLast()) + ["--proof-window", "45m"])
            #expect(
                text.status == 0 && text.out.contains("0 operations") && text.out.contains("covered until 2026-12-01"))
        }
    }

    @Test(
        "plan --state: a missing file is a first run (created, the chains booked; issue 34), a dangling symlink is 66, a broken file 65, and neither is written"
    )
    func planStateErrors() throws {
        try withTemporaryFolder { folder in
            let base = ["plan", "--lat", "24.8607", "--lon", "67.0011", "--tz", "Asia/Karachi"]
            let first = run(
                base + ["--state", folder + "/alarms.json", "--now", "2026-11-29T12:00:00+05:00", "--json"])
            #expect(first.status == 0, "\(first.err)")
            let created = try String(contentsOfFile: folder + "/alarms.json", encoding: .utf8)
            #expect(created.contains("\"proofkit-alarm-state\"") && created.contains("fajr.2026-11-30"))
            #expect(
                first.out.contains("\"op\":\"schedule\"") || first.out.contains("\"op\": \"schedule\""), "\(first.out)")
            let again = run(base + ["--state", folder + "/alarms.json", "--now", "2026-11-29T12:00:00+05:00"])
            #expect(again.status == 0 && again.out.contains("0 operations"), "\(again.out)")
            try FileManager.default.removeItem(atPath: folder + "/alarms.json")
            try FileManager.default.createSymbolicLink(
                atPath: folder + "/planted.json", withDestinationPath: folder + "/gone")
            let dangling = run(base + ["--state", folder + "/planted.json"])
            #expect(dangling.status == 66 && dangling.out.isEmpty, "\(dangling.err)")
            #expect(dangling.err.split(separator: "\n").count == 1 && dangling.err.contains("symbolic link to nothing"))
            #expect(!FileManager.default.fileExists(atPath: folder + "/gone"))
            try FileManager.default.removeItem(atPath: folder + "/planted.json")
            for broken in [
                "not json", "[1, 2]", "{\"alarms\": [{\"state\": \"scheduled\"}]}", "{\"version\": 9}",
                "{\"alarms\": [{\"id\": \"x\", \"fire\": \"soon\"}]}",
            ] {
                let path = folder + "/broken.json"
                try broken.write(toFile: path, atomically: true, encoding: .utf8)
                let result = run(base + ["--state", path])
                #expect(result.status == 65, "\(broken)")
                #expect(result.err.split(separator: "\n").count == 1 && result.err.contains("broken.json"))
                #expect(try String(contentsOfFile: path, encoding: .utf8) == broken, "input changed")
            }
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["broken.json"],
                "no temp files left")
            let directory = run(base + ["--state", folder])
            #expect(directory.status == 66)
        }
    }

    @Test(
        "the built binary answers times and plan end to end",
        .enabled(if: TestEnvironment.hasProofkitBinary, "run swift build first"))
    func binary() throws {
        let times = try TestEnvironment.runProofkit([
            "times", "--lat", "21.4225", "--lon", "39.8262", "--tz", "Asia/Riyadh",
            "--date", "2026-03-01", "--method", "makkah", "--json",
        ])
        #expect(times.status == 0 && times.stderr.isEmpty)
        let day = try object(Substring(times.stdout.trimmingCharacters(in: .newlines)))
        let values = try #require(day["times"] as? [String: Any])
        let maghrib = try #require(parseISO(values["maghrib"] as? String))
        let isha = try #require(parseISO(values["isha"] as? String))
        #expect(isha.timeIntervalSince(maghrib) == 120 * 60, "Ramadan Isha")
        let bad = try TestEnvironment.runProofkit(["plan", "--lat", "200", "--lon", "0"])
        #expect(bad.status == 64 && bad.stdout.isEmpty)
    }
}

private func parseISO(_ text: String?) -> Date? {
    guard let text else { return nil }
    let formatter = ISO8601DateFormatter()
    return formatter.date(from: text)
}
