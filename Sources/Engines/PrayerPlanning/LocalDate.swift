#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
#if canImport(FoundationInternationalization)
    import FoundationInternationalization
#endif

/// A civil (proleptic Gregorian) calendar date without a time zone, e.g. 2026-11-30.
///
/// Arithmetic is exact integer day arithmetic (no `Calendar` needed); ``description`` is the
/// ISO-8601 form `YYYY-MM-DD`.
public struct LocalDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The year, e.g. 2026.
    public var year: Int
    /// The month, 1...12.
    public var month: Int
    /// The day of the month, 1...31.
    public var day: Int

    /// Creates a date. Traps on a month or day out of range (a programmer error); use
    /// ``init(iso:)`` for text from users.
    public init(year: Int, month: Int, day: Int) {
        precondition(
            (1...12).contains(month) && day >= 1
                && day <= LocalDate.daysInMonth(year: year, month: month), "invalid date")
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses `YYYY-MM-DD`; `nil` when malformed or not a real date (2026-02-30).
    public init?(iso text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
            (1...12).contains(m), d >= 1, d <= LocalDate.daysInMonth(year: y, month: m)
        else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// Days since 1970-01-01 (negative before), from Howard Hinnant's `days_from_civil`.
    public var daysSinceEpoch: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The date `daysSinceEpoch` days after 1970-01-01 (Hinnant's `civil_from_days`).
    public init(daysSinceEpoch days: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        self.init(year: yoe + era * 400 + (m <= 2 ? 1 : 0), month: m, day: d)
    }

    /// This date moved by `days` (negative goes back).
    public func adding(days: Int) -> LocalDate { LocalDate(daysSinceEpoch: daysSinceEpoch + days) }

    /// Whole days from `self` to `other` (positive when `other` is later).
    public func days(to other: LocalDate) -> Int { other.daysSinceEpoch - daysSinceEpoch }

    /// Day of the year, 1...366.
    public var dayOfYear: Int { LocalDate(year: year, month: 1, day: 1).days(to: self) + 1 }

    /// Whether `year` is a Gregorian leap year.
    public static func isLeap(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    /// 28...31.
    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    public static func < (lhs: LocalDate, rhs: LocalDate) -> Bool { lhs.daysSinceEpoch < rhs.daysSinceEpoch }

    /// `YYYY-MM-DD`.
    public var description: String {
        "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }
}

/// A wall-clock reading: a local date plus hour and minute (and second), with no zone.
public struct WallClockTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The local date.
    public var date: LocalDate
    /// 0...23.
    public var hour: Int
    /// 0...59.
    public var minute: Int
    /// 0...59.
    public var second: Int

    /// Creates a reading. Traps on fields out of range.
    public init(date: LocalDate, hour: Int, minute: Int, second: Int = 0) {
        precondition((0...23).contains(hour) && (0...59).contains(minute) && (0...59).contains(second))
        self.date = date
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// Seconds since 1970-01-01 00:00 as if the reading were UTC.
    var secondsAsUTC: Int { date.daysSinceEpoch * 86_400 + hour * 3600 + minute * 60 + second }

    init(secondsAsUTC s: Int) {
        let days = s >= 0 ? s / 86_400 : (s - 86_399) / 86_400
        let rest = s - days * 86_400
        self.init(
            date: LocalDate(daysSinceEpoch: days), hour: rest / 3600, minute: rest % 3600 / 60,
            second: rest % 60)
    }

    /// The reading of `instant` on a clock in `zone`.
    public init(_ instant: Date, in zone: TimeZone) {
        let t = Int(instant.timeIntervalSince1970.rounded(.down))
        self.init(secondsAsUTC: t + zone.secondsFromGMT(for: instant))
    }

    /// The instant when a clock in `zone` shows this reading.
    ///
    /// DST rules: a reading skipped by a spring-forward gap (02:30 on a day that jumps from
    /// 02:00 to 03:00) maps to the instant the same time after the change (03:30, as
    /// `Calendar`'s `.nextTime` policy); a reading that occurs twice in a fall-back hour maps to
    /// the first occurrence.
    public func instant(in zone: TimeZone) -> Date {
        let valid = occurrences(in: zone)
        if let first = valid.first { return first }
        // A gap: the offset before the change moves the reading forward by the gap's length.
        let w = secondsAsUTC
        func offset(_ t: Int) -> Int { zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(t))) }
        return Date(timeIntervalSince1970: Double(w - min(offset(w - 36 * 3600), offset(w + 36 * 3600))))
    }

    /// Every instant when a clock in `zone` shows this reading, earliest first: one as a rule, none
    /// in a spring-forward gap, two in a fall-back hour.
    public func occurrences(in zone: TimeZone) -> [Date] {
        let w = secondsAsUTC
        func offset(_ t: Int) -> Int { zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(t))) }
        var valid: [Int] = []
        for o in Set([offset(w - 36 * 3600), offset(w + 36 * 3600)]) where offset(w - o) == o { valid.append(w - o) }
        return valid.sorted().map { Date(timeIntervalSince1970: Double($0)) }
    }

    public static func < (lhs: WallClockTime, rhs: WallClockTime) -> Bool { lhs.secondsAsUTC < rhs.secondsAsUTC }

    /// `YYYY-MM-DDTHH:MM:SS`.
    public var description: String { "\(date)T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))" }

    /// `HHMM`, e.g. `"0512"` (used in alarm ids).
    public var compactMinute: String { pad(hour, 2) + pad(minute, 2) }
}

/// ISO-8601 local time with the UTC offset in force at that instant, e.g.
/// `2028-03-26T05:51:00+02:00` (whole seconds; `+00:00` for UTC).
public func iso8601(_ instant: Date, in zone: TimeZone) -> String {
    let wall = WallClockTime(instant, in: zone)
    let offset = zone.secondsFromGMT(for: instant)
    let sign = offset < 0 ? "-" : "+"
    let minutes = abs(offset) / 60
    return "\(wall)\(sign)\(pad(minutes / 60, 2)):\(pad(minutes % 60, 2))"
}

/// Parses an ISO-8601 instant: `YYYY-MM-DDTHH:MM[:SS]` followed by `Z` or `±HH:MM`; `nil` when
/// malformed. Without an offset the text is read as a wall-clock time in `zone` (when given).
public func parseISO8601(_ text: String, defaultZone zone: TimeZone? = nil) -> Date? {
    let chars = Array(text)
    guard chars.count >= 16, chars[10] == "T" || chars[10] == " ",
        let date = LocalDate(iso: String(chars[0..<10]))
    else { return nil }
    var rest = Array(chars[11...])
    func number(_ slice: ArraySlice<Character>) -> Int? {
        slice.allSatisfy(\.isASCII) && slice.allSatisfy(\.isNumber) ? Int(String(slice)) : nil
    }
    guard rest.count >= 5, rest[2] == ":", let h = number(rest[0..<2]), let m = number(rest[3..<5]),
        h < 24, m < 60
    else { return nil }
    var s = 0
    rest.removeFirst(5)
    if rest.first == ":" {
        guard rest.count >= 3, let sec = number(rest[1..<3]), sec < 60 else { return nil }
        s = sec
        rest.removeFirst(3)
        if rest.first == "." {  // fractional seconds are accepted and dropped
            rest.removeFirst()
            while let c = rest.first, c.isASCII, c.isNumber { rest.removeFirst() }
        }
    }
    let wall = WallClockTime(date: date, hour: h, minute: m, second: s)
    if rest.isEmpty {
        guard let zone else { return nil }
        return wall.instant(in: zone)
    }
    if rest == ["Z"] || rest == ["z"] { return Date(timeIntervalSince1970: Double(wall.secondsAsUTC)) }
    guard rest.count == 6, rest[0] == "+" || rest[0] == "-", rest[3] == ":",
        let oh = number(rest[1..<3]), let om = number(rest[4..<6]), oh <= 14, om < 60
    else { return nil }
    let offset = (oh * 3600 + om * 60) * (rest[0] == "-" ? -1 : 1)
    return Date(timeIntervalSince1970: Double(wall.secondsAsUTC - offset))
}

func pad(_ value: Int, _ width: Int) -> String {
    let text = String(abs(value))
    return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - text.count)) + text
}
