import AlarmScheduling
import Foundation
import PrayerPlanning
import ProofkitCore
import Testing

/// Karachi, two days, planned at 04:00 on 2026-11-30 (before Fajr): 2 Fajr + 2 Maghrib chains of 7 rings.
private func karachi(adjustments: [Prayer: Int] = [:], configure: (inout AlarmChainConfiguration) -> Void = { _ in })
    throws -> AlarmChainPlanner
{
    let zone = try #require(TimeZone(identifier: "Asia/Karachi"))
    var parameters = CalculationMethod.karachi.parameters
    for (prayer, minutes) in adjustments { parameters.adjustments[prayer] = minutes }
    let calculator = try PrayerTimeCalculator(
        coordinates: Coordinates(latitude: 24.8607, longitude: 67.0011), timeZone: zone, parameters: parameters)
    var configuration = AlarmChainConfiguration(deviceTimeZone: zone)
    configuration.days = 2
    configure(&configuration)
    return try AlarmChainPlanner(calculator: calculator, configuration: configuration)
}

private let now = parseISO8601("2026-11-30T04:00:00+05:00")!

/// Books `planner`'s plan into an empty ledger (every step succeeds).
private func booked(_ planner: AlarmChainPlanner) -> AlarmLedger {
    var ledger = AlarmLedger()
    let plan = planner.plan(now: now)
    _ = ledger.apply(AlarmReconciler.reconcile(plan: plan, ledger: ledger), perform: { _ in nil })
    return ledger
}

private func prayer(of operation: AlarmOperation) -> Prayer? { operation.id.parsed?.occurrence.prayer }

@Suite("chain fingerprints: a re-plan touches only the chains that changed")
struct ChainFingerprintTests {
    @Test("a chain's fingerprint is what the chain is: ids, fire times and sound, not the settings")
    func fingerprintIsTheChain() throws {
        let both = try karachi().plan(now: now)
        let fajrOnly = try karachi { $0.prayers = [.fajr] }.plan(now: now)
        let adjusted = try karachi(adjustments: [.fajr: 3]).plan(now: now)
        let louder = try karachi { $0.sounds[.maghrib] = "maghrib-loud.caf" }.plan(now: now)
        func byOccurrence(_ plan: AlarmPlan) -> [Occurrence: String] { plan.chainFingerprints }
        #expect(both.chains.count == 4 && Set(both.chains.map(\.fingerprint)).count == 4)
        // The settings fingerprint changes with the prayer list, the chain fingerprints do not.
        #expect(both.fingerprint != fajrOnly.fingerprint)
        for (occurrence, fingerprint) in byOccurrence(fajrOnly) {
            #expect(byOccurrence(both)[occurrence] == fingerprint)
        }
        // Moving Fajr by 3 minutes changes Fajr's chains only.
        for chain in adjusted.chains {
            let same = byOccurrence(both)[chain.occurrence] == chain.fingerprint
            #expect(same == (chain.occurrence.prayer == .maghrib), "\(chain.occurrence)")
        }
        // Another sound is another chain.
        for chain in louder.chains {
            #expect((byOccurrence(both)[chain.occurrence] == chain.fingerprint) == (chain.occurrence.prayer == .fajr))
        }
        // A ring passing does not change its chain's fingerprint.
        let planner = try karachi()
        let first = try #require(both.chains.first)
        let duringChain = planner.plan(now: first.rings[2].fireDate.addingTimeInterval(1))
        #expect(duringChain.chains.first?.occurrence == first.occurrence)
        #expect(duringChain.chains.first?.rings.count == first.rings.count - 3)
        #expect(duringChain.chains.first?.fingerprint == first.fingerprint)
    }

    @Test("--prayers fajr on a state with Fajr and Maghrib: Maghrib cancelled, zero operations on Fajr")
    func switchingMaghribOff() throws {
        var ledger = booked(try karachi())
        #expect(ledger.alarms.count == 28 && ledger.syncedChains.count == 4)
        let plan = try karachi { $0.prayers = [.fajr] }.plan(now: now)
        let result = AlarmReconciler.reconcile(plan: plan, ledger: ledger)
        #expect(!result.operations.contains { prayer(of: $0) == .fajr }, "\(result.operations)")
        #expect(result.operations.count == 14)
        #expect(
            result.operations.allSatisfy {
                if case .cancel(let id, .notInPlan) = $0 { id.parsed?.occurrence.prayer == .maghrib } else { false }
            })
        #expect(result.resyncedChains.isEmpty && !result.isFullResync)
        _ = ledger.apply(result, perform: { _ in nil })
        #expect(ledger.alarms.count == 14 && Set(ledger.syncedChains.keys.map(\.prayer)) == [.fajr])
        // And again: nothing to do.
        #expect(AlarmReconciler.reconcile(plan: plan, ledger: ledger).operations.isEmpty)
    }

    @Test("--adjust fajr=+3: Fajr's chains are replaced (new before old), zero operations on Maghrib")
    func adjustingFajr() throws {
        var ledger = booked(try karachi())
        let plan = try karachi(adjustments: [.fajr: 3]).plan(now: now)
        let result = AlarmReconciler.reconcile(plan: plan, ledger: ledger)
        #expect(!result.operations.contains { prayer(of: $0) == .maghrib }, "\(result.operations)")
        // 14 new Fajr rings booked, 14 old ones cancelled after their occurrence's new chain.
        let schedules = result.operations.filter { if case .schedule = $0 { true } else { false } }
        let superseded = result.operations.filter { if case .cancel(_, .superseded) = $0 { true } else { false } }
        #expect(schedules.count == 14 && superseded.count == 14 && result.operations.count == 28)
        for day in Set(schedules.compactMap { $0.id.parsed?.occurrence }) {
            let lastNew = try #require(
                result.operations.lastIndex { $0.id.parsed?.occurrence == day && $0.description.hasPrefix("schedule") })
            let firstOld = try #require(
                result.operations.firstIndex { $0.id.parsed?.occurrence == day && $0.description.hasPrefix("cancel") })
            #expect(lastNew < firstOld)
        }
        _ = ledger.apply(result, perform: { _ in nil })
        #expect(AlarmReconciler.reconcile(plan: plan, ledger: ledger).operations.isEmpty)
    }

    @Test("a system that cannot tell content: only the chain whose fingerprint changed is booked again")
    func unknownContent() throws {
        let ledger = booked(try karachi())
        // The system lists ids only (as a phone's alarm service may).
        let system = ledger.systemAlarms.map { SystemAlarm(id: $0.id, content: nil) }
        let plan = try karachi { $0.sounds[.maghrib] = "maghrib-loud.caf" }.plan(now: now)
        let result = AlarmReconciler.reconcile(plan: plan, system: system, syncedChains: ledger.syncedChains)
        #expect(Set(result.resyncedChains.map(\.prayer)) == [.maghrib] && result.resyncedChains.count == 2)
        #expect(!result.operations.contains { prayer(of: $0) == .fajr })
        #expect(result.operations.count == 28)  // 14 Maghrib rings: cancel + book each
        for (index, operation) in result.operations.enumerated() where index % 2 == 1 {
            guard case .schedule(let alarm) = operation else {
                Issue.record("\(operation)")
                continue
            }
            #expect(alarm.content.sound == "maghrib-loud.caf")
            #expect(result.operations[index - 1] == .cancel(alarm.id, .contentChanged))
        }
        // No record at all (a new ledger): every held chain is booked again, as before.
        let none = AlarmReconciler.reconcile(plan: plan, system: system, syncedChains: [:])
        #expect(none.isFullResync && none.operations.count == 56)
    }

    @Test("a ledger written before chain fingerprints migrates without re-booking anything")
    func legacyLedger() throws {
        let planner = try karachi()
        var ledger = booked(planner)
        ledger.syncedChains = [:]
        let plan = planner.plan(now: now)
        #expect(ledger.syncedFingerprint == plan.fingerprint)
        let result = AlarmReconciler.reconcile(plan: plan, ledger: ledger)
        #expect(result.operations.isEmpty)
        _ = ledger.apply(result, perform: { _ in nil })
        #expect(ledger.syncedChains == plan.chainFingerprints)
    }

    @Test("a chain whose booking failed keeps its old record and is booked again next time")
    func failedChainIsRetried() throws {
        var ledger = booked(try karachi())
        let before = ledger.syncedChains
        let plan = try karachi { $0.sounds[.fajr] = "fajr-new.caf" }.plan(now: now)
        let result = AlarmReconciler.reconcile(plan: plan, ledger: ledger)
        let failing = try #require(plan.chains.first { $0.occurrence.prayer == .fajr })
        let report = ledger.apply(
            result,
            perform: { operation in
                if case .schedule(let alarm) = operation, alarm.id == failing.rings[3].id { return "system busy" }
                return nil
            })
        #expect(report.failed.count == 1)
        #expect(ledger.syncedChains[failing.occurrence] == before[failing.occurrence])
        let other = try #require(plan.chains.last { $0.occurrence.prayer == .fajr })
        #expect(ledger.syncedChains[other.occurrence] == other.fingerprint)
        let retry = AlarmReconciler.reconcile(plan: plan, ledger: ledger)
        #expect(retry.resyncedChains == [failing.occurrence])
        #expect(retry.operations.contains(.schedule(failing.rings[3])))
        _ = ledger.apply(retry, perform: { _ in nil })
        #expect(AlarmReconciler.reconcile(plan: plan, ledger: ledger).operations.isEmpty)
    }
}

@Suite("AlarmChainConfiguration.backups: N backups spread evenly over the proof window")
struct BackupCountTests {
    private func minutes(_ configuration: AlarmChainConfiguration) -> [Double] {
        configuration.ringOffsets.map { Double($0.components.seconds) / 60 }
    }

    @Test(
        "the seed's Fajr: 30 backups over 30 minutes is 31 alarms, one a minute; the window alone keeps the growing gaps"
    )
    func spacing() throws {
        var configuration = AlarmChainConfiguration(deviceTimeZone: .gmt)
        #expect(minutes(configuration) == [0, 2, 5, 9, 14, 20, 27])
        configuration.backups = 30
        #expect(minutes(configuration) == (0...30).map(Double.init))
        configuration.proofWindow = .seconds(20 * 60)
        configuration.backups = 3
        #expect(minutes(configuration).map { ($0 * 60).rounded() } == [0, 400, 800, 1200])
        configuration.backups = 0
        #expect(configuration.ringOffsets == [.zero])
        configuration.backups = 7  // 20 min / 7 = 171.43 s: rounded to the second
        #expect(configuration.ringOffsets.map { $0.components.seconds } == [0, 171, 343, 514, 686, 857, 1029, 1200])
        try configuration.validate()

        let planner = try karachi { $0.backups = 30 }
        let plan = planner.plan(now: now)
        #expect(plan.chains.allSatisfy { $0.rings.count == 31 } && plan.alarms.count == 4 * 31)
        let chain = try #require(plan.chains.first)
        #expect(chain.rings.last!.fireDate.timeIntervalSince(chain.rings[0].fireDate) == 30 * 60)
        #expect(chain.fingerprint != (try karachi().plan(now: now)).chains[0].fingerprint)
        // A budget of 64 with headroom for one chain of 31: one chain fits.
        let budgeted = try karachi {
            $0.backups = 30
            $0.budget = AlarmBudget(systemLimit: 64)
        }.plan(now: now)
        #expect(budgeted.alarms.count == 31)
    }

    @Test(
        "out of range or closer than 30 s apart is refused",
        arguments: [
            (61, 1800), (-1, 1800), (60, 600), (1, 0), (31, 900),
        ])
    func invalid(_ backups: Int, _ windowSeconds: Int64) {
        var configuration = AlarmChainConfiguration(deviceTimeZone: .gmt)
        configuration.backups = backups
        configuration.proofWindow = .seconds(windowSeconds)
        #expect(throws: ProofkitError.self) { try configuration.validate() }
    }

    @Test("the limits themselves are allowed")
    func limits() throws {
        var configuration = AlarmChainConfiguration(deviceTimeZone: .gmt)
        configuration.backups = 60
        try configuration.validate()  // 30 min / 60 = 30 s
        configuration.backups = 30
        configuration.proofWindow = .seconds(15 * 60)
        try configuration.validate()  // 30 s
        #expect(configuration.ringOffsets.count == 31)
    }
}
