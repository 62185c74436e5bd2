// A streaming band-limited resampler (pure Swift, no I/O): polyphase, with SIMD dot products.
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
/// Polyphase: with `g = gcd(inputRate, outputRate)`, the fraction of `t` takes only
/// `outputRate / g` values (the phases: 160 for 44.1 -> 16 kHz, one for 48 -> 16 kHz). Each
/// phase's weights are computed once, at creation, when they fit in ``maxCachedWeights`` floats
/// (else per output frame, as the same function), so each output frame costs one dot product,
/// eight lanes at a time (`SIMD8<Float>`), over a window of taps rounded up to a multiple of 8
/// (the added taps lie past the last zero crossing, weight 0).
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
    private let vectors: Int  // SIMD8 vectors per window (window = 8 * vectors >= 2 * halfWidth)
    private let leftPad: Int  // taps added before the window's first frame (weight 0)
    private let filterScale: Double  // table points per input frame
    private let table: [Float]
    private let phaseWeights: [SIMD8<Float>]  // den phases of `vectors` vectors, or empty
    private let phaseNorms: [Float]  // 1 / (sum of each phase's weights)
    private var histories: [[Float]]  // per channel, input frames from historyStart on
    private var historyStart: Int  // absolute input frame of histories[c][0] (negative: zeros)
    private var inputFrames = 0  // absolute input frames received
    private var nextOutput = 0  // absolute index of the next output frame
    private var scratch: [SIMD8<Float>]  // one phase's weights when they are not cached
    private var copies: [SIMD8<Float>] = []  // the shifted copies of the history (see produce)

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
        vectors = (2 * halfWidth + 7) / 8
        leftPad = 8 * vectors - 2 * halfWidth
        filterScale = scale * SincResampler.cutoff * Double(SincResampler.tableResolution)
        table = SincResampler.makeTable()
        historyStart = -(halfWidth + leftPad)
        histories = [[Float]](repeating: [Float](repeating: 0, count: halfWidth + leftPad), count: channels)
        scratch = [SIMD8<Float>](repeating: .zero, count: vectors)
        var weights: [SIMD8<Float>] = []
        var norms: [Float] = []
        if den * vectors * 8 <= SincResampler.maxCachedWeights {
            weights = [SIMD8<Float>](repeating: .zero, count: den * vectors)
            norms = [Float](repeating: 0, count: den)
            var phase = [SIMD8<Float>](repeating: .zero, count: vectors)
            for p in 0..<den {
                norms[p] = Self.weights(
                    phase: p, den: den, halfWidth: halfWidth, leftPad: leftPad, filterScale: filterScale,
                    table: table, into: &phase)
                for v in 0..<vectors { weights[p * vectors + v] = phase[v] }
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
    /// read from `table` with linear interpolation; returns 1 / their sum (0 when they sum to 0).
    private static func weights(
        phase: Int, den: Int, halfWidth: Int, leftPad: Int, filterScale: Double, table: [Float],
        into weights: inout [SIMD8<Float>]
    ) -> Float {
        let fraction = Double(phase) / Double(den)
        let tableLimit = table.count - 2
        var sum: Float = 0
        for v in weights.indices {
            var vector = SIMD8<Float>.zero
            for lane in 0..<8 {
                let tap = 8 * v + lane - leftPad  // tap 0 is the window's first frame
                let distance = abs(Double(halfWidth - 1 - tap) + fraction) * filterScale
                let index = Int(distance)
                guard index < tableLimit else { continue }
                let t = Float(distance - Double(index))
                let w = table[index] + (table[index + 1] - table[index]) * t
                vector[lane] = w
                sum += w
            }
            weights[v] = vector
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
        for channel in 0..<channels {
            histories[channel].append(contentsOf: repeatElement(0, count: 8 * vectors))
        }
        return produce(final: true)
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
        // In blocks, so that the shifted copies of the history (see below) stay small whatever
        // the size of the input given at once.
        let start = nextOutput
        for block in stride(from: 0, to: count, by: SincResampler.blockFrames) {
            nextOutput = start + block
            for channel in 0..<channels {
                produce(
                    count: min(SincResampler.blockFrames, count - block), channel: channel, into: &out,
                    at: block)
            }
        }
        nextOutput = end
        // Drop input frames no future output can reach.
        let needed = (nextOutput * step) / den - halfWidth - leftPad
        if needed - historyStart > 4096 {
            let drop = needed - historyStart
            for channel in 0..<channels { histories[channel].removeFirst(drop) }
            historyStart += drop
        }
        return out
    }

    /// Output frames computed per block: 4096.
    static let blockFrames = 4096

    /// Computes `count` output frames from `nextOutput` on for one channel into `out`, from its
    /// frame `at` on.
    private mutating func produce(count: Int, channel: Int, into out: inout [Float], at outFrame: Int) {
        let channels = self.channels
        let (step, den, vectors) = (self.step, self.den, self.vectors)
        let startOutput = nextOutput
        let windowOffset = -halfWidth + 1 - leftPad - historyStart  // centre -> index of the first tap
        let cached = !phaseWeights.isEmpty
        // Spans, not unsafe pointers: the engine is held to strict memory safety. The scratch
        // weights are moved out of `self` (no copy) while the phases and history are borrowed.
        var scratch: [SIMD8<Float>] = []
        swap(&scratch, &self.scratch)
        defer { swap(&scratch, &self.scratch) }
        // The history over this call's windows as 8 shifted copies of SIMD8 vectors: copy k,
        // vector j holds frames base+8j+k ..< base+8j+k+8, so every window is whole vector
        // loads (building them costs one vector per input frame; a window costs `vectors`).
        let base = (startOutput * step) / den + windowOffset
        let lastFirst = ((startOutput + count - 1) * step) / den + windowOffset
        let span = (lastFirst - base) / 8 + vectors  // vectors per copy
        var copies: [SIMD8<Float>] = []
        swap(&copies, &self.copies)
        defer { swap(&copies, &self.copies) }
        Self.fillCopies(&copies, from: histories[channel], start: base, vectorsPerCopy: span)
        let shifted = copies.span
        let allWeights = phaseWeights.span
        var target = out.mutableSpan
        for n in 0..<count {
            let position = (startOutput + n) * step  // input time * den
            let phase = position % den
            let offset = position / den + windowOffset - base
            let at = (offset % 8) * span + offset / 8
            let samples = shifted.extracting(at..<(at + vectors))
            let value: Float
            if cached {
                let weights = allWeights.extracting((phase * vectors)..<((phase + 1) * vectors))
                value = Self.dot(weights, samples) * phaseNorms[phase]
            } else {
                let norm = Self.weights(
                    phase: phase, den: den, halfWidth: halfWidth, leftPad: leftPad, filterScale: filterScale,
                    table: table, into: &scratch)
                value = Self.dot(scratch.span, samples) * norm
            }
            target[(outFrame + n) * channels + channel] = value
        }
    }

    /// Fills `copies` with 8 shifted copies of `history` from `start` on, `vectorsPerCopy` each.
    private static func fillCopies(
        _ copies: inout [SIMD8<Float>], from history: [Float], start: Int, vectorsPerCopy: Int
    ) {
        let needed = 8 * vectorsPerCopy
        if copies.count < needed { copies.append(contentsOf: repeatElement(.zero, count: needed - copies.count)) }
        let frames = history.span.extracting(start..<history.count)
        var target = copies.mutableSpan
        for k in 0..<8 {
            // (Vectors past the history's end are never read: each window lies within it.)
            for j in 0..<min(vectorsPerCopy, max(0, (frames.count - k) / 8)) {
                let s = frames.extracting((8 * j + k)..<(8 * j + k + 8))
                target[k * vectorsPerCopy + j] = SIMD8(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7])
            }
        }
    }

    /// The dot product of two windows of vectors, summed over their lanes.
    @inline(__always)
    private static func dot(_ weights: Span<SIMD8<Float>>, _ samples: Span<SIMD8<Float>>) -> Float {
        var acc = SIMD8<Float>.zero
        let n = min(weights.count, samples.count)  // (equal: tells the compiler both are in bounds)
        for v in 0..<n { acc += weights[v] * samples[v] }
        return acc.sum()
    }
}
