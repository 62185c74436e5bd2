public import ProofkitCore

/// The school for Asr: how long the shadow must grow past its noon length.
public enum Madhab: String, CaseIterable, Sendable, Hashable {
    /// Shafi'i, Maliki, Hanbali ("standard"): shadow = noon shadow + 1 × height.
    case shafi
    /// Hanafi: shadow = noon shadow + 2 × height.
    case hanafi

    /// The shadow factor: 1 or 2.
    public var shadowLength: Double { self == .shafi ? 1 : 2 }
}

/// How Fajr and Isha are bounded where the twilight is long or never ends (high latitudes).
///
/// The rule gives a "safe" Fajr no earlier than sunrise − portion × night and a safe Isha no later
/// than sunset + portion × night, where night = sunset → next sunrise. The twilight-angle time is
/// used when it exists and lies inside that bound (adhan's approach).
public enum HighLatitudeRule: String, CaseIterable, Sendable, Hashable {
    /// Portion 1/2: Fajr no earlier than the middle of the night, Isha no later.
    case middleOfTheNight
    /// Portion 1/7: the last seventh of the night for Fajr, the first seventh for Isha.
    case seventhOfTheNight
    /// Portion angle/60 (e.g. 18° → 0.3 of the night), PrayTimes' "AngleBased".
    case twilightAngle
    /// ``seventhOfTheNight`` above 48° latitude (north or south), else ``middleOfTheNight``
    /// (adhan-swift's `HighLatitudeRule.recommended(for:)`, which only looks north).
    case recommended

    /// The rule actually used at `latitude`.
    public func resolved(latitude: Double) -> HighLatitudeRule {
        guard self == .recommended else { return self }
        return abs(latitude) > 48 ? .seventhOfTheNight : .middleOfTheNight
    }
}

/// What to do on a date when the Sun does not rise or does not set (polar day or night).
public enum PolarResolution: String, CaseIterable, Sendable, Hashable {
    /// Leave every time of the day undefined, with the reason (adhan's `nil`).
    case unresolved
    /// Use the nearest latitude toward the equator (0.5° steps) where the Sun rises and sets
    /// (adhan-js `aqrabBalad`).
    case nearestLatitude
    /// Use the nearest date (±1, ±2, … days, up to half a year) on which the Sun rises and sets,
    /// moved to this date's clock (adhan-js `aqrabYaum`, but keeping the requested date).
    case nearestDay
}

/// Rounding of the final times to the minute.
public enum PrayerRounding: String, CaseIterable, Sendable, Hashable {
    /// Nearest minute, exactly :30 s going up (adhan's rule).
    case nearest
    /// Up to the next whole minute unless already whole (adhan-swift's Singapore preset).
    case up
    /// Keep the seconds.
    case none
}

/// The MoonsightingCommittee's twilight for its seasonal Isha (Khalid Shaukat's tables).
public enum Shafaq: String, CaseIterable, Sendable, Hashable {
    /// Ahmer in summer, Abyad in winter, chosen to avoid hardship at high latitudes (default).
    case general
    /// The red glow (Shafi'i, Maliki, Hanbali).
    case ahmer
    /// The white glow (Abu Hanifa); later.
    case abyad
}

/// Whole-minute offsets added to each computed time before rounding.
public struct PrayerAdjustments: Sendable, Hashable {
    public var fajr: Int
    public var sunrise: Int
    public var dhuhr: Int
    public var asr: Int
    public var maghrib: Int
    public var isha: Int

    /// All zero unless given, in minutes (negative is earlier).
    public init(
        fajr: Int = 0, sunrise: Int = 0, dhuhr: Int = 0, asr: Int = 0, maghrib: Int = 0,
        isha: Int = 0
    ) {
        self.fajr = fajr
        self.sunrise = sunrise
        self.dhuhr = dhuhr
        self.asr = asr
        self.maghrib = maghrib
        self.isha = isha
    }

    /// The offset of `prayer`, minutes.
    public subscript(prayer: Prayer) -> Int {
        get {
            switch prayer {
            case .fajr: fajr
            case .sunrise: sunrise
            case .dhuhr: dhuhr
            case .asr: asr
            case .maghrib: maghrib
            case .isha: isha
            }
        }
        set {
            switch prayer {
            case .fajr: fajr = newValue
            case .sunrise: sunrise = newValue
            case .dhuhr: dhuhr = newValue
            case .asr: asr = newValue
            case .maghrib: maghrib = newValue
            case .isha: isha = newValue
            }
        }
    }
}

/// The calculation presets. Angles and offsets are those of the adhan libraries (adhan-swift
/// `CalculationMethod`), which match the authorities' published parameters; Tehran is the
/// University of Tehran Institute of Geophysics method as in PrayTimes.org.
public enum CalculationMethod: String, CaseIterable, Sendable, Hashable {
    /// Muslim World League: Fajr 18°, Isha 17°, Dhuhr +1 min.
    case muslimWorldLeague
    /// ISNA (Islamic Society of North America): Fajr 15°, Isha 15°, Dhuhr +1 min.
    case northAmerica
    /// Egyptian General Authority of Survey: Fajr 19.5°, Isha 17.5°, Dhuhr +1 min.
    case egyptian
    /// University of Islamic Sciences, Karachi: Fajr 18°, Isha 18°, Dhuhr +1 min.
    case karachi
    /// Umm al-Qura, Makkah: Fajr 18.5°, Isha 90 min after sunset, 120 min in Ramadan.
    case ummAlQura
    /// UAE (Dubai): Fajr 18.2°, Isha 18.2°, sunrise −3, Dhuhr/Asr/Maghrib +3 min.
    case dubai
    /// Qatar: Fajr 18°, Isha 90 min after sunset.
    case qatar
    /// Kuwait: Fajr 18°, Isha 17.5°.
    case kuwait
    /// Moonsighting Committee Worldwide (Khalid Shaukat): Fajr 18°, Isha 18° bounded by its
    /// seasonal twilight tables (at any latitude), 1/7 of the night at latitude ≥ 55°,
    /// Dhuhr +5 min, Maghrib +3 min. Ignores the high-latitude rule.
    case moonsightingCommittee
    /// Majlis Ugama Islam Singapura: Fajr 20°, Isha 18°, Dhuhr +1 min, rounded up.
    case singapore
    /// Diyanet (Turkey), as adhan-swift approximates it: Fajr 18°, Isha 17°, sunrise −7,
    /// Dhuhr +5, Asr +4, Maghrib +7 min.
    case turkey
    /// Institute of Geophysics, University of Tehran: Fajr 17.7°, Isha 14°, Maghrib 4.5°.
    case tehran
    /// No preset: Fajr 18°, Isha 18° until the caller sets angles or intervals.
    case other

    /// The names accepted on the command line: the raw value, or a short alias (`mwl`, `isna`,
    /// `egypt`, `makkah`, `msc`, ...), compared case-insensitively with `-`/`_` ignored.
    public init?(name: String) {
        let key = name.lowercased().filter { $0 != "-" && $0 != "_" }
        let aliases: [String: CalculationMethod] = [
            "mwl": .muslimWorldLeague, "isna": .northAmerica, "egypt": .egyptian,
            "makkah": .ummAlQura, "umm": .ummAlQura, "uae": .dubai, "msc": .moonsightingCommittee,
            "moonsighting": .moonsightingCommittee, "diyanet": .turkey, "custom": .other,
        ]
        if let method = aliases[key] {
            self = method
            return
        }
        guard let method = CalculationMethod.allCases.first(where: { $0.rawValue.lowercased() == key })
        else { return nil }
        self = method
    }

    /// This method's parameters, with the Shafi madhab, the ``HighLatitudeRule/recommended``
    /// rule, unresolved polar days and nearest-minute rounding (change them as needed).
    public var parameters: CalculationParameters {
        var p = CalculationParameters(method: self, fajrAngle: 18, ishaAngle: 18)
        switch self {
        case .muslimWorldLeague:
            p.ishaAngle = 17
            p.methodAdjustments.dhuhr = 1
        case .northAmerica:
            p.fajrAngle = 15
            p.ishaAngle = 15
            p.methodAdjustments.dhuhr = 1
        case .egyptian:
            p.fajrAngle = 19.5
            p.ishaAngle = 17.5
            p.methodAdjustments.dhuhr = 1
        case .karachi:
            p.methodAdjustments.dhuhr = 1
        case .ummAlQura:
            p.fajrAngle = 18.5
            p.ishaAngle = 0
            p.ishaInterval = 90
            p.ramadanIshaInterval = 120
        case .dubai:
            p.fajrAngle = 18.2
            p.ishaAngle = 18.2
            p.methodAdjustments = PrayerAdjustments(sunrise: -3, dhuhr: 3, asr: 3, maghrib: 3)
        case .qatar:
            p.ishaAngle = 0
            p.ishaInterval = 90
        case .kuwait:
            p.ishaAngle = 17.5
        case .moonsightingCommittee:
            p.methodAdjustments = PrayerAdjustments(dhuhr: 5, maghrib: 3)
            p.usesMoonsightingSeasons = true
        case .singapore:
            p.fajrAngle = 20
            p.methodAdjustments.dhuhr = 1
            p.rounding = .up
        case .turkey:
            p.ishaAngle = 17
            p.methodAdjustments = PrayerAdjustments(sunrise: -7, dhuhr: 5, asr: 4, maghrib: 7)
        case .tehran:
            p.fajrAngle = 17.7
            p.ishaAngle = 14
            p.maghribAngle = 4.5
        case .other:
            break
        }
        return p
    }
}

/// Everything that decides the times apart from place and date. Start from a preset
/// (`CalculationMethod.x.parameters`) and change fields for a custom method.
public struct CalculationParameters: Sendable, Hashable {
    /// The preset these came from (``CalculationMethod/other`` when custom).
    public var method: CalculationMethod
    /// Sun's depression for Fajr, degrees below the horizon (e.g. 18).
    public var fajrAngle: Double
    /// Sun's depression for Isha, degrees; ignored when ``ishaInterval`` is set.
    public var ishaAngle: Double
    /// Isha as a fixed number of minutes after sunset, or `nil` to use ``ishaAngle``.
    public var ishaInterval: Int?
    /// Isha interval in Ramadan (Hijri month 9, Umm al-Qura calendar), minutes, when
    /// ``ishaInterval`` is used; `nil` keeps ``ishaInterval`` all year. Umm al-Qura: 120.
    public var ramadanIshaInterval: Int?
    /// Maghrib at this depression (degrees) instead of sunset, e.g. 4.5 for Tehran; `nil` = sunset.
    public var maghribAngle: Double?
    /// Asr school. Default Shafi.
    public var madhab: Madhab = .shafi
    /// High-latitude bound for Fajr/Isha. Default ``HighLatitudeRule/recommended``.
    public var highLatitudeRule: HighLatitudeRule = .recommended
    /// Polar day/night handling. Default ``PolarResolution/unresolved``.
    public var polarResolution: PolarResolution = .unresolved
    /// The method's own offsets (e.g. Dhuhr +1 for MWL), minutes.
    public var methodAdjustments = PrayerAdjustments()
    /// The user's offsets on top, minutes.
    public var adjustments = PrayerAdjustments()
    /// Minute rounding. Default nearest (Singapore: up).
    public var rounding: PrayerRounding = .nearest
    /// MoonsightingCommittee seasonal bounds for Fajr/Isha instead of the high-latitude rule.
    public var usesMoonsightingSeasons = false
    /// The MoonsightingCommittee's Isha twilight. Default general.
    public var shafaq: Shafaq = .general

    /// Custom parameters: the given angles, nothing else set.
    /// - Parameters:
    ///   - method: the preset name to report, ``CalculationMethod/other`` for custom.
    ///   - fajrAngle: degrees below the horizon, 0 < angle < 30 recommended.
    ///   - ishaAngle: degrees below the horizon (ignored with `ishaInterval`).
    ///   - ishaInterval: minutes after sunset, or `nil`.
    public init(
        method: CalculationMethod = .other, fajrAngle: Double, ishaAngle: Double,
        ishaInterval: Int? = nil
    ) {
        self.method = method
        self.fajrAngle = fajrAngle
        self.ishaAngle = ishaAngle
        self.ishaInterval = ishaInterval
    }

    /// Checks the values are usable.
    /// - Throws: `ProofkitError` `.invalidArgument` naming the bad field.
    public func validate() throws(ProofkitError) {
        func check(_ ok: Bool, _ message: String) throws(ProofkitError) {
            if !ok { throw ProofkitError(.invalidArgument, message) }
        }
        try check(fajrAngle.isFinite && fajrAngle > 0 && fajrAngle < 45, "Fajr angle must be in 0...45°")
        if let interval = ishaInterval {
            try check(interval >= 1 && interval <= 300, "Isha interval must be 1...300 minutes")
        } else {
            try check(ishaAngle.isFinite && ishaAngle > 0 && ishaAngle < 45, "Isha angle must be in 0...45°")
        }
        if let r = ramadanIshaInterval {
            try check(r >= 1 && r <= 300, "Ramadan Isha interval must be 1...300 minutes")
        }
        if let m = maghribAngle { try check(m.isFinite && m > 0 && m < 20, "Maghrib angle must be in 0...20°") }
        for prayer in Prayer.allCases {
            try check(
                abs(adjustments[prayer]) <= 180 && abs(methodAdjustments[prayer]) <= 180,
                "adjustments must be within ±180 minutes")
        }
    }
}

extension CalculationParameters {
    /// The options ``init(options:)`` reads, as the CLI spells them (`--method`, `--madhab`...).
    public static let optionNames = [
        "method", "madhab", "high-lat", "polar", "rounding", "shafaq", "fajr-angle", "isha-angle", "isha-interval",
        "adjust",
    ]

    /// The parameters that a set of textual options names: `method` (default `mwl`), then each
    /// other option of ``optionNames`` overriding it (as `proofkit times --help` documents them).
    /// The alarm store keeps these texts, so the service plans with exactly what was asked.
    /// - Throws: `ProofkitError` `.invalidArgument` with a one-line message naming the option.
    public init(options: [String: String]) throws(ProofkitError) {
        let name = options["method"] ?? "mwl"
        guard let method = CalculationMethod(name: name) else {
            throw ProofkitError(
                .invalidArgument,
                "unknown method '\(name)'; one of mwl, isna, egyptian, karachi, makkah, dubai, qatar, kuwait, msc, singapore, turkey, tehran, custom"
            )
        }
        var p = method.parameters
        func number(_ key: String) throws(ProofkitError) -> Double? {
            guard let text = options[key] else { return nil }
            guard let value = Double(text), value.isFinite else {
                throw ProofkitError(.invalidArgument, "--\(key) needs a number, got '\(text)'")
            }
            return value
        }
        func whole(_ key: String) throws(ProofkitError) -> Int? {
            guard let text = options[key] else { return nil }
            guard let value = Int(text) else {
                throw ProofkitError(.invalidArgument, "--\(key) needs a whole number, got '\(text)'")
            }
            return value
        }
        if let text = options["madhab"] {
            guard let m = Madhab(rawValue: text.lowercased()) else {
                throw ProofkitError(.invalidArgument, "unknown madhab '\(text)'; shafi or hanafi")
            }
            p.madhab = m
        }
        if let text = options["high-lat"] {
            let rules: [String: HighLatitudeRule] = [
                "middle": .middleOfTheNight, "middleofthenight": .middleOfTheNight, "seventh": .seventhOfTheNight,
                "seventhofthenight": .seventhOfTheNight, "twilight": .twilightAngle, "twilightangle": .twilightAngle,
                "angle": .twilightAngle, "recommended": .recommended,
            ]
            guard let rule = rules[text.lowercased().filter { $0 != "-" }] else {
                throw ProofkitError(
                    .invalidArgument, "unknown --high-lat '\(text)'; middle, seventh, twilight or recommended")
            }
            p.highLatitudeRule = rule
        }
        if let text = options["polar"] {
            let modes: [String: PolarResolution] = [
                "undefined": .unresolved, "unresolved": .unresolved, "nearestlatitude": .nearestLatitude,
                "nearestday": .nearestDay,
            ]
            guard let mode = modes[text.lowercased().filter { $0 != "-" }] else {
                throw ProofkitError(
                    .invalidArgument, "unknown --polar '\(text)'; undefined, nearest-latitude or nearest-day")
            }
            p.polarResolution = mode
        }
        if let text = options["rounding"] {
            guard let r = PrayerRounding(rawValue: text.lowercased()) else {
                throw ProofkitError(.invalidArgument, "unknown --rounding '\(text)'; nearest, up or none")
            }
            p.rounding = r
        }
        if let text = options["shafaq"] {
            guard let s = Shafaq(rawValue: text.lowercased()) else {
                throw ProofkitError(.invalidArgument, "unknown --shafaq '\(text)'; general, ahmer or abyad")
            }
            p.shafaq = s
        }
        if let angle = try number("fajr-angle") {
            p.fajrAngle = angle
            p.method = .other
        }
        if let angle = try number("isha-angle") {
            p.ishaAngle = angle
            p.ishaInterval = nil
            p.ramadanIshaInterval = nil
            p.method = .other
        }
        if let interval = try whole("isha-interval") {
            p.ishaInterval = interval
            p.method = .other
        }
        if method == .other, options["fajr-angle"] == nil {
            throw ProofkitError(
                .invalidArgument, "--method custom needs --fajr-angle and --isha-angle or --isha-interval")
        }
        if let text = options["adjust"] {
            for item in text.split(separator: ",") {
                let pair = item.split(separator: "=")
                guard pair.count == 2, let prayer = Prayer(rawValue: pair[0].lowercased()),
                    let minutes = Int(pair[1].hasPrefix("+") ? pair[1].dropFirst() : pair[1])
                else {
                    throw ProofkitError(
                        .invalidArgument, "--adjust needs prayer=minutes pairs such as fajr=+2,isha=-3, got '\(item)'")
                }
                p.adjustments[prayer] = minutes
            }
        }
        try p.validate()
        self = p
    }
}
