import Proofkit
import ProofkitCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `proofkit times`: prayer times for a place and dates.
enum TimesCommand: Subcommand {
    static let name = "times"
    static let summary = "prayer times for a place and date"
    static let synopsis = """
        proofkit times --lat LAT --lon LON [--tz ZONE] [--date YYYY-MM-DD] [--days N] [--method M] [--madhab M] [--high-lat R] [--json]
        """
    static let discussion = """
        Computes Fajr, sunrise, Dhuhr, Asr, Maghrib, Isha and the middle of the night with the
        adhan libraries' algorithm (Meeus' solar equations) for each local date in ZONE. --date
        is the first date [today in ZONE], --days the number of dates [1, at most 366].

        \(PrayerOptions.methodHelp)

        Text: one line per date, HH:MM on ZONE's clock; (+1) marks a time on the next date.
        --json: one object per date:
          {"date": "2026-02-14", "timezone": "Asia/Riyadh", "latitude": 24.4672, "longitude": 39.6111,
           "method": "ummAlQura", "madhab": "shafi", "high_latitude_rule": "middleOfTheNight",
           "times": {"fajr": "2026-02-14T05:37:00+03:00", "sunrise": ..., "dhuhr": ..., "asr": ...,
                     "maghrib": ..., "isha": ..., "midnight": ...},
           "undefined": null,
           "bounded_by_rule": ["fajr", "isha"], "polar_resolution": null}
        Times are local ISO-8601 with the UTC offset in force at that instant. On a polar day the
        times are null and "undefined" is {"reason": "polarDay", "message": "..."};
        "polar_resolution" is {"nearest_latitude": 64.5} or {"nearest_day": "2026-07-31"} when
        --polar resolved the day. "bounded_by_rule" lists times set by the high-latitude rule.

        Examples:
          proofkit times --lat 21.4225 --lon 39.8262 --tz Asia/Riyadh --method makkah
          proofkit times --lat 51.5074 --lon -0.1278 --tz Europe/London --days 7 --high-lat seventh
          proofkit times --lat 68.9585 --lon 33.0827 --tz Europe/Moscow --date 2026-06-25 --polar nearest-latitude --json
        """
    static let options: [OptionSpec] =
        PrayerOptions.specs + [
            .option("date", value: "YYYY-MM-DD", help: "first local date [today in --tz]"),
            .option("days", value: "N", help: "number of dates, 1...366 [1]"),
            .flag("json", help: "one JSON object per date on stdout"),
        ]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        guard arguments.positionals.isEmpty else {
            throw UsageError("unexpected argument '\(arguments.positionals[0])'")
        }
        let calculator = try PrayerOptions.calculator(arguments)
        let zone = calculator.timeZone
        let start: LocalDate
        if let text = arguments.value("date") {
            guard let date = LocalDate(iso: text) else { throw UsageError("--date needs YYYY-MM-DD, got '\(text)'") }
            start = date
        } else {
            start = WallClockTime(Date(), in: zone).date  // the CLI may read the clock; engines may not
        }
        let days = try arguments.int("days") ?? 1
        guard (1...366).contains(days) else { throw UsageError("--days must be 1...366, got \(days)") }
        // Dates print as YYYY-MM-DD: a table that ran into year 10000 would print garbled rows.
        guard start.adding(days: days - 1).year <= 9999 else {
            throw UsageError("--date \(start) with --days \(days) runs past 9999-12-31")
        }
        let p = calculator.parameters
        let rule = p.highLatitudeRule.resolved(latitude: calculator.coordinates.latitude)
        if !arguments.has("json") {
            io.print(
                "Prayer times at \(calculator.coordinates.latitude), \(calculator.coordinates.longitude) in \(zone.identifier); method \(p.method.rawValue), \(p.madhab.rawValue) Asr, high-latitude rule \(p.usesMoonsightingSeasons ? "MoonsightingCommittee seasons" : rule.rawValue)"
            )
            io.print(
                "date        "
                    + ["fajr", "sunrise", "dhuhr", "asr", "maghrib", "isha", "midnight"]
                    .map { $0.padded(toLength: 9) }.joined()
                    .trimmingSpaces())
        }
        for times in calculator.times(from: start, days: days) {
            if arguments.has("json") {
                io.printJSON(json(times, calculator: calculator, rule: rule))
            } else if let reason = times.undefinedReason {
                io.print("\(times.date)  undefined: \(reason.description)")
            } else {
                let cells = [
                    times.fajr, times.sunrise, times.dhuhr, times.asr, times.maghrib, times.isha,
                    times.middleOfTheNight,
                ].map { PrayerOptions.clock($0, zone: zone, date: times.date) }
                io.print(
                    "\(times.date)  "
                        + cells.map { $0.padded(toLength: 9) }
                        .joined().trimmingSpaces())
            }
        }
        return .success
    }

    static func json(_ times: PrayerTimes, calculator: PrayerTimeCalculator, rule: HighLatitudeRule) -> JSONValue {
        func stamp(_ date: Date?) -> JSONValue { JSONValue(date.map { iso8601($0, in: times.timeZone) }) }
        var values: [String: JSONValue] = [:]
        for prayer in Prayer.allCases { values[prayer.rawValue] = stamp(times[prayer]) }
        values["midnight"] = stamp(times.middleOfTheNight)
        let undefined: JSONValue =
            times.undefinedReason.map {
                .object(["reason": .string($0.rawValue), "message": .string($0.description)])
            } ?? .null
        let resolution: JSONValue =
            switch times.polarResolution {
            case .none: .null
            case .nearestLatitude(let latitude)?: .object(["nearest_latitude": .number(latitude)])
            case .nearestDay(let day)?: .object(["nearest_day": .string(day.description)])
            }
        let p = calculator.parameters
        return .object([
            "date": .string(times.date.description), "timezone": .string(times.timeZone.identifier),
            "latitude": .number(calculator.coordinates.latitude),
            "longitude": .number(calculator.coordinates.longitude),
            "method": .string(p.method.rawValue), "madhab": .string(p.madhab.rawValue),
            "high_latitude_rule": .string(p.usesMoonsightingSeasons ? "moonsightingCommittee" : rule.rawValue),
            "times": .object(values), "undefined": undefined,
            "bounded_by_rule": .array(times.boundedByRule.sorted().map { .string($0.rawValue) }),
            "polar_resolution": resolution,
        ])
    }
}
