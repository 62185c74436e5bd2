// PrayerPlanning: prayer times. A pure engine: it imports only ProofkitCore and Foundation's value
// types (Date, TimeZone, Calendar), does no I/O and never reads the clock. Time is always a
// parameter (`now:`). The alarms built on these times are AlarmScheduling's.
//
// Files:
//   LocalDate.swift              civil dates and wall-clock conversion in an IANA zone
//   SolarAstronomy.swift         Meeus' low-precision solar coordinates and rise/set/transit
//   CalculationParameters.swift  methods, madhab, high-latitude and polar rules, rounding
//   PrayerTimeCalculator.swift   the prayer times of one local date
import ProofkitCore

/// The six daily times that ``PrayerTimeCalculator`` computes, in the order of the day.
///
/// `sunrise` is not a prayer but the end of Fajr's time; the planner never makes it an alarm.
public enum Prayer: String, CaseIterable, Sendable, Hashable, Comparable, CustomStringConvertible {
    case fajr, sunrise, dhuhr, asr, maghrib, isha

    /// Order of the day (fajr first).
    public static func < (lhs: Prayer, rhs: Prayer) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// The lower-case name, e.g. `"fajr"` (used in JSON keys and alarm ids).
    public var description: String { rawValue }
}
