public import PrayerPlanning
public import ProofkitCore

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// Which clock an alarm follows when the timetable's zone differs from the device's.
public enum AlarmClockMode: String, CaseIterable, Sendable, Hashable {
    /// Ring when the device's clock shows the timetable's reading: someone in Karachi following a
    /// London mosque's timetable (Fajr 05:12 on the screen) rings at 05:12 Karachi time.
    case timetableClock
    /// Ring at the same instant as the timetable's time (London's 05:12 is 10:12 in Karachi).
    case sameInstant
}

/// How many alarms the system can hold.
public struct AlarmBudget: Sendable, Hashable {
    /// The most alarms (or notifications) the system holds at once, e.g. 64; `nil` = no limit.
    public var systemLimit: Int?
    /// Slots kept for other notifications sharing the limit (prayer reminders). Default 0.
    public var reservedForReminders: Int
    /// Keep room for one more chain, so that a re-sync can book a new chain before cancelling
    /// the old one without going over the limit. Default `true`.
    public var keepsTransitionHeadroom: Bool

    /// - Parameters:
    ///   - systemLimit: the system's limit (alarms or notifications), `nil` for none.
    ///   - reservedForReminders: slots for reminders sharing the limit.
    ///   - keepsTransitionHeadroom: reserve one chain's worth for re-syncs.
    public init(systemLimit: Int? = nil, reservedForReminders: Int = 0, keepsTransitionHeadroom: Bool = true) {
        self.systemLimit = systemLimit
        self.reservedForReminders = reservedForReminders
        self.keepsTransitionHeadroom = keepsTransitionHeadroom
    }

    /// No limit.
    public static let unlimited = AlarmBudget()
    /// iOS: 64 pending local notifications per app, shared with reminders.
    public static func notifications64(reminders: Int = 0) -> AlarmBudget {
        AlarmBudget(systemLimit: 64, reservedForReminders: reminders)
    }

    /// What the system may hold for alarms at most (limit − reminders), `nil` for no limit.
    public var capacity: Int? { systemLimit.map { max(0, $0 - reservedForReminders) } }
}

/// Settings of the alarm chains. Durations are `Duration`; defaults in brackets.
public struct AlarmChainConfiguration: Sendable, Hashable {
    /// Prayers that get alarms [Fajr, Maghrib]. Sunrise is never an alarm.
    public var prayers: Set<Prayer> = [.fajr, .maghrib]
    /// Days in the rolling window, today first [7], 1...60.
    public var days = 7
    /// The proof window: backups are spread over it after the first ring [30 min].
    public var proofWindow: Duration = .seconds(30 * 60)
    /// How many backups follow the first ring [`nil`]. `nil`: as many as the growing gaps
    /// (``firstGap``, ``gapGrowth``, ``maxGap``) fit in the proof window (30 min: 6). A number
    /// N, 0...``maxBackups``: N backups spread evenly over the proof window, the last at its
    /// end (30 backups over 30 min: one a minute, 31 alarms a chain); the gaps must stay at
    /// least ``minBackupSpacing``.
    public var backups: Int? = nil
    /// The first gap between rings [2 min]; each next gap grows by ``gapGrowth`` up to ``maxGap``.
    public var firstGap: Duration = .seconds(120)
    /// Growth of each gap [1 min].
    public var gapGrowth: Duration = .seconds(60)
    /// Largest gap [10 min].
    public var maxGap: Duration = .seconds(600)
    /// While the proof screen is open, backups are held off for this long [90 s].
    public var holdOff: Duration = .seconds(90)
    /// Sound per prayer; default `"adhan-<prayer>"`.
    public var sounds: [Prayer: String] = [:]
    /// The device's zone (where the alarms ring).
    public var deviceTimeZone: TimeZone
    /// Which clock the alarms follow [timetable clock].
    public var clockMode: AlarmClockMode = .timetableClock
    /// The system's limit [none].
    public var budget: AlarmBudget = .unlimited

    /// The most backups a chain may have: 60.
    public static let maxBackups = 60
    /// The smallest gap between evenly spread backups: 30 s (as ``firstGap``'s minimum).
    public static let minBackupSpacing: Duration = .seconds(30)

    /// Defaults, ringing in `deviceTimeZone`.
    public init(deviceTimeZone: TimeZone) { self.deviceTimeZone = deviceTimeZone }

    /// The sound of `prayer`'s alarms.
    public func sound(for prayer: Prayer) -> String { sounds[prayer] ?? "adhan-\(prayer.rawValue)" }

    /// - Throws: `ProofkitError` `.invalidArgument` for sunrise, an empty prayer set, or a value
    ///   out of range.
    public func validate() throws(ProofkitError) {
        func fail(_ message: String) -> ProofkitError { ProofkitError(.invalidArgument, message) }
        if prayers.contains(.sunrise) { throw fail("sunrise is not a prayer and never gets an alarm") }
        if prayers.isEmpty { throw fail("choose at least one prayer") }
        if !(1...60).contains(days) { throw fail("days must be 1...60, got \(days)") }
        if proofWindow < .zero || proofWindow > .seconds(4 * 3600) { throw fail("the proof window must be 0...4 h") }
        if firstGap < .seconds(30) || maxGap < firstGap {
            throw fail("gaps must be at least 30 s and maxGap ≥ firstGap")
        }
        if gapGrowth < .zero { throw fail("gap growth must not be negative") }
        if holdOff < .zero || holdOff > .seconds(600) { throw fail("hold-off must be 0...10 min") }
        if let backups {
            guard (0...Self.maxBackups).contains(backups) else {
                throw fail("backups must be 0...\(Self.maxBackups), got \(backups)")
            }
            if backups > 0 && proofWindow / backups < Self.minBackupSpacing {
                let spacing = proofWindow.components.seconds / Int64(backups)
                throw fail(
                    "\(backups) backups over a \(proofWindow.components.seconds) s proof window would be \(spacing) s apart; backups must be at least \(Self.minBackupSpacing.components.seconds) s apart (fewer backups or a longer window)"
                )
            }
        }
        if let limit = budget.systemLimit, limit < 1 { throw fail("the budget must allow at least one alarm") }
        if budget.reservedForReminders < 0 { throw fail("reminders cannot be negative") }
    }

    /// Offsets of the rings after the prayer time: 0, then growing gaps, all within the window.
    /// 30 min with the defaults: 0, 2, 5, 9, 14, 20, 27 min. With ``backups`` N: 0 and
    /// k x window / N for k = 1...N (rounded to the second).
    public var ringOffsets: [Duration] {
        if let backups {
            guard backups > 0 else { return [.zero] }
            let window = proofWindow.seconds
            return (0...backups).map { .seconds(Int64((window * Double($0) / Double(backups)).rounded())) }
        }
        var offsets: [Duration] = [.zero]
        var gap = firstGap
        while let last = offsets.last, last + gap <= proofWindow {
            offsets.append(last + gap)
            gap = min(maxGap, gap + gapGrowth)
        }
        return offsets
    }
}

/// One prayer on one date: what a chain of rings is for. Text form `fajr.2026-11-30`.
public struct Occurrence: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var prayer: Prayer
    /// The timetable's local date the prayer belongs to.
    public var date: LocalDate

    public init(prayer: Prayer, date: LocalDate) {
        self.prayer = prayer
        self.date = date
    }

    /// Parses `prayer.YYYY-MM-DD`.
    public init?(_ text: String) {
        let parts = text.split(separator: ".")
        guard parts.count == 2, let p = Prayer(rawValue: String(parts[0])),
            let d = LocalDate(iso: String(parts[1]))
        else { return nil }
        self.init(prayer: p, date: d)
    }

    public static func < (a: Occurrence, b: Occurrence) -> Bool { (a.date, a.prayer) < (b.date, b.prayer) }
    public var description: String { "\(prayer).\(date)" }
}

/// A stable alarm id: `<prayer>.<YYYY-MM-DD>.<HHMM>.r<ring>`, from the prayer, its timetable
/// date, the minute shown on the timetable, and the ring index (0 = first ring). The same alarm
/// always gets the same id; a different prayer minute gives a different id (a new chain).
/// Ids that do not follow the scheme (an old build's) are still valid ids, just not ours.
public struct AlarmID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The text of the id.
    public var rawValue: String

    /// Wraps any text (for ids read from the system).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Builds an id of the scheme.
    public init(occurrence: Occurrence, minute: WallClockTime, ring: Int) {
        rawValue = "\(occurrence.prayer).\(occurrence.date).\(minute.compactMinute).r\(ring)"
    }

    /// The occurrence and ring for ids of the scheme, else `nil`.
    public var parsed: (occurrence: Occurrence, minute: String, ring: Int)? {
        let parts = rawValue.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, let prayer = Prayer(rawValue: String(parts[0])), prayer != .sunrise,
            let date = LocalDate(iso: String(parts[1])), parts[2].count == 4,
            parts[2].allSatisfy({ $0.isASCII && $0.isNumber }), parts[3].hasPrefix("r"),
            let ring = Int(parts[3].dropFirst()), ring >= 0, String(ring) == parts[3].dropFirst()
        else { return nil }
        return (Occurrence(prayer: prayer, date: date), String(parts[2]), ring)
    }

    public static func < (a: AlarmID, b: AlarmID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { rawValue }
}

/// What an alarm does when it fires. Two alarms with one id but different content must be
/// cancelled and booked again.
public struct AlarmContent: Hashable, Sendable {
    /// When it rings.
    public var fireDate: Date
    /// The sound's name.
    public var sound: String

    public init(fireDate: Date, sound: String) {
        self.fireDate = fireDate
        self.sound = sound
    }
}

/// One ring of one chain.
public struct PlannedAlarm: Hashable, Sendable, Identifiable {
    public let id: AlarmID
    public let occurrence: Occurrence
    /// 0 for the first ring, 1... for backups.
    public let ringIndex: Int
    /// The prayer time as the timetable shows it (timetable zone's clock).
    public let prayerTime: WallClockTime
    /// When and how it rings.
    public let content: AlarmContent

    /// When it rings.
    public var fireDate: Date { content.fireDate }
    /// Whether this is a backup ring.
    public var isBackup: Bool { ringIndex > 0 }
}

/// The remaining rings of one occurrence.
public struct AlarmChain: Hashable, Sendable {
    public let occurrence: Occurrence
    /// Rings still to come, in time order.
    public let rings: [PlannedAlarm]
    /// Whether the budget let this chain be booked.
    public let isWithinBudget: Bool
    /// What the chain is: a hash (16 hex digits, FNV-1a 64) of every ring it was designed with,
    /// past ones included, as id, fire time (milliseconds since 1970) and sound, before any
    /// hold-off moved a ring. It changes only when the chain itself changes (another prayer
    /// minute, ring pattern, backup count, sound, clock), never because a ring passed, a
    /// hold-off moved one, or another prayer's settings changed. ``AlarmReconciler`` books a
    /// chain again in full when its fingerprint differs from the one last synced.
    public let fingerprint: String
}

/// An enabled prayer that has no time on a date (polar day or night, unresolved).
public struct UnavailableOccurrence: Hashable, Sendable {
    public let occurrence: Occurrence
    public let reason: UndefinedReason

    /// Creates one (a store reads them back this way).
    public init(occurrence: Occurrence, reason: UndefinedReason) {
        self.occurrence = occurrence
        self.reason = reason
    }
}

/// What happened to a chain that ended.
public struct ChainOutcome: Hashable, Sendable {
    /// How a chain ended.
    public enum Kind: String, Sendable, Hashable {
        /// The proof was given.
        case proof
        /// A deliberate dismissal (e.g. a long hold): the alarm ends, and it is not a proof.
        case escape
    }
    public let occurrence: Occurrence
    public let kind: Kind
    public let at: Date

    public init(occurrence: Occurrence, kind: Kind, at: Date) {
        self.occurrence = occurrence
        self.kind = kind
        self.at = at
    }

    /// Only `.proof` is a proof.
    public var isProof: Bool { kind == .proof }
}

/// What the planner knows beyond the clock: ended chains and held-off rings.
public struct PlanningContext: Sendable, Hashable {
    /// Occurrences whose chain ended (proof or escape): none of their rings are planned.
    public var ended: Set<Occurrence>
    /// Rings moved by a hold-off: id → new fire date.
    public var postponed: [AlarmID: Date]
    /// Rings merged into a postponed one by a hold-off (not planned again).
    public var merged: Set<AlarmID>
    /// Slots of the budget the plan cannot use: alarms the system holds that are not the plan's
    /// to move (those ringing now).
    public var occupiedSlots: Int

    public init(
        ended: Set<Occurrence> = [], postponed: [AlarmID: Date] = [:], merged: Set<AlarmID> = [],
        occupiedSlots: Int = 0
    ) {
        self.ended = ended
        self.postponed = postponed
        self.merged = merged
        self.occupiedSlots = occupiedSlots
    }
}

/// The desired alarms for a window of days.
public struct AlarmPlan: Sendable {
    /// The instant planned from.
    public let now: Date
    /// The window's first and last local dates (device clock; timetable clock for
    /// ``AlarmClockMode/sameInstant``).
    public let firstDay: LocalDate
    public let lastDay: LocalDate
    /// Every chain of the window that still has rings to come, in time order.
    public let chains: [AlarmChain]
    /// Prayers without a time in the window.
    public let unavailable: [UnavailableOccurrence]
    /// A hash of the planner's settings (prayers, place, zones, method, adjustments, ring
    /// pattern), not of the dates: ``AlarmChainPlanner/fingerprint``. Informational, and what
    /// the whole-plan form ``AlarmReconciler/reconcile(plan:system:syncedFingerprint:capacity:)``
    /// compares; the per-chain form compares ``AlarmChain/fingerprint``s instead, so a change to
    /// one prayer's settings re-books only that prayer's chains.
    public let fingerprint: String

    /// The alarms to book: the chains within the budget, in time order.
    public let alarms: [PlannedAlarm]

    /// The fingerprint of each chain within the budget (what a ledger stores once the chain is
    /// synced: ``AlarmLedger/syncedChains``).
    public var chainFingerprints: [Occurrence: String] {
        Dictionary(
            chains.filter(\.isWithinBudget).map { ($0.occurrence, $0.fingerprint) },
            uniquingKeysWith: { first, _ in first })
    }

    init(
        now: Date, firstDay: LocalDate, lastDay: LocalDate, chains: [AlarmChain],
        unavailable: [UnavailableOccurrence], fingerprint: String
    ) {
        self.now = now
        self.firstDay = firstDay
        self.lastDay = lastDay
        self.chains = chains
        self.unavailable = unavailable
        self.fingerprint = fingerprint
        alarms = chains.filter(\.isWithinBudget).flatMap(\.rings).sorted(by: alarmOrder)
    }

    /// The last day whose alarms are all booked when the plan's alarms are: see ``coveredUntil(booked:)``.
    public var coveredUntil: LocalDate? { coveredUntil(booked: Set(alarms.map(\.id))) }

    /// The last day D of the window such that every ring of every chain on every day up to D is
    /// in `booked` and no enabled prayer up to D lacks a time; `nil` when not even the first day
    /// is covered. A day with no rings left (its prayers passed) is covered.
    public func coveredUntil(booked: Set<AlarmID>) -> LocalDate? {
        var byDay: [LocalDate: Bool] = [:]
        for chain in chains {
            let whole = chain.rings.allSatisfy { booked.contains($0.id) }
            byDay[chain.occurrence.date] = (byDay[chain.occurrence.date] ?? true) && whole
        }
        for missing in unavailable { byDay[missing.occurrence.date] = false }
        var covered: LocalDate? = nil
        var day = firstDay
        while day <= lastDay {
            guard byDay[day] ?? true else { break }
            covered = day
            day = day.adding(days: 1)
        }
        return covered
    }
}

func alarmOrder(_ a: PlannedAlarm, _ b: PlannedAlarm) -> Bool {
    a.fireDate != b.fireDate ? a.fireDate < b.fireDate : a.id < b.id
}

/// Plans the alarm chains of a rolling window of days. Pure and deterministic: the same
/// settings, `now` and context always give the same plan.
///
/// Each enabled prayer of each day gets a chain: a first ring at the prayer time, then backups
/// at ``AlarmChainConfiguration/ringOffsets`` (close together first, further apart later) over
/// the proof window. Rings already past, and chains that ended (proof or escape), are left out.
/// Under a budget the nearest chains are kept whole, in time order, until the next one does not
/// fit; ``AlarmPlan/coveredUntil`` reports the honest last day.
public struct AlarmChainPlanner: Sendable {
    /// The timetable (place, zone, method).
    public let calculator: PrayerTimeCalculator
    /// Chain settings.
    public let configuration: AlarmChainConfiguration

    /// - Throws: `ProofkitError` `.invalidArgument` from ``AlarmChainConfiguration/validate()``.
    public init(calculator: PrayerTimeCalculator, configuration: AlarmChainConfiguration) throws(ProofkitError) {
        try configuration.validate()
        self.calculator = calculator
        self.configuration = configuration
    }

    /// The settings fingerprint (16 hex digits, FNV-1a 64 of the canonical settings): see
    /// ``AlarmPlan/fingerprint``. Re-syncs compare the chains' own fingerprints
    /// (``AlarmChain/fingerprint``), not this.
    public var fingerprint: String {
        let c = configuration
        let p = calculator.parameters
        var text = "proofkit-alarm-plan-v1|"
        text += c.prayers.sorted().map { "\($0)=\(c.sound(for: $0))" }.joined(separator: ",")
        text += "|rings=" + c.ringOffsets.map { "\($0.components.seconds)" }.joined(separator: ",")
        text += "|clock=\(c.clockMode.rawValue)|device=\(c.deviceTimeZone.identifier)"
        text += "|timetable=\(calculator.timeZone.identifier)"
        text += "|at=\(calculator.coordinates.latitude),\(calculator.coordinates.longitude)"
        text += "|\(p.method.rawValue),\(p.fajrAngle),\(p.ishaAngle),\(p.ishaInterval ?? -1),"
        text += "\(p.ramadanIshaInterval ?? -1),\(p.maghribAngle ?? -1),\(p.madhab.rawValue),"
        text += "\(p.highLatitudeRule.rawValue),\(p.polarResolution.rawValue),\(p.rounding.rawValue),"
        text += "\(p.usesMoonsightingSeasons),\(p.shafaq.rawValue),"
        text += Prayer.allCases.map { "\(p.adjustments[$0])/\(p.methodAdjustments[$0])" }.joined(separator: ",")
        return fnv1a64Hex(text)
    }

    /// The fingerprint of a chain designed with `rings` (see ``AlarmChain/fingerprint``).
    static func chainFingerprint(_ rings: [PlannedAlarm]) -> String {
        var text = "proofkit-chain-v1"
        for ring in rings.sorted(by: alarmOrder) {
            let milliseconds = Int64((ring.fireDate.timeIntervalSince1970 * 1000).rounded())
            text += "|\(ring.id.rawValue)@\(milliseconds)#\(ring.content.sound)"
        }
        return fnv1a64Hex(text)
    }

    /// The window's first day at `now`.
    public func today(at now: Date) -> LocalDate {
        switch configuration.clockMode {
        case .timetableClock: WallClockTime(now, in: configuration.deviceTimeZone).date
        case .sameInstant: WallClockTime(now, in: calculator.timeZone).date
        }
    }

    /// Every ring of one occurrence (past ones too), or why it has none.
    public enum ChainRings: Sendable, Hashable {
        case rings([PlannedAlarm])
        case unavailable(UndefinedReason)
    }

    /// Every ring of one occurrence (past ones too), or why it has none.
    public func chain(for occurrence: Occurrence) -> ChainRings {
        chain(for: occurrence, times: calculator.times(on: occurrence.date))
    }

    func chain(for occurrence: Occurrence, times: PrayerTimes) -> ChainRings {
        guard let instant = times[occurrence.prayer] else {
            return .unavailable(times.undefinedReason ?? .polarNight)
        }
        let wall = WallClockTime(instant, in: calculator.timeZone)
        let first: Date =
            switch configuration.clockMode {
            case .timetableClock: wall.instant(in: configuration.deviceTimeZone)
            case .sameInstant: instant
            }
        let sound = configuration.sound(for: occurrence.prayer)
        return .rings(
            configuration.ringOffsets.enumerated().map { index, offset in
                PlannedAlarm(
                    id: AlarmID(occurrence: occurrence, minute: wall, ring: index), occurrence: occurrence,
                    ringIndex: index, prayerTime: wall,
                    content: AlarmContent(fireDate: first.addingTimeInterval(offset.seconds), sound: sound))
            })
    }

    /// The plan at `now`.
    /// - Parameters:
    ///   - now: the current instant (a parameter: engines never read the clock).
    ///   - context: ended chains and held-off rings.
    public func plan(now: Date, context: PlanningContext = PlanningContext()) -> AlarmPlan {
        let first = today(at: now)
        let last = first.adding(days: configuration.days - 1)
        var chains: [(Occurrence, [PlannedAlarm], String)] = []
        var unavailable: [UnavailableOccurrence] = []
        for offset in 0..<configuration.days {
            let date = first.adding(days: offset)
            let times = calculator.times(on: date)
            for prayer in configuration.prayers.sorted() {
                let occurrence = Occurrence(prayer: prayer, date: date)
                guard !context.ended.contains(occurrence) else { continue }
                switch chain(for: occurrence, times: times) {
                case .unavailable(let reason):
                    unavailable.append(UnavailableOccurrence(occurrence: occurrence, reason: reason))
                case .rings(let rings):
                    let fingerprint = Self.chainFingerprint(rings)
                    let remaining = rings.compactMap { ring -> PlannedAlarm? in
                        if context.merged.contains(ring.id) { return nil }
                        var ring = ring
                        if let moved = context.postponed[ring.id] {
                            ring = PlannedAlarm(
                                id: ring.id, occurrence: ring.occurrence, ringIndex: ring.ringIndex,
                                prayerTime: ring.prayerTime,
                                content: AlarmContent(fireDate: moved, sound: ring.content.sound))
                        }
                        return ring.fireDate > now ? ring : nil
                    }.sorted(by: alarmOrder)
                    if !remaining.isEmpty { chains.append((occurrence, remaining, fingerprint)) }
                }
            }
        }
        chains.sort { alarmOrder($0.1[0], $1.1[0]) }
        // Budget: nearest chains whole, stop at the first that does not fit.
        var room = Int.max
        if let capacity = configuration.budget.capacity {
            let headroom = configuration.budget.keepsTransitionHeadroom ? configuration.ringOffsets.count : 0
            room = max(0, capacity - headroom - context.occupiedSlots)
        }
        var fits = true
        var planned: [AlarmChain] = []
        for (occurrence, rings, fingerprint) in chains {
            if fits && rings.count <= room {
                room -= rings.count
            } else {
                fits = false
            }
            planned.append(
                AlarmChain(occurrence: occurrence, rings: rings, isWithinBudget: fits, fingerprint: fingerprint))
        }
        return AlarmPlan(
            now: now, firstDay: first, lastDay: last, chains: planned,
            unavailable: unavailable, fingerprint: fingerprint)
    }
}

/// FNV-1a 64-bit of the UTF-8 bytes, as 16 lower-case hex digits (stable across runs, unlike
/// `Hasher`).
func fnv1a64Hex(_ text: String) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x0000_0100_0000_01b3
    }
    let hex = String(hash, radix: 16)
    return String(repeating: "0", count: 16 - hex.count) + hex
}
