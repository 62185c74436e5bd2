import Foundation
import PrayerPlanning
import Testing

@testable import AlarmScheduling

/// Hand-made histories: a chain at `hour:minute` local on `day`, ended as `result` after
/// `seconds` from its first ring.
private struct Morning {
    var zone: TimeZone
    var chains: [AlarmHistoryChain] = []

    init(_ zone: String) { self.zone = TimeZone(identifier: zone)! }

    func at(_ day: String, _ hour: Int, _ minute: Int) -> Date {
        WallClockTime(date: LocalDate(iso: day)!, hour: hour, minute: minute).instant(in: zone)
    }

    /// `result`: `mat`, `voice`, ... (a proof of that kind), `escape`, or `nil` (nothing ended it).
    mutating func add(
        _ series: String, _ day: String, _ hour: Int = 5, _ minute: Int = 10, result: String?,
        after seconds: Double = 90,
        window: Double = 1800, stops: Int = 0
    ) {
        let first = at(day, hour, minute)
        var events = (0..<stops).map {
            AlarmHistoryEvent(kind: .stopped, at: first.addingTimeInterval(Double($0) + 5))
        }
        if let result {
            events.append(
                AlarmHistoryEvent(
                    kind: result == "escape" ? .escape : .proof, at: first.addingTimeInterval(seconds),
                    detail: result == "escape" ? nil : result))
        }
        chains.append(
            AlarmHistoryChain(
                id: "\(series).\(day).\(chains.count)", series: series, firstFire: first,
                windowEnd: first.addingTimeInterval(window), rang: [first], events: events))
    }

    func entries(now: Date) -> [AlarmHistoryEntry] { AlarmHistory.entries(chains, now: now, zone: zone) }
}

private func day(_ text: String) -> LocalDate { LocalDate(iso: text)! }

@Suite("AlarmHistory: honest streaks over hand-made histories")
struct AlarmHistoryTests {
    @Test("London, spring forward (2026-03-29 has 23 hours): five mornings in a row are five days")
    func londonSpringForward() {
        var m = Morning("Europe/London")
        for d in ["2026-03-27", "2026-03-28", "2026-03-29", "2026-03-30", "2026-03-31"] {
            m.add("fajr", d, 4, 50, result: "mat")
        }
        let entries = m.entries(now: m.at("2026-03-31", 12, 0))
        #expect(
            entries.map(\.day.description) == ["2026-03-27", "2026-03-28", "2026-03-29", "2026-03-30", "2026-03-31"])
        let streak = AlarmHistory.streak(entries, series: "fajr")
        #expect(streak.current == 5 && streak.longest == 5)
        #expect(streak.currentSince == day("2026-03-27") && streak.longestTo == day("2026-03-31"))
        // 04:50 BST on the 29th is 03:50 UTC, 23 hours after 04:50 GMT on the 28th: still the next day.
        #expect(entries[2].firstRing.timeIntervalSince(entries[1].firstRing) == 23 * 3600)
        #expect(entries[3].firstRing.timeIntervalSince(entries[2].firstRing) == 24 * 3600)
    }

    @Test("London, fall back (2026-10-25 has 25 hours): an alarm at 00:30 and one at 23:30 are on the same day")
    func londonFallBack() {
        var m = Morning("Europe/London")
        m.add("fajr", "2026-10-24", 5, 40, result: "voice")
        m.add("late", "2026-10-25", 0, 30, result: "voice")
        m.add("late", "2026-10-25", 23, 30, result: "escape")
        m.add("fajr", "2026-10-26", 5, 40, result: "voice")
        let entries = m.entries(now: m.at("2026-10-27", 12, 0))
        #expect(entries.filter { $0.series == "late" }.map(\.day) == [day("2026-10-25"), day("2026-10-25")])
        // 24 hours apart (23 on the wall clock), one local day.
        let late = entries.filter { $0.series == "late" }
        #expect(late[1].firstRing.timeIntervalSince(late[0].firstRing) == 24 * 3600)
        let lateStreak = AlarmHistory.streak(late, series: "late")
        #expect(
            lateStreak.current == 0 && lateStreak.lastBreak == AlarmStreakBreak(day: day("2026-10-25"), by: .escape))
        // fajr is not touched by the other series: the 25th has no fajr alarm, which breaks nothing.
        let fajr = AlarmHistory.streak(entries.filter { $0.series == "fajr" }, series: "fajr")
        #expect(fajr.current == 2 && fajr.currentSince == day("2026-10-24") && fajr.lastBreak == nil)
    }

    @Test("Sydney, spring forward (2026-10-04, southern hemisphere): days are Sydney's, not UTC's")
    func sydneySpringForward() {
        var m = Morning("Australia/Sydney")
        for d in ["2026-10-02", "2026-10-03", "2026-10-04", "2026-10-05"] { m.add("fajr", d, 4, 30, result: "squat") }
        let entries = m.entries(now: m.at("2026-10-05", 9, 0))
        // 04:30 in Sydney is the previous day in UTC; the entries keep Sydney's dates.
        #expect(entries.map(\.day.description) == ["2026-10-02", "2026-10-03", "2026-10-04", "2026-10-05"])
        #expect(WallClockTime(entries[0].firstRing, in: TimeZone(identifier: "UTC")!).date == day("2026-10-01"))
        // The 4th is 23 hours long (02:00 AEST is 03:00 AEDT): 04:30 on the 4th is 23 hours after
        // 04:30 on the 3rd, and the next day 24 hours again.
        #expect(entries[2].firstRing.timeIntervalSince(entries[1].firstRing) == 23 * 3600)
        #expect(entries[3].firstRing.timeIntervalSince(entries[2].firstRing) == 24 * 3600)
        let streak = AlarmHistory.streak(entries, series: "fajr")
        #expect(streak.current == 4 && streak.longest == 4)
    }

    @Test("a day with no alarm does not break the streak")
    func dayWithoutAlarm() {
        var m = Morning("America/Chicago")
        for d in ["2026-11-02", "2026-11-03", "2026-11-05", "2026-11-06"] { m.add("fajr", d, result: "mat") }
        let streak = AlarmHistory.streak(m.entries(now: m.at("2026-11-07", 8, 0)), series: "fajr")
        #expect(streak.current == 4)
        #expect(streak.currentSince == day("2026-11-02") && streak.lastBreak == nil)
        let calendar = AlarmHistory.calendar(
            m.entries(now: m.at("2026-11-07", 8, 0)), from: day("2026-11-01"), to: day("2026-11-07"))
        #expect(calendar.map(\.chains) == [0, 1, 1, 0, 1, 1, 0])
    }

    @Test("two prayers on one day: each has its own streak; the day counts for every alarm only when both passed")
    func twoPrayersOneDay() {
        var m = Morning("Asia/Karachi")
        m.add("fajr", "2026-11-10", 5, 20, result: "mat")
        m.add("isha", "2026-11-10", 19, 40, result: "voice")
        m.add("fajr", "2026-11-11", 5, 20, result: "mat")
        m.add("isha", "2026-11-11", 19, 40, result: "escape")
        m.add("fajr", "2026-11-12", 5, 20, result: "voice")
        let entries = m.entries(now: m.at("2026-11-12", 22, 0))
        let summary = AlarmHistory.summary(entries, now: m.at("2026-11-12", 22, 0), zone: m.zone)
        #expect(summary.streaks.map(\.series) == ["fajr", "isha"])
        #expect(summary.streaks[0].current == 3 && summary.streaks[0].longest == 3)
        #expect(summary.streaks[1].current == 0 && summary.streaks[1].longest == 1)
        #expect(summary.streaks[1].lastBreak == AlarmStreakBreak(day: day("2026-11-11"), by: .escape))
        // Every alarm: the 10th passed, the 11th did not, the 12th did.
        #expect(summary.overall.current == 1 && summary.overall.longest == 1)
        #expect(summary.overall.currentSince == day("2026-11-12"))
        #expect(summary.proofsByKind == ["mat": 2, "voice": 2])
    }

    @Test("an Isha after midnight (a summer night in the north) counts for its prayer's day, not the clock's")
    func ishaAfterMidnight() {
        let zone = TimeZone(identifier: "Europe/London")!
        // Isha of June 20 and 21 at 00:40 the next morning, proven; June 22's at 00:41 on the 23rd.
        let chains = ["2026-06-20", "2026-06-21", "2026-06-22"].map { text -> AlarmHistoryChain in
            let first = WallClockTime(date: day(text).adding(days: 1), hour: 0, minute: 40).instant(in: zone)
            return AlarmHistoryChain(
                id: "isha.\(text)", series: "isha", firstFire: first, windowEnd: first.addingTimeInterval(1800),
                rang: [first],
                events: [AlarmHistoryEvent(kind: .proof, at: first.addingTimeInterval(60), detail: "voice")],
                day: day(text))
        }
        let now = WallClockTime(date: day("2026-06-23"), hour: 9, minute: 0).instant(in: zone)
        let entries = AlarmHistory.entries(chains, now: now, zone: zone)
        #expect(entries.map(\.day) == [day("2026-06-20"), day("2026-06-21"), day("2026-06-22")])
        let streak = AlarmHistory.streak(entries, series: "isha")
        #expect(streak.current == 3 && streak.currentSince == day("2026-06-20"))
        // Without the prayer's day, the first ring's clock day is used.
        let byClock = AlarmHistory.entries(
            chains.map {
                var c = $0
                c.day = nil
                return c
            }, now: now, zone: zone)
        #expect(byClock.map(\.day) == [day("2026-06-21"), day("2026-06-22"), day("2026-06-23")])
    }

    @Test("an escape is recorded, never counted as a proof, and breaks the streak")
    func escapeBreaks() {
        var m = Morning("Europe/London")
        m.add("fajr", "2026-12-01", result: "mat", after: 40)
        m.add("fajr", "2026-12-02", result: "mat", after: 60)
        m.add("fajr", "2026-12-03", result: "escape", after: 10)
        m.add("fajr", "2026-12-04", result: "voice", after: 300)
        let entries = m.entries(now: m.at("2026-12-04", 9, 0))
        #expect(entries.map(\.status) == [.proof, .proof, .escape, .proof])
        #expect(entries[2].proof == nil && entries[2].secondsToProof == nil && entries[2].endedAt != nil)
        let summary = AlarmHistory.summary(entries, now: m.at("2026-12-04", 9, 0), zone: m.zone)
        #expect(summary.streaks[0].current == 1 && summary.streaks[0].longest == 2)
        #expect(
            summary.streaks[0].longestFrom == day("2026-12-01") && summary.streaks[0].longestTo == day("2026-12-02"))
        #expect(summary.proofsByKind == ["mat": 2, "voice": 1])
        // A proof after an escape on the same chain does not turn it into a proof: the first end counts.
        var late = m
        late.chains[2].events.append(AlarmHistoryEvent(kind: .proof, at: late.at("2026-12-03", 6, 0), detail: "mat"))
        #expect(late.entries(now: m.at("2026-12-04", 9, 0))[2].status == .escape)
    }

    @Test("a missed chain (window closed, no proof) breaks the streak; an open one counts neither way")
    func missedAndOpen() {
        var m = Morning("America/Chicago")
        m.add("fajr", "2026-11-20", result: "mat")
        m.add("fajr", "2026-11-21", result: nil, window: 1800)
        m.add("fajr", "2026-11-22", result: "mat")
        m.add("fajr", "2026-11-23", result: nil, window: 1800)
        // On the 23rd at 05:20 its window (until 05:40) is open.
        let now = m.at("2026-11-23", 5, 20)
        let entries = m.entries(now: now)
        #expect(entries.map(\.status) == [.proof, .missed, .proof, .open])
        let streak = AlarmHistory.streak(entries, series: "fajr")
        #expect(streak.current == 1 && streak.currentSince == day("2026-11-22"))
        #expect(streak.lastBreak == AlarmStreakBreak(day: day("2026-11-21"), by: .missed))
        // The window closes (plus the 5 s grace): now it is missed.
        let later = m.entries(now: m.at("2026-11-23", 5, 40).addingTimeInterval(6))
        #expect(later.last?.status == .missed)
        #expect(AlarmHistory.streak(later, series: "fajr").current == 0)
        // A chain whose first ring is still to come is not history yet.
        m.add("fajr", "2026-11-24", result: nil)
        m.chains[m.chains.count - 1].rang = []
        #expect(m.entries(now: now).count == 4)
    }

    @Test("time to proof runs from the first ring that played; stops, rings and missed rings are counted")
    func timeToProof() {
        let zone = TimeZone(identifier: "UTC")!
        let first = WallClockTime(date: day("2026-11-30"), hour: 5, minute: 0).instant(in: zone)
        let chain = AlarmHistoryChain(
            id: "fajr.2026-11-30", series: "fajr", firstFire: first, windowEnd: first.addingTimeInterval(1800),
            rang: [first.addingTimeInterval(120), first.addingTimeInterval(300)],
            events: [
                AlarmHistoryEvent(kind: .missed, at: first.addingTimeInterval(60), detail: "fajr.2026-11-30.0500.r0"),
                AlarmHistoryEvent(kind: .stopped, at: first.addingTimeInterval(130)),
                AlarmHistoryEvent(kind: .proof, at: first.addingTimeInterval(420), detail: "voice hands-free"),
                AlarmHistoryEvent(kind: .stopped, at: first.addingTimeInterval(310)),
            ])
        let entry = AlarmHistory.entries([chain], now: first.addingTimeInterval(3600), zone: zone)[0]
        #expect(entry.secondsToProof == 300)
        #expect(entry.firstRing == first.addingTimeInterval(120))
        #expect(entry.stops == 2 && entry.rings == 2 && entry.missedRings == 1)
        #expect(entry.proof == ProofDetail(kind: "voice", source: "hands-free"))
        // Proven before any ring played: 0 s, 0 rings.
        var early = chain
        early.rang = []
        early.events = [AlarmHistoryEvent(kind: .proof, at: first.addingTimeInterval(-30), detail: "mat")]
        let earlyEntry = AlarmHistory.entries([early], now: first, zone: zone)[0]
        #expect(earlyEntry.secondsToProof == 0 && earlyEntry.rings == 0)
    }

    @Test("a proof's detail gives its kind and how: typed unless it says hands-free")
    func proofDetail() {
        #expect(ProofDetail(parsing: "mat") == ProofDetail(kind: "mat", source: "typed"))
        #expect(ProofDetail(parsing: "voice hands-free") == ProofDetail(kind: "voice", source: "hands-free"))
        #expect(ProofDetail(parsing: "voice;source=hands-free") == ProofDetail(kind: "voice", source: "hands-free"))
        #expect(ProofDetail(parsing: "squat, typed") == ProofDetail(kind: "squat", source: "typed"))
        #expect(ProofDetail(parsing: nil) == ProofDetail(kind: "unknown", source: "typed"))
    }

    @Test("median time to proof: the seven days up to today against the seven before")
    func weeklyPace() {
        var m = Morning("Europe/London")
        // This week (Nov 28 - Dec 4): 60, 120, 240, 600 s; last week (Nov 21 - 27): 30, 90, 150 s.
        for (d, s) in [
            ("2026-11-28", 60.0), ("2026-11-30", 120), ("2026-12-02", 240), ("2026-12-04", 600), ("2026-11-21", 30),
            ("2026-11-24", 90), ("2026-11-27", 150), ("2026-11-20", 5),
        ] {
            m.add("fajr", d, result: "mat", after: s)
        }
        m.add("fajr", "2026-12-03", result: "escape", after: 1)
        let now = m.at("2026-12-04", 12, 0)
        let summary = AlarmHistory.summary(m.entries(now: now), now: now, zone: m.zone)
        #expect(summary.thisWeek.from == day("2026-11-28") && summary.thisWeek.to == day("2026-12-04"))
        #expect(summary.thisWeek.medianSecondsToProof == 180 && summary.thisWeek.proofs == 4)
        #expect(summary.lastWeek.from == day("2026-11-21") && summary.lastWeek.to == day("2026-11-27"))
        #expect(summary.lastWeek.medianSecondsToProof == 90 && summary.lastWeek.proofs == 3)
        let empty = AlarmHistory.summary([], now: now, zone: m.zone)
        #expect(empty.thisWeek.medianSecondsToProof == nil && empty.streaks.isEmpty && empty.overall.current == 0)
    }
}
