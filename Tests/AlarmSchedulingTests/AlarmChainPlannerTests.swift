import AlarmScheduling
import Foundation
import PrayerPlanning
import ProofkitCore
import Testing

func makePlanner(
    latitude: Double, longitude: Double, zone: String, device: String? = nil,
    method: CalculationMethod = .muslimWorldLeague,
    configure: (inout AlarmChainConfiguration) -> Void = { _ in }
) throws -> AlarmChainPlanner {
    let timetable = try #require(TimeZone(identifier: zone))
    let calculator = try PrayerTimeCalculator(
        coordinates: Coordinates(latitude: latitude, longitude: longitude), timeZone: timetable,
        parameters: method.parameters)
    var configuration = AlarmChainConfiguration(deviceTimeZone: try #require(TimeZone(identifier: device ?? zone)))
    configure(&configuration)
    return try AlarmChainPlanner(calculator: calculator, configuration: configuration)
}

@Suite("AlarmChainPlanner")
struct AlarmChainPlannerTests {
    @Test("defaults: Fajr and Maghrib, 7 days, rings close together first then further apart")
    func defaults() throws {
        let configuration = AlarmChainConfiguration(deviceTimeZone: .gmt)
        #expect(configuration.prayers == [.fajr, .maghrib] && configuration.days == 7)
        #expect(configuration.ringOffsets.map { $0.components.seconds / 60 } == [0, 2, 5, 9, 14, 20, 27])
        let gaps = zip(configuration.ringOffsets.dropFirst(), configuration.ringOffsets).map { $0 - $1 }
        #expect(gaps == gaps.sorted())
        var withSunrise = configuration
        withSunrise.prayers.insert(.sunrise)
        #expect(throws: ProofkitError.self) { try withSunrise.validate() }

        let planner = try makePlanner(latitude: 24.8607, longitude: 67.0011, zone: "Asia/Karachi")
        let now = try #require(parseISO8601("2026-11-30T04:00:00+05:00"))
        let plan = planner.plan(now: now)
        #expect(plan.firstDay == LocalDate(year: 2026, month: 11, day: 30))
        #expect(plan.lastDay == LocalDate(year: 2026, month: 12, day: 6))
        #expect(plan.chains.count == 14 && plan.alarms.count == 14 * 7)
        #expect(plan.coveredUntil == plan.lastDay)
        let first = try #require(plan.alarms.first)
        #expect(first.id.rawValue == "fajr.2026-11-30.\(first.prayerTime.compactMinute).r0")
        // The first ring is the prayer time itself.
        let times = planner.calculator.times(on: plan.firstDay)
        #expect(first.fireDate == times.fajr)
    }

    @Test("Karachi following a London mosque rings at the time on the screen, not London's moment")
    func followsAnotherZonesClock() throws {
        let follow = try makePlanner(
            latitude: 51.5074, longitude: -0.1278, zone: "Europe/London", device: "Asia/Karachi")
        let sameMoment = try makePlanner(
            latitude: 51.5074, longitude: -0.1278, zone: "Europe/London",
            device: "Asia/Karachi"
        ) { $0.clockMode = .sameInstant }
        let now = try #require(parseISO8601("2026-11-30T00:00:00+05:00"))
        let karachi = try #require(TimeZone(identifier: "Asia/Karachi"))
        let london = try #require(TimeZone(identifier: "Europe/London"))
        for chain in follow.plan(now: now).chains {
            let screen = follow.calculator.times(on: chain.occurrence.date)[chain.occurrence.prayer]!
            let shown = WallClockTime(screen, in: london)
            let rings = WallClockTime(chain.rings[0].fireDate, in: karachi)
            #expect(rings.hour == shown.hour && rings.minute == shown.minute && rings.date == shown.date)
            #expect(chain.rings[0].fireDate.timeIntervalSince(screen) == -5 * 3600)  // 5 h earlier than London's moment
        }
        for chain in sameMoment.plan(now: now).chains {
            #expect(
                chain.rings[0].fireDate
                    == sameMoment.calculator.times(on: chain.occurrence.date)[chain.occurrence.prayer])
        }
        #expect(follow.fingerprint != sameMoment.fingerprint)
    }

    @Test(
        "wall clock stays right across DST in both directions",
        arguments: [
            ("Europe/London", "2026-03-26T00:00:00+00:00", 29),
            ("Europe/London", "2026-10-22T00:00:00+01:00", 25),
            ("America/Chicago", "2028-03-09T00:00:00-06:00", 12),
        ])
    func dst(_ zone: String, _ start: String, _ changeDay: Int) throws {
        let coordinates: (Double, Double) = zone == "Europe/London" ? (51.5074, -0.1278) : (41.8781, -87.6298)
        let planner = try makePlanner(
            latitude: coordinates.0, longitude: coordinates.1, zone: zone, method: .northAmerica)
        let tz = try #require(TimeZone(identifier: zone))
        let plan = planner.plan(now: try #require(parseISO8601(start)))
        var offsets: Set<Int> = []
        for chain in plan.chains {
            let times = planner.calculator.times(on: chain.occurrence.date)
            let prayerTime = try #require(times[chain.occurrence.prayer])
            #expect(chain.rings[0].fireDate == prayerTime, "\(chain.occurrence)")
            #expect(WallClockTime(chain.rings[0].fireDate, in: tz) == chain.rings[0].prayerTime)
            offsets.insert(tz.secondsFromGMT(for: prayerTime))
            // Backups are real elapsed minutes after the first ring.
            let elapsed = chain.rings.map { Int($0.fireDate.timeIntervalSince(chain.rings[0].fireDate)) / 60 }
            #expect(elapsed == [0, 2, 5, 9, 14, 20, 27])
        }
        #expect(offsets.count == 2, "the window spans the change")
        let around = plan.chains.filter {
            $0.occurrence.prayer == .maghrib && abs($0.occurrence.date.day - changeDay) <= 1
        }
        #expect(around.count == 3)
    }

    @Test(
        "the date line: the window starts on the zone's own date (UTC+13:45 and UTC-11)",
        arguments: [
            ("Pacific/Chatham", -43.9535, -176.5597, "2026-01-15T10:00:00Z", "2026-01-15"),  // 23:45 local
            ("Pacific/Pago_Pago", -14.2756, -170.7020, "2026-01-15T10:00:00Z", "2026-01-14"),  // 23:00 the day before
        ])
    func dateLine(_ zone: String, _ latitude: Double, _ longitude: Double, _ now: String, _ today: String) throws {
        let planner = try makePlanner(latitude: latitude, longitude: longitude, zone: zone)
        let tz = try #require(TimeZone(identifier: zone))
        let plan = planner.plan(now: try #require(parseISO8601(now)))
        #expect(plan.firstDay == LocalDate(iso: today))
        for chain in plan.chains {
            #expect(WallClockTime(chain.rings[0].fireDate, in: tz).date == chain.occurrence.date, "\(chain.occurrence)")
            #expect(chain.rings[0].id.rawValue.contains(".\(chain.occurrence.date)."))
        }
        #expect(plan.chains.count >= 12 && plan.coveredUntil == plan.lastDay)
    }

    @Test("high latitudes in summer: Fajr chains every day, polar days reported honestly")
    func highLatitudeSummer() throws {
        let now = try #require(parseISO8601("2026-06-18T12:00:00+02:00"))
        let stockholm = try makePlanner(latitude: 59.3293, longitude: 18.0686, zone: "Europe/Stockholm")
        let plan = stockholm.plan(now: now)
        #expect(plan.unavailable.isEmpty && plan.chains.filter { $0.occurrence.prayer == .fajr }.count == 6)
        #expect(plan.coveredUntil == plan.lastDay)

        let tromso = try makePlanner(latitude: 69.6492, longitude: 18.9553, zone: "Europe/Oslo")
        let polar = tromso.plan(now: now)
        #expect(polar.chains.isEmpty && polar.unavailable.count == 14)
        #expect(polar.unavailable.allSatisfy { $0.reason == .polarDay })
        #expect(polar.coveredUntil == nil)

        var parameters = tromso.calculator.parameters
        parameters.polarResolution = .nearestLatitude
        let resolved = try AlarmChainPlanner(
            calculator: PrayerTimeCalculator(
                coordinates: tromso.calculator.coordinates,
                timeZone: tromso.calculator.timeZone, parameters: parameters),
            configuration: tromso.configuration)
        let resolvedPlan = resolved.plan(now: now)
        #expect(resolvedPlan.unavailable.isEmpty && resolvedPlan.coveredUntil == resolvedPlan.lastDay)
        #expect(resolved.fingerprint != tromso.fingerprint)
    }

    @Test("a budget of 64 notifications shared with 14 reminders keeps the nearest chains whole")
    func budget() throws {
        let planner = try makePlanner(latitude: 24.8607, longitude: 67.0011, zone: "Asia/Karachi") {
            $0.budget = .notifications64(reminders: 14)
        }
        let plan = planner.plan(now: try #require(parseISO8601("2026-11-30T04:00:00+05:00")))
        // 64 − 14 = 50, minus one chain (7) of headroom = 43: six whole chains of 7.
        #expect(plan.alarms.count == 42)
        #expect(
            plan.chains.prefix(6).allSatisfy(\.isWithinBudget)
                && !plan.chains.dropFirst(6).contains { $0.isWithinBudget })
        #expect(plan.coveredUntil == LocalDate(year: 2026, month: 12, day: 2))
        // After today's Fajr has passed, today keeps only Maghrib and the window slides.
        let later = planner.plan(now: try #require(parseISO8601("2026-11-30T07:00:00+05:00")))
        #expect(
            later.chains[0].occurrence == Occurrence(prayer: .maghrib, date: LocalDate(year: 2026, month: 11, day: 30)))
        #expect(later.coveredUntil == LocalDate(year: 2026, month: 12, day: 2))
        #expect(later.alarms.count == 42)
    }

    @Test(
        "reconciliation: new chain before old, changed content cancelled first, ringing untouched, unknown ids cancelled"
    )
    func reconciliationExample() throws {
        let planner = try makePlanner(latitude: 24.8607, longitude: 67.0011, zone: "Asia/Karachi") { $0.days = 2 }
        let now = try #require(parseISO8601("2026-11-30T04:00:00+05:00"))
        let plan = planner.plan(now: now)
        let alarms = plan.alarms
        // The system: an old Fajr chain one minute off (the method changed), today's Maghrib ring 0
        // with an old sound, a ringing alarm, and an id from an old build.
        let oldFajr = alarms.filter { $0.occurrence.date == plan.firstDay && $0.occurrence.prayer == .fajr }.map {
            ring in
            SystemAlarm(
                id: AlarmID(
                    rawValue: ring.id.rawValue.replacingOccurrences(
                        of: ".\(ring.prayerTime.compactMinute).",
                        with: ".0000.")),
                content: AlarmContent(fireDate: ring.fireDate.addingTimeInterval(-60), sound: "adhan-fajr"))
        }
        let maghrib0 = try #require(alarms.first { $0.occurrence.prayer == .maghrib })
        let system =
            oldFajr + [
                SystemAlarm(id: maghrib0.id, content: AlarmContent(fireDate: maghrib0.fireDate, sound: "old-sound")),
                SystemAlarm(id: AlarmID(rawValue: "isha.2026-11-29.1900.r3"), content: nil, state: .ringing),
                SystemAlarm(id: AlarmID(rawValue: "ALARM_42"), content: nil),
            ]
        let result = AlarmReconciler.reconcile(plan: plan, system: system, syncedFingerprint: plan.fingerprint)
        let text = result.operations.map(\.description)
        #expect(text.first == "cancel ALARM_42 (unknownID)")
        #expect(!text.contains { $0.contains("isha.2026-11-29") })
        let lastNewFajr = try #require(text.lastIndex { $0.hasPrefix("schedule fajr.2026-11-30") })
        let firstOldCancel = try #require(text.firstIndex { $0.hasPrefix("cancel fajr.2026-11-30.0000") })
        #expect(lastNewFajr < firstOldCancel, "new chain booked before the old is cancelled")
        let replaceCancel = try #require(text.firstIndex(of: "cancel \(maghrib0.id) (contentChanged)"))
        #expect(text[replaceCancel + 1] == "schedule \(maghrib0.id)")
        #expect(result.ringing == [AlarmID(rawValue: "isha.2026-11-29.1900.r3")])
        #expect(!result.isFullResync)

        // A changed structure (fingerprint) books every kept id again.
        let full = AlarmReconciler.reconcile(
            plan: plan, system: alarms.map { SystemAlarm(id: $0.id, content: nil) },
            syncedFingerprint: "0000000000000000")
        #expect(full.isFullResync && full.operations.count == alarms.count * 2)
        let same = AlarmReconciler.reconcile(
            plan: plan, system: alarms.map { SystemAlarm(id: $0.id, content: nil) },
            syncedFingerprint: plan.fingerprint)
        #expect(same.operations.isEmpty)
    }

    @Test("an escape ends the chain and is recorded, never as a proof; re-planning skips it")
    func escape() throws {
        let planner = try makePlanner(latitude: 24.8607, longitude: 67.0011, zone: "Asia/Karachi")
        let now = try #require(parseISO8601("2026-11-30T04:00:00+05:00"))
        let chain = try #require(planner.plan(now: now).chains.first)
        var session = AlarmChainSession(rings: chain.rings, holdOff: planner.configuration.holdOff)
        let start = chain.rings[0].fireDate
        // Screen opened 30 s after the first ring: ring 1 (+2 min) is outside the 90 s hold-off.
        #expect(session.handle(.proofScreenOpened(at: start.addingTimeInterval(30))).isEmpty)
        // Activity at +100 s holds off ring 1 (+120 s) until +190 s.
        let held = session.handle(.proofActivity(at: start.addingTimeInterval(100)))
        #expect(held == [.postpone(chain.rings[1].id, to: start.addingTimeInterval(190))])
        _ = session.handle(.proofScreenClosed(at: start.addingTimeInterval(110)))
        #expect(session.outcome == nil && session.pending.count == chain.rings.count - 1)
        let effects = session.handle(.deliberateDismissal(at: start.addingTimeInterval(200)))
        guard case .record(let outcome)? = effects.last else {
            Issue.record("no record")
            return
        }
        #expect(outcome.kind == .escape && !outcome.isProof)
        #expect(session.handle(.proofAccepted(at: start.addingTimeInterval(300))).isEmpty, "no proof after an escape")
        var ledger = AlarmLedger()
        ledger.note(held)
        ledger.note(effects)
        #expect(ledger.outcomes.filter(\.isProof).isEmpty && ledger.postponed.count == 1)
        let replanned = planner.plan(now: start.addingTimeInterval(60), context: ledger.planningContext)
        #expect(!replanned.chains.contains { $0.occurrence == chain.occurrence })
    }

    @Test("a hold-off moves the ring on re-planning too (same id, new time: cancel-before-replace)")
    func holdOffReplan() throws {
        let planner = try makePlanner(latitude: 24.8607, longitude: 67.0011, zone: "Asia/Karachi")
        let now = try #require(parseISO8601("2026-11-30T04:00:00+05:00"))
        let plan = planner.plan(now: now)
        let chain = plan.chains[0]
        var session = AlarmChainSession(rings: chain.rings, holdOff: .seconds(90))
        let effects = session.handle(.proofScreenOpened(at: chain.rings[1].fireDate.addingTimeInterval(-30)))
        var ledger = AlarmLedger(
            alarms: plan.alarms.map { SystemAlarm(id: $0.id, content: $0.content) },
            syncedFingerprint: plan.fingerprint)
        ledger.note(effects)
        let replanned = planner.plan(now: now, context: ledger.planningContext)
        let result = AlarmReconciler.reconcile(
            plan: replanned, system: ledger.systemAlarms,
            syncedFingerprint: ledger.syncedFingerprint)
        #expect(
            result.operations.map(\.description) == [
                "cancel \(chain.rings[1].id) (contentChanged)",
                "schedule \(chain.rings[1].id)",
            ])
    }
}
