import Proofkit
import ProofkitCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(FoundationInternationalization)
    import FoundationInternationalization
#endif

/// Options shared by `proofkit times` and `proofkit plan`: place, zone and calculation method.
enum PrayerOptions {
    static let specs: [OptionSpec] = [
        .option("lat", value: "DEG", help: "latitude, -90...90 (south negative)"),
        .option("lon", value: "DEG", help: "longitude, -180...180 (west negative)"),
        .option("tz", value: "ZONE", help: "IANA zone of the timetable, e.g. Europe/London [system zone]"),
        .option("method", value: "NAME", choices: methodNames, help: "calculation method [mwl]; see below"),
        .option("madhab", value: "NAME", choices: ["shafi", "hanafi"], help: "Asr school: shafi or hanafi [shafi]"),
        .option(
            "high-lat", value: "RULE", choices: ["middle", "seventh", "twilight", "recommended"],
            help: "middle, seventh, twilight or recommended [recommended]"),
        .option(
            "polar", value: "MODE", choices: ["undefined", "nearest-latitude", "nearest-day"],
            help: "polar days: undefined, nearest-latitude, nearest-day [undefined]"),
        .option(
            "rounding", value: "MODE", choices: ["nearest", "up", "none"], help: "nearest, up or none [the method's]"),
        .option("adjust", value: "LIST", help: "minute offsets, e.g. fajr=+2,isha=-3"),
        .option("fajr-angle", value: "DEG", help: "custom Fajr angle (overrides the method's)"),
        .option("isha-angle", value: "DEG", help: "custom Isha angle (overrides the method's)"),
        .option("isha-interval", value: "MIN", help: "custom Isha: minutes after sunset"),
        .option(
            "shafaq", value: "NAME", choices: ["general", "ahmer", "abyad"],
            help: "MoonsightingCommittee Isha: general, ahmer, abyad [general]"),
    ]

    /// The method names --method offers (each one ``CalculationMethod/init(name:)`` reads).
    static let methodNames = [
        "mwl", "isna", "egyptian", "karachi", "makkah", "dubai", "qatar", "kuwait", "msc", "singapore", "turkey",
        "tehran", "custom",
    ]

    static let methodHelp = """
        Methods (--method): mwl (Muslim World League), isna (North America), egyptian, karachi,
        makkah (Umm al-Qura; Isha 120 min in Ramadan), dubai, qatar, kuwait, msc (Moonsighting
        Committee, seasonal Fajr/Isha), singapore (rounds up), turkey, tehran, custom (give
        --fajr-angle and --isha-angle or --isha-interval).
        """

    /// The prayers named in a `--prayers` list (comma-separated, any case, spaces around a name
    /// ignored), each once, in the day's order: `fajr,Isha, fajr` is fajr and isha.
    /// - Throws: ``UsageError`` for an unknown name, for sunrise (not a prayer: it never gets an
    ///   alarm), and for a list that names none.
    static func prayers(_ text: String) throws(UsageError) -> [Prayer] {
        var named: Set<Prayer> = []
        for name in text.split(separator: ",", omittingEmptySubsequences: true) {
            guard let prayer = Prayer(rawValue: name.lowercased().trimmingSpaces()) else {
                throw UsageError("unknown prayer '\(name)' in --prayers; fajr, dhuhr, asr, maghrib, isha")
            }
            guard prayer != .sunrise else { throw UsageError("sunrise is not a prayer and never gets an alarm") }
            named.insert(prayer)
        }
        guard !named.isEmpty else { throw UsageError("--prayers names no prayer; e.g. fajr or fajr,isha") }
        return Prayer.allCases.filter(named.contains)
    }

    /// The timetable zone: --tz, or the system's.
    static func zone(_ arguments: ParsedArguments, option: String = "tz") throws(UsageError) -> TimeZone {
        keepICUTimeZonesLinked()
        guard let name = arguments.value(option) else { return TimeZone.current }
        guard let zone = TimeZone(identifier: name) else {
            throw UsageError("unknown time zone '\(name)' for --\(option) (use an IANA name such as Asia/Karachi)")
        }
        return zone
    }

    /// Keeps FoundationInternationalization's ICU time zones and calendars in the static
    /// `proofkit` (`.ci/build-release`).
    ///
    /// FoundationEssentials knows named zones (`TimeZone(identifier: "Asia/Riyadh")`, the system
    /// zone) and the Umm al-Qura calendar only through dynamic replacements that
    /// FoundationInternationalization registers when it is loaded; a static link takes that
    /// module's objects only when code refers to one of them, and without the full Foundation
    /// nothing did (every zone but UTC was then "unknown"). This refers to one
    /// (`TimeZone.knownTimeZoneIdentifiers`) in a branch that never runs: `argc` is never negative.
    @inline(never)
    static func keepICUTimeZonesLinked() {
        if CommandLine.argc < 0 { _ = TimeZone.knownTimeZoneIdentifiers }
    }

    static func coordinates(_ arguments: ParsedArguments) throws(UsageError) -> Coordinates {
        guard let lat = try arguments.double("lat") else { throw UsageError("missing --lat") }
        guard let lon = try arguments.double("lon") else { throw UsageError("missing --lon") }
        guard (-90...90).contains(lat) else { throw UsageError("--lat \(lat) is outside -90...90") }
        guard (-180...180).contains(lon) else { throw UsageError("--lon \(lon) is outside -180...180") }
        do { return try Coordinates(latitude: lat, longitude: lon) } catch { throw UsageError(error.message) }
    }

    static func parameters(_ arguments: ParsedArguments) throws(UsageError) -> CalculationParameters {
        var options: [String: String] = [:]
        for name in CalculationParameters.optionNames { options[name] = arguments.value(name) }
        do { return try CalculationParameters(options: options) } catch { throw UsageError(error.message) }
    }

    static func calculator(_ arguments: ParsedArguments) throws(UsageError) -> PrayerTimeCalculator {
        let coordinates = try coordinates(arguments)
        let zone = try zone(arguments)
        let parameters = try parameters(arguments)
        do {
            return try PrayerTimeCalculator(coordinates: coordinates, timeZone: zone, parameters: parameters)
        } catch {
            throw UsageError(error.message)
        }
    }

    /// `HH:MM` on the zone's clock, with `(+1)`/`(-1)` when on another date than `date`.
    static func clock(_ instant: Date?, zone: TimeZone, date: LocalDate) -> String {
        guard let instant else { return "--:--" }
        let wall = WallClockTime(instant, in: zone)
        let hhmm = String(wall.description.dropFirst(11).prefix(5))
        let shift = date.days(to: wall.date)
        return shift == 0 ? hhmm : hhmm + (shift > 0 ? "(+\(shift))" : "(\(shift))")
    }

    /// The prayer times a plan has none of (polar day or night), as `plan --json`, `alarm prayers
    /// --json` and `alarm status --json` give them: `[{"occurrence", "reason"}]`.
    static func unavailableJSON(_ missing: [UnavailableOccurrence]) -> JSONValue {
        .array(
            missing.map {
                .object(["occurrence": .string($0.occurrence.description), "reason": .string($0.reason.rawValue)])
            })
    }
}
