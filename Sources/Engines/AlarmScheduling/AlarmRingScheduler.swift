public import PrayerPlanning
import ProofkitCore

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// A ring an alarm service holds: one row of its alarm list.
public struct BookedRing: Sendable, Hashable {
    /// The ring's id (a prayer ring's ``AlarmID``, or a one-off chain's `a7.r2`).
    public var id: String
    /// The chain it belongs to (an ``Occurrence`` such as `fajr.2026-11-30`, or `a7`).
    public var chain: String
    /// 0 for the first ring, 1... for backups.
    public var ringIndex: Int
    /// When it rings.
    public var fireDate: Date

    public init(id: String, chain: String, ringIndex: Int, fireDate: Date) {
        self.id = id
        self.chain = chain
        self.ringIndex = ringIndex
        self.fireDate = fireDate
    }
}

/// What an alarm service does at one instant: which rings start, which are logged as missed,
/// and when to wake next.
public struct RingDecision: Sendable, Hashable {
    /// Rings to start now: at most one per chain, the latest that is due.
    public var ring: [BookedRing] = []
    /// Earlier due rings of a chain that rings now: they are heard as that one ring.
    public var merged: [BookedRing] = []
    /// Due rings whose chain's proof window has passed (the machine was down or asleep).
    public var missed: [BookedRing] = []
    /// The next instant something is due (a ring, or the end of a hold-off), `nil` when nothing is.
    public var nextWake: Date?
}

/// Why an alarm service plans its prayer chains again.
public enum ReplanReason: String, Sendable, Hashable {
    /// Nothing planned yet.
    case firstRun
    /// The settings changed (the plan's fingerprint differs).
    case settingsChanged
    /// The local date changed (midnight passed) since the last plan.
    case newDay
    /// The device's time zone, or its UTC offset, changed.
    case zoneChanged
    /// The wall clock was set (a jump, an NTP step, resume from suspend).
    case clockChanged
}

/// What a service remembers of its last prayer plan, to know when to plan again.
public struct PlanStamp: Sendable, Hashable {
    /// The device's local date when planned.
    public var day: LocalDate
    /// The device zone's identifier when planned.
    public var zoneIdentifier: String
    /// The zone's UTC offset (seconds) when planned.
    public var utcOffset: Int
    /// The plan's fingerprint (``AlarmChainPlanner/fingerprint``).
    public var fingerprint: String

    /// The stamp of a plan made at `now` in `zone`.
    public init(now: Date, zone: TimeZone, fingerprint: String) {
        day = WallClockTime(now, in: zone).date
        zoneIdentifier = zone.identifier
        utcOffset = zone.secondsFromGMT(for: now)
        self.fingerprint = fingerprint
    }
}

/// The pure timing rules of an alarm service (no clock, no I/O: `now` and the zone are parameters).
///
/// - A ring is due when its fire time has come. Of a chain's due rings only the latest rings (the
///   others are merged into it), so a machine that was down for three backups rings once.
/// - A due ring rings only while its chain is inside its proof window (first ring + window);
///   after that it is logged as missed.
/// - A chain under a hold-off (a live proof is running) does not ring until the hold ends; then
///   the latest backup that fell inside the hold rings at once, even past the window, and the
///   later ones keep their times.
public enum AlarmRingScheduler {
    /// The decision at `now`.
    /// - Parameters:
    ///   - now: the current instant.
    ///   - rings: the scheduled rings (not those already rung or cancelled).
    ///   - windowEnds: per chain, the end of its proof window; a chain missing here ends at its
    ///     last ring's fire time.
    ///   - heldUntil: per chain, the end of a hold-off in force.
    ///   - releasedHolds: per chain, when a hold-off ended without a proof: the rings that came
    ///     due before then were held, so the latest rings now even past the window (a held
    ///     backup is never missed).
    public static func decide(
        now: Date, rings: [BookedRing], windowEnds: [String: Date] = [:],
        heldUntil: [String: Date] = [:], releasedHolds: [String: Date] = [:]
    ) -> RingDecision {
        var decision = RingDecision()
        var byChain: [String: [BookedRing]] = [:]
        for ring in rings { byChain[ring.chain, default: []].append(ring) }
        var wakes: [Date] = []
        for chain in byChain.keys.sorted() {
            let chainRings = byChain[chain]!.sorted { ($0.fireDate, $0.ringIndex) < ($1.fireDate, $1.ringIndex) }
            let end = windowEnds[chain] ?? chainRings.last!.fireDate
            let due = chainRings.filter { $0.fireDate <= now }
            let later = chainRings.filter { $0.fireDate > now }
            if let hold = heldUntil[chain], hold > now {
                if !due.isEmpty { wakes.append(hold) }
                if let next = later.first { wakes.append(max(next.fireDate, hold)) }
                continue
            }
            if let latest = due.last {
                let wasHeld = releasedHolds[chain].map { latest.fireDate <= $0 } ?? false
                if wasHeld || now <= end.addingTimeInterval(lateGrace) {
                    decision.ring.append(latest)
                    decision.merged += due.dropLast()
                } else {
                    decision.missed += due
                }
            }
            if let next = later.first { wakes.append(next.fireDate) }
        }
        decision.ring.sort { ($0.fireDate, $0.id) < ($1.fireDate, $1.id) }
        decision.nextWake = wakes.min()
        return decision
    }

    /// How late after a chain's window a due ring still rings, in seconds (a service that wakes a
    /// moment after the last backup's time must still ring it): 5 s.
    public static let lateGrace: TimeInterval = 5

    /// The first instant of the next local date after `now` in `zone` (the midnight re-plan). On
    /// a date whose midnight is skipped by DST, the first instant that exists (e.g. 01:00).
    public static func nextMidnight(after now: Date, in zone: TimeZone) -> Date {
        let tomorrow = WallClockTime(now, in: zone).date.adding(days: 1)
        return WallClockTime(date: tomorrow, hour: 0, minute: 0).instant(in: zone)
    }

    /// Whether (and why) the prayer chains must be planned again at `now`.
    /// - Parameters:
    ///   - last: the stamp of the last plan, `nil` when there was none.
    ///   - now: the current instant.
    ///   - zone: the device's zone now.
    ///   - fingerprint: the fingerprint of the current settings' plan.
    ///   - clockWasSet: the service noticed the wall clock being set.
    public static func replanReason(
        last: PlanStamp?, now: Date, zone: TimeZone, fingerprint: String,
        clockWasSet: Bool = false
    ) -> ReplanReason? {
        guard let last else { return .firstRun }
        if last.fingerprint != fingerprint { return .settingsChanged }
        if last.zoneIdentifier != zone.identifier { return .zoneChanged }
        if clockWasSet { return .clockChanged }
        if WallClockTime(now, in: zone).date != last.day { return .newDay }
        // A DST change is not a zone change: the plan already has the right instants.
        return nil
    }

    /// The rings of a one-off chain: a first ring at `first`, then backups at the chain pattern's
    /// offsets (``AlarmChainConfiguration/ringOffsets``) over `window`.
    /// - Parameters:
    ///   - chain: the chain's id, e.g. `a7`; ring ids are `a7.r0`, `a7.r1`...
    ///   - first: the first ring.
    ///   - window: the proof window.
    ///   - firstGap: the first gap between rings [2 min].
    ///   - gapGrowth: how much each gap grows [1 min].
    ///   - maxGap: the largest gap [10 min].
    public static func oneOffRings(
        chain: String, first: Date, window: Duration,
        firstGap: Duration = .seconds(120), gapGrowth: Duration = .seconds(60),
        maxGap: Duration = .seconds(600)
    ) -> [BookedRing] {
        var pattern = AlarmChainConfiguration(deviceTimeZone: TimeZone(identifier: "UTC")!)
        pattern.proofWindow = window
        pattern.firstGap = max(firstGap, .milliseconds(100))
        pattern.gapGrowth = gapGrowth
        pattern.maxGap = max(maxGap, pattern.firstGap)
        return pattern.ringOffsets.enumerated().map { index, offset in
            BookedRing(
                id: "\(chain).r\(index)", chain: chain, ringIndex: index,
                fireDate: first.addingTimeInterval(offset.seconds))
        }
    }

    /// The volume of one ring of a chain, in percent: `volume` for every ring, or with
    /// `escalate`, rising in equal steps from `volume` at the first ring to 100 at the last
    /// (3 rings at 40 %: 40, 70, 100; a chain of one ring: `volume`).
    /// - Parameters:
    ///   - volume: the chain's volume, 1...100.
    ///   - ringIndex: 0 for the first ring.
    ///   - ringCount: the rings the chain has (first ring and backups).
    ///   - escalate: whether each backup rings louder than the one before.
    public static func ringVolume(volume: Double, ringIndex: Int, ringCount: Int, escalate: Bool) -> Double {
        guard escalate, ringCount > 1 else { return volume }
        let step = Double(min(max(ringIndex, 0), ringCount - 1)) / Double(ringCount - 1)
        return volume + (100 - volume) * step
    }

    /// Until when the service may listen (or watch) for a chain's proof between its rings: from
    /// `now` until its next ring or the end of its proof window, whichever comes first. While it
    /// rings it never listens (its own sound is never heard as reading).
    /// - Parameters:
    ///   - now: the present instant.
    ///   - scheduledRings: the chain's rings still to ring (state `scheduled`).
    ///   - windowEnd: the end of the chain's proof window.
    ///   - minimumSeconds: a slot shorter than this is not worth opening the device for [2 s].
    /// - Returns: the slot's end, or `nil` when a ring is due now or the slot would be too short.
    public static func listeningEnd(
        now: Date, scheduledRings: [BookedRing], windowEnd: Date, minimumSeconds: TimeInterval = 2
    ) -> Date? {
        guard !scheduledRings.contains(where: { $0.fireDate <= now }) else { return nil }
        let next = scheduledRings.map(\.fireDate).min() ?? windowEnd
        let end = min(next, windowEnd)
        return end.timeIntervalSince(now) >= minimumSeconds ? end : nil
    }
}
