#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// An alarm the system holds (or that the ledger says it holds).
public struct SystemAlarm: Hashable, Sendable {
    /// Whether it waits or is sounding now.
    public enum State: String, Sendable, Hashable {
        case scheduled
        /// Sounding now: reconciliation never touches it.
        case ringing
    }
    public var id: AlarmID
    /// Its content, when the system can tell; `nil` = unknown (treated as unchanged unless a
    /// full re-sync is due).
    public var content: AlarmContent?
    public var state: State

    public init(id: AlarmID, content: AlarmContent?, state: State = .scheduled) {
        self.id = id
        self.content = content
        self.state = state
    }
}

/// Why an alarm is cancelled.
public enum CancelReason: String, Sendable, Hashable {
    /// Same id, new content (time or sound): cancelled, then booked again at once.
    case contentChanged
    /// An older chain of an occurrence the plan books anew (other prayer minute): cancelled only
    /// after the new chain is booked.
    case superseded
    /// One of our ids that the plan no longer holds (past, over budget, prayer turned off, ended).
    case notInPlan
    /// Not of our id scheme (an old build's, or lost to a crash).
    case unknownID
}

/// One step for the system.
public enum AlarmOperation: Hashable, Sendable, CustomStringConvertible {
    case schedule(PlannedAlarm)
    case cancel(AlarmID, CancelReason)

    /// The alarm the step is about.
    public var id: AlarmID {
        switch self {
        case .schedule(let alarm): alarm.id
        case .cancel(let id, _): id
        }
    }

    public var description: String {
        switch self {
        case .schedule(let alarm): "schedule \(alarm.id)"
        case .cancel(let id, let reason): "cancel \(id) (\(reason.rawValue))"
        }
    }
}

/// The ordered steps that turn the system's alarms into the plan.
public struct Reconciliation: Sendable {
    /// In order; apply one by one.
    public let operations: [AlarmOperation]
    /// The plan's fingerprint differed from the last fully applied one: every kept id was
    /// booked again.
    public let isFullResync: Bool
    /// The plan's fingerprint, to store once every step succeeded.
    public let fingerprint: String
    /// Ringing alarms left alone.
    public let ringing: [AlarmID]
}

/// Reconciliation: a pure function from the desired plan and the system's alarms to the steps.
///
/// Rules, in order of the steps produced:
/// 1. Ringing alarms are never touched (not cancelled, not booked again).
/// 2. Alarms the plan does not know and whose occurrence the plan does not book anew
///    (`notInPlan`, `unknownID`) are cancelled first: this frees room.
/// 3. Then chain by chain in time order: an id whose content changed is cancelled and booked
///    again at once (cancel-before-replace); new rings are booked; and only then the
///    occurrence's old chain (`superseded`) is cancelled, so the occurrence is never unarmed.
/// 4. With a `capacity`, a booking that would go over it is preceded by cancelling an old
///    superseded ring of the latest occurrence, never the last ring an occurrence still has
///    unless nothing else is left.
/// 5. When `syncedFingerprint` differs from the plan's, every kept id is booked again.
public enum AlarmReconciler {
    /// - Parameters:
    ///   - plan: the desired plan (its ``AlarmPlan/alarms`` are booked).
    ///   - system: what the system holds now.
    ///   - syncedFingerprint: the fingerprint of the last plan applied without failures, if any.
    ///   - capacity: how many alarms the system holds at most (``AlarmBudget/capacity``).
    /// - Returns: the ordered steps.
    public static func reconcile(plan: AlarmPlan, system: [SystemAlarm], syncedFingerprint: String?,
                                 capacity: Int? = nil) -> Reconciliation {
        var seen: Set<AlarmID> = []
        let unique = system.filter { seen.insert($0.id).inserted }
        let ringing = Set(unique.filter { $0.state == .ringing }.map(\.id))
        var scheduled: [AlarmID: SystemAlarm] = [:]
        for alarm in unique where alarm.state == .scheduled { scheduled[alarm.id] = alarm }
        let fullResync = syncedFingerprint != plan.fingerprint && !scheduled.isEmpty

        let chains = plan.chains.filter(\.isWithinBudget).map { chain in
            (chain.occurrence, chain.rings.filter { !ringing.contains($0.id) })
        }
        let plannedIDs = Set(chains.flatMap { $0.1.map(\.id) })
        let plannedOccurrences = Set(chains.map(\.0))

        var operations: [AlarmOperation] = []
        var count = unique.count
        var superseded: [Occurrence: [AlarmID]] = [:]
        for id in scheduled.keys.sorted() where !plannedIDs.contains(id) {
            if let parsed = id.parsed {
                if plannedOccurrences.contains(parsed.occurrence) {
                    superseded[parsed.occurrence, default: []].append(id)
                } else {
                    operations.append(.cancel(id, .notInPlan))
                    count -= 1
                }
            } else {
                operations.append(.cancel(id, .unknownID))
                count -= 1
            }
        }

        let order = chains.map(\.0)
        func makeRoom(processing index: Int) {
            guard let capacity else { return }
            while count + 1 > capacity {
                // Latest occurrences first; keep each occurrence's last old ring while possible.
                var victim: (Occurrence, Int)? = nil
                for pass in 0..<2 where victim == nil {
                    for occurrence in order[index...].reversed() {
                        guard let old = superseded[occurrence], !old.isEmpty else { continue }
                        if pass == 0 && old.count < 2 { continue }
                        victim = (occurrence, old.count - 1)
                        break
                    }
                }
                guard let (occurrence, position) = victim else { return }
                let id = superseded[occurrence]!.remove(at: position)
                operations.append(.cancel(id, .superseded))
                count -= 1
            }
        }

        for (index, (occurrence, rings)) in chains.enumerated() {
            for ring in rings {
                if let current = scheduled[ring.id] {
                    let unchanged = !fullResync && (current.content == nil || current.content == ring.content)
                    if !unchanged {
                        operations.append(.cancel(ring.id, .contentChanged))
                        operations.append(.schedule(ring))
                    }
                } else {
                    makeRoom(processing: index)
                    operations.append(.schedule(ring))
                    count += 1
                }
            }
            for id in superseded[occurrence] ?? [] {
                operations.append(.cancel(id, .superseded))
                count -= 1
            }
            superseded[occurrence] = nil
        }
        return Reconciliation(operations: operations, isFullResync: fullResync, fingerprint: plan.fingerprint,
                              ringing: ringing.sorted())
    }
}

/// What proofkit records about the system's alarms: the booked ids with their content, the
/// fingerprint of the last plan applied in full, and the ended chains. An app keeps one and
/// saves it after every step; `proofkit plan --state` keeps it in a JSON file.
public struct AlarmLedger: Sendable, Hashable {
    /// Booked alarms by id.
    public var alarms: [AlarmID: SystemAlarm]
    /// The fingerprint of the last plan whose steps all succeeded.
    public var syncedFingerprint: String?
    /// Ended chains (proofs and escapes), oldest first.
    public var outcomes: [ChainOutcome]
    /// Rings moved by a hold-off.
    public var postponed: [AlarmID: Date]
    /// Rings merged into a postponed one.
    public var merged: Set<AlarmID>

    public init(alarms: [SystemAlarm] = [], syncedFingerprint: String? = nil, outcomes: [ChainOutcome] = [],
                postponed: [AlarmID: Date] = [:], merged: Set<AlarmID> = []) {
        self.alarms = Dictionary(alarms.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        self.syncedFingerprint = syncedFingerprint
        self.outcomes = outcomes
        self.postponed = postponed
        self.merged = merged
    }

    /// The alarms as the system list reconciliation takes, in id order.
    public var systemAlarms: [SystemAlarm] { alarms.keys.sorted().map { alarms[$0]! } }

    /// What the planner needs from the ledger.
    public var planningContext: PlanningContext {
        PlanningContext(ended: Set(outcomes.map(\.occurrence)), postponed: postponed, merged: merged,
                        occupiedSlots: alarms.values.filter { $0.state == .ringing }.count)
    }

    /// The ledger after one step: a booked alarm is recorded, a cancelled one removed; a failed
    /// step changes nothing (the next run retries it).
    public func applying(_ operation: AlarmOperation, succeeded: Bool) -> AlarmLedger {
        guard succeeded else { return self }
        var next = self
        switch operation {
        case .schedule(let alarm):
            next.alarms[alarm.id] = SystemAlarm(id: alarm.id, content: alarm.content, state: .scheduled)
        case .cancel(let id, _):
            if next.alarms[id]?.state != .ringing { next.alarms[id] = nil }
        }
        return next
    }

    /// Records an ended chain (a proof or an escape) and forgets its hold-off entries.
    public mutating func record(_ outcome: ChainOutcome) {
        guard !outcomes.contains(where: { $0.occurrence == outcome.occurrence }) else { return }
        outcomes.append(outcome)
    }

    /// Drops outcomes, hold-offs and merges older than `date` (to keep the ledger small).
    public mutating func prune(before date: LocalDate) {
        outcomes.removeAll { $0.occurrence.date < date }
        postponed = postponed.filter { ($0.key.parsed?.occurrence.date ?? date) >= date }
        merged = merged.filter { ($0.parsed?.occurrence.date ?? date) >= date }
    }

    /// Applies `reconciliation` one step at a time through `perform` (the system call: returns
    /// `nil` on success, or why it failed), recording each success at once and handing the
    /// ledger to `save` after every step, so an interrupted run leaves a ledger the next run
    /// repairs. A failed step is reported and the rest go on; the old chain of an occurrence
    /// whose new rings failed is kept (not cancelled). The fingerprint is stored only when
    /// every step succeeded.
    /// - Returns: what happened.
    public mutating func apply(_ reconciliation: Reconciliation,
                               perform: (AlarmOperation) -> String?,
                               save: (AlarmLedger) -> Void = { _ in }) -> ApplyReport {
        var report = ApplyReport()
        var failedOccurrences: Set<Occurrence> = []
        var failedReplacements: Set<AlarmID> = []
        for operation in reconciliation.operations {
            if case .cancel(let id, .superseded) = operation, let occurrence = id.parsed?.occurrence,
                failedOccurrences.contains(occurrence)
            {
                report.kept.append(id)
                continue
            }
            if case .schedule(let alarm) = operation, failedReplacements.contains(alarm.id) {
                report.failed.append(.init(operation: operation, reason: "not replaced: its cancel failed"))
                continue
            }
            let failure = perform(operation)
            self = applying(operation, succeeded: failure == nil)
            if let failure {
                report.failed.append(.init(operation: operation, reason: failure))
                switch operation {
                case .schedule(let alarm): failedOccurrences.insert(alarm.occurrence)
                case .cancel(let id, .contentChanged): failedReplacements.insert(id)
                case .cancel: break
                }
            } else {
                switch operation {
                case .schedule(let alarm): report.booked.append(alarm.id)
                case .cancel(let id, _): report.cancelled.append(id)
                }
            }
            save(self)
        }
        if report.failed.isEmpty && report.kept.isEmpty {
            syncedFingerprint = reconciliation.fingerprint
            save(self)
        }
        return report
    }
}

/// The result of ``AlarmLedger/apply(_:perform:save:)``.
public struct ApplyReport: Sendable, Hashable {
    /// A step that failed, and why.
    public struct Failure: Sendable, Hashable {
        public let operation: AlarmOperation
        public let reason: String
    }
    /// Ids booked, in order.
    public var booked: [AlarmID] = []
    /// Ids cancelled, in order.
    public var cancelled: [AlarmID] = []
    /// Old rings kept because their occurrence's new chain failed to book.
    public var kept: [AlarmID] = []
    /// Failed steps.
    public var failed: [Failure] = []
}
