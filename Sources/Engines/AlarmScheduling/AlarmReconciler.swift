public import PrayerPlanning

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
    /// Every chain whose alarms the system held was booked again (its fingerprint changed, or
    /// none was recorded); `false` when none was, or only some were (see ``resyncedChains``).
    public let isFullResync: Bool
    /// The plan's settings fingerprint (``AlarmPlan/fingerprint``), to store once every step
    /// succeeded.
    public let fingerprint: String
    /// Ringing alarms left alone.
    public let ringing: [AlarmID]
    /// Chains booked again in full because their fingerprint differed from the synced one, in
    /// time order. Other chains are left alone except for rings whose known content changed.
    public let resyncedChains: [Occurrence]
    /// The fingerprint of every chain the plan books, to store per chain once its steps
    /// succeeded (``AlarmLedger/apply(_:perform:save:)`` does).
    public let chainFingerprints: [Occurrence: String]

    /// A reconciliation with its chain fingerprints (the memberwise form, for tests and stores).
    public init(
        operations: [AlarmOperation], isFullResync: Bool, fingerprint: String, ringing: [AlarmID],
        resyncedChains: [Occurrence] = [], chainFingerprints: [Occurrence: String] = [:]
    ) {
        self.operations = operations
        self.isFullResync = isFullResync
        self.fingerprint = fingerprint
        self.ringing = ringing
        self.resyncedChains = resyncedChains
        self.chainFingerprints = chainFingerprints
    }
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
/// 5. A chain whose fingerprint (``AlarmChain/fingerprint``: its ids, fire times and sound)
///    differs from the one recorded when it was last synced, or that has no record, is booked
///    again in full (every kept id of it the system holds is cancelled and booked). Chains whose
///    fingerprint is unchanged are left alone: a change to one prayer never touches another's.
public enum AlarmReconciler {
    /// The steps, comparing chain by chain.
    /// - Parameters:
    ///   - plan: the desired plan (its ``AlarmPlan/alarms`` are booked).
    ///   - system: what the system holds now.
    ///   - syncedChains: the fingerprint of each chain as last synced without failures
    ///     (``AlarmLedger/syncedChains``); a chain missing here whose ids the system holds is
    ///     booked again.
    ///   - capacity: how many alarms the system holds at most (``AlarmBudget/capacity``).
    /// - Returns: the ordered steps.
    public static func reconcile(
        plan: AlarmPlan, system: [SystemAlarm], syncedChains: [Occurrence: String],
        capacity: Int? = nil
    ) -> Reconciliation {
        reconcile(plan: plan, system: system, capacity: capacity) { chain in
            syncedChains[chain.occurrence] == chain.fingerprint
        }
    }

    /// The steps for what a ledger recorded: its alarms as the system, and its synced chains
    /// (``AlarmLedger/syncedChainFingerprints(for:)``).
    public static func reconcile(plan: AlarmPlan, ledger: AlarmLedger, capacity: Int? = nil) -> Reconciliation {
        reconcile(
            plan: plan, system: ledger.systemAlarms, syncedChains: ledger.syncedChainFingerprints(for: plan),
            capacity: capacity)
    }

    /// The whole-plan form: every chain counts as synced when `syncedFingerprint` equals the
    /// plan's settings fingerprint (``AlarmPlan/fingerprint``), else none does (every kept id
    /// is booked again). Prefer ``reconcile(plan:system:syncedChains:capacity:)``, which re-books
    /// only the chains that changed.
    /// - Parameters:
    ///   - plan: the desired plan.
    ///   - system: what the system holds now.
    ///   - syncedFingerprint: the settings fingerprint of the last plan applied without failures.
    ///   - capacity: how many alarms the system holds at most.
    public static func reconcile(
        plan: AlarmPlan, system: [SystemAlarm], syncedFingerprint: String?,
        capacity: Int? = nil
    ) -> Reconciliation {
        let synced = syncedFingerprint == plan.fingerprint
        return reconcile(plan: plan, system: system, capacity: capacity) { _ in synced }
    }

    static func reconcile(
        plan: AlarmPlan, system: [SystemAlarm], capacity: Int?,
        isSynced: (AlarmChain) -> Bool
    ) -> Reconciliation {
        var seen: Set<AlarmID> = []
        let unique = system.filter { seen.insert($0.id).inserted }
        let ringing = Set(unique.filter { $0.state == .ringing }.map(\.id))
        var scheduled: [AlarmID: SystemAlarm] = [:]
        for alarm in unique where alarm.state == .scheduled { scheduled[alarm.id] = alarm }
        var resynced: [Occurrence] = []
        var holding = 0
        for chain in plan.chains where chain.isWithinBudget {
            guard chain.rings.contains(where: { scheduled[$0.id] != nil }) else { continue }
            holding += 1
            if !isSynced(chain) { resynced.append(chain.occurrence) }
        }
        let resyncedSet = Set(resynced)

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
                    let unchanged =
                        !resyncedSet.contains(occurrence)
                        && (current.content == nil || current.content == ring.content)
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
        return Reconciliation(
            operations: operations, isFullResync: holding > 0 && resynced.count == holding,
            fingerprint: plan.fingerprint, ringing: ringing.sorted(), resyncedChains: resynced,
            chainFingerprints: plan.chainFingerprints)
    }
}

/// What proofkit records about the system's alarms: the booked ids with their content, the
/// fingerprint of the last plan applied in full, and the ended chains. An app keeps one and
/// saves it after every step; `proofkit plan --state` keeps it in a JSON file.
public struct AlarmLedger: Sendable, Hashable {
    /// Booked alarms by id.
    public var alarms: [AlarmID: SystemAlarm]
    /// The settings fingerprint (``AlarmPlan/fingerprint``) of the last plan whose steps all
    /// succeeded.
    public var syncedFingerprint: String?
    /// The fingerprint of each chain of the last plan applied, as of its last fully successful
    /// sync (``AlarmChain/fingerprint``); a chain whose steps failed keeps its older record.
    public var syncedChains: [Occurrence: String]
    /// Ended chains (proofs and escapes), oldest first.
    public var outcomes: [ChainOutcome]
    /// Rings moved by a hold-off.
    public var postponed: [AlarmID: Date]
    /// Rings merged into a postponed one.
    public var merged: Set<AlarmID>

    public init(
        alarms: [SystemAlarm] = [], syncedFingerprint: String? = nil, outcomes: [ChainOutcome] = [],
        postponed: [AlarmID: Date] = [:], merged: Set<AlarmID> = [], syncedChains: [Occurrence: String] = [:]
    ) {
        self.alarms = Dictionary(alarms.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        self.syncedFingerprint = syncedFingerprint
        self.syncedChains = syncedChains
        self.outcomes = outcomes
        self.postponed = postponed
        self.merged = merged
    }

    /// The alarms as the system list reconciliation takes, in id order.
    public var systemAlarms: [SystemAlarm] { alarms.keys.sorted().map { alarms[$0]! } }

    /// The synced chain fingerprints to reconcile `plan` against: ``syncedChains``, or, for a
    /// ledger written before chains had fingerprints (none recorded) whose settings fingerprint
    /// is the plan's, the plan's own chain fingerprints (nothing changed).
    public func syncedChainFingerprints(for plan: AlarmPlan) -> [Occurrence: String] {
        if syncedChains.isEmpty, let syncedFingerprint, syncedFingerprint == plan.fingerprint {
            return plan.chainFingerprints
        }
        return syncedChains
    }

    /// What the planner needs from the ledger.
    public var planningContext: PlanningContext {
        PlanningContext(
            ended: Set(outcomes.map(\.occurrence)), postponed: postponed, merged: merged,
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
    /// whose new rings failed is kept (not cancelled). Each chain's fingerprint is recorded in
    /// ``syncedChains`` when its steps succeeded; the settings fingerprint only when every step
    /// did.
    /// - Returns: what happened.
    public mutating func apply(
        _ reconciliation: Reconciliation,
        perform: (AlarmOperation) -> String?,
        save: (AlarmLedger) -> Void = { _ in }
    ) -> ApplyReport {
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
        // Each chain's fingerprint is recorded when none of its steps failed; a failed chain keeps
        // its older record (so the next run books it again), and chains that left the plan go.
        var unsettled = failedOccurrences
        for failure in report.failed {
            if let occurrence = failure.operation.id.parsed?.occurrence { unsettled.insert(occurrence) }
        }
        for id in report.kept { if let occurrence = id.parsed?.occurrence { unsettled.insert(occurrence) } }
        var chains: [Occurrence: String] = [:]
        for (occurrence, fingerprint) in reconciliation.chainFingerprints {
            if !unsettled.contains(occurrence) {
                chains[occurrence] = fingerprint
            } else if let old = syncedChains[occurrence] {
                chains[occurrence] = old
            }
        }
        syncedChains = chains
        if report.failed.isEmpty && report.kept.isEmpty {
            syncedFingerprint = reconciliation.fingerprint
        }
        save(self)
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
