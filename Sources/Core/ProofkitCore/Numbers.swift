// Small numeric helpers shared by every layer: a duration in seconds, fixed-decimal text and
// decibel conversions. Pure; libm's log10 and pow from Glibc.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Duration {
    /// This duration in seconds, as a `Double`: whole seconds plus attoseconds / 10^18 (the
    /// division is correctly rounded, 10^18 being exact in a `Double`).
    public var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}

extension Double {
    /// This value rounded to `places` decimals (half away from zero), with exactly `places`
    /// digits after the point, e.g. `3.14159.fixedDecimal(places: 2) == "3.14"` and
    /// `(-0.004).fixedDecimal(places: 2) == "0.00"`; without Foundation's `String(format:)`.
    /// - Parameter places: digits after the point, 0 or more (0 gives no point).
    /// - Returns: the text; `"-"` for a non-finite value.
    public func fixedDecimal(places: Int) -> String {
        precondition(places >= 0, "places must be 0 or more")
        guard isFinite else { return "-" }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (abs(self) * scale).rounded()
        let whole = Int(scaled / scale)
        let fraction = Int(scaled - Double(whole) * scale)
        let sign = self < 0 && scaled > 0 ? "-" : ""
        guard places > 0 else { return sign + String(whole) }
        let digits = String(fraction)
        return sign + String(whole) + "." + String(repeating: "0", count: places - digits.count) + digits
    }
}

/// Decibel conversions relative to digital full scale (an amplitude of 1.0 is 0 dBFS).
public enum Decibels {
    /// An amplitude (a linear level such as a peak or an RMS) in dBFS: `20 log10(amplitude)`;
    /// `-infinity` for 0 (and for negative input).
    public static func fromAmplitude(_ amplitude: Double) -> Double {
        amplitude > 0 ? 20 * log10(amplitude) : -Double.infinity
    }

    /// A level in dBFS as an amplitude: `10^(dBFS / 20)` (0 dBFS is 1.0, -6.02 dBFS about 0.5).
    public static func toAmplitude(_ dBFS: Double) -> Double {
        pow(10, dBFS / 20)
    }

    /// A power (a mean square) in dBFS: `10 log10(power)`; `-infinity` for 0 (and for negative input).
    public static func fromPower(_ power: Double) -> Double {
        power > 0 ? 10 * log10(power) : -Double.infinity
    }
}
