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
