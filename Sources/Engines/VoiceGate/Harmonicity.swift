/// The pitch strength of the latest frame: how periodic the sound is at a voice's pitch.
///
/// The input is pre-emphasised (`x[n] - a·x[n-1]`, a = e^(-2π·130 Hz/rate), 0.95 at 16 kHz: the
/// rumble that dominates many rooms' noise would otherwise correlate at every lag), low-passed at
/// 1 kHz (two 2nd-order Butterworth sections, a 4th-order Butterworth filter) and decimated to about 4 kHz (every `sampleRate / 4000`-th sample). For the last frame
/// of decimated samples `x[0..<N]`, the strength is the largest normalised cross-correlation
///
///     c(τ) = Σ x[n] x[n-τ] / sqrt(Σ x[n]² · Σ x[n-τ]²)
///
/// over the lags τ of a pitch between ``VoiceGateConfiguration/lowestPitch`` and
/// ``VoiceGateConfiguration/highestPitch`` (70-400 Hz: 10 to 57 lags at 4 kHz). A voiced speech
/// frame (a vowel, a hum, a nasal) repeats itself every pitch period and scores 0.7-0.99 even in
/// some noise; a click, a tick, a drip's splash, a key press, rain and hiss do not (below about
/// 0.4). Steady hum at mains harmonics is periodic too, but it is steady: the floor absorbs it.
///
/// A periodic sound is not yet a voice: a bubble in running water rings as one damped sinusoid
/// (its Minnaert resonance, a few hundred Hz) and repeats itself just as well. A voice is a
/// harmonic complex: after the pre-emphasis, its energy below 1 kHz is spread over several
/// multiples of its pitch (the first formant sits on the third to eighth harmonic of a man's
/// voice). ``harmonicSpread()`` measures that: the share of the strongest harmonic in the energy at
/// the harmonics of the best lag's frequency, f0 = rate / τ, 2 f0, ... up to the 1 kHz band edge
/// (Goertzel filters over the last 32 ms, Hann-windowed). A pure tone (a bubble, a whistle, a
/// kettle) puts 0.9-1 of it in one harmonic; a spoken vowel's frames mostly 0.4-0.85.
///
/// Cost per input sample: two biquads (10 multiply-adds); per frame: lags × N multiply-adds
/// (48 × 80 at 16 kHz with 20 ms frames, about 0.2 M per second of audio); per pitched frame the
/// harmonic spread adds harmonics × 128 multiply-adds (at most 14 × 128). Pure Swift, no
/// allocation after `init`.
struct HarmonicityTracker: Sendable {
    /// Input samples per decimated sample.
    let decimation: Int
    /// Decimated samples per analysis window (one frame's worth, at least the longest lag).
    let windowLength: Int
    let shortestLag: Int
    let longestLag: Int

    // Low-pass sections, transposed direct form II: (b0, b1, b2, a1, a2) each, and their state.
    private let section1: (Float, Float, Float, Float, Float)
    private let section2: (Float, Float, Float, Float, Float)
    private var state1: (Float, Float) = (0, 0)
    private var state2: (Float, Float) = (0, 0)
    private var phase = 0
    private let emphasis: Float
    private var previous: Float = 0
    /// The decimated history (a ring of `mask + 1` samples).
    private var ring: [Float]
    private let mask: Int
    private var written = 0
    /// Scratch for the window and its history, oldest first (no allocation per frame).
    private var scratch: [Float]
    /// The lag of the last ``strength()``'s peak, in decimated samples (0 when it found none).
    private(set) var bestLag = 0
    /// The Hann window of the harmonic-spread analysis (its length: about 32 ms of decimated
    /// samples, at most the scratch length).
    private let spreadWindow: [Float]
    /// The harmonics looked at, per lag: `2 cos(2π h / τ)` for h = 1...K(τ), K(τ) = the number of
    /// multiples of rate / τ up to the low-pass cutoff (at least 2), stored one lag after another.
    private let goertzelCoefficients: [Float]
    /// Where each lag's coefficients start in ``goertzelCoefficients`` (index τ - shortestLag),
    /// and one past the last lag's end.
    private let coefficientStarts: [Int]

    init(sampleRate: Int, frameLength: Int, lowestPitch: Double, highestPitch: Double) {
        decimation = max(1, sampleRate / 4000)
        let rate = Double(sampleRate) / Double(decimation)
        shortestLag = max(1, Int(rate / highestPitch))
        longestLag = max(shortestLag + 1, ceilingInt(rate / lowestPitch))
        windowLength = max(longestLag, frameLength / decimation)
        var size = 1
        while size < windowLength + longestLag + 1 { size *= 2 }
        ring = [Float](repeating: 0, count: size)
        mask = size - 1
        scratch = [Float](repeating: 0, count: windowLength + longestLag)
        // 4th-order Butterworth at 1 kHz (below the decimated Nyquist frequency): two RBJ
        // low-pass sections with Q = 0.5412 and 1.3066.
        let cutoff = min(1000.0, 0.45 * rate)
        func lowPass(q: Double) -> (Float, Float, Float, Float, Float) {
            let w = 2 * Double.pi * cutoff / Double(sampleRate)
            let cosW = cosine(w)
            let alpha = cosine(w - Double.pi / 2) / (2 * q)
            let a0 = 1 + alpha
            let b0 = (1 - cosW) / 2 / a0
            return (Float(b0), Float(2 * b0), Float(b0), Float(-2 * cosW / a0), Float((1 - alpha) / a0))
        }
        emphasis = Float(power(decibels: Float(-2 * Double.pi * 130 / Double(sampleRate) * 4.342944819032518)))
        section1 = lowPass(q: 0.5412)
        section2 = lowPass(q: 1.3066)
        let spreadLength = min(windowLength + longestLag, max(16, Int(0.032 * rate)))
        spreadWindow = (0..<spreadLength).map { i in
            Float(0.5 - 0.5 * cosine(2 * Double.pi * (Double(i) + 0.5) / Double(spreadLength)))
        }
        var coefficients: [Float] = []
        var starts: [Int] = []
        for lag in shortestLag...longestLag {
            starts.append(coefficients.count)
            let pitch = rate / Double(lag)
            let count = max(2, Int(cutoff / pitch))
            for harmonic in 1...count {
                coefficients.append(Float(2 * cosine(2 * Double.pi * Double(harmonic) / Double(lag))))
            }
        }
        starts.append(coefficients.count)
        goertzelCoefficients = coefficients
        coefficientStarts = starts
    }

    /// Filters and decimates the next input samples.
    mutating func push(_ samples: ArraySlice<Float>) {
        let (b10, b11, b12, a11, a12) = section1
        let (b20, b21, b22, a21, a22) = section2
        var (s11, s12) = state1
        var (s21, s22) = state2
        var phase = self.phase
        let decimation = self.decimation
        let emphasis = self.emphasis
        var previous = self.previous
        for raw in samples {
            let x = raw - emphasis * previous
            previous = raw
            let y1 = b10 * x + s11
            s11 = b11 * x - a11 * y1 + s12
            s12 = b12 * x - a12 * y1
            let y2 = b20 * y1 + s21
            s21 = b21 * y1 - a21 * y2 + s22
            s22 = b22 * y1 - a22 * y2
            phase += 1
            if phase == decimation {
                phase = 0
                ring[written & mask] = y2
                written &+= 1
            }
        }
        // Digital silence would leave the filters ringing down into subnormal numbers.
        if abs(s11) < 1e-20 && abs(s12) < 1e-20 && abs(s21) < 1e-20 && abs(s22) < 1e-20 {
            (s11, s12, s21, s22) = (0, 0, 0, 0)
        }
        self.previous = previous
        state1 = (s11, s12)
        state2 = (s21, s22)
        self.phase = phase
    }

    /// The pitch strength (0...1) of the last ``windowLength`` decimated samples; 0 before there
    /// is enough history or when the window is silent. Sets ``bestLag``.
    mutating func strength() -> Float {
        let total = windowLength + longestLag
        bestLag = 0
        guard written >= total else { return 0 }
        var read = written - total
        for i in 0..<total {
            scratch[i] = ring[read & mask]
            read &+= 1
        }
        let (strength, lag) = Self.correlationPeak(
            of: scratch.span, windowLength: windowLength, shortestLag: shortestLag, longestLag: longestLag)
        bestLag = lag
        return strength
    }

    /// The largest normalised cross-correlation of the last `windowLength` samples of `x` with
    /// the same length `τ` samples older, over `shortestLag...longestLag` (see the type's
    /// documentation), and its lag; (0, 0) for a silent window. `x` holds
    /// `windowLength + longestLag` samples, oldest first.
    ///
    /// Spans, not unsafe pointers: the engine is held to strict memory safety. The inner loops run
    /// over spans cut to the window's length, so the compiler can drop the bounds checks.
    private static func correlationPeak(
        of x: Span<Float>, windowLength: Int, shortestLag: Int, longestLag: Int
    ) -> (strength: Float, lag: Int) {
        let n = windowLength
        let base = longestLag
        let current = x.extracting(base..<(base + n))
        var energy: Float = 0
        for i in current.indices { energy += current[i] * current[i] }
        guard energy > 1e-12 else { return (0, 0) }
        // The lagged window's energy, slid one sample older per lag.
        var lagged: Float = 0
        let firstLagged = x.extracting((base - shortestLag)..<(base - shortestLag + n))
        for i in firstLagged.indices { lagged += firstLagged[i] * firstLagged[i] }
        var best: Float = 0
        var bestTau = 0
        var tau = shortestLag
        while tau <= longestLag {
            let start = base - tau
            let past = x.extracting(start..<(start + n))
            var cross: Float = 0
            for i in current.indices { cross += current[i] * past[i] }
            if cross > 0, lagged > 1e-12 {
                // c² = cross² / (energy · lagged), compared without a square root.
                let squared = cross * cross / (energy * lagged)
                if squared > best {
                    best = squared
                    bestTau = tau
                }
            }
            if tau < longestLag {
                lagged += x[start - 1] * x[start - 1] - x[start + n - 1] * x[start + n - 1]
                if lagged < 0 { lagged = 0 }
            }
            tau += 1
        }
        return (best.squareRoot(), bestTau)
    }

    /// The share (0...1) of the strongest harmonic of rate / ``bestLag`` in the energy at all its
    /// harmonics up to the low-pass cutoff, over the last 32 ms (see the type's documentation):
    /// near 1 for a pure tone, lower for a voice. Call it right after ``strength()`` (it windows
    /// that call's scratch in place); 1 when that found no lag.
    mutating func harmonicSpread() -> Float {
        guard bestLag >= shortestLag, bestLag <= longestLag else { return 1 }
        let first = coefficientStarts[bestLag - shortestLag]
        let end = coefficientStarts[bestLag - shortestLag + 1]
        let length = spreadWindow.count
        let offset = windowLength + longestLag - length
        // Windowed once, in place (the scratch is refilled by the next strength()).
        for i in 0..<length { scratch[offset + i] *= spreadWindow[i] }
        var total: Float = 0
        var strongest: Float = 0
        let segment = scratch.span.extracting(offset..<(offset + length))
        let coefficients = goertzelCoefficients.span
        // Two harmonics per pass: two independent recurrences hide each other's latency.
        var index = first
        while index < end {
            let c1 = coefficients[index]
            let c2 = index + 1 < end ? coefficients[index + 1] : c1
            var a1: Float = 0
            var a2: Float = 0
            var b1: Float = 0
            var b2: Float = 0
            for i in segment.indices {
                let sample = segment[i]
                let a0 = sample + c1 * a1 - a2
                let b0 = sample + c2 * b1 - b2
                a2 = a1
                a1 = a0
                b2 = b1
                b1 = b0
            }
            let powerA = max(0, a1 * a1 + a2 * a2 - c1 * a1 * a2)
            total += powerA
            strongest = max(strongest, powerA)
            if index + 1 < end {
                let powerB = max(0, b1 * b1 + b2 * b2 - c2 * b1 * b2)
                total += powerB
                strongest = max(strongest, powerB)
            }
            index += 2
        }
        return total > 0 ? strongest / total : 1
    }
}
