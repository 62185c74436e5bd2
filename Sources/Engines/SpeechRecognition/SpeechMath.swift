// Elementary functions without libm: the engine imports only the standard library (no C), like
// the other engines. Each is accurate to a few units in the last place of a Float, and far better
// than that in Double for the arguments used here (window angles, mel scale,
// log-probabilities).

private let ln2 = 0.693_147_180_559_945_309_417_232_121_458

/// The largest integer <= x, for |x| < 2^53.
@inline(__always)
func floorInteger(_ x: Double) -> Int {
    let t = Int(x)
    return Double(t) > x ? t - 1 : t
}

/// Natural logarithm; -infinity for 0, NaN for negative input.
func logarithm(_ x: Double) -> Double {
    if x.isNaN || x < 0 { return .nan }
    if x == 0 { return -.infinity }
    if x.isInfinite { return x }
    var exponent = Double(x.exponent)
    var m = x.significand  // 1 <= m < 2
    if m > 1.414_213_562_373_095 {
        m /= 2
        exponent += 1
    }
    // ln(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.172.
    let s = (m - 1) / (m + 1)
    let s2 = s * s
    var term = s
    var sum = 0.0
    var n = 1.0
    while n < 40 {
        sum += term / n
        term *= s2
        n += 2
    }
    return exponent * ln2 + 2 * sum
}

/// Base-10 logarithm of a Float (computed in Double).
@inline(__always)
func log10f(_ x: Float) -> Float {
    Float(logarithm(Double(x)) * 0.434_294_481_903_251_827_651_128_918_916_6)
}

/// e^x.
func exponential(_ x: Double) -> Double {
    if x.isNaN { return x }
    if x > 709.78 { return .infinity }
    if x < -745.2 { return 0 }
    let k = floorInteger(x / ln2 + 0.5)
    let r = x - Double(k) * ln2
    var term = 1.0
    var sum = 1.0
    for n in 1...14 {
        term *= r / Double(n)
        sum += term
    }
    return sum * Double(sign: .plus, exponent: k, significand: 1)
}

/// e^x in each of eight lanes, to about 1 unit in the last place of a Double (2 at most), with
/// no division and no branch: x = k ln 2 + r with |r| <= ln 2 / 2 (Cody-Waite, two constants),
/// e^r by its Taylor series to r^13 (the next term is under 4e-18 of it) in Estrin's scheme, whose
/// short dependency chains keep the multipliers busy, then times 2^k as two powers of two built
/// from their bits (so subnormal results round as libm's do). Lanes below -745.2, -infinity
/// included, give 0, and NaN stays NaN; lanes must not exceed 709.78 (e^x overflows there).
/// About six times faster than eight scalar ``exponential(_:)`` calls.
@inline(__always)
func exponential(_ x: SIMD8<Double>) -> SIMD8<Double> {
    let log2e = 1.442_695_040_888_963_407_359_924_681_001_892_137
    let ln2High = 0.693_147_180_369_123_816_490_00  // ln 2 to 32 bits: k * ln2High is exact
    let ln2Low = 1.908_214_929_270_587_700_02e-10
    let shifter = 6_755_399_441_055_744.0  // 1.5 * 2^52: adding it rounds to an integer
    var clamped = x
    clamped.replace(with: -745.2, where: x .< -745.2)
    let shifted = clamped * log2e + shifter
    let k = shifted - shifter
    let r = clamped - k * ln2High - k * ln2Low
    let r2 = r * r
    let r4 = r2 * r2
    let p01 = 1 + r
    let p23 = 1.0 / 2 + r * (1.0 / 6)
    let p45 = 1.0 / 24 + r * (1.0 / 120)
    let p67 = 1.0 / 720 + r * (1.0 / 5_040)
    let p89 = 1.0 / 40_320 + r * (1.0 / 362_880)
    let p1011 = 1.0 / 3_628_800 + r * (1.0 / 39_916_800)
    let p1213 = 1.0 / 479_001_600 + r * (1.0 / 6_227_020_800)
    let p = (p01 + r2 * p23) + r4 * (p45 + r2 * p67) + (r4 * r4) * ((p89 + r2 * p1011) + r4 * p1213)
    // The low 52 bits of `shifted` hold 2^51 + k, k in -1075...1024; 2^k = 2^half * 2^(k - half),
    // each built from its bits (lane by lane: the vector types have no bit pattern).
    var first = SIMD8<Double>()
    var second = SIMD8<Double>()
    for lane in 0..<8 {
        let whole = Int64(truncatingIfNeeded: shifted[lane].bitPattern & ((1 << 52) - 1)) &- (1 << 51)
        let half = whole &>> 1
        first[lane] = Double(bitPattern: UInt64(truncatingIfNeeded: (half &+ 1023) &<< 52))
        second[lane] = Double(bitPattern: UInt64(truncatingIfNeeded: (whole &- half &+ 1023) &<< 52))
    }
    var result = p * first * second
    result.replace(with: 0, where: x .< -745.2)
    return result
}

/// x reduced to [-π, π].
@inline(__always)
private func reduced(_ x: Double) -> Double {
    let twoPi = 2 * Double.pi
    var y = x - Double(floorInteger(x / twoPi)) * twoPi
    if y > Double.pi { y -= twoPi }
    return y
}

/// cos(x).
func cosine(_ x: Double) -> Double {
    let y = reduced(x)
    var term = 1.0
    var result = 1.0
    for n in 1...22 {
        term *= -y * y / Double((2 * n - 1) * (2 * n))
        result += term
    }
    return result
}
