public import PrayerPlanning

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// What a line of an alarm chain's record says, as the alarm store keeps it (its `outcomes`
/// table's `kind`).
public enum AlarmRecordKind: String, Sendable, Hashable, CaseIterable {
    /// A proof passed: the chain ended.
    case proof
    /// An escape ended the chain without a proof.
    case escape
    /// A proof was judged and rejected: the chain rings on.
    case rejected
    /// A ring could not ring inside its window (the machine was down).
    case missed
    /// A Stop press silenced a ring.
    case stopped
}

/// One line of an alarm chain's record: a proof, an escape, a rejected proof, a missed ring or a
/// Stop press, as the alarm store keeps them.
public struct AlarmHistoryEvent: Sendable, Hashable {
    /// What the line says.
    public var kind: AlarmRecordKind
    /// When it was recorded.
    public var at: Date
    /// A proof's kind and source (see ``ProofDetail``); a ring id for `missed` and `stopped`.
    public var detail: String?

    /// A record line; `detail` defaults to none.
    public init(kind: AlarmRecordKind, at: Date, detail: String? = nil) {
        self.kind = kind
        self.at = at
        self.detail = detail
    }
}

/// One chain as the alarm store holds it, the input of ``AlarmHistory``.
public struct AlarmHistoryChain: Sendable, Hashable {
    /// `fajr.2026-11-30` or `a7`.
    public var id: String
    /// What the chain is counted under: the prayer (`fajr`), a one-off's label, else `one-off`.
    public var series: String
    /// The first ring as booked.
    public var firstFire: Date
    /// The end of the proof window.
    public var windowEnd: Date
    /// When each ring that played started (rings that never played, merged or failed ones are
    /// not here).
    public var rang: [Date]
    /// The chain's record lines, in any order.
    public var events: [AlarmHistoryEvent]
    /// The day the chain belongs to when its id names one (a prayer occurrence's date, so that
    /// an Isha after midnight counts for its own day); `nil`: the local day of its first ring.
    public var day: LocalDate?

    /// A chain; `rang` and `events` default to none (a chain that never rang nor ended), `day`
    /// to the local day of its first ring.
    public init(
        id: String, series: String, firstFire: Date, windowEnd: Date, rang: [Date] = [],
        events: [AlarmHistoryEvent] = [], day: LocalDate? = nil
    ) {
        self.id = id
        self.series = series
        self.firstFire = firstFire
        self.windowEnd = windowEnd
        self.rang = rang
        self.events = events
        self.day = day
    }
}

/// What a proof was and how it was given, read from a proof's detail: `KIND` (`mat`, `voice`,
/// `squat`), optionally followed by its source, as a word (`voice hands-free`) or as
/// `source=WORD` (separated by spaces, commas or semicolons). Without a source a proof was
/// typed: a command run by the person.
public struct ProofDetail: Sendable, Hashable {
    /// `mat`, `voice`, `squat`, or `unknown` when the detail is empty.
    public var kind: String
    /// `typed` or `hands-free` (or any other source word a later proof writes).
    public var source: String

    /// A proof given by a command the person ran.
    public static let typed = "typed"
    /// A proof the device took without a command (issue 35's hands-free proofs).
    public static let handsFree = "hands-free"

    /// A proof of `kind`, given `source` [typed].
    public init(kind: String, source: String = ProofDetail.typed) {
        self.kind = kind
        self.source = source
    }

    /// Reads a proof's detail (`mat`, `voice hands-free`, `voice;source=hands-free`); an empty
    /// or missing detail is an `unknown` kind, typed.
    public init(parsing detail: String?) {
        let words = (detail ?? "").split { $0 == " " || $0 == "," || $0 == ";" || $0 == "\t" }.map(String.init)
        kind = words.first ?? "unknown"
        source = ProofDetail.typed
        for word in words.dropFirst() {
            if word.hasPrefix("source=") {
                source = String(word.dropFirst("source=".count))
            } else if word == ProofDetail.handsFree || word == ProofDetail.typed {
                source = word
            }
        }
    }
}

/// How a chain ended, as the history counts it.
public enum AlarmHistoryStatus: String, Sendable, Hashable, CaseIterable {
    /// A proof passed: counts toward the streak.
    case proof
    /// Ended by an escape: recorded, never counted as a proof; breaks the streak.
    case escape
    /// The proof window closed without a proof or an escape (rung unanswered, or missed while
    /// the machine was down); breaks the streak.
    case missed
    /// The window is still open: not counted either way yet.
    case open
}

/// One chain of the history: a line of `proofkit alarm history`.
public struct AlarmHistoryEntry: Sendable, Hashable {
    /// The chain's id.
    public var id: String
    /// The prayer, a label, or `one-off`.
    public var series: String
    /// The chain's day (see ``AlarmHistoryChain/day``), else the local day of its first ring in
    /// the zone the history was read in.
    public var day: LocalDate
    /// How it ended (or that its window is still open).
    public var status: AlarmHistoryStatus
    /// The proof, for `.proof`.
    public var proof: ProofDetail?
    /// The first ring that played, else the first ring as booked.
    public var firstRing: Date
    /// When the proof or escape came.
    public var endedAt: Date?
    /// Seconds from the first ring to the proof (0 for a proof before any ring), for `.proof`.
    public var secondsToProof: Double?
    /// Stop presses.
    public var stops: Int
    /// Rings that played.
    public var rings: Int
    /// Rings logged as missed (due while the machine was down).
    public var missedRings: Int
}

/// A streak of proven days in a row, for one series or for every alarm.
public struct AlarmStreak: Sendable, Hashable {
    /// The series (`fajr`, a label, `one-off`), or `nil` for every alarm together.
    public var series: String?
    /// The proven days in a row up to the last counted day (0 when that day was broken).
    public var current: Int
    /// The first day of the current streak.
    public var currentSince: LocalDate?
    /// The most proven days in a row, and the first and last of them (the earliest such run).
    public var longest: Int
    public var longestFrom: LocalDate?
    public var longestTo: LocalDate?
    /// The last day that broke a streak, and by what.
    public var lastBreak: AlarmStreakBreak?
}

/// A day that broke a streak.
public struct AlarmStreakBreak: Sendable, Hashable {
    /// The local day.
    public var day: LocalDate
    /// `.escape` or `.missed` (an escape when the day had both).
    public var by: AlarmHistoryStatus
}

/// The median time to proof over seven days.
public struct AlarmWeekPace: Sendable, Hashable {
    /// The first and the last local day (seven in all).
    public var from: LocalDate
    public var to: LocalDate
    /// Seconds, `nil` without a proof that week.
    public var medianSecondsToProof: Double?
    /// The proofs that week.
    public var proofs: Int
}

/// One day of the calendar: what its chains did.
public struct AlarmHistoryDay: Sendable, Hashable {
    /// The local day.
    public var day: LocalDate
    /// Its chains, and how many of them ended each way (or are still open).
    public var chains: Int
    public var proofs: Int
    public var escapes: Int
    public var missed: Int
    public var open: Int
    /// The median time to proof of the day's proofs, seconds.
    public var medianSecondsToProof: Double?
}

/// The summary under the lines of `proofkit alarm history`.
public struct AlarmHistorySummary: Sendable, Hashable {
    /// One streak per series, in series order (prayers in the day's order, then labels).
    public var streaks: [AlarmStreak]
    /// Every alarm together: a day counts when each of its settled chains was proven.
    public var overall: AlarmStreak
    /// Proofs by kind (`mat`, `voice`, `squat`).
    public var proofsByKind: [String: Int]
    /// Proofs by how they were given (`typed`, `hands-free`).
    public var proofsBySource: [String: Int]
    /// The seven days ending today, and the seven before.
    public var thisWeek: AlarmWeekPace
    /// The seven days before ``thisWeek``.
    public var lastWeek: AlarmWeekPace
}

/// The rules of the alarm history: how each chain ended, streaks of proven days, proofs by
/// kind and the weekly pace. Pure: the time and the zone are parameters.
///
/// The rules: a chain is a proof when a proof ended it, an escape when an escape did (never a
/// proof), missed when its proof window closed without either, and open before that. Streaks
/// count days, per series: a day with a proof and no escape or missed chain of that series
/// extends the streak, a day with an escape or a missed chain breaks it, and a day without an
/// alarm of that series (or with open chains only) is skipped. Days are local days in the
/// given zone, so a day of 23 or 25 hours (daylight saving) is one day like any other.
public enum AlarmHistory {
    /// How long after the window's end a late ring still counts as inside it (the ring
    /// scheduler's grace), seconds.
    public static let grace: TimeInterval = 5

    /// The entries of `chains` whose first ring has come by `now`, in first-ring order.
    public static func entries(_ chains: [AlarmHistoryChain], now: Date, zone: TimeZone) -> [AlarmHistoryEntry] {
        chains.filter { $0.firstFire <= now || !$0.rang.isEmpty || $0.events.contains { $0.kind != .stopped } }
            .map { entry($0, now: now, zone: zone) }
            .sorted { ($0.firstRing, $0.id) < ($1.firstRing, $1.id) }
    }

    static func entry(_ chain: AlarmHistoryChain, now: Date, zone: TimeZone) -> AlarmHistoryEntry {
        let events = chain.events.sorted { $0.at < $1.at }
        let end = events.first { $0.kind == .proof || $0.kind == .escape }
        let firstRing = chain.rang.min() ?? chain.firstFire
        let status: AlarmHistoryStatus
        switch end?.kind {
        case .proof: status = .proof
        case .escape: status = .escape
        default: status = now > chain.windowEnd.addingTimeInterval(grace) ? .missed : .open
        }
        return AlarmHistoryEntry(
            id: chain.id, series: chain.series, day: chain.day ?? WallClockTime(chain.firstFire, in: zone).date,
            status: status,
            proof: status == .proof ? ProofDetail(parsing: end?.detail) : nil, firstRing: firstRing,
            endedAt: end?.at,
            secondsToProof: status == .proof ? max(0, (end?.at ?? firstRing).timeIntervalSince(firstRing)) : nil,
            stops: events.filter { $0.kind == .stopped }.count, rings: chain.rang.count,
            missedRings: events.filter { $0.kind == .missed }.count)
    }

    /// The streak over `entries` (all of one series, or every alarm when `series` is `nil`).
    public static func streak(_ entries: [AlarmHistoryEntry], series: String?) -> AlarmStreak {
        var result = AlarmStreak(series: series, current: 0, longest: 0)
        var run = 0
        var runStart: LocalDate?
        for day in Dictionary(grouping: entries, by: \.day).sorted(by: { $0.key < $1.key }) {
            let statuses = Set(day.value.map(\.status))
            if statuses.contains(.escape) || statuses.contains(.missed) {
                result.lastBreak = AlarmStreakBreak(day: day.key, by: statuses.contains(.escape) ? .escape : .missed)
                run = 0
                runStart = nil
            } else if statuses.contains(.proof) {
                if run == 0 { runStart = day.key }
                run += 1
                if run > result.longest {
                    (result.longest, result.longestFrom, result.longestTo) = (run, runStart, day.key)
                }
            }
        }
        result.current = run
        result.currentSince = run > 0 ? runStart : nil
        return result
    }

    /// The summary of `entries` on the day of `now` in `zone`.
    public static func summary(_ entries: [AlarmHistoryEntry], now: Date, zone: TimeZone) -> AlarmHistorySummary {
        let bySeries = Dictionary(grouping: entries, by: \.series)
        let streaks = bySeries.keys.sorted(by: seriesOrder).map { streak(bySeries[$0]!, series: $0) }
        let proofs = entries.filter { $0.status == .proof }
        let today = WallClockTime(now, in: zone).date
        func pace(_ from: LocalDate, _ to: LocalDate) -> AlarmWeekPace {
            let times = proofs.filter { $0.day >= from && $0.day <= to }.compactMap(\.secondsToProof)
            return AlarmWeekPace(from: from, to: to, medianSecondsToProof: median(times), proofs: times.count)
        }
        return AlarmHistorySummary(
            streaks: streaks, overall: streak(entries, series: nil),
            proofsByKind: Dictionary(grouping: proofs, by: { $0.proof?.kind ?? "unknown" }).mapValues(\.count),
            proofsBySource: Dictionary(grouping: proofs, by: { $0.proof?.source ?? ProofDetail.typed })
                .mapValues(\.count),
            thisWeek: pace(today.adding(days: -6), today),
            lastWeek: pace(today.adding(days: -13), today.adding(days: -7)))
    }

    /// One ``AlarmHistoryDay`` for each day from `from` to `to`, days without an alarm included.
    public static func calendar(_ entries: [AlarmHistoryEntry], from: LocalDate, to: LocalDate) -> [AlarmHistoryDay] {
        let byDay = Dictionary(grouping: entries, by: \.day)
        guard from <= to else { return [] }
        return (0...from.days(to: to)).map { offset in
            let day = from.adding(days: offset)
            let chains = byDay[day] ?? []
            func count(_ status: AlarmHistoryStatus) -> Int { chains.filter { $0.status == status }.count }
            return AlarmHistoryDay(
                day: day, chains: chains.count, proofs: count(.proof), escapes: count(.escape), missed: count(.missed),
                open: count(.open), medianSecondsToProof: median(chains.compactMap(\.secondsToProof)))
        }
    }

    /// Prayers in the day's order first, then other series by name.
    static func seriesOrder(_ a: String, _ b: String) -> Bool {
        switch (Prayer(rawValue: a), Prayer(rawValue: b)) {
        case (let x?, let y?): x < y
        case (.some, nil): true
        case (nil, .some): false
        case (nil, nil): a < b
        }
    }

    /// The median of `values` (the mean of the middle two for an even count), `nil` when empty.
    public static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
