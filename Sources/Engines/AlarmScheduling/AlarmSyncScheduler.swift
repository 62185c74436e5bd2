import PrayerPlanning
import ProofkitCore

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// When to sync the system's alarms with the plan: one sync at a time, and requests that come
/// close together merged into one. A pure state machine: the caller passes `now` and runs the
/// sync itself (plan, ``AlarmReconciler/reconcile(plan:ledger:capacity:)``,
/// ``AlarmLedger/apply(_:perform:save:)``).
///
/// ```swift
/// var syncs = AlarmSyncScheduler()
/// // A setting changed, the clock jumped, midnight passed...:
/// if let due = syncs.request(at: now) { wake(at: due) }
/// // When woken:
/// if syncs.startIfDue(at: now) {
///     runTheSync()                              // may take a while; requests keep coming
///     if let due = syncs.finish(at: now) { wake(at: due) }
/// }
/// ```
///
/// Rules:
/// - A request is served by a sync that starts after it: a sync reads the settings and the
///   system's alarms when it starts, so what changed during a sync gets a sync of its own.
/// - Requests less than ``debounce`` apart are merged: the sync starts ``debounce`` after the
///   last request of a burst (250 ms), but never later than ``maxDelay`` after the first
///   request still waiting (2 s), so a steady stream of requests cannot hold syncs off.
/// - Only one sync runs at a time: while one runs, ``startIfDue(at:)`` refuses, and the requests
///   that arrive are served by one sync after ``finish(at:)``.
public struct AlarmSyncScheduler: Sendable, Hashable {
    /// Requests closer together than this are merged into one sync [250 ms].
    public let debounce: Duration
    /// The longest a waiting request is held off by later ones [2 s].
    public let maxDelay: Duration
    /// Whether a sync is running (between ``startIfDue(at:)`` and ``finish(at:)``).
    public private(set) var isSyncing = false
    /// The first and the last request not yet served by a started sync.
    public private(set) var firstWaiting: Date?
    public private(set) var lastWaiting: Date?
    /// Requests received, and syncs started (for reports and tests).
    public private(set) var requestCount = 0
    public private(set) var syncCount = 0

    /// - Parameters:
    ///   - debounce: how close requests must be to merge (≥ 0) [250 ms].
    ///   - maxDelay: the longest a request waits for quiet (≥ `debounce`) [2 s].
    public init(debounce: Duration = .milliseconds(250), maxDelay: Duration = .seconds(2)) {
        precondition(debounce >= .zero && maxDelay >= debounce, "need 0 ≤ debounce ≤ maxDelay")
        self.debounce = debounce
        self.maxDelay = maxDelay
    }

    /// When the next sync is due: `nil` while none is waiting or while a sync runs (then
    /// ``finish(at:)`` says).
    public var nextSync: Date? {
        guard !isSyncing, let firstWaiting, let lastWaiting else { return nil }
        return min(lastWaiting.addingTimeInterval(debounce.seconds), firstWaiting.addingTimeInterval(maxDelay.seconds))
    }

    /// Records a request for a sync (something changed).
    /// - Parameter now: the current instant.
    /// - Returns: when the sync is due (``nextSync``); `nil` while a sync runs.
    public mutating func request(at now: Date) -> Date? {
        requestCount += 1
        if firstWaiting == nil { firstWaiting = now }
        lastWaiting = max(lastWaiting ?? now, now)
        return nextSync
    }

    /// Starts the sync when one is due at `now` and none runs.
    /// - Returns: `true` when the caller must run a sync now (and call ``finish(at:)`` after);
    ///   every request so far is then served by it.
    public mutating func startIfDue(at now: Date) -> Bool {
        guard let due = nextSync, now >= due else { return false }
        isSyncing = true
        syncCount += 1
        firstWaiting = nil
        lastWaiting = nil
        return true
    }

    /// The running sync ended (whether or not its steps succeeded; a failed step is retried
    /// by the next sync the caller requests).
    /// - Returns: when the next sync is due, if requests came in while this one ran.
    public mutating func finish(at now: Date) -> Date? {
        precondition(isSyncing, "finish(at:) without a running sync")
        isSyncing = false
        return nextSync
    }
}
