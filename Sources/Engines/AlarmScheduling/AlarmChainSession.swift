import PrayerPlanning
import ProofkitCore

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// Something that happens while a chain rings.
public enum ChainEvent: Sendable, Hashable {
    /// The proof screen opened (the sleeper picked the phone up).
    case proofScreenOpened(at: Date)
    /// The sleeper is working on the proof (a rep counted, a word heard): the hold-off renews.
    case proofActivity(at: Date)
    /// The proof screen closed without a proof (the phone was put down).
    case proofScreenClosed(at: Date)
    /// The proof was accepted.
    case proofAccepted(at: Date)
    /// A deliberate dismissal (e.g. a long hold): the alarm ends, recorded as an escape.
    case deliberateDismissal(at: Date)
}

/// What the app must do after an event.
public enum ChainEffect: Sendable, Hashable {
    /// Move a booked ring to a later instant (cancel and book it again with the new time).
    case postpone(AlarmID, to: Date)
    /// Cancel a ring (the rest of an ended chain, or a ring merged into a postponed one).
    case cancel(AlarmID)
    /// Record how the chain ended (in the ledger and the history).
    case record(ChainOutcome)
}

/// One chain while it rings: a pure state machine from events to effects.
///
/// - Only a proof or a deliberate dismissal ends the chain; stopping one ring does not, so a
///   sleeper who silenced a ring and fell asleep hears the next backup.
/// - While the proof screen is open, backups due within the hold-off (``holdOff`` after the
///   screen opened or the last activity) are held off: the first of them moves to the end of the
///   hold-off, the others in it merge into that one. Later backups are untouched, so if the
///   phone is put down they still come.
/// - A deliberate dismissal ends the chain and is recorded as an escape, never as a proof.
public struct AlarmChainSession: Sendable, Hashable {
    /// The occurrence the chain is for.
    public let occurrence: Occurrence
    /// The hold-off length.
    public let holdOff: Duration
    /// Rings still to come (with their current times), in time order.
    public private(set) var pending: [PlannedAlarm]
    /// End of the current hold-off, if any.
    public private(set) var heldUntil: Date?
    /// Whether the proof screen is open.
    public private(set) var isProofScreenOpen = false
    /// How the chain ended, once it has.
    public private(set) var outcome: ChainOutcome?

    /// - Parameters:
    ///   - rings: the chain's rings (one occurrence; past ones may be included).
    ///   - holdOff: ``AlarmChainConfiguration/holdOff``.
    public init(rings: [PlannedAlarm], holdOff: Duration) {
        precondition(!rings.isEmpty && Set(rings.map(\.occurrence)).count == 1, "one chain, one occurrence")
        occurrence = rings[0].occurrence
        self.holdOff = holdOff
        pending = rings.sorted(by: alarmOrder)
    }

    /// Handles one event. Events after the chain ended do nothing.
    /// - Returns: the effects for the app, in order.
    public mutating func handle(_ event: ChainEvent) -> [ChainEffect] {
        guard outcome == nil else { return [] }
        switch event {
        case .proofScreenOpened(let now), .proofActivity(let now):
            isProofScreenOpen = true
            pending.removeAll { $0.fireDate <= now }
            let until = now.addingTimeInterval(holdOff.seconds)
            heldUntil = until
            let held = pending.filter { $0.fireDate > now && $0.fireDate < until }
            guard let first = held.first else { return [] }
            var effects: [ChainEffect] = [.postpone(first.id, to: until)]
            for ring in held.dropFirst() { effects.append(.cancel(ring.id)) }
            let heldIDs = Set(held.map(\.id))
            pending = pending.filter { !heldIDs.contains($0.id) || $0.id == first.id }.map { ring in
                guard ring.id == first.id else { return ring }
                return PlannedAlarm(
                    id: ring.id, occurrence: ring.occurrence, ringIndex: ring.ringIndex,
                    prayerTime: ring.prayerTime,
                    content: AlarmContent(fireDate: until, sound: ring.content.sound))
            }.sorted(by: alarmOrder)
            return effects
        case .proofScreenClosed:
            isProofScreenOpen = false
            return []
        case .proofAccepted(let now):
            return end(.proof, at: now)
        case .deliberateDismissal(let now):
            return end(.escape, at: now)
        }
    }

    private mutating func end(_ kind: ChainOutcome.Kind, at now: Date) -> [ChainEffect] {
        let result = ChainOutcome(occurrence: occurrence, kind: kind, at: now)
        outcome = result
        let effects = pending.filter { $0.fireDate > now }.map { ChainEffect.cancel($0.id) }
        pending = []
        heldUntil = nil
        isProofScreenOpen = false
        return effects + [.record(result)]
    }
}

extension AlarmLedger {
    /// Applies a session's effects to the ledger: postponed and merged rings are remembered for
    /// the planner, ended chains recorded. (The cancels and re-bookings themselves come from the
    /// next reconciliation, or the app performs them directly.)
    public mutating func note(_ effects: [ChainEffect]) {
        let ends = effects.contains { if case .record = $0 { true } else { false } }
        for effect in effects {
            switch effect {
            case .postpone(let id, let date): postponed[id] = date
            case .cancel(let id): if !ends && postponed[id] == nil { merged.insert(id) }
            case .record(let outcome): record(outcome)
            }
        }
    }
}
