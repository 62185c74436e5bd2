import AlarmScheduling
import Foundation
import PrayerPlanning
import ProofkitCore
import Testing

/// A stand-in for the system's alarm list (what AlarmKit or the Linux alarm service holds):
/// it keeps the booked alarms, counts syncs, and records every operation. Booking an id it
/// already holds, or cancelling one it does not, is recorded as a fault: that is what two
/// syncs working from the same stale listing do.
private final class SystemAlarmList {
    var alarms: [AlarmID: AlarmContent] = [:]
    var operations: [AlarmOperation] = []
    var bookedTwice: [AlarmID] = []
    var cancelledMissing: [AlarmID] = []
    var syncsStarted = 0
    var running = 0
    var mostAtOnce = 0

    var listing: [SystemAlarm] { alarms.keys.sorted().map { SystemAlarm(id: $0, content: alarms[$0]) } }

    func perform(_ operation: AlarmOperation) {
        operations.append(operation)
        switch operation {
        case .schedule(let alarm):
            if alarms[alarm.id] != nil { bookedTwice.append(alarm.id) }
            alarms[alarm.id] = alarm.content
        case .cancel(let id, _):
            if alarms.removeValue(forKey: id) == nil { cancelledMissing.append(id) }
        }
    }
}

/// Karachi, two days, Fajr and Maghrib; `fajrMinutes` is the user's Fajr adjustment.
private func planner(fajrMinutes: Int) throws -> AlarmChainPlanner {
    let zone = try #require(TimeZone(identifier: "Asia/Karachi"))
    var parameters = CalculationMethod.karachi.parameters
    parameters.adjustments[.fajr] = fajrMinutes
    let calculator = try PrayerTimeCalculator(
        coordinates: Coordinates(latitude: 24.8607, longitude: 67.0011), timeZone: zone, parameters: parameters)
    var configuration = AlarmChainConfiguration(deviceTimeZone: zone)
    configuration.days = 2
    return try AlarmChainPlanner(calculator: calculator, configuration: configuration)
}

/// One simulated run: settings changes at the given milliseconds (each sets the Fajr adjustment
/// to its index + 1 and asks for a sync); each sync reads the listing and the settings when it
/// starts and its steps reach the system `syncMilliseconds` later (as a slow system call would).
/// With `serialised`, the ``AlarmSyncScheduler`` decides when syncs run; without, every
/// request starts a sync at once (the naive app).
private func simulate(changes: [Int], syncMilliseconds: Int, serialised: Bool) throws
    -> (system: SystemAlarmList, syncStarts: [Int], finalPlan: AlarmPlan)
{
    let start = try #require(parseISO8601("2026-11-30T04:00:00+05:00"))
    func at(_ ms: Int) -> Date { start.addingTimeInterval(Double(ms) / 1000) }
    let system = SystemAlarmList()
    var scheduler = AlarmSyncScheduler()
    var setting = 0
    var synced: [Occurrence: String] = [:]
    var syncStarts: [Int] = []
    // Running syncs: when their steps land, and what they are.
    var running: [(end: Int, result: Reconciliation)] = []
    var pending = changes.sorted()
    var wake: Int? = nil
    func milliseconds(_ date: Date) -> Int { Int((date.timeIntervalSince(start) * 1000).rounded()) }

    func startSync(_ now: Int) throws {
        system.syncsStarted += 1
        syncStarts.append(now)
        system.running += 1
        system.mostAtOnce = max(system.mostAtOnce, system.running)
        let plan = try planner(fajrMinutes: setting).plan(now: at(now))
        let result = AlarmReconciler.reconcile(plan: plan, system: system.listing, syncedChains: synced)
        running.append((now + syncMilliseconds, result))
    }

    while true {
        let candidates = [pending.first, wake, running.map(\.end).min()].compactMap { $0 }
        guard let now = candidates.min() else { break }
        // Steps landing first, then new requests, then a due sync.
        if let index = running.firstIndex(where: { $0.end == now }) {
            let finished = running.remove(at: index)
            for operation in finished.result.operations { system.perform(operation) }
            synced = finished.result.chainFingerprints
            system.running -= 1
            if serialised { wake = scheduler.finish(at: at(now)).map(milliseconds) }
            continue
        }
        if pending.first == now {
            pending.removeFirst()
            setting += 1
            if serialised {
                if let due = scheduler.request(at: at(now)) { wake = milliseconds(due) }
            } else {
                try startSync(now)
            }
            continue
        }
        wake = nil
        if scheduler.startIfDue(at: at(now)) { try startSync(now) }
    }
    return (system, syncStarts, try planner(fajrMinutes: setting).plan(now: at(changes.max() ?? 0)))
}

@Suite("AlarmSyncScheduler: one sync at a time, requests within 250 ms merged")
struct AlarmSyncSchedulerTests {
    @Test("the state machine: debounce, the 2 s cap, nothing starts while a sync runs")
    func stateMachine() throws {
        let t0 = try #require(parseISO8601("2026-11-30T04:00:00Z"))
        func at(_ ms: Double) -> Date { t0.addingTimeInterval(ms / 1000) }
        var scheduler = AlarmSyncScheduler()
        // (Mutating calls are made outside #expect, which cannot take them.)
        let idle = scheduler.startIfDue(at: at(0))
        #expect(scheduler.nextSync == nil && !idle)
        let due1 = scheduler.request(at: at(0))
        #expect(due1 == at(250))
        let due2 = scheduler.request(at: at(100))
        #expect(due2 == at(350), "a request within 250 ms moves the sync")
        let early = scheduler.startIfDue(at: at(349))
        #expect(!early)
        let started = scheduler.startIfDue(at: at(350))
        #expect(started && scheduler.isSyncing && scheduler.syncCount == 1)
        let during = scheduler.request(at: at(400))
        #expect(during == nil, "no second sync while one runs")
        let second = scheduler.startIfDue(at: at(5000))
        #expect(!second)
        let next = scheduler.finish(at: at(900))
        #expect(next == at(650), "the request made during the sync gets its own")
        let again = scheduler.startIfDue(at: at(900))
        #expect(again)
        let none = scheduler.finish(at: at(950))
        #expect(none == nil && scheduler.nextSync == nil)
        // A request every 200 ms (each within 250 ms of the last) is held off 2 s at most.
        for step in 0..<20 { _ = scheduler.request(at: at(1000 + 200 * Double(step))) }
        #expect(scheduler.nextSync == at(3000))
        let capped = scheduler.startIfDue(at: at(3000))
        #expect(capped && scheduler.requestCount == 23 && scheduler.syncCount == 3)
    }

    @Test("a burst of changes is one sync, and nothing is booked twice")
    func burst() throws {
        // Ten changes 50 ms apart; the system takes 400 ms per sync.
        let changes = (0..<10).map { $0 * 50 }
        let run = try simulate(changes: changes, syncMilliseconds: 400, serialised: true)
        #expect(run.syncStarts == [700], "one sync, 250 ms after the last change")
        #expect(run.system.bookedTwice.isEmpty && run.system.cancelledMissing.isEmpty)
        #expect(run.system.mostAtOnce == 1)
        #expect(Dictionary(uniqueKeysWithValues: run.finalPlan.alarms.map { ($0.id, $0.content) }) == run.system.alarms)
        #expect(run.system.operations.count == 28, "the final settings booked once, no intermediate ones")
    }

    @Test("changes while a sync runs get one more sync after it; a change after the window gets its own")
    func overlapping() throws {
        // Burst 1 at 0-200 ms -> sync at 450 (runs to 1050: 600 ms); changes at 600, 700, 900
        // arrive during it -> one sync when it ends (1150: 250 ms after 900); a change at 4000
        // -> a sync at 4250.
        let changes = [0, 100, 200, 600, 700, 900, 4000]
        let run = try simulate(changes: changes, syncMilliseconds: 600, serialised: true)
        #expect(run.syncStarts == [450, 1150, 4250])
        #expect(run.system.syncsStarted == 3 && run.system.mostAtOnce == 1)
        #expect(run.system.bookedTwice.isEmpty && run.system.cancelledMissing.isEmpty)
        #expect(Dictionary(uniqueKeysWithValues: run.finalPlan.alarms.map { ($0.id, $0.content) }) == run.system.alarms)
        // Each sync only replaced Fajr: Maghrib's 14 rings were booked once, by the first.
        let maghribBookings = run.system.operations.filter {
            if case .schedule(let alarm) = $0 { alarm.occurrence.prayer == .maghrib } else { false }
        }
        #expect(maghribBookings.count == 14)
    }

    @Test("without the scheduler the same bursts overlap and book alarms twice (the fault the test catches)")
    func naiveControl() throws {
        let run = try simulate(changes: [0, 100, 200, 600, 700, 900, 4000], syncMilliseconds: 600, serialised: false)
        #expect(run.system.syncsStarted == 7 && run.system.mostAtOnce > 1)
        #expect(!run.system.bookedTwice.isEmpty)
    }
}
