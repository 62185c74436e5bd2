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

private func json(_ out: String) throws -> [String: Any] {
    let line = try #require(out.split(separator: "\n").first)
    return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
}

private let karachi = [
    "plan", "--lat", "24.8607", "--lon", "67.0011", "--tz", "Asia/Karachi", "--days", "2",
    "--now", "2026-11-30T04:00:00+05:00",
]

/// The operations of a `plan --state --json` run as (op, id, reason) rows.
private func operations(_ result: (status: Int32, out: String, err: String)) throws -> [[String: Any]] {
    #expect(result.status == 0, "\(result.err)")
    return try #require(try json(result.out)["operations"] as? [[String: Any]])
}

private func prayer(_ row: [String: Any]) -> String { String((row["id"] as? String ?? "").prefix { $0 != "." }) }

@Suite("proofkit plan: chains left alone, --backups, --sound")
struct PlanChainsCommandTests {
    /// A state file holding two days of Fajr and Maghrib, booked by `plan --state`.
    private func bookedState() throws -> (folder: String, state: String) {
        let folder = try TestFolder.make()
        let state = folder + "/alarms.json"
        try "{}".write(toFile: state, atomically: true, encoding: .utf8)
        let rows = try operations(run(karachi + ["--state", state, "--json"]))
        #expect(rows.count == 28 && rows.allSatisfy { $0["op"] as? String == "schedule" })
        return (folder, state)
    }

    @Test("--prayers fajr on a state with Fajr and Maghrib: 14 Maghrib cancels, zero operations on Fajr")
    func maghribOff() throws {
        let (folder, state) = try bookedState()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = run(karachi + ["--prayers", "fajr", "--state", state, "--json"])
        let rows = try operations(result)
        #expect(!rows.contains { prayer($0) == "fajr" }, "\(rows)")
        #expect(
            rows.count == 14
                && rows.allSatisfy { $0["op"] as? String == "cancel" && $0["reason"] as? String == "notInPlan" })
        let plan = try json(result.out)
        #expect(plan["full_resync"] as? Bool == false && (plan["resynced_chains"] as? [Any])?.isEmpty == true)
        let saved = try String(contentsOfFile: state, encoding: .utf8)
        #expect(!saved.contains("maghrib.") && saved.contains("fajr.2026-12-01"))
        // Maghrib back on: 14 bookings, still nothing on Fajr.
        let back = try operations(run(karachi + ["--state", state, "--json"]))
        #expect(back.count == 14 && back.allSatisfy { prayer($0) == "maghrib" && $0["op"] as? String == "schedule" })
    }

    @Test("--adjust fajr=+3: Fajr replaced, zero operations on Maghrib; the text output says so")
    func adjustFajr() throws {
        let (folder, state) = try bookedState()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let rows = try operations(run(karachi + ["--adjust", "fajr=+3", "--state", state, "--json"]))
        #expect(!rows.contains { prayer($0) == "maghrib" }, "\(rows)")
        #expect(rows.filter { $0["op"] as? String == "schedule" }.count == 14)
        #expect(rows.filter { $0["reason"] as? String == "superseded" }.count == 14)
        // Idempotent, and in text.
        let text = run(karachi + ["--adjust", "fajr=+3", "--state", state])
        #expect(text.status == 0 && text.out.contains("\n0 operations:"))
        // Back to no adjustment: again only Fajr.
        let undo = try operations(run(karachi + ["--state", state, "--json"]))
        #expect(undo.count == 28 && !undo.contains { prayer($0) == "maghrib" })
    }

    @Test("--backups N spreads N backups evenly over the proof window; the window alone keeps the growing gaps")
    func backups() throws {
        func rings(_ extra: [String]) throws -> [[String: Any]] {
            let result = run(karachi + ["--prayers", "fajr", "--json"] + extra)
            #expect(result.status == 0, "\(result.err)")
            let chains = try #require(try json(result.out)["chains"] as? [[String: Any]])
            return try #require(chains.first?["rings"] as? [[String: Any]])
        }
        func minutes(_ rings: [[String: Any]]) throws -> [Double] {
            let formatter = ISO8601DateFormatter()
            let fires = rings.compactMap { ($0["fire"] as? String).flatMap(formatter.date(from:)) }
            #expect(fires.count == rings.count)
            return fires.map { $0.timeIntervalSince(fires[0]) / 60 }
        }
        // The seed's Fajr: 30 backups over 30 minutes, 31 alarms, one a minute.
        let seed = try rings(["--backups", "30"])
        let seedMinutes = try minutes(seed)
        #expect(seed.count == 31 && seedMinutes == (0...30).map(Double.init))
        #expect(try minutes(rings(["--backups", "4", "--proof-window", "20m"])) == [0, 5, 10, 15, 20])
        #expect(try minutes(rings(["--proof-window", "45m"])) == [0, 2, 5, 9, 14, 20, 27, 35, 44])
        #expect(try minutes(rings([])) == [0, 2, 5, 9, 14, 20, 27])
        #expect(try rings(["--backups", "0"]).count == 1)
        let total = try json(run(karachi + ["--json", "--backups", "30"]).out)
        #expect(total["alarm_count"] as? Int == 4 * 31)
        let help = run(["plan", "--help"])
        #expect(help.out.contains("--backups N") && help.out.contains("--backups 30 over the default 30 min"))
    }

    @Test(
        "bad --backups is a one-line usage error (64)",
        arguments: [
            ["--backups", "61"], ["--backups", "-1"], ["--backups", "many"],
            ["--backups", "60", "--proof-window", "10m"], ["--backups", "1", "--proof-window", "0s"],
        ])
    func badBackups(_ extra: [String]) {
        let result = run(karachi + extra)
        #expect(result.status == 64 && result.out.isEmpty)
        let first = result.err.split(separator: "\n").first ?? ""
        #expect(first.hasPrefix("proofkit plan: ") && first.contains("backups"), "\(result.err)")
    }

    @Test(
        "--sound: a sound that passes check is booked for every prayer; one that fails is refused and nothing changes")
    func sound() throws {
        let (folder, state) = try bookedState()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let before = try Data(contentsOf: URL(fileURLWithPath: state))
        let broken: [(String, Int32, String)] = [
            ("odd_silence_001.wav", 65, "digital silence"),  // decodes, but silent
            ("rec_001.mp3", 65, "16-bit linear PCM"),  // MP3: not an alarm format
            ("odd_truncated_001.ogg", 65, "not a readable audio file"),  // no audio at all
            ("no_such_sound.wav", 66, "no such file"),
        ]
        for (name, status, reason) in broken {
            let path = TestEnvironment.fixture(name)
            let result = run(karachi + ["--sound", path, "--state", state, "--json"])
            #expect(result.status == status, "\(name): \(result.err)")
            #expect(result.out.isEmpty, "nothing planned for \(name)")
            #expect(
                result.err.split(separator: "\n").count == 1 && result.err.contains(reason)
                    && result.err.contains(name),
                "\(result.err)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: state)) == before, "state untouched by \(name)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["alarms.json"])

        let good = TestEnvironment.fixture("rec_007_excerpt3s.wav")
        let check = run(["check", "--strict", good])
        #expect(check.status == 0, "the fixture passes check")
        let result = run(karachi + ["--sound", good, "--state", state, "--json"])
        let plan = try json(result.out)
        let chains = try #require(plan["chains"] as? [[String: Any]])
        let sounds = Set(
            chains.flatMap { ($0["rings"] as? [[String: Any]] ?? []).compactMap { $0["sound"] as? String } })
        #expect(sounds == [good])
        // Every ring's sound changed: each is cancelled and booked again with the new sound.
        let rows = try operations(result)
        #expect(rows.count == 56)
        let saved = try String(contentsOfFile: state, encoding: .utf8)
        #expect(!saved.contains("adhan-fajr") && !saved.contains("adhan-maghrib"))
    }
}
