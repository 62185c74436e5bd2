import AlarmScheduling
import Foundation
import PrayerPlanning
import Proofkit
import ProofkitCore
import TestSupport
import Testing

private let oslo = TimeZone(identifier: "Europe/Oslo")!

private func statusJSON(_ text: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not JSON: \(text)")
}

/// Prayer alarms where a time does not exist: Tromsø (69.65 N) has polar night from late November
/// to mid-January and the midnight sun from late May to late July. With the default `--polar
/// undefined`, those days have no Fajr or Isha, so no alarm can be booked for them; `alarm
/// prayers` and `status` must say so, never leave a user thinking the alarm is set.
@Suite("Prayer alarms where the time does not exist (polar night, midnight sun) are named, not silently missing")
struct AlarmPolarTests {
    /// A store with Tromsø's prayer settings (`options` added), planned as the service would at
    /// 00:30 on `day` in Oslo's zone.
    func plannedStore(_ rig: AlarmRig, day: String, options: [String: String?] = [:]) throws -> AlarmStore {
        let store = try AlarmStore(folder: rig.store)
        try store.write { () throws(ProofkitError) in
            try store.put(
                [
                    "prayers.lat": "69.6492", "prayers.lon": "18.9553", "prayers.tz": "Europe/Oslo",
                    "prayers.method": "mwl", "prayers.list": "fajr,isha", "prayers.window": "1800",
                    "prayers.proof": "any", "prayers.sound": rig.sound,
                ].merging(options) { _, new in new })
        }
        let date = try #require(LocalDate(iso: day))
        let now = WallClockTime(date: date, hour: 0, minute: 30).instant(in: oslo)
        try #require(try store.replanPrayers(now: now, deviceZone: oslo) != nil)
        return store
    }

    @Test("polar night in December: no Fajr or Isha on any of the 7 days; status names them and the option that helps")
    func polarNight() throws {
        let rig = try AlarmRig()
        let store = try plannedStore(rig, day: "2026-12-06")
        let missing = try store.unavailablePrayerTimes()
        let days = (6...12).map { "2026-12-\($0 < 10 ? "0" : "")\($0)" }
        #expect(Set(missing.map(\.occurrence.description)) == Set(days.flatMap { ["fajr.\($0)", "isha.\($0)"] }))
        #expect(missing.allSatisfy { $0.reason == .polarNight })
        #expect(try store.allRings().isEmpty)

        let text = try rig.alarm(["status"])
        #expect(text.status == 0, "\(text.stderr)")
        for prayer in ["fajr", "isha"] {
            #expect(
                text.stdout.contains(
                    "no \(prayer) alarm on 2026-12-06 ... 2026-12-12 (7 days): polar night (the Sun does not rise), so the time is not defined there\n"
                ), "\(text.stdout)")
        }
        #expect(text.stdout.contains("--polar nearest-latitude or --polar nearest-day gives those days a time"))
        let json = try rig.alarm(["status", "--json"])
        let entries = try statusJSON(json.stdout)["unavailable"] as? [[String: String]] ?? []
        #expect(entries.count == 14 && entries.allSatisfy { $0["reason"] == "polarNight" }, "\(json.stdout)")
    }

    @Test(
        "midnight sun in June: the same, with its own reason; --polar nearest-latitude books every day and names none")
    func midnightSunAndNearestLatitude() throws {
        let rig = try AlarmRig()
        let store = try plannedStore(rig, day: "2027-06-21")
        let missing = try store.unavailablePrayerTimes()
        #expect(missing.count == 14 && missing.allSatisfy { $0.reason == .polarDay })
        let text = try rig.alarm(["status"])
        #expect(
            text.stdout.contains(
                "no fajr alarm on 2027-06-21 ... 2027-06-27 (7 days): midnight sun (the Sun does not set), so the time is not defined there\n"
            ), "\(text.stdout)")

        let resolved = try plannedStore(rig, day: "2027-06-21", options: ["prayers.option.polar": "nearest-latitude"])
        #expect(try resolved.unavailablePrayerTimes().isEmpty)
        let chains = Set(try resolved.allRings().map(\.ring.chain))
        #expect(chains.count == 14, "\(chains.sorted())")
        let after = try rig.alarm(["status"])
        #expect(!after.stdout.contains("alarm on 2027-06-2"), "\(after.stdout)")
        let json = try rig.alarm(["status", "--json"])
        #expect((try statusJSON(json.stdout)["unavailable"] as? [Any])?.isEmpty == true, "\(json.stdout)")
    }
}
