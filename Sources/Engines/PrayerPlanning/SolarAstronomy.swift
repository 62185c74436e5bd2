#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Solar position and rise/transit/set from Jean Meeus, "Astronomical Algorithms" (2nd ed.,
// Willmann-Bell 1998): chapter 7 (Julian day), 13 (altitude), 15 (rising, transit, setting with
// interpolation), 22 (nutation, low-precision), 25 (solar coordinates, low precision). This is
// the same set of equations the adhan libraries (Batoul Apps: adhan-swift/java/js) use, written
// here from the book's equations; angles are degrees unless a name says radians.

@inline(__always) func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }
@inline(__always) func degrees(_ radians: Double) -> Double { radians * 180 / .pi }

/// `value` wrapped into `0..<bound`.
func normalized(_ value: Double, bound: Double) -> Double { value - bound * (value / bound).rounded(.down) }
/// An angle wrapped into 0..<360.
func unwound(_ angle: Double) -> Double { normalized(angle, bound: 360) }
/// An angle wrapped into -180...180.
func closestAngle(_ angle: Double) -> Double {
    if angle >= -180 && angle <= 180 { return angle }
    return angle - 360 * (angle / 360).rounded()
}

/// Julian day at 00:00 UTC of a Gregorian date plus `hours` (Meeus 7.1).
func julianDay(_ date: LocalDate, hours: Double = 0) -> Double {
    let y = date.month > 2 ? date.year : date.year - 1
    let m = date.month > 2 ? date.month : date.month + 12
    let d = Double(date.day) + hours / 24
    let a = y / 100
    let b = 2 - a + a / 4
    let i0 = Int(365.25 * Double(y + 4716))
    let i1 = Int(30.6001 * Double(m + 1))
    return Double(i0) + Double(i1) + d + Double(b) - 1524.5
}

/// Julian centuries since J2000.0 (Meeus 12.1).
func julianCentury(_ jd: Double) -> Double { (jd - 2_451_545.0) / 36_525 }

/// The Sun's apparent equatorial coordinates at one instant (Meeus ch. 25, low precision, with
/// the ch. 22 nutation terms).
struct SolarCoordinates {
    /// Apparent declination δ, degrees.
    let declination: Double
    /// Apparent right ascension α, degrees 0..<360.
    let rightAscension: Double
    /// Apparent sidereal time at Greenwich Θ0, degrees.
    let apparentSiderealTime: Double

    init(julianDay jd: Double) {
        let t = julianCentury(jd)
        let l0 = unwound(280.4664567 + 36_000.76983 * t + 0.0003032 * t * t)  // mean longitude (25.2)
        let lp = unwound(218.3165 + 481_267.8813 * t)  // Moon's mean longitude (22)
        let omega = unwound(125.04452 - 1934.136261 * t + 0.0020708 * t * t + t * t * t / 450_000)
        let m = unwound(357.52911 + 35_999.05029 * t - 0.0001537 * t * t)  // mean anomaly (25.3)
        let mr = radians(m)
        let c =
            (1.914602 - 0.004817 * t - 0.000014 * t * t) * sin(mr)
            + (0.019993 - 0.000101 * t) * sin(2 * mr) + 0.000289 * sin(3 * mr)  // equation of centre
        let omegaApparent = 125.04 - 1934.136 * t
        let lambda = radians(unwound(l0 + c - 0.00569 - 0.00478 * sin(radians(omegaApparent))))
        let theta0 = unwound(
            280.46061837 + 360.98564736629 * (jd - 2_451_545) + 0.000387933 * t * t
                - t * t * t / 38_710_000)  // mean sidereal time (12.4)
        let dPsi =
            (-17.2 / 3600) * sin(radians(omega)) - (1.32 / 3600) * sin(2 * radians(l0))
            - (0.23 / 3600) * sin(2 * radians(lp)) + (0.21 / 3600) * sin(2 * radians(omega))
        let dEpsilon =
            (9.2 / 3600) * cos(radians(omega)) + (0.57 / 3600) * cos(2 * radians(l0))
            + (0.10 / 3600) * cos(2 * radians(lp)) - (0.09 / 3600) * cos(2 * radians(omega))
        let epsilon0 = 23.439291 - 0.013004167 * t - 0.0000001639 * t * t + 0.0000005036 * t * t * t
        let epsilonApparent = radians(epsilon0 + 0.00256 * cos(radians(omegaApparent)))
        declination = degrees(asin(sin(epsilonApparent) * sin(lambda)))
        rightAscension = unwound(degrees(atan2(cos(epsilonApparent) * sin(lambda), cos(lambda))))
        apparentSiderealTime = theta0 + (dPsi * 3600 * cos(radians(epsilon0 + dEpsilon))) / 3600
    }
}

/// Meeus 3.3 interpolation of three tabulated values at `n` days from the middle one.
func interpolate(_ y2: Double, _ y1: Double, _ y3: Double, _ n: Double) -> Double {
    let a = y2 - y1
    let b = y3 - y2
    return y2 + n / 2 * (a + b + n * (b - a))
}

func interpolateAngles(_ y2: Double, _ y1: Double, _ y3: Double, _ n: Double) -> Double {
    let a = unwound(y2 - y1)
    let b = unwound(y3 - y2)
    return y2 + n / 2 * (a + b + n * (b - a))
}

/// Altitude of a body (Meeus 13.6): latitude φ, declination δ, local hour angle H.
func altitude(latitude: Double, declination: Double, hourAngle: Double) -> Double {
    degrees(
        asin(
            sin(radians(latitude)) * sin(radians(declination))
                + cos(radians(latitude)) * cos(radians(declination)) * cos(radians(hourAngle))))
}

/// Rise, transit and set for one UTC date at one place (Meeus ch. 15), as hours after 00:00 UTC
/// of that date (may be < 0 or >= 24); `nil` where the Sun never reaches the altitude.
struct SolarTime {
    let latitude: Double
    let longitude: Double
    let previous: SolarCoordinates
    let solar: SolarCoordinates
    let next: SolarCoordinates
    /// The approximate transit m0, fraction of the day.
    let approximateTransit: Double
    /// Upper transit (Dhuhr before adjustments), hours.
    let transit: Double?
    /// Sunrise at -50′ (refraction 34′ + semi-diameter 16′), hours.
    private(set) var sunrise: Double?
    /// Sunset at -50′, hours.
    private(set) var sunset: Double?

    /// The standard altitude of sunrise/sunset, degrees (adhan's, no elevation).
    static let riseSetAltitude = -50.0 / 60.0

    init(date: LocalDate, latitude: Double, longitude: Double) {
        let jd = julianDay(date)
        self.latitude = latitude
        self.longitude = longitude
        previous = SolarCoordinates(julianDay: jd - 1)
        solar = SolarCoordinates(julianDay: jd)
        next = SolarCoordinates(julianDay: jd + 1)
        approximateTransit = normalized(
            (solar.rightAscension - longitude - solar.apparentSiderealTime) / 360, bound: 1)
        // Corrected transit (15.2 with interpolated α).
        let theta = unwound(solar.apparentSiderealTime + 360.985647 * approximateTransit)
        let alpha = unwound(
            interpolateAngles(
                solar.rightAscension, previous.rightAscension,
                next.rightAscension, approximateTransit))
        let h = closestAngle(theta + longitude - alpha)
        let t = (approximateTransit - h / 360) * 24
        transit = t.isFinite ? t : nil
        sunrise = nil
        sunset = nil
        sunrise = hourAngle(SolarTime.riseSetAltitude, afterTransit: false)
        sunset = hourAngle(SolarTime.riseSetAltitude, afterTransit: true)
    }

    /// When the Sun is at altitude `h0` (degrees) before or after transit, hours after 00:00 UTC,
    /// with one Meeus 15 correction step; `nil` when it never gets there.
    func hourAngle(_ h0: Double, afterTransit: Bool) -> Double? {
        let cosH0 =
            (sin(radians(h0)) - sin(radians(latitude)) * sin(radians(solar.declination)))
            / (cos(radians(latitude)) * cos(radians(solar.declination)))
        guard cosH0 >= -1, cosH0 <= 1 else { return nil }
        let h0Angle = degrees(acos(cosH0))
        let m = afterTransit ? approximateTransit + h0Angle / 360 : approximateTransit - h0Angle / 360
        let theta = unwound(solar.apparentSiderealTime + 360.985647 * m)
        let alpha = unwound(
            interpolateAngles(
                solar.rightAscension, previous.rightAscension,
                next.rightAscension, m))
        let delta = interpolate(solar.declination, previous.declination, next.declination, m)
        let hourAngle = theta + longitude - alpha
        let h = altitude(latitude: latitude, declination: delta, hourAngle: hourAngle)
        let dm = (h - h0) / (360 * cos(radians(delta)) * cos(radians(latitude)) * sin(radians(hourAngle)))
        // Where the Sun barely clears the altitude (sin H ≈ 0) the correction blows up; keep the
        // first estimate then (never the case where the correction is the usual seconds).
        let result = (abs(dm) < 0.02 ? m + dm : m) * 24
        return result.isFinite ? result : nil
    }

    /// Asr: when an object's shadow is its noon shadow plus `shadowLength` times its height.
    /// The noon shadow uses the declination at 00:00 UTC of the date, as adhan does.
    func afternoon(shadowLength: Double) -> Double? {
        let tangent = abs(latitude - solar.declination)
        let inverse = shadowLength + tan(radians(tangent))
        return hourAngle(degrees(atan(1 / inverse)), afterTransit: true)
    }

    /// The Sun's altitude at upper transit (degrees), to tell polar day from polar night.
    var noonAltitude: Double { 90 - abs(latitude - solar.declination) }
}
