// A streaming band-limited resampler (pure Swift, no I/O): polyphase, one output frame per SIMD lane.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Converts interleaved audio from one sample rate to another with a Kaiser-windowed sinc filter,
/// chunk by chunk, in bounded memory.
///
/// Algorithm (after J. O. Smith's "Digital Audio Resampling"): output frame `n` sits at input
/// time `t = n * inputRate / outputRate` (exact integer arithmetic, so long streams never drift).
/// Its value is the sum of input frames `k` within ``zeroCrossings`` cut-off periods of `t`,
/// weighted by `h(t - k)`, where `h` is a sinc with its cut-off at ``cutoff`` times the lower of
/// the two Nyquist frequencies, under a Kaiser window (beta ``kaiserBeta``). The filter is read
/// from a table with ``tableResolution`` points per zero crossing and linear interpolation.
/// Weights are renormalised per output frame so that DC passes exactly.
///
/// Each output frame's sum is taken tap by tap in a fixed order with the same float operations
/// whatever the input's chunking and whichever path computes it, so the samples are bit-identical
/// to those of the scalar resampler this one replaced (one weight per tap, summed from the first
/// tap to the last, then multiplied by the frame's 1 / sum of weights; with several channels each
/// weight is normalised first).
///
/// Polyphase: with `g = gcd(inputRate, outputRate)`, the fraction of `t` takes only
/// `outputRate / g` values (the phases: 160 for 44.1 -> 16 kHz, one for 48 -> 16 kHz), and output
/// frames `n` and `n + outputRate / g` share a phase. Each phase's weights are computed once, at
/// creation, when they fit in ``maxCachedWeights`` floats; then eight output frames that share a
/// phase are computed at once, one per lane of a `SIMD8<Float>` (the weight is the same in every
/// lane, the samples are gathered once per block of output frames). Rates whose phases do not fit
/// compute each output frame's weights as it comes, one frame at a time.
///
/// Properties: no delay (frame 0 of the output is aligned with frame 0 of the input; the input
/// is taken as zero before its start and after its end); the output has
/// `ceil(inputFrames * outputRate / inputRate)` frames. Measured from 44.1 and 48 kHz to 16 kHz
/// with sine tones and sweeps (Benchmarks/RESAMPLER.md): tones above 1.1 times the lower Nyquist
/// frequency come out below -100 dB, and the gain varies by 0.67 dB from 100 Hz to 0.9 of the
/// lower Nyquist frequency (the roll-off starts below the cut-off).
public struct SincResampler: Sendable {
    /// Input rate in Hz.
    public let inputRate: Int
    /// Output rate in Hz.
    public let outputRate: Int
    /// Channels per frame.
    public let channels: Int
    /// Zero crossings of the sinc on each side of the centre: 32.
    public static let zeroCrossings = 32
    /// Cut-off as a fraction of the lower Nyquist frequency: 0.94.
    public static let cutoff = 0.94
    /// Kaiser window shape parameter: 9.0 (side lobes near -90 dB).
    public static let kaiserBeta = 9.0
    /// Filter table points per zero crossing: 512.
    public static let tableResolution = 512
    /// The most filter weights kept for the phases (floats): 262 144 (1 MiB); rates whose phases
    /// need more compute each output frame's weights as it comes.
    public static let maxCachedWeights = 1 << 18

    private let step: Int  // input rate / g: input advance per output, in units of 1/den
    private let den: Int  // output rate / g: the number of phases
    private let halfWidth: Int  // input frames on each side of the centre
    private let taps: Int  // 2 * halfWidth: the window
    private let filterScale: Double  // table points per input frame
    private let table: [Float]
    // den phases of `taps` weights (normalised when channels > 1, as the scalar code did), or empty.
    private let phaseWeights: [Float]
    private let phaseNorms: [Float]  // 1 / (sum of each phase's weights)
    private let lanePeriod: Int  // output frames between two lanes: a multiple of den
    private var histories: [[Float]]  // per channel, input frames from historyStart on
    private var historyStart = 0  // absolute input frame of histories[c][0] (earlier frames: zeros)
    private var inputFrames = 0  // absolute input frames received
    private var nextOutput = 0  // absolute index of the next output frame
    private var scratch: [Float]  // one output frame's weights when they are not cached
    private var lanes: [SIMD8<Float>] = []  // the gathered history of a block (see produceLanes)

    /// Creates a resampler.
    /// - Parameters:
    ///   - inputRate: input rate in Hz, at least 1.
    ///   - outputRate: output rate in Hz, at least 1.
    ///   - channels: channels per frame, at least 1.
    public init(inputRate: Int, outputRate: Int, channels: Int) {
        precondition(inputRate >= 1 && outputRate >= 1 && channels >= 1)
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.channels = channels
        var a = inputRate
        var b = outputRate
        while b != 0 { (a, b) = (b, a % b) }
        step = inputRate / a
        den = outputRate / a
        let scale = min(1, Double(outputRate) / Double(inputRate))  // stretches the filter when downsampling
        halfWidth = Int((Double(SincResampler.zeroCrossings) / (scale * SincResampler.cutoff)).rounded(.up)) + 1
        taps = 2 * halfWidth
        filterScale = scale * SincResampler.cutoff * Double(SincResampler.tableResolution)
        table = SincResampler.makeTable()
        histories = [[Float]](repeating: [], count: channels)
        scratch = [Float](repeating: 0, count: taps)
        // At least 32 output frames between lanes, so that gathering a block's history (8 lanes
        // of lanePeriod * step / den + taps frames) stays small beside its dot products.
        lanePeriod = den * max(1, (32 + den - 1) / den)
        var weights: [Float] = []
        var norms: [Float] = []
        if den * taps <= SincResampler.maxCachedWeights {
            weights = [Float](repeating: 0, count: den * taps)
            norms = [Float](repeating: 0, count: den)
            var phase = [Float](repeating: 0, count: taps)
            for p in 0..<den {
                let norm = Self.weights(
                    phase: p, den: den, halfWidth: halfWidth, filterScale: filterScale, table: table, into: &phase)
                norms[p] = norm
                for tap in 0..<taps { weights[p * taps + tap] = channels == 1 ? phase[tap] : phase[tap] * norm }
            }
        }
        phaseWeights = weights
        phaseNorms = norms
    }

    /// `h(x)` for x = i / tableResolution zero crossings, i in 0...zeroCrossings*resolution (+1 guard).
    private static func makeTable() -> [Float] {
        let count = zeroCrossings * tableResolution + 2
        var table = [Float](repeating: 0, count: count)
        let beta = kaiserBeta
        let i0Beta = besselI0(beta)
        for i in 0..<count {
            let x = Double(i) / Double(tableResolution)  // in zero crossings
            guard x < Double(zeroCrossings) else {
                table[i] = 0
                continue
            }
            let sinc = x == 0 ? 1.0 : sin(Double.pi * x) / (Double.pi * x)
            let r = x / Double(zeroCrossings)
            let window = besselI0(beta * (1 - r * r).squareRoot()) / i0Beta
            table[i] = Float(sinc * window)
        }
        return table
    }

    /// The weights of phase `phase` (output time `centre + phase / den`) for the window's taps,
    /// read from `table` with linear interpolation; returns 1 / their sum, taken from the first
    /// tap to the last (0 when they sum to 0).
    private static func weights(
        phase: Int, den: Int, halfWidth: Int, filterScale: Double, table: [Float], into weights: inout [Float]
    ) -> Float {
        let fraction = Double(phase) / Double(den)
        let tableLimit = table.count - 2
        var sum: Float = 0
        for tap in weights.indices {
            let distance = abs(Double(halfWidth - 1 - tap) + fraction) * filterScale
            let index = Int(distance)
            var w: Float = 0
            if index < tableLimit {
                let t = Float(distance - Double(index))
                w = table[index] + (table[index + 1] - table[index]) * t
            }
            weights[tap] = w
            sum += w
        }
        return sum != 0 ? 1 / sum : 0
    }

    /// The modified Bessel function of the first kind, order 0 (power series).
    static func besselI0(_ x: Double) -> Double {
        var sum = 1.0
        var term = 1.0
        let half = x / 2
        var k = 1.0
        while term > 1e-12 * sum {
            term *= (half / k) * (half / k)
            sum += term
            k += 1
        }
        return sum
    }

    /// The number of output frames that `inputFrames` input frames make in total.
    public static func outputFrameCount(inputFrames: Int, inputRate: Int, outputRate: Int) -> Int {
        (inputFrames * outputRate + inputRate - 1) / inputRate
    }

    /// Feeds interleaved input and returns the output frames that are now complete.
    public mutating func process(_ input: [Float]) -> [Float] {
        precondition(input.count % channels == 0, "input must hold whole frames")
        if channels == 1 {
            histories[0].append(contentsOf: input)
        } else {
            let frames = input.count / channels
            for channel in 0..<channels {
                histories[channel].reserveCapacity(histories[channel].count + frames)
                for frame in 0..<frames { histories[channel].append(input[frame * channels + channel]) }
            }
        }
        inputFrames += input.count / channels
        return produce(final: false)
    }

    /// Flushes the remaining output (the input is taken as zero after its end).
    public mutating func finish() -> [Float] {
        produce(final: true)
    }

    private mutating func produce(final: Bool) -> [Float] {
        let total = SincResampler.outputFrameCount(
            inputFrames: inputFrames, inputRate: step, outputRate: den)
        // Outputs that can be completed now: centre + halfWidth < inputFrames unless final.
        var end = total
        if !final {
            // Largest n with (n * step) / den + halfWidth < inputFrames.
            let limit = inputFrames - halfWidth  // centre must be < limit
            end = limit <= 0 ? nextOutput : min(total, (limit * den + step - 1) / step)
            end = max(end, nextOutput)
        }
        let count = end - nextOutput
        guard count > 0 else { return [] }
        var out = [Float](repeating: 0, count: count * channels)
        for channel in 0..<channels {
            if phaseWeights.isEmpty {
                produceOneByOne(count: count, channel: channel, into: &out)
            } else {
                for block in stride(from: 0, to: count, by: 8 * lanePeriod) {
                    produceLanes(
                        from: nextOutput + block, count: min(8 * lanePeriod, count - block), channel: channel,
                        into: &out, at: block)
                }
            }
        }
        nextOutput = end
        // Drop input frames no future output can reach.
        let needed = (nextOutput * step) / den - halfWidth
        if needed - historyStart > 4096 {
            let drop = needed - historyStart
            for channel in 0..<channels { histories[channel].removeFirst(drop) }
            historyStart += drop
        }
        return out
    }

    /// The absolute input frame of output frame `n`'s first tap.
    @inline(__always)
    private func firstTap(_ n: Int) -> Int { (n * step) / den - halfWidth + 1 }

    /// Computes output frames `start ..< start + count` (at most 8 * lanePeriod) of one channel
    /// into `out` from its frame `outFrame` on, with cached weights. Frames `start + p + lanePeriod * j`
    /// (j = 0..<8) share a phase, and their windows start `lanePeriod * step / den` input frames
    /// apart: lane j of `lanes[q]` holds input frame `firstTap(start) + q + j * that`, so frame
    /// `start + p`'s window, for all eight lanes at once, is `lanes[firstTap(start + p) - firstTap(start)...]`,
    /// one vector per tap. Each lane sums its taps in order: acc + weight * sample, then * norm.
    private mutating func produceLanes(
        from start: Int, count: Int, channel: Int, into out: inout [Float], at outFrame: Int
    ) {
        let (taps, den, channels) = (self.taps, self.den, self.channels)
        let laneStride = lanePeriod / den * step  // input frames between lanes
        let gathered = laneStride + taps
        let base = firstTap(start)
        var lanes: [SIMD8<Float>] = []
        swap(&lanes, &self.lanes)
        defer { swap(&lanes, &self.lanes) }
        if lanes.count < gathered { lanes.append(contentsOf: repeatElement(.zero, count: gathered - lanes.count)) }
        // (The channel's history is moved out of `self`, no copy, so that a span can borrow it.)
        var frames: [Float] = []
        swap(&frames, &histories[channel])
        defer { swap(&frames, &histories[channel]) }
        do {
            let history = frames.span
            var target = lanes.mutableSpan
            for j in 0..<8 {
                // Frames of this lane within the history; before and after it, zeros.
                let from = base + j * laneStride - historyStart
                let lo = max(0, min(gathered, -from))
                let hi = max(lo, min(gathered, history.count - from))
                for q in 0..<lo { target[q][j] = 0 }
                if lo < hi {
                    let source = history.extracting((from + lo)..<(from + hi))
                    for q in source.indices { target[lo + q][j] = source[q] }
                }
                for q in hi..<gathered { target[q][j] = 0 }
            }
        }
        let weights = phaseWeights.span
        let norms = phaseNorms.span
        let gatheredSpan = lanes.span
        var result = out.mutableSpan
        let lanePeriod = self.lanePeriod
        let rows = min(lanePeriod, count)
        // Row p's lane j is the block's output frame p + lanePeriod * j, when within `count`.
        func store(_ acc: SIMD8<Float>, row p: Int, norm: Float, into result: inout MutableSpan<Float>) {
            for j in 0..<min(8, (count - p + lanePeriod - 1) / lanePeriod) {
                result[(outFrame + p + lanePeriod * j) * channels + channel] = channels == 1 ? acc[j] * norm : acc[j]
            }
        }
        var p = 0
        // Four output rows at a time: four independent sums, so the adds do not wait on each other.
        while p + 4 <= rows {
            let o0 = firstTap(start + p) - base
            let o1 = firstTap(start + p + 1) - base
            let o2 = firstTap(start + p + 2) - base
            let o3 = firstTap(start + p + 3) - base
            let ph0 = ((start + p) * step) % den
            let ph1 = ((start + p + 1) * step) % den
            let ph2 = ((start + p + 2) * step) % den
            let ph3 = ((start + p + 3) * step) % den
            let w0 = weights.extracting((ph0 * taps)..<(ph0 * taps + taps))
            let w1 = weights.extracting((ph1 * taps)..<(ph1 * taps + taps))
            let w2 = weights.extracting((ph2 * taps)..<(ph2 * taps + taps))
            let w3 = weights.extracting((ph3 * taps)..<(ph3 * taps + taps))
            let s0 = gatheredSpan.extracting(o0..<(o0 + taps))
            let s1 = gatheredSpan.extracting(o1..<(o1 + taps))
            let s2 = gatheredSpan.extracting(o2..<(o2 + taps))
            let s3 = gatheredSpan.extracting(o3..<(o3 + taps))
            var a0 = SIMD8<Float>.zero
            var a1 = SIMD8<Float>.zero
            var a2 = SIMD8<Float>.zero
            var a3 = SIMD8<Float>.zero
            let n = min(w0.count, w1.count, w2.count, w3.count, s0.count, s1.count, s2.count, s3.count)
            for i in 0..<n {
                a0 += SIMD8(repeating: w0[i]) * s0[i]
                a1 += SIMD8(repeating: w1[i]) * s1[i]
                a2 += SIMD8(repeating: w2[i]) * s2[i]
                a3 += SIMD8(repeating: w3[i]) * s3[i]
            }
            store(a0, row: p, norm: norms[ph0], into: &result)
            store(a1, row: p + 1, norm: norms[ph1], into: &result)
            store(a2, row: p + 2, norm: norms[ph2], into: &result)
            store(a3, row: p + 3, norm: norms[ph3], into: &result)
            p += 4
        }
        while p < rows {
            let o = firstTap(start + p) - base
            let ph = ((start + p) * step) % den
            let w = weights.extracting((ph * taps)..<(ph * taps + taps))
            let s = gatheredSpan.extracting(o..<(o + taps))
            var a = SIMD8<Float>.zero
            for i in 0..<min(w.count, s.count) { a += SIMD8(repeating: w[i]) * s[i] }
            store(a, row: p, norm: norms[ph], into: &result)
            p += 1
        }
    }

    /// Computes `count` output frames from `nextOutput` on for one channel into `out`, each with
    /// its own weights (rates with too many phases to keep), skipping the taps outside the input.
    private mutating func produceOneByOne(count: Int, channel: Int, into out: inout [Float]) {
        let (step, den, taps, channels) = (self.step, self.den, self.taps, self.channels)
        var scratch: [Float] = []
        swap(&scratch, &self.scratch)
        defer { swap(&scratch, &self.scratch) }
        var frames: [Float] = []
        swap(&frames, &histories[channel])
        defer { swap(&frames, &histories[channel]) }
        let history = frames.span
        var target = out.mutableSpan
        for n in 0..<count {
            let output = nextOutput + n
            let norm = Self.weights(
                phase: (output * step) % den, den: den, halfWidth: halfWidth, filterScale: filterScale, table: table,
                into: &scratch)
            let first = firstTap(output)
            let lo = max(0, max(first, historyStart, 0) - first)
            let hi = min(taps, inputFrames - first)
            guard lo < hi else { continue }
            let weights = scratch.span.extracting(lo..<hi)
            let samples = history.extracting((first + lo - historyStart)..<(first + hi - historyStart))
            var acc: Float = 0
            if channels == 1 {
                for i in 0..<min(weights.count, samples.count) { acc += weights[i] * samples[i] }
                acc *= norm
            } else {
                for i in 0..<min(weights.count, samples.count) { acc += weights[i] * norm * samples[i] }
            }
            target[n * channels + channel] = acc
        }
    }
}
