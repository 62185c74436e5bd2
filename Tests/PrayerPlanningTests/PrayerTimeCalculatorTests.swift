import Foundation
import PrayerPlanning
import ProofkitCore
import Testing

/// An independent check: the equations of NOAA's Solar Calculator spreadsheet (NOAA Global
/// Monitoring Laboratory, after Meeus but a different formulation: the equation of time from the
/// orbital elements, no Meeus ch. 15 interpolation). NOAA states about a minute of accuracy for
/// sunrise and sunset within ±72° latitude.
enum NOAA {
    /// Equation of time (min) and declination (rad) at `minutes` after 00:00 UTC of `day`.
    static func sun(_ day: LocalDate, minutes: Double) -> (eqtime: Double, decl: Double) {
        let jd = 2_440_587.5 + Double(day.daysSinceEpoch) + minutes / 1440
        let t = (jd - 2_451_545) / 36_525
        func rad(_ d: Double) -> Double { d * .pi / 180 }
        let l0 = (280.46646 + t * (36_000.76983 + t * 0.0003032)).truncatingRemainder(dividingBy: 360)
        let m = 357.52911 + t * (35_999.05029 - 0.0001537 * t)
        let e = 0.016708634 - t * (0.000042037 + 0.0000001267 * t)
        let c =
            sin(rad(m)) * (1.914602 - t * (0.004817 + 0.000014 * t)) + sin(rad(2 * m)) * (0.019993 - 0.000101 * t)
            + sin(rad(3 * m)) * 0.000289
        let lambda = l0 + c - 0.00569 - 0.00478 * sin(rad(125.04 - 1934.136 * t))
        let eps0 = 23 + (26 + (21.448 - t * (46.815 + t * (0.00059 - t * 0.001813))) / 60) / 60
        let eps = eps0 + 0.00256 * cos(rad(125.04 - 1934.136 * t))
        let decl = asin(sin(rad(eps)) * sin(rad(lambda)))
        let y = tan(rad(eps / 2)) * tan(rad(eps / 2))
        let eq =
            4
            * (y * sin(2 * rad(l0)) - 2 * e * sin(rad(m)) + 4 * e * y * sin(rad(m)) * cos(2 * rad(l0))
                - 0.5 * y * y * sin(4 * rad(l0)) - 1.25 * e * e * sin(2 * rad(m))) * 180 / .pi
        return (eq, decl)
    }

    /// Solar noon, sunrise and sunset (−0.833°) in minutes after 00:00 UTC of `day`, each
    /// evaluated (two fixed-point passes) with the Sun's position at its own time.
    static func events(utcDay day: LocalDate, latitude: Double, longitude: Double)
        -> (noon: Double, rise: Double?, set: Double?)
    {
        var noon = 720 - 4 * longitude
        for _ in 0..<3 { noon = 720 - 4 * longitude - sun(day, minutes: noon).eqtime }
        func event(_ sign: Double) -> Double? {
            var t = noon
            for _ in 0..<3 {
                let (eqtime, decl) = sun(day, minutes: t)
                let phi = latitude * .pi / 180
                let cosH = cos(90.833 * .pi / 180) / (cos(phi) * cos(decl)) - tan(phi) * tan(decl)
                guard abs(cosH) <= 1 else { return nil }
                t = 720 - 4 * (longitude + sign * acos(cosH) * 180 / .pi) - eqtime
            }
            return t
        }
        return (noon, event(1), event(-1))
    }

    /// The UTC day whose solar noon falls on local `date`, with its events as instants.
    static func events(localDate date: LocalDate, zone: TimeZone, latitude: Double, longitude: Double)
        -> (noon: Date, rise: Date?, set: Date?)?
    {
        for shift in [-1, 0, 1] {
            let day = date.adding(days: shift)
            let e = events(utcDay: day, latitude: latitude, longitude: longitude)
            func instant(_ m: Double) -> Date {
                Date(timeIntervalSince1970: Double(day.daysSinceEpoch * 86_400) + m * 60)
            }
            if WallClockTime(instant(e.noon), in: zone).date == date {
                return (instant(e.noon), e.rise.map(instant), e.set.map(instant))
            }
        }
        return nil
    }
}

struct Place: Sendable, CustomTestStringConvertible {
    let name: String
    let latitude: Double
    let longitude: Double
    let zone: String
    var testDescription: String { name }

    static let worldwide: [Place] = [
        Place(
            name: "Chatham Islands (UTC+12:45/+13:45)", latitude: -43.9535, longitude: -176.5597,
            zone: "Pacific/Chatham"),
        Place(name: "Pago Pago (UTC-11)", latitude: -14.2756, longitude: -170.7020, zone: "Pacific/Pago_Pago"),
        Place(name: "Kiritimati (UTC+14)", latitude: 1.8721, longitude: -157.4278, zone: "Pacific/Kiritimati"),
        Place(name: "Apia (UTC+13)", latitude: -13.8333, longitude: -171.7500, zone: "Pacific/Apia"),
        Place(name: "Honolulu", latitude: 21.3069, longitude: -157.8583, zone: "Pacific/Honolulu"),
        Place(name: "London", latitude: 51.5074, longitude: -0.1278, zone: "Europe/London"),
        Place(name: "Karachi", latitude: 24.8607, longitude: 67.0011, zone: "Asia/Karachi"),
        Place(name: "Jakarta", latitude: -6.2088, longitude: 106.8456, zone: "Asia/Jakarta"),
        Place(name: "Reykjavik", latitude: 64.1466, longitude: -21.9426, zone: "Atlantic/Reykjavik"),
        Place(name: "Kathmandu (UTC+5:45)", latitude: 27.7172, longitude: 85.3240, zone: "Asia/Kathmandu"),
        Place(name: "Los Angeles", latitude: 34.0522, longitude: -118.2437, zone: "America/Los_Angeles"),
        Place(name: "Sydney", latitude: -33.8688, longitude: 151.2093, zone: "Australia/Sydney"),
    ]

    func calculator(_ parameters: CalculationParameters = CalculationMethod.other.parameters) throws
        -> PrayerTimeCalculator
    {
        try PrayerTimeCalculator(
            coordinates: Coordinates(latitude: latitude, longitude: longitude),
            timeZone: try #require(TimeZone(identifier: zone)), parameters: parameters)
    }
}

@Suite("PrayerTimeCalculator")
struct PrayerTimeCalculatorTests {
    @Test(
        "sunrise, Dhuhr and sunset agree with NOAA's Solar Calculator within 90 s all year, on the asked local date",
        arguments: Place.worldwide)
    func agreesWithNOAA(_ place: Place) throws {
        var parameters = CalculationMethod.other.parameters  // no minute offsets
        parameters.rounding = .none
        let calculator = try place.calculator(parameters)
        let zone = calculator.timeZone
        var day = LocalDate(year: 2026, month: 1, day: 3)
        while day.year == 2026 {
            let times = calculator.times(on: day)
            let noaa = try #require(
                NOAA.events(
                    localDate: day, zone: zone, latitude: place.latitude,
                    longitude: place.longitude))
            let dhuhr = try #require(times.dhuhr)
            #expect(WallClockTime(dhuhr, in: zone).date == day, "\(day) Dhuhr on another date")
            #expect(abs(dhuhr.timeIntervalSince(noaa.noon)) < 90, "\(day) Dhuhr")
            if let rise = noaa.rise, let set = noaa.set {
                let sunrise = try #require(times.sunrise)
                let sunset = try #require(times.maghrib)  // no offsets
                #expect(abs(sunrise.timeIntervalSince(rise)) < 90, "\(day) sunrise")
                #expect(abs(sunset.timeIntervalSince(set)) < 90, "\(day) sunset")
            }
            // Order of the day.
            let order = [times.fajr, times.sunrise, times.dhuhr, times.asr, times.maghrib, times.isha].compactMap { $0 }
            #expect(order.count == 6 && order == order.sorted(), "\(day) order")
            day = day.adding(days: 9)
        }
    }

    @Test(
        "the date line: every daytime prayer falls on the asked local date, in both directions",
        arguments: ["Pacific/Chatham", "Pacific/Pago_Pago", "Pacific/Kiritimati", "Pacific/Apia"])
    func dateLine(_ zoneName: String) throws {
        let place = try #require(Place.worldwide.first { $0.zone == zoneName })
        let calculator = try place.calculator(CalculationMethod.muslimWorldLeague.parameters)
        for day in [
            LocalDate(year: 2026, month: 1, day: 15), LocalDate(year: 2026, month: 6, day: 21),
            LocalDate(year: 2026, month: 9, day: 27), LocalDate(year: 2026, month: 4, day: 5),
        ] {
            let times = calculator.times(on: day)
            for prayer in [Prayer.fajr, .sunrise, .dhuhr, .asr, .maghrib] {
                let t = try #require(times[prayer])
                #expect(WallClockTime(t, in: calculator.timeZone).date == day, "\(zoneName) \(day) \(prayer)")
            }
            // Consecutive days differ by under 2 minutes at Dhuhr (no day slipped).
            let next = calculator.times(on: day.adding(days: 1))
            let gap = try #require(next.dhuhr).timeIntervalSince(try #require(times.dhuhr))
            let offsetChange = Double(
                calculator.timeZone.secondsFromGMT(for: next.dhuhr!)
                    - calculator.timeZone.secondsFromGMT(for: times.dhuhr!))
            #expect(abs(gap - 86_400 + offsetChange) < 120 || abs(gap - 86_400) < 120)
        }
        // Chatham's offset is +13:45 in its summer.
        if zoneName == "Pacific/Chatham" {
            let times = calculator.times(on: LocalDate(year: 2026, month: 1, day: 15))
            #expect(iso8601(try #require(times.dhuhr), in: calculator.timeZone).hasSuffix("+13:45"))
        }
        if zoneName == "Pacific/Pago_Pago" {
            let times = calculator.times(on: LocalDate(year: 2026, month: 1, day: 15))
            #expect(iso8601(try #require(times.dhuhr), in: calculator.timeZone).hasSuffix("-11:00"))
        }
    }

    @Test(
        "DST days: times carry the offset in force and the clock jumps by an hour",
        arguments: [
            ("Europe/London", LocalDate(year: 2026, month: 3, day: 29), 3600),
            ("Europe/London", LocalDate(year: 2026, month: 10, day: 25), -3600),
            ("America/Chicago", LocalDate(year: 2028, month: 3, day: 12), 3600),
            ("America/Chicago", LocalDate(year: 2028, month: 11, day: 5), -3600),
            ("Pacific/Chatham", LocalDate(year: 2026, month: 9, day: 27), 3600),
            ("Pacific/Chatham", LocalDate(year: 2026, month: 4, day: 5), -3600),
        ])
    func dstDays(_ zoneName: String, _ day: LocalDate, _ jump: Int) throws {
        let zone = try #require(TimeZone(identifier: zoneName))
        let place: (Double, Double) =
            switch zoneName {
            case "Europe/London": (51.5074, -0.1278)
            case "America/Chicago": (41.8781, -87.6298)
            default: (-43.9535, -176.5597)
            }
        let calculator = try PrayerTimeCalculator(
            coordinates: Coordinates(latitude: place.0, longitude: place.1), timeZone: zone,
            parameters: CalculationMethod.muslimWorldLeague.parameters)
        let before = calculator.times(on: day.adding(days: -1))
        let today = calculator.times(on: day)
        for prayer in Prayer.allCases {
            let t = try #require(today[prayer])
            let text = iso8601(t, in: zone)
            #expect(parseISO8601(text) == t, "\(text) round-trips")
            let offset = zone.secondsFromGMT(for: t)
            let sign = offset < 0 ? "-" : "+"
            let expected = "\(sign)\(String(format: "%02d:%02d", abs(offset) / 3600, abs(offset) % 3600 / 60))"
            #expect(text.hasSuffix(expected), "\(prayer) \(text)")
        }
        // Dhuhr (after the 1-3 am switch) reads an hour later/earlier on the clock than yesterday.
        func minuteOfDay(_ t: Date) -> Int {
            let w = WallClockTime(t, in: zone)
            return w.hour * 60 + w.minute
        }
        let shift = minuteOfDay(try #require(today.dhuhr)) - minuteOfDay(try #require(before.dhuhr))
        #expect(abs(shift - jump / 60) <= 2, "Dhuhr moved \(shift) min on the clock")
    }

    @Test("high latitudes in summer: each rule bounds Fajr and Isha; the recommended rule is 1/7 above 48°")
    func highLatitudeSummer() throws {
        let place = Place(name: "Stockholm", latitude: 59.3293, longitude: 18.0686, zone: "Europe/Stockholm")
        let day = LocalDate(year: 2026, month: 6, day: 21)
        var fajrs: [HighLatitudeRule: Date] = [:]
        for rule in HighLatitudeRule.allCases {
            var p = CalculationMethod.muslimWorldLeague.parameters
            p.highLatitudeRule = rule
            let times = try place.calculator(p).times(on: day)
            let sunrise = try #require(times.sunrise)
            let maghrib = try #require(times.maghrib)
            let fajr = try #require(times.fajr)
            let isha = try #require(times.isha)
            #expect(fajr < sunrise && isha > maghrib && times.boundedByRule == [.fajr, .isha], "\(rule)")
            let night = try #require(try place.calculator(p).times(on: day.adding(days: 1)).sunrise)
                .timeIntervalSince(maghrib)
            let portion: Double =
                switch rule.resolved(latitude: place.latitude) {
                case .seventhOfTheNight: 1.0 / 7
                case .twilightAngle: 18.0 / 60
                default: 0.5
                }
            #expect(abs(sunrise.timeIntervalSince(fajr) - portion * night) <= 90, "\(rule) Fajr portion")
            fajrs[rule] = fajr
        }
        #expect(fajrs[.recommended] == fajrs[.seventhOfTheNight])
        #expect(fajrs[.middleOfTheNight]! < fajrs[.twilightAngle]!)
        #expect(fajrs[.twilightAngle]! < fajrs[.seventhOfTheNight]!)
    }

    @Test("polar day and night are undefined with the reason, or resolved on request")
    func polar() throws {
        let tromso = Place(name: "Tromsø", latitude: 69.6492, longitude: 18.9553, zone: "Europe/Oslo")
        let summer = LocalDate(year: 2026, month: 6, day: 21)
        let winter = LocalDate(year: 2026, month: 12, day: 21)
        var p = CalculationMethod.muslimWorldLeague.parameters
        let day = try tromso.calculator(p).times(on: summer)
        #expect(day.undefinedReason == .polarDay && Prayer.allCases.allSatisfy { day[$0] == nil })
        #expect(day.middleOfTheNight == nil)
        let night = try tromso.calculator(p).times(on: winter)
        #expect(night.undefinedReason == .polarNight && night.fajr == nil)

        p.polarResolution = .nearestLatitude
        let byLatitude = try tromso.calculator(p).times(on: summer)
        #expect(byLatitude.undefinedReason == nil)
        guard case .nearestLatitude(let latitude)? = byLatitude.polarResolution else {
            Issue.record("no resolution")
            return
        }
        #expect(latitude < 66.5 && latitude > 64)
        #expect(Prayer.allCases.allSatisfy { byLatitude[$0] != nil })

        p.polarResolution = .nearestDay
        for date in [summer, winter] {
            let byDay = try tromso.calculator(p).times(on: date)
            guard case .nearestDay(let source)? = byDay.polarResolution else {
                Issue.record("no resolution")
                return
            }
            #expect(abs(source.days(to: date)) > 20 && abs(source.days(to: date)) < 60)
            let dhuhr = try #require(byDay.dhuhr)
            #expect(WallClockTime(dhuhr, in: byDay.timeZone).date == date, "moved to the asked date")
            let order = [byDay.fajr, byDay.sunrise, byDay.dhuhr, byDay.asr, byDay.maghrib, byDay.isha].compactMap { $0 }
            #expect(order.count == 6 && order == order.sorted())
        }
    }

    @Test("Umm al-Qura: Isha 90 min after Maghrib, 120 min in Ramadan (by the Umm al-Qura calendar)")
    func ramadanIsha() throws {
        let makkah = Place(name: "Makkah", latitude: 21.4225, longitude: 39.8262, zone: "Asia/Riyadh")
        let calculator = try makkah.calculator(CalculationMethod.ummAlQura.parameters)
        // Ramadan 1447 runs 2026-02-18 ... 2026-03-19 in the Umm al-Qura calendar.
        for (date, month, minutes) in [
            (LocalDate(year: 2026, month: 2, day: 17), 8, 90.0),
            (LocalDate(year: 2026, month: 2, day: 18), 9, 120),
            (LocalDate(year: 2026, month: 3, day: 10), 9, 120),
            (LocalDate(year: 2026, month: 3, day: 20), 10, 90),
        ] {
            #expect(calculator.hijriMonth(of: date) == month, "\(date)")
            let times = calculator.times(on: date)
            let gap = try #require(times.isha).timeIntervalSince(try #require(times.maghrib)) / 60
            #expect(abs(gap - minutes) <= 1, "\(date): \(gap) min")
        }
    }

    @Test("madhab, adjustments, rounding and custom angles change what they should")
    func options() throws {
        let karachi = try #require(Place.worldwide.first { $0.name == "Karachi" })
        let day = LocalDate(year: 2026, month: 11, day: 30)
        let base = CalculationMethod.karachi.parameters
        let standard = try karachi.calculator(base).times(on: day)
        var hanafi = base
        hanafi.madhab = .hanafi
        #expect(try karachi.calculator(hanafi).times(on: day).asr! > standard.asr!.addingTimeInterval(30 * 60))

        var adjusted = base
        adjusted.adjustments = PrayerAdjustments(fajr: 2, isha: -3)
        let moved = try karachi.calculator(adjusted).times(on: day)
        #expect(moved.fajr!.timeIntervalSince(standard.fajr!) == 120)
        #expect(moved.isha!.timeIntervalSince(standard.isha!) == -180)
        #expect(moved.dhuhr == standard.dhuhr)

        for rounding in PrayerRounding.allCases {
            var p = base
            p.rounding = rounding
            let times = try karachi.calculator(p).times(on: day)
            for prayer in Prayer.allCases {
                let seconds = Int(times[prayer]!.timeIntervalSince1970) % 60
                if rounding != .none { #expect(seconds == 0) }
                let diff = times[prayer]!.timeIntervalSince(standard[prayer]!)
                switch rounding {
                case .nearest: #expect(diff == 0)
                case .up: #expect(diff == 0 || diff == 60)
                case .none: #expect(abs(diff) <= 30)
                }
            }
        }

        var custom = CalculationParameters(fajrAngle: 12, ishaAngle: 12)
        custom.methodAdjustments = base.methodAdjustments
        let shallow = try karachi.calculator(custom).times(on: day)
        #expect(shallow.fajr! > standard.fajr! && shallow.isha! < standard.isha!)
        #expect(shallow.dhuhr == standard.dhuhr)

        var interval = CalculationParameters(fajrAngle: 18, ishaAngle: 0, ishaInterval: 75)
        interval.methodAdjustments = base.methodAdjustments
        let fixed = try karachi.calculator(interval).times(on: day)
        #expect(fixed.isha!.timeIntervalSince(fixed.maghrib!) == 75 * 60)

        #expect(throws: ProofkitError.self) {
            try PrayerTimeCalculator(
                coordinates: Coordinates(latitude: 1, longitude: 1), timeZone: .gmt,
                parameters: CalculationParameters(fajrAngle: -3, ishaAngle: 17))
        }
        #expect(throws: ProofkitError.self) { try Coordinates(latitude: 91, longitude: 0) }
        #expect(throws: ProofkitError.self) { try Coordinates(latitude: 0, longitude: -181) }
    }

    @Test("MoonsightingCommittee shafaq: ahmer ≤ general ≤ abyad for Isha")
    func shafaq() throws {
        let london = try #require(Place.worldwide.first { $0.name == "London" })
        for month in [1, 4, 7, 10] {
            let day = LocalDate(year: 2026, month: month, day: 15)
            var ishas: [Shafaq: Date] = [:]
            for shafaq in Shafaq.allCases {
                var p = CalculationMethod.moonsightingCommittee.parameters
                p.shafaq = shafaq
                ishas[shafaq] = try london.calculator(p).times(on: day).isha
            }
            #expect(ishas[.ahmer]! <= ishas[.general]! && ishas[.general]! <= ishas[.abyad]!, "\(day)")
        }
    }

    @Test("middle of the night lies halfway from Maghrib to the next Fajr; last third after it")
    func middleOfTheNight() throws {
        let karachi = try #require(Place.worldwide.first { $0.name == "Karachi" })
        let calculator = try karachi.calculator(CalculationMethod.karachi.parameters)
        let day = LocalDate(year: 2026, month: 11, day: 30)
        let today = calculator.times(on: day)
        let tomorrow = calculator.times(on: day.adding(days: 1))
        let half = today.maghrib!.timeIntervalSince1970 + tomorrow.fajr!.timeIntervalSince(today.maghrib!) / 2
        #expect(abs(today.middleOfTheNight!.timeIntervalSince1970 - half) <= 30)
        #expect(today.lastThirdOfTheNight! > today.middleOfTheNight! && today.lastThirdOfTheNight! < tomorrow.fajr!)
    }

    @Test("every method preset computes sane times for Karachi and Chicago all year")
    func allPresets() throws {
        for method in CalculationMethod.allCases where method != .other {
            for place in [Place.worldwide[6], Place.worldwide[10]] {
                let calculator = try place.calculator(method.parameters)
                for times in calculator.times(from: LocalDate(year: 2026, month: 1, day: 1), days: 365)
                where times.date.day == 1 {
                    let order = [times.fajr, times.sunrise, times.dhuhr, times.asr, times.maghrib, times.isha]
                        .compactMap { $0 }
                    #expect(order.count == 6 && order == order.sorted(), "\(method) \(place.name) \(times.date)")
                }
            }
        }
    }

    @Test("wall-clock conversion: DST gaps move forward, repeated hours take the first")
    func wallClock() throws {
        let london = try #require(TimeZone(identifier: "Europe/London"))
        let gap = WallClockTime(date: LocalDate(year: 2026, month: 3, day: 29), hour: 1, minute: 30).instant(in: london)
        #expect(iso8601(gap, in: london) == "2026-03-29T02:30:00+01:00")
        let repeated = WallClockTime(date: LocalDate(year: 2026, month: 10, day: 25), hour: 1, minute: 30).instant(
            in: london)
        #expect(iso8601(repeated, in: london) == "2026-10-25T01:30:00+01:00")
        #expect(parseISO8601("2026-10-25T01:30:00+00:00")!.timeIntervalSince(repeated) == 3600)
        #expect(LocalDate(iso: "2026-02-29") == nil && LocalDate(iso: "2028-02-29") != nil)
        #expect(LocalDate(year: 2026, month: 12, day: 31).dayOfYear == 365)
        #expect(LocalDate(year: 1969, month: 12, day: 31).daysSinceEpoch == -1)
        #expect(parseISO8601("2026-11-30T05:12") == nil)
        #expect(parseISO8601("2026-11-30T05:12", defaultZone: london) != nil)
    }
}
