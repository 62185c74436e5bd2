// The one FFT of the package: a mixed-radix complex transform shared by the engines that need a
// spectrum (SpeechRecognition's log-mel, VoiceGate's speech-likeness veto). Pure; libm's cos and sin.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A complex FFT for one fixed length whose prime factors are 2, 3 and 5 (Stockham autosort,
/// decimation in frequency, mixed radix), in `Double`: Whisper's 400-point transform without
/// padding, and the voice gate's 1024-point one. Pure; the twiddles come from libm once, at `init`.
/// A value holds its own scratch buffers: use one per thread.
public struct MixedRadixFFT: Sendable {
    /// One stage's radix, sizes and twiddle factors.
    private struct Stage: Sendable {
        var radix: Int
        var m: Int
        var stride: Int
        /// `e^(-2πi p r'/n)` at `[p * radix + r']`.
        var twiddleReal: [Double]
        var twiddleImaginary: [Double]
        /// `e^(-2πi j/radix)`.
        var rootReal: [Double]
        var rootImaginary: [Double]
    }

    /// Points per transform.
    public let length: Int
    private let stages: [Stage]
    private var scratchReal: [Double]
    private var scratchImaginary: [Double]

    /// Prepares the transform.
    /// - Parameter length: points per transform, at least 1.
    /// - Precondition: `length` is a product of 2s, 3s and 5s.
    public init(length: Int) {
        var remaining = length
        var factors: [Int] = []
        for radix in [4, 2, 3, 5] {
            while remaining % radix == 0 {
                factors.append(radix)
                remaining /= radix
            }
        }
        precondition(remaining == 1, "the FFT length \(length) has a prime factor other than 2, 3 and 5")
        var stages: [Stage] = []
        var n = length
        var stride = 1
        for radix in factors {
            let m = n / radix
            var twiddleReal = [Double](repeating: 0, count: m * radix)
            var twiddleImaginary = twiddleReal
            for p in 0..<m {
                for out in 0..<radix {
                    let angle = -2 * Double.pi * Double(p * out) / Double(n)
                    twiddleReal[p * radix + out] = cos(angle)
                    twiddleImaginary[p * radix + out] = sin(angle)
                }
            }
            let roots = (0..<radix).map { -2 * Double.pi * Double($0) / Double(radix) }
            stages.append(
                Stage(
                    radix: radix, m: m, stride: stride, twiddleReal: twiddleReal, twiddleImaginary: twiddleImaginary,
                    rootReal: roots.map { cos($0) }, rootImaginary: roots.map { sin($0) }))
            n = m
            stride *= radix
        }
        self.length = length
        self.stages = stages
        scratchReal = [Double](repeating: 0, count: length)
        scratchImaginary = [Double](repeating: 0, count: length)
    }

    /// Replaces `real` + i `imaginary` by its DFT, `X[k] = Σ x[n] e^(-2πi kn/N)`.
    /// - Parameters:
    ///   - real: the real parts, ``length`` values; replaced by the transform's.
    ///   - imaginary: the imaginary parts, ``length`` values; replaced by the transform's.
    public mutating func transform(real: inout [Double], imaginary: inout [Double]) {
        var inX = true  // whether the data is in (real, imaginary) or in the scratch arrays
        for stage in stages {
            if inX {
                Self.run(stage, xr: real, xi: imaginary, yr: &scratchReal, yi: &scratchImaginary)
            } else {
                Self.run(stage, xr: scratchReal, xi: scratchImaginary, yr: &real, yi: &imaginary)
            }
            inX.toggle()
        }
        if !inX {
            swap(&real, &scratchReal)
            swap(&imaginary, &scratchImaginary)
        }
    }

    /// One Stockham stage: `y[q + s(Pp + r')] = w^(p r') Σ_r x[q + s(p + m r)] e^(-2πi r r'/P)`.
    /// Radix 4 and 2 (every stage of a power-of-two length) have their butterflies written out;
    /// 3 and 5 sum over the roots. Spans, not unsafe pointers: the core is held to strict memory
    /// safety, and spans drop the arrays' uniqueness checks on every store.
    private static func run(_ stage: Stage, xr: [Double], xi: [Double], yr: inout [Double], yi: inout [Double]) {
        let x = (real: xr.span, imaginary: xi.span)
        let w = (real: stage.twiddleReal.span, imaginary: stage.twiddleImaginary.span)
        var outReal = yr.mutableSpan
        var outImaginary = yi.mutableSpan
        switch stage.radix {
        case 4: radix4(m: stage.m, s: stage.stride, x: x, w: w, yr: &outReal, yi: &outImaginary)
        case 2: radix2(m: stage.m, s: stage.stride, x: x, w: w, yr: &outReal, yi: &outImaginary)
        default: general(stage, x: x, w: w, yr: &outReal, yi: &outImaginary)
        }
    }

    private typealias Input = (real: Span<Double>, imaginary: Span<Double>)

    /// Stores `(re + i im) * w[t]` at `target`.
    @inline(__always)
    private static func store(
        _ re: Double, _ im: Double, twiddle t: Int, at target: Int, w: Input,
        yr: inout MutableSpan<Double>, yi: inout MutableSpan<Double>
    ) {
        let (c, sn) = (w.real[t], w.imaginary[t])
        yr[target] = re * c - im * sn
        yi[target] = re * sn + im * c
    }

    private static func radix4(
        m: Int, s: Int, x: Input, w: Input, yr: inout MutableSpan<Double>, yi: inout MutableSpan<Double>
    ) {
        let step = s * m
        for p in 0..<m {
            for q in 0..<s {
                let i0 = q + s * p
                let (a0r, a0i) = (x.real[i0], x.imaginary[i0])
                let (a1r, a1i) = (x.real[i0 + step], x.imaginary[i0 + step])
                let (a2r, a2i) = (x.real[i0 + 2 * step], x.imaginary[i0 + 2 * step])
                let (a3r, a3i) = (x.real[i0 + 3 * step], x.imaginary[i0 + 3 * step])
                let (t0r, t0i) = (a0r + a2r, a0i + a2i)
                let (t1r, t1i) = (a0r - a2r, a0i - a2i)
                let (t2r, t2i) = (a1r + a3r, a1i + a3i)
                let (t3r, t3i) = (a1r - a3r, a1i - a3i)
                let target = q + s * 4 * p
                store(t0r + t2r, t0i + t2i, twiddle: 4 * p, at: target, w: w, yr: &yr, yi: &yi)
                store(t1r + t3i, t1i - t3r, twiddle: 4 * p + 1, at: target + s, w: w, yr: &yr, yi: &yi)
                store(t0r - t2r, t0i - t2i, twiddle: 4 * p + 2, at: target + 2 * s, w: w, yr: &yr, yi: &yi)
                store(t1r - t3i, t1i + t3r, twiddle: 4 * p + 3, at: target + 3 * s, w: w, yr: &yr, yi: &yi)
            }
        }
    }

    private static func radix2(
        m: Int, s: Int, x: Input, w: Input, yr: inout MutableSpan<Double>, yi: inout MutableSpan<Double>
    ) {
        for p in 0..<m {
            for q in 0..<s {
                let i0 = q + s * p
                let i1 = i0 + s * m
                let target = q + s * 2 * p
                let (ar, ai, br, bi) = (x.real[i0], x.imaginary[i0], x.real[i1], x.imaginary[i1])
                store(ar + br, ai + bi, twiddle: 2 * p, at: target, w: w, yr: &yr, yi: &yi)
                store(ar - br, ai - bi, twiddle: 2 * p + 1, at: target + s, w: w, yr: &yr, yi: &yi)
            }
        }
    }

    private static func general(
        _ stage: Stage, x: Input, w: Input, yr: inout MutableSpan<Double>, yi: inout MutableSpan<Double>
    ) {
        let radix = stage.radix
        let m = stage.m
        let s = stage.stride
        var ar = [Double](repeating: 0, count: radix)
        var ai = [Double](repeating: 0, count: radix)
        for p in 0..<m {
            for q in 0..<s {
                for r in 0..<radix {
                    let index = q + s * (p + m * r)
                    ar[r] = x.real[index]
                    ai[r] = x.imaginary[index]
                }
                for out in 0..<radix {
                    var sumReal = 0.0
                    var sumImaginary = 0.0
                    var root = 0
                    for r in 0..<radix {
                        sumReal += ar[r] * stage.rootReal[root] - ai[r] * stage.rootImaginary[root]
                        sumImaginary += ar[r] * stage.rootImaginary[root] + ai[r] * stage.rootReal[root]
                        root += out
                        if root >= radix { root -= radix }
                    }
                    store(
                        sumReal, sumImaginary, twiddle: p * radix + out, at: q + s * (radix * p + out), w: w,
                        yr: &yr, yi: &yi)
                }
            }
        }
    }
}
