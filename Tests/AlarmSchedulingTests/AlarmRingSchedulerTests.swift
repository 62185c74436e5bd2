import AlarmScheduling
import Foundation
import PrayerPlanning
import ProofkitCore
import Testing

private func at(_ text: String) throws -> Date { try #require(parseISO8601(text)) }
private func zone(_ name: String) throws -> TimeZone { try #require(TimeZone(identifier: name)) }

@Suite("AlarmRingScheduler: the alarm service's timing rules, with an injected clock")
struct AlarmRingSchedulerTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func chain(_ id: String, first: Date, offsets: [Double]) -> [BookedRing] {
        offsets.enumerated().map {
            BookedRing(id: "\(id).r\($0)", chain: id, ringIndex: $0, fireDate: first.addingTimeInterval($1))
        }
    }

    @Test("a ring is due at its fire time, not a moment before; the next wake is the next ring")
    func dueAtFireTime() {
        let rings = chain("a1", first: t0, offsets: [0, 120, 300])
        let before = AlarmRingScheduler.decide(
            now: t0.addingTimeInterval(-0.001), rings: rings, windowEnds: ["a1": t0.addingTimeInterval(1800)])
        #expect(before.ring.isEmpty && before.nextWake == t0)
        let onTime = AlarmRingScheduler.decide(now: t0, rings: rings, windowEnds: ["a1": t0.addingTimeInterval(1800)])
        #expect(onTime.ring.map(\.id) == ["a1.r0"])
        #expect(onTime.nextWake == t0.addingTimeInterval(120))
    }

    @Test("rings missed while the machine was down: inside the window the latest rings once, the others merge")
    func downInsideWindow() {
        let rings = chain("fajr.2026-11-30", first: t0, offsets: [0, 120, 300, 540])
        let decision = AlarmRingScheduler.decide(
            now: t0.addingTimeInterval(400), rings: rings,
            windowEnds: ["fajr.2026-11-30": t0.addingTimeInterval(1800)])
        #expect(decision.ring.map(\.ringIndex) == [2])
        #expect(decision.merged.map(\.ringIndex) == [0, 1])
        #expect(decision.missed.isEmpty)
        #expect(decision.nextWake == t0.addingTimeInterval(540))
    }

    @Test("rings whose chain's proof window has passed are logged as missed, not rung")
    func downPastWindow() {
        let rings = chain("a2", first: t0, offsets: [0, 120])
        let end = t0.addingTimeInterval(600)
        let decision = AlarmRingScheduler.decide(
            now: end.addingTimeInterval(AlarmRingScheduler.lateGrace + 1), rings: rings, windowEnds: ["a2": end])
        #expect(decision.ring.isEmpty && decision.missed.map(\.id) == ["a2.r0", "a2.r1"] && decision.nextWake == nil)
        // Just at the window's end a late service still rings the last backup.
        let late = AlarmRingScheduler.decide(now: end.addingTimeInterval(1), rings: rings, windowEnds: ["a2": end])
        #expect(late.ring.map(\.id) == ["a2.r1"])
    }

    @Test("a hold-off (a live proof) keeps the chain quiet until it ends; other chains still ring")
    func holdOff() {
        let rings = chain("a1", first: t0, offsets: [0, 60]) + chain("a2", first: t0, offsets: [0])
        let hold = t0.addingTimeInterval(90)
        let held = AlarmRingScheduler.decide(
            now: t0.addingTimeInterval(70), rings: rings,
            windowEnds: ["a1": t0.addingTimeInterval(1800), "a2": t0.addingTimeInterval(1800)],
            heldUntil: ["a1": hold])
        #expect(held.ring.map(\.id) == ["a2.r0"])
        #expect(held.nextWake == hold)
        let after = AlarmRingScheduler.decide(
            now: hold, rings: Array(rings.prefix(2)), windowEnds: ["a1": t0.addingTimeInterval(1800)],
            heldUntil: ["a1": hold])
        #expect(after.ring.map(\.id) == ["a1.r1"] && after.merged.map(\.id) == ["a1.r0"])
    }

    @Test("one-off chains follow the chain pattern: 30 min gives +0, 2, 5, 9, 14, 20, 27 min")
    func oneOffPattern() {
        let rings = AlarmRingScheduler.oneOffRings(chain: "a3", first: t0, window: .seconds(1800))
        #expect(rings.map { Int($0.fireDate.timeIntervalSince(t0)) / 60 } == [0, 2, 5, 9, 14, 20, 27])
        #expect(rings.map(\.id) == (0..<7).map { "a3.r\($0)" })
        let test = AlarmRingScheduler.oneOffRings(
            chain: "a4", first: t0, window: .seconds(8), firstGap: .seconds(4), gapGrowth: .zero)
        #expect(test.map { $0.fireDate.timeIntervalSince(t0) } == [0, 4, 8])
    }

    @Test("next midnight: a normal night, a 23-hour DST day (London), and a midnight DST skips (Santiago)")
    func midnights() throws {
        let london = try zone("Europe/London")
        let midnight = AlarmRingScheduler.nextMidnight(after: try at("2026-03-28T12:00:00Z"), in: london)
        #expect(midnight == (try at("2026-03-29T00:00:00Z")))
        let following = AlarmRingScheduler.nextMidnight(after: midnight.addingTimeInterval(3600), in: london)
        #expect(following.timeIntervalSince(midnight) == 23 * 3600)  // clocks went forward at 01:00
        #expect(
            WallClockTime(following, in: london)
                == WallClockTime(date: LocalDate(year: 2026, month: 3, day: 30), hour: 0, minute: 0))
        // Chile starts DST at 24:00 on the first Saturday of September: 00:00 never shows.
        let santiago = try zone("America/Santiago")
        let skipped = AlarmRingScheduler.nextMidnight(after: try at("2026-09-05T12:00:00-04:00"), in: santiago)
        #expect(WallClockTime(skipped, in: santiago).date == LocalDate(year: 2026, month: 9, day: 6))
        #expect(
            WallClockTime(skipped.addingTimeInterval(-1), in: santiago).date == LocalDate(year: 2026, month: 9, day: 5))
        #expect(santiago.secondsFromGMT(for: skipped) != santiago.secondsFromGMT(for: skipped.addingTimeInterval(-1)))
    }

    @Test("re-plan reasons: first run, settings, zone, clock set, new day; a DST change alone is none")
    func replanReasons() throws {
        let london = try zone("Europe/London")
        let before = try at("2026-03-29T00:30:00Z")  // 00:30 GMT, half an hour before the change
        let stamp = PlanStamp(now: before, zone: london, fingerprint: "f1")
        #expect(AlarmRingScheduler.replanReason(last: nil, now: before, zone: london, fingerprint: "f1") == .firstRun)
        #expect(
            AlarmRingScheduler.replanReason(last: stamp, now: before, zone: london, fingerprint: "f2")
                == .settingsChanged)
        #expect(
            AlarmRingScheduler.replanReason(last: stamp, now: before, zone: try zone("Asia/Karachi"), fingerprint: "f1")
                == .zoneChanged)
        #expect(
            AlarmRingScheduler.replanReason(
                last: stamp, now: before, zone: london, fingerprint: "f1", clockWasSet: true) == .clockChanged)
        // 02:30 BST, after the change, same date: nothing to do.
        #expect(
            AlarmRingScheduler.replanReason(
                last: stamp, now: try at("2026-03-29T01:30:00Z"), zone: london, fingerprint: "f1") == nil)
        #expect(
            AlarmRingScheduler.replanReason(
                last: stamp, now: try at("2026-03-29T23:00:00Z"), zone: london, fingerprint: "f1") == .newDay)
    }

    @Test("the midnight re-plan rolls the 7-day window by one day and keeps the booked chains' ids")
    func midnightReplan() throws {
        let planner = try makePlanner(latitude: 51.5074, longitude: -0.1278, zone: "Europe/London") {
            $0.prayers = [.fajr]
        }
        let london = try zone("Europe/London")
        let lateEvening = try at("2026-03-28T23:59:00Z")
        let first = planner.plan(now: lateEvening)
        let stamp = PlanStamp(now: lateEvening, zone: london, fingerprint: planner.fingerprint)
        let wake = AlarmRingScheduler.nextMidnight(after: lateEvening, in: london).addingTimeInterval(1)
        #expect(
            AlarmRingScheduler.replanReason(last: stamp, now: wake, zone: london, fingerprint: planner.fingerprint)
                == .newDay)
        let second = planner.plan(now: wake)
        #expect(second.firstDay == first.firstDay.adding(days: 1) && second.lastDay == first.lastDay.adding(days: 1))
        // Across the DST change (29 March) the kept chains have the same ids and instants; one new day is added.
        let system = first.alarms.map { SystemAlarm(id: $0.id, content: $0.content) }
        let steps = AlarmReconciler.reconcile(plan: second, system: system, syncedFingerprint: first.fingerprint)
        let scheduled = steps.operations.compactMap { if case .schedule(let a) = $0 { a } else { nil } }
        #expect(Set(scheduled.map(\.occurrence.date)) == [second.lastDay])
        #expect(steps.operations.allSatisfy { if case .cancel(_, .contentChanged) = $0 { false } else { true } })
    }

    @Test("a zone change (the laptop flies London to Karachi) moves every ring to Karachi's clock")
    func zoneChangeReplan() throws {
        let now = try at("2026-11-30T12:00:00Z")
        let inLondon = try makePlanner(latitude: 51.5074, longitude: -0.1278, zone: "Europe/London") {
            $0.prayers = [.fajr]
        }
        let inKarachi = try makePlanner(
            latitude: 51.5074, longitude: -0.1278, zone: "Europe/London", device: "Asia/Karachi"
        ) { $0.prayers = [.fajr] }
        let stamp = PlanStamp(now: now, zone: try zone("Europe/London"), fingerprint: inLondon.fingerprint)
        #expect(
            AlarmRingScheduler.replanReason(
                last: stamp, now: now, zone: try zone("Asia/Karachi"), fingerprint: inKarachi.fingerprint) != nil)
        let old = inLondon.plan(now: now)
        let new = inKarachi.plan(now: now)
        let steps = AlarmReconciler.reconcile(
            plan: new, system: old.alarms.map { SystemAlarm(id: $0.id, content: $0.content) },
            syncedFingerprint: old.fingerprint)
        #expect(steps.isFullResync)
        // Timetable clock: the first ring shows the same reading on Karachi's clock as London's did.
        let karachi = try zone("Asia/Karachi")
        let london = try zone("Europe/London")
        let pairs = Array(zip(old.alarms.filter { $0.ringIndex == 0 }, new.alarms.filter { $0.ringIndex == 0 }))
        #expect(pairs.count >= 6 && pairs.filter { $0.0.id == $0.1.id }.count >= 6)
        for (before, after) in pairs where before.id == after.id {
            #expect(
                WallClockTime(before.fireDate, in: london).compactMinute
                    == WallClockTime(after.fireDate, in: karachi).compactMinute)
            #expect(before.fireDate.timeIntervalSince(after.fireDate) == 5 * 3600)
        }
    }

    @Test("a hold that ended without a proof: the backup that fell inside it rings at once, even past the window")
    func releasedHoldRingsAtOnce() throws {
        let first = try at("2026-11-30T05:00:00Z")
        let rings = (0..<3).map {
            BookedRing(id: "a1.r\($0)", chain: "a1", ringIndex: $0, fireDate: first.addingTimeInterval(Double($0) * 60))
        }
        let windowEnd = first.addingTimeInterval(150)
        let now = first.addingTimeInterval(200)  // past the window and its grace
        // Without a hold, the due rings of a chain past its window are missed.
        let plain = AlarmRingScheduler.decide(now: now, rings: rings, windowEnds: ["a1": windowEnd])
        #expect(plain.missed.count == 3 && plain.ring.isEmpty)
        // A hold that ended at `now`: the latest held ring rings, the others merge, none is missed.
        let released = AlarmRingScheduler.decide(
            now: now, rings: rings, windowEnds: ["a1": windowEnd], releasedHolds: ["a1": now])
        #expect(released.ring.map(\.id) == ["a1.r2"] && released.merged.count == 2 && released.missed.isEmpty)
        // A ring that came due after the hold ended is judged by the window as usual.
        let late = AlarmRingScheduler.decide(
            now: now, rings: rings, windowEnds: ["a1": windowEnd], releasedHolds: ["a1": first.addingTimeInterval(30)])
        #expect(late.missed.count == 3)
    }

    @Test("ring volume: the chain's volume, or with escalate equal steps from it to 100 % at the last ring")
    func ringVolumeSteps() {
        let steps = (0..<7).map {
            AlarmRingScheduler.ringVolume(volume: 40, ringIndex: $0, ringCount: 7, escalate: true)
        }
        #expect(steps == [40, 50, 60, 70, 80, 90, 100])
        #expect(AlarmRingScheduler.ringVolume(volume: 40, ringIndex: 3, ringCount: 7, escalate: false) == 40)
        #expect(AlarmRingScheduler.ringVolume(volume: 55, ringIndex: 0, ringCount: 1, escalate: true) == 55)
        #expect(AlarmRingScheduler.ringVolume(volume: 100, ringIndex: 2, ringCount: 3, escalate: true) == 100)
    }

    @Test("the listening slot runs from a ring's end to the next ring or the window's end, never while a ring is due")
    func listeningSlot() {
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        let rings = AlarmRingScheduler.oneOffRings(
            chain: "a1", first: t0, window: .seconds(600), firstGap: .seconds(120), gapGrowth: .seconds(60))
        let later = Array(rings.dropFirst())  // the first has rung
        // 10 s after the first ring: until the first backup at +120 s.
        #expect(
            AlarmRingScheduler.listeningEnd(
                now: t0.addingTimeInterval(10), scheduledRings: later, windowEnd: t0.addingTimeInterval(600))
                == t0.addingTimeInterval(120))
        // A backup is due (its time has come): no slot, it rings first.
        #expect(
            AlarmRingScheduler.listeningEnd(
                now: t0.addingTimeInterval(121), scheduledRings: later, windowEnd: t0.addingTimeInterval(600)) == nil)
        // No ring left: until the window's end; a window that ends first cuts the slot.
        #expect(
            AlarmRingScheduler.listeningEnd(
                now: t0.addingTimeInterval(10), scheduledRings: [], windowEnd: t0.addingTimeInterval(600))
                == t0.addingTimeInterval(600))
        #expect(
            AlarmRingScheduler.listeningEnd(
                now: t0.addingTimeInterval(10), scheduledRings: later, windowEnd: t0.addingTimeInterval(60))
                == t0.addingTimeInterval(60))
        // Less than the minimum left: not worth opening the microphone.
        #expect(
            AlarmRingScheduler.listeningEnd(
                now: t0.addingTimeInterval(119), scheduledRings: later, windowEnd: t0.addingTimeInterval(600)) == nil)
        #expect(
            AlarmRingScheduler.listeningEnd(
                now: t0.addingTimeInterval(119), scheduledRings: later, windowEnd: t0.addingTimeInterval(600),
                minimumSeconds: 0.5) == t0.addingTimeInterval(120))
    }
}
