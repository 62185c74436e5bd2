import AlarmScheduling
import Foundation
import PrayerPlanning
import TestSupport
import Testing

/// A random planning situation.
struct Scenario: CustomStringConvertible {
    let planner: AlarmChainPlanner
    let now: Date
    let capacity: Int?
    let description: String

    static let places: [(String, Double, Double)] = [
        ("Pacific/Chatham", -43.9535, -176.5597), ("Pacific/Pago_Pago", -14.2756, -170.7020),
        ("Europe/London", 51.5074, -0.1278), ("Asia/Karachi", 24.8607, 67.0011),
        ("America/Chicago", 41.8781, -87.6298), ("America/Santiago", -33.4489, -70.6693),
        ("Europe/Stockholm", 59.3293, 18.0686), ("Europe/Oslo", 69.6492, 18.9553),
        ("Australia/Sydney", -33.8688, 151.2093), ("Asia/Riyadh", 21.4225, 39.8262),
        ("Pacific/Kiritimati", 1.8721, -157.4278), ("America/St_Johns", 47.5615, -52.7126),
    ]

    static func random(_ rng: inout SplitMix64, variantOf base: Scenario? = nil) -> Scenario {
        let place = places.randomElement(using: &rng)!
        let zone = TimeZone(identifier: place.0)!
        var parameters = CalculationMethod.allCases.filter { $0 != .other }.randomElement(using: &rng)!.parameters
        parameters.polarResolution = PolarResolution.allCases.randomElement(using: &rng)!
        parameters.highLatitudeRule = HighLatitudeRule.allCases.randomElement(using: &rng)!
        let calculator = try! PrayerTimeCalculator(
            coordinates: Coordinates(latitude: place.1, longitude: place.2), timeZone: zone, parameters: parameters)
        let device = Bool.random(using: &rng) ? zone : TimeZone(identifier: places.randomElement(using: &rng)!.0)!
        var configuration = AlarmChainConfiguration(deviceTimeZone: device)
        configuration.clockMode = Bool.random(using: &rng) ? .timetableClock : .sameInstant
        var prayers = Set([Prayer.fajr, .dhuhr, .asr, .maghrib, .isha].filter { _ in Bool.random(using: &rng) })
        if prayers.isEmpty { prayers = [.fajr] }
        configuration.prayers = prayers
        configuration.days = Int.random(in: 1...10, using: &rng)
        configuration.proofWindow = .seconds([0, 300, 600, 1800, 2700, 3600].randomElement(using: &rng)!)
        if Int.random(in: 0..<10, using: &rng) < 7 {
            let limit = Int.random(in: 5...90, using: &rng)
            configuration.budget = AlarmBudget(
                systemLimit: limit, reservedForReminders: Int.random(in: 0...min(20, limit - 1), using: &rng),
                keepsTransitionHeadroom: Int.random(in: 0..<10, using: &rng) < 9)
        }
        if Bool.random(using: &rng) { configuration.sounds[.fajr] = "soft-fajr" }
        let start = 1_767_225_600.0  // 2026-01-01
        let now = Date(timeIntervalSince1970: start + Double.random(in: 0..<(3 * 365 * 86_400), using: &rng).rounded())
        let planner = try! AlarmChainPlanner(calculator: calculator, configuration: configuration)
        return Scenario(
            planner: planner, now: now, capacity: configuration.budget.capacity,
            description:
                "\(place.0) device \(device.identifier) \(configuration.clockMode) \(prayers.sorted()) days \(configuration.days) window \(configuration.proofWindow) budget \(String(describing: configuration.budget.systemLimit))/\(configuration.budget.reservedForReminders) now \(iso8601(now, in: zone))"
        )
    }

    /// The same place and device with other settings (a changed plan structure).
    func variant(_ rng: inout SplitMix64) -> AlarmChainPlanner {
        var configuration = planner.configuration
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: configuration.proofWindow = .seconds([0, 300, 1800, 3600].randomElement(using: &rng)!)
        case 1: configuration.sounds[.maghrib] = "other-sound"
        case 2: configuration.days = Int.random(in: 1...10, using: &rng)
        default: break
        }
        var parameters = planner.calculator.parameters
        if Bool.random(using: &rng) { parameters.adjustments.fajr = Int.random(in: -3...3, using: &rng) }
        if Bool.random(using: &rng) { parameters.adjustments.maghrib = Int.random(in: -2...2, using: &rng) }
        let calculator = try! PrayerTimeCalculator(
            coordinates: planner.calculator.coordinates,
            timeZone: planner.calculator.timeZone, parameters: parameters)
        return try! AlarmChainPlanner(calculator: calculator, configuration: configuration)
    }
}

/// An initial system: an older plan's alarms, some lost, some foreign, some ringing, some
/// changed. `truth` is what the system holds; `listing` is what it reports (content may be
/// unknown, except for changed alarms).
func messySystem(for scenario: Scenario, _ rng: inout SplitMix64)
    -> (listing: [SystemAlarm], truth: [SystemAlarm], fingerprint: String?)
{
    let same = Bool.random(using: &rng)
    let older = same ? scenario.planner : scenario.variant(&rng)
    let earlier = scenario.now.addingTimeInterval(-Double.random(in: 0...(3 * 86_400), using: &rng).rounded())
    let oldPlan = older.plan(now: earlier)
    var truth: [SystemAlarm] = []
    var listing: [SystemAlarm] = []
    for alarm in oldPlan.alarms where Int.random(in: 0..<10, using: &rng) >= 2 {
        var content = alarm.content
        let changed = Int.random(in: 0..<20, using: &rng) == 0
        if changed { content.fireDate.addTimeInterval(60) }
        let ringing = alarm.fireDate <= scenario.now && Int.random(in: 0..<3, using: &rng) == 0
        let state: SystemAlarm.State = ringing ? .ringing : .scheduled
        truth.append(SystemAlarm(id: alarm.id, content: content, state: state))
        listing.append(
            SystemAlarm(id: alarm.id, content: changed || Bool.random(using: &rng) ? content : nil, state: state))
    }
    for index in 0..<Int.random(in: 0...3, using: &rng) {
        let foreign = SystemAlarm(id: AlarmID(rawValue: "legacy-\(index)-\(rng.next() % 1000)"), content: nil)
        truth.append(foreign)
        listing.append(foreign)
    }
    let fingerprint: String? = Bool.random(using: &rng) ? older.fingerprint : nil
    let order = Array(truth.indices).shuffled(using: &rng)
    return (order.map { listing[$0] }, order.map { truth[$0] }, fingerprint)
}

/// The system, as a simple store that checks what the operations do to it.
struct SimulatedSystem {
    var alarms: [AlarmID: SystemAlarm] = [:]
    private var perOccurrence: [Occurrence: Int] = [:]

    init(_ list: [SystemAlarm]) {
        for alarm in list where alarms[alarm.id] == nil { insert(alarm) }
    }

    private mutating func insert(_ alarm: SystemAlarm) {
        alarms[alarm.id] = alarm
        if let occurrence = alarm.id.parsed?.occurrence { perOccurrence[occurrence, default: 0] += 1 }
    }

    mutating func perform(_ operation: AlarmOperation) {
        switch operation {
        case .schedule(let alarm):
            #expect(alarms[alarm.id] == nil, "schedule over an existing id \(alarm.id): not cancel-before-replace")
            insert(SystemAlarm(id: alarm.id, content: alarm.content, state: .scheduled))
        case .cancel(let id, _):
            #expect(alarms[id] != nil, "cancel of an id the system does not hold: \(id)")
            #expect(alarms[id]?.state != .ringing, "a ringing alarm was touched: \(id)")
            if alarms.removeValue(forKey: id) != nil, let occurrence = id.parsed?.occurrence {
                perOccurrence[occurrence, default: 0] -= 1
            }
        }
    }

    /// Whether the occurrence has at least one alarm (scheduled or ringing).
    func armed(_ occurrence: Occurrence) -> Bool { (perOccurrence[occurrence] ?? 0) > 0 }
}

/// The last day up to which every ring is in `system` with the planned content, computed here
/// independently of ``AlarmPlan/coveredUntil(booked:)``.
func trueCoverage(_ plan: AlarmPlan, _ system: [AlarmID: SystemAlarm]) -> LocalDate? {
    var covered: LocalDate? = nil
    var day = plan.firstDay
    while day <= plan.lastDay {
        let chainsOK = plan.chains.filter { $0.occurrence.date == day }.allSatisfy { chain in
            chain.rings.allSatisfy { system[$0.id]?.content == $0.content || system[$0.id]?.state == .ringing }
        }
        guard chainsOK, !plan.unavailable.contains(where: { $0.occurrence.date == day }) else { break }
        covered = day
        day = day.adding(days: 1)
    }
    return covered
}

@Suite("Alarm-chain planner properties (seeded, thousands of random cases)", .tags(.property), .propertyRun)
struct PlannerPropertyTests {
    static let planCases = 2000
    static let reconcileCases = 2000
    static let failureCases = 1500
    static let sessionCases = 2000

    @Test("ids are unique, stable and parse back; chains are whole, in budget and covered-until is true")
    func planProperties() {
        var rng = SplitMix64(seed: 0x5EED_0001)
        for _ in 0..<Self.planCases {
            let scenario = Scenario.random(&rng)
            let plan = scenario.planner.plan(now: scenario.now)
            let ids = plan.chains.flatMap(\.rings).map(\.id)
            #expect(Set(ids).count == ids.count, "duplicate ids: \(scenario)")
            // Stable: the same inputs give the same plan; a later re-plan keeps id → content.
            let again = scenario.planner.plan(now: scenario.now)
            #expect(again.alarms == plan.alarms && again.fingerprint == plan.fingerprint)
            let later = scenario.planner.plan(
                now: scenario.now.addingTimeInterval(Double(Int.random(in: 60...40_000, using: &rng))))
            let contents = Dictionary(uniqueKeysWithValues: plan.chains.flatMap(\.rings).map { ($0.id, $0.content) })
            for ring in later.chains.flatMap(\.rings) where contents[ring.id] != nil {
                #expect(contents[ring.id] == ring.content, "id \(ring.id) changed content: \(scenario)")
            }
            for chain in plan.chains {
                #expect(!chain.rings.isEmpty && chain.occurrence.prayer != .sunrise)
                for ring in chain.rings {
                    #expect(ring.fireDate > scenario.now)
                    let parsed = ring.id.parsed
                    #expect(parsed?.occurrence == chain.occurrence && parsed?.ring == ring.ringIndex)
                    #expect(parsed?.minute == ring.prayerTime.compactMinute)
                }
            }
            // Budget: a prefix of whole chains, within capacity minus one chain of headroom.
            let inBudget = plan.chains.map(\.isWithinBudget)
            #expect(inBudget == inBudget.sorted(by: { $0 && !$1 }), "not a prefix: \(scenario)")
            if let capacity = scenario.capacity {
                let headroom =
                    scenario.planner.configuration.budget.keepsTransitionHeadroom
                    ? scenario.planner.configuration.ringOffsets.count : 0
                #expect(plan.alarms.count <= max(0, capacity - headroom), "over budget: \(scenario)")
            } else {
                #expect(inBudget.allSatisfy { $0 })
            }
            // Covered-until is true: all booked through that day, and the next day is not.
            let booked = Dictionary(
                uniqueKeysWithValues: plan.alarms.map {
                    ($0.id, SystemAlarm(id: $0.id, content: $0.content))
                })
            #expect(plan.coveredUntil == trueCoverage(plan, booked), "covered-until: \(scenario)")
        }
    }

    @Test("reconciliation: nothing unarmed, ringing untouched, no orphan, within capacity, idempotent")
    func reconcileProperties() {
        var rng = SplitMix64(seed: 0x5EED_0002)
        var checkedCapacity = 0
        var fullResyncs = 0
        var unknownCancels = 0
        for _ in 0..<Self.reconcileCases {
            let scenario = Scenario.random(&rng)
            let (initial, truth, fingerprint) = messySystem(for: scenario, &rng)
            let plan = scenario.planner.plan(now: scenario.now, context: AlarmLedger(alarms: initial).planningContext)
            let result = AlarmReconciler.reconcile(
                plan: plan, system: initial, syncedFingerprint: fingerprint,
                capacity: scenario.capacity)
            if result.isFullResync { fullResyncs += 1 }
            var system = SimulatedSystem(truth)
            let ringing = Set(initial.filter { $0.state == .ringing }.map(\.id))
            let watched = Set(plan.chains.filter(\.isWithinBudget).map(\.occurrence)).filter { system.armed($0) }
            let checksCapacity = scenario.capacity.map { initial.count <= $0 } ?? false
            if checksCapacity { checkedCapacity += 1 }
            let planned = Dictionary(uniqueKeysWithValues: plan.alarms.map { ($0.id, $0) })
            var pendingReplace: AlarmID? = nil
            for operation in result.operations {
                #expect(!ringing.contains(operation.id), "ringing alarm in an operation: \(scenario)")
                if case .cancel(_, .unknownID) = operation { unknownCancels += 1 }
                system.perform(operation)
                if case .cancel(let id, .contentChanged) = operation {
                    pendingReplace = id
                    continue
                }
                if let id = pendingReplace {
                    #expect(operation == planned[id].map { .schedule($0) }, "replace not right after its cancel")
                    pendingReplace = nil
                }
                for occurrence in watched where !system.armed(occurrence) {
                    Issue.record("\(occurrence) unarmed after \(operation): \(scenario)")
                }
                if checksCapacity, let capacity = scenario.capacity {
                    #expect(system.alarms.count <= capacity, "over capacity after \(operation): \(scenario)")
                }
            }
            // End state: exactly the plan (plus the untouched ringing alarms), no orphan.
            let expected = Dictionary(
                uniqueKeysWithValues: plan.alarms.filter { !ringing.contains($0.id) }
                    .map { ($0.id, $0.content) })
            let scheduled = system.alarms.values.filter { $0.state == .scheduled }
            #expect(scheduled.count == expected.count, "orphans or missing: \(scenario)")
            for alarm in scheduled {
                #expect(expected[alarm.id] != nil, "orphan \(alarm.id): \(scenario)")
                #expect(alarm.content == expected[alarm.id], "stale content \(alarm.id): \(scenario)")
            }
            #expect(Set(system.alarms.values.filter { $0.state == .ringing }.map(\.id)) == ringing)
            // Idempotent: reconciling the result again does nothing.
            let second = AlarmReconciler.reconcile(
                plan: plan, system: Array(system.alarms.values),
                syncedFingerprint: plan.fingerprint, capacity: scenario.capacity)
            #expect(second.operations.isEmpty, "not idempotent: \(second.operations.prefix(3)) \(scenario)")
        }
        #expect(checkedCapacity > 500 && fullResyncs > 100 && unknownCancels > 100)
    }

    @Test(
        "failure isolation: failed steps are reported, booked ids recorded at once, an interrupted run repairs itself")
    func failureAndInterruption() {
        var rng = SplitMix64(seed: 0x5EED_0003)
        var interrupted = 0
        var failures = 0
        for _ in 0..<Self.failureCases {
            let scenario = Scenario.random(&rng)
            let (initial, truth, fingerprint) = messySystem(for: scenario, &rng)
            let plan = scenario.planner.plan(now: scenario.now, context: AlarmLedger(alarms: initial).planningContext)
            var system = SimulatedSystem(truth)
            var ledger = AlarmLedger(alarms: initial, syncedFingerprint: fingerprint)
            let result = AlarmReconciler.reconcile(
                plan: plan, system: ledger.systemAlarms,
                syncedFingerprint: ledger.syncedFingerprint, capacity: scenario.capacity)
            let failureRate = [0, 5, 20, 50].randomElement(using: &rng)!
            let crashAfter =
                Bool.random(using: &rng) ? Int.random(in: 0...max(0, result.operations.count), using: &rng) : Int.max
            var step = 0
            var injected = 0
            var saved = ledger
            let report = ledger.apply(
                result,
                perform: { operation in
                    step += 1
                    if step > crashAfter { return "process died" }
                    if Int.random(in: 0..<100, using: &rng) < failureRate {
                        injected += 1
                        return "system refused"
                    }
                    system.perform(operation)
                    return nil
                }, save: { saved = $0 })
            if crashAfter < result.operations.count { interrupted += 1 }
            failures += injected
            // Recorded as soon as booked: the last saved ledger is exactly what the system holds.
            #expect(Set(saved.alarms.keys) == Set(system.alarms.keys), "ledger and system differ: \(scenario)")
            for (id, entry) in saved.alarms where entry.content != nil {
                #expect(entry.content == system.alarms[id]?.content, "ledger content differs: \(scenario)")
            }
            #expect(report.failed.filter { $0.reason == "system refused" }.count == injected)
            if report.failed.isEmpty && report.kept.isEmpty {
                #expect(saved.syncedFingerprint == plan.fingerprint)
            }
            // Honest coverage after a partial run.
            let planned = Dictionary(uniqueKeysWithValues: plan.alarms.map { ($0.id, $0.content) })
            let booked = Set(
                system.alarms.filter { planned[$0.key] != nil && planned[$0.key] == $0.value.content }.keys)
            let claimed = plan.coveredUntil(booked: booked)
            if let claimed, let planned = plan.coveredUntil { #expect(claimed <= planned) }
            // The next run, without failures, repairs everything.
            var next = saved
            let repair = AlarmReconciler.reconcile(
                plan: plan, system: next.systemAlarms,
                syncedFingerprint: next.syncedFingerprint, capacity: scenario.capacity)
            let repairReport = next.apply(
                repair,
                perform: {
                    system.perform($0)
                    return nil
                })
            #expect(repairReport.failed.isEmpty && next.syncedFingerprint == plan.fingerprint)
            let ringing = Set(initial.filter { $0.state == .ringing }.map(\.id))
            let expected = Dictionary(
                uniqueKeysWithValues: plan.alarms.filter { !ringing.contains($0.id) }.map { ($0.id, $0.content) })
            let scheduled = Dictionary(
                uniqueKeysWithValues: system.alarms.values.filter { $0.state == .scheduled }
                    .map { ($0.id, $0.content) })
            #expect(scheduled == expected.mapValues { Optional($0) }, "not repaired: \(scenario)")
            #expect(trueCoverage(plan, system.alarms) == plan.coveredUntil, "coverage after repair: \(scenario)")
        }
        #expect(interrupted > 300 && failures > 1000)
    }

    @Test("chain sessions: only a proof is a proof, escapes end the chain, hold-off only moves rings inside it")
    func sessionProperties() {
        var rng = SplitMix64(seed: 0x5EED_0004)
        var escapes = 0
        var proofs = 0
        var postponements = 0
        for _ in 0..<Self.sessionCases {
            let scenario = Scenario.random(&rng)
            let plan = scenario.planner.plan(now: scenario.now)
            guard let chain = plan.chains.randomElement(using: &rng), chain.rings.count > 1 else { continue }
            var session = AlarmChainSession(rings: chain.rings, holdOff: scenario.planner.configuration.holdOff)
            let hold = Double(scenario.planner.configuration.holdOff.components.seconds)
            var t = chain.rings[0].fireDate
            var ended = false
            for _ in 0..<Int.random(in: 1...8, using: &rng) {
                t = t.addingTimeInterval(Double(Int.random(in: 5...400, using: &rng)))
                let before = session.pending
                let event: ChainEvent =
                    switch Int.random(in: 0..<10, using: &rng) {
                    case 0...3: .proofScreenOpened(at: t)
                    case 4...5: .proofActivity(at: t)
                    case 6...7: .proofScreenClosed(at: t)
                    case 8: .proofAccepted(at: t)
                    default: .deliberateDismissal(at: t)
                    }
                let effects = session.handle(event)
                if ended {
                    #expect(effects.isEmpty, "effects after the end")
                    continue
                }
                switch event {
                case .proofScreenOpened, .proofActivity:
                    for effect in effects {
                        switch effect {
                        case .postpone(let id, let to):
                            postponements += 1
                            #expect(to == t.addingTimeInterval(hold))
                            let original = before.first { $0.id == id }!
                            #expect(original.fireDate > t && original.fireDate < to)
                        case .cancel(let id):
                            let original = before.first { $0.id == id }!
                            #expect(original.fireDate > t && original.fireDate < t.addingTimeInterval(hold))
                        case .record: Issue.record("a hold-off recorded an outcome")
                        }
                    }
                    // Rings after the hold-off are untouched.
                    for ring in before where ring.fireDate >= t.addingTimeInterval(hold) {
                        #expect(session.pending.contains(ring), "a later backup was moved")
                    }
                case .proofScreenClosed:
                    #expect(effects.isEmpty && session.outcome == nil)
                case .proofAccepted, .deliberateDismissal:
                    let isEscape = if case .deliberateDismissal = event { true } else { false }
                    guard case .record(let outcome)? = effects.last else {
                        Issue.record("no record")
                        continue
                    }
                    #expect(outcome.isProof == !isEscape && outcome.kind == (isEscape ? .escape : .proof))
                    #expect(outcome.occurrence == chain.occurrence && session.pending.isEmpty)
                    let cancelled = Set(effects.compactMap { if case .cancel(let id) = $0 { id } else { nil } })
                    #expect(cancelled == Set(before.filter { $0.fireDate > t }.map(\.id)))
                    if isEscape { escapes += 1 } else { proofs += 1 }
                    ended = true
                    // The ledger keeps the outcome; the planner books nothing more for it.
                    var ledger = AlarmLedger()
                    ledger.note(effects)
                    #expect(ledger.outcomes == [outcome] && ledger.merged.isEmpty)
                    let replanned = scenario.planner.plan(now: scenario.now, context: ledger.planningContext)
                    #expect(!replanned.chains.contains { $0.occurrence == chain.occurrence })
                }
            }
        }
        #expect(escapes > 100 && proofs > 100 && postponements > 100)
    }
}
