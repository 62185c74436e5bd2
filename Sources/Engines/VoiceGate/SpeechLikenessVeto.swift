import ProofkitCore

/// A learned check on the energy gate's voiced stretches: how much like speech the spectrum looks,
/// frame by frame. Used as a veto, it keeps only the energy gate's voiced frames that also look like
/// speech, so a pitched drone the gate takes for voice (a buzzing insect, a bee, a steam engine,
/// bubbling water) stops counting while readings over it keep theirs. It never adds voiced time.
///
/// Per 10 ms frame (32 ms Hann window, 512 points, zero-padded to 1024): 16 log band levels from
/// 100 Hz to 4 kHz, each band's level above its own floor (the 10th percentile of the last 3 s,
/// sampled every 5th frame, clipped to 0-40 dB), the spectral shape (band levels minus their
/// mean), a pitch strength (the largest window-corrected autocorrelation of the spectrum below
/// 1 kHz at lags of 2.5-14.5 ms, 69-400 Hz) and the level. A 239-32-16-1 perceptron reads those
/// 34 values at -200, -100, -50, 0, +50, +100 and +200 ms and the spread of the level over
/// +-150 ms. Its output (0...1) is averaged over +-150 ms (31 frames) and a frame is kept when the
/// average is at least ``threshold``.
///
/// The network was trained by `Benchmarks/voice_veto_study.py`, which writes
/// `SpeechLikenessVetoWeights.swift`, on the 114 noise sources of the seven splits of
/// `Benchmarks/voice_gate_eval.py` heard so far, mixed with the tuning speech only (speech
/// labelled by Silero on the clean recording); a later split was kept back to measure it. On
/// its own it is no detector (trained on the first 32 sources, it counted a campfire as 12 s of
/// speech); it is meant only to narrow what a gate already found: the energy gate's frames, or
/// Silero's segments, whole (``meanLikeness(over:)``) and at their ends (``edgePaddingSeconds``).
/// Figures: Benchmarks/VOICE_GATE_EVAL.md.
///
/// Decisions lag the audio by ``delayFrames`` (350 ms: the 200 ms look-ahead and half the
/// averaging window); ``finish()`` decides the rest, treating the audio as ended.
///
/// Memory is bounded: it keeps at most about 3 s of features and outputs, whatever the stream's length.
///
/// ## Use
/// ```swift
/// var veto = SpeechLikenessVeto()
/// for chunk in chunks { veto.process(chunk) }   // 16 kHz mono, -1...1
/// let kept = veto.finish()                       // segments that look like speech
/// let voiced = VoicedSegments.intersection(gateSegments, kept)
/// ```
public struct SpeechLikenessVeto: Sendable {
    /// The only sample rate it reads, in Hz.
    public static let sampleRate = 16_000
    /// Frame hop, in seconds (10 ms).
    public static let frameSeconds = 0.01
    /// How many frames the decisions lag the audio: 35 (350 ms).
    public static let delayFrames = offsets.last! + smoothingRadius

    /// The smoothed likeness a frame needs to be kept (0...1). Default ``trainedThreshold`` (0.4),
    /// the smallest of 0.1-0.4 that leaves every training noise alone at <= 0.5 s.
    public var threshold: Float

    static let window = 512
    static let hop = 160
    static let bands = 16
    static let featureCount = 2 * bands + 2
    static let offsets = [-20, -10, -5, 0, 5, 10, 20]
    static let smoothingRadius = 15
    static let floorSamples = 60
    static let floorStride = 5
    static let lowestLag = 40
    static let highestLag = 232
    static let lowBins = 64  // 1024-point bins up to 1 kHz

    private static let model = Model()

    private var transform = MixedRadixFFT(length: 2 * window)
    /// The transform's input and output, reused for every frame.
    private var real = [Double](repeating: 0, count: 2 * window)
    private var imaginary = [Double](repeating: 0, count: 2 * window)
    private var samples: [Float] = []
    private var framesDone = 0
    /// Features of frames `featureBase...` (34 each, flattened) and their mean band level above the floor.
    private var features: [Double] = []
    private var meanAbove: [Double] = []
    private var featureBase = 0
    private var floorRing: [[Double]] = []
    private var floorRingNext = 0
    private var floors = [Double](repeating: 0, count: bands)
    /// Network outputs of frames `probabilityBase...`.
    private var probabilities: [Float] = []
    private var probabilityBase = 0
    private var decided = 0
    private var runStart: Int?
    private var kept: [VoicedSegment] = []

    /// Every frame's network output so far (0...1, before averaging), when created with
    /// `keepsLikeness`; empty otherwise (it grows with the audio: 4 bytes per 10 ms).
    public private(set) var likeness: [Float] = []
    private let keepsLikeness: Bool
    /// Running sums of the decided frames' smoothed likeness (`smoothedSums[k]` = frames 0..<k),
    /// when created with `measuresSegments`; `[0]` otherwise.
    private var smoothedSums: [Double] = [0]
    private let measuresSegments: Bool

    /// The mean smoothed likeness a whole voiced segment of another detector (Silero) needs to be
    /// kept by ``meanLikeness(over:)``'s users: 0.2. Chosen on the heard noise splits of
    /// `Benchmarks/voice_gate_eval.py` (VOICE_GATE_EVAL.md; `Benchmarks/voice_segment_rules.py
    /// --thresholds` replays it from saved reports): it drops segments of bubbling heard alone
    /// (0.1 does not drop a bee's), and on the 1,122 readings of heldout6-8 it changed three counts
    /// (two came closer to the reference; one lost a real speech segment at 5 dB SNR).
    public static let segmentThreshold: Float = 0.2

    /// How far a kept Silero segment may reach beyond the first and last frames this veto kept
    /// inside it, in seconds: 0.3 (``VoicedSegments/trimmedEdges(_:to:padding:isolatedGap:isolatedShortest:)``). In noise,
    /// Silero's probability stays up for up to a second after the voice; trimming to the veto's
    /// frames cuts that tail. Chosen on the eight heard noise splits of
    /// `Benchmarks/voice_gate_eval.py` with `Benchmarks/voice_segment_rules.py` (the fewest files
    /// over 25 % error at >= 10 dB SNR among 0.3-0.6 s: 7 against 16 untrimmed, all on the tuning
    /// split), then measured once on each of two unheard splits (VOICE_GATE_EVAL.md). A smaller
    /// pad cuts the held-out reader's recitation. `ReadingProof` applies it to the segments that
    /// pass ``segmentThreshold``.
    public static let edgePaddingSeconds = 0.3

    /// A stretch this veto kept at either end of a Silero segment that is shorter than this, in
    /// seconds, and more than ``edgeIsolatedGapSeconds`` from the kept stretch next to it, is not
    /// one of the segment's edges: 0.5 (``VoicedSegments/trimmedEdges(_:to:padding:isolatedGap:isolatedShortest:)``).
    /// In bubbling water, the veto keeps a short stretch of bubbles half a second or more after a
    /// reading, and Silero's segment runs on to it. Chosen on the twelve heard noise splits of
    /// `Benchmarks/voice_gate_eval.py` with `Benchmarks/voice_segment_rules.py --islands` (the
    /// fewest files over 25 % error at >= 10 dB SNR among gaps 0.4-0.6 s and lengths 0.3-0.5 s),
    /// then measured once on an unheard split (VOICE_GATE_EVAL.md). The price: a short last word
    /// read after a pause of more than 0.6 s counts only up to the pad.
    public static let edgeIsolatedShortestSeconds = 0.5

    /// The gap, in seconds, beyond which a short kept stretch at a segment's end is isolated: 0.6
    /// (``edgeIsolatedShortestSeconds``).
    public static let edgeIsolatedGapSeconds = 0.6

    /// Creates a veto.
    /// - Parameters:
    ///   - threshold: the smoothed likeness a frame needs to be kept (0...1); default the study's
    ///     ``trainedThreshold``.
    ///   - keepsLikeness: keep every frame's network output in ``likeness`` (for plots and tests);
    ///     default `false`.
    ///   - measuresSegments: keep a running sum of every decided frame's smoothed likeness, so
    ///     ``meanLikeness(over:)`` can judge whole segments (8 bytes per 10 ms of audio); default
    ///     `false`.
    public init(
        threshold: Float = SpeechLikenessVeto.trainedThreshold, keepsLikeness: Bool = false,
        measuresSegments: Bool = false
    ) {
        self.threshold = threshold
        self.keepsLikeness = keepsLikeness
        self.measuresSegments = measuresSegments
    }

    /// The mean smoothed likeness (0...1) of the decided 10 ms frames inside `segment` (its start
    /// and end rounded to the nearest frame), or `nil` when none of them is decided yet or the veto
    /// was created without `measuresSegments`.
    public func meanLikeness(over segment: VoicedSegment) -> Float? {
        guard measuresSegments else { return nil }
        let first = max(0, Int((segment.start / Self.frameSeconds).rounded()))
        let end = min(decided, Int((segment.end / Self.frameSeconds).rounded()))
        guard end > first else { return nil }
        return Float((smoothedSums[end] - smoothedSums[first]) / Double(end - first))
    }

    /// Audio time up to which every frame is decided, in seconds.
    public var decidedSeconds: Double { Double(decided) * Self.frameSeconds }

    /// The segments decided so far that look like speech (frames of 10 ms, runs joined), in
    /// seconds from the start. An open run is included up to ``decidedSeconds``.
    public var keptSegments: [VoicedSegment] {
        guard let start = runStart, decided > start else { return kept }
        return kept + [VoicedSegment(start: Double(start) * Self.frameSeconds, end: decidedSeconds)]
    }

    /// Feeds audio.
    /// - Parameter chunk: mono samples in -1...1 at 16 kHz, any length.
    public mutating func process(_ chunk: [Float]) {
        samples.append(contentsOf: chunk)
        var consumed = 0
        while samples.count - consumed >= Self.window {
            addFrame(samples[consumed..<consumed + Self.window])
            consumed += Self.hop
        }
        samples.removeFirst(consumed)
        let last = framesDone - 1
        while probabilityBase + probabilities.count + Self.offsets.last! <= last {
            addProbability(last: last)
        }
        while decided + Self.smoothingRadius < probabilityBase + probabilities.count {
            decide(last: last)
        }
        trim()
    }

    /// Decides the frames left, as if the audio ended here, and returns every segment kept.
    /// - Returns: the kept segments, in seconds from the start (empty under 32 ms of audio).
    public mutating func finish() -> [VoicedSegment] {
        let last = framesDone - 1
        guard last >= 0 else { return [] }
        while probabilityBase + probabilities.count <= last { addProbability(last: last) }
        while decided <= last { decide(last: last) }
        if let start = runStart {
            kept.append(VoicedSegment(start: Double(start) * Self.frameSeconds, end: decidedSeconds))
            runStart = nil
        }
        return kept
    }

    // MARK: - Frames

    private mutating func addFrame(_ frame: ArraySlice<Float>) {
        let model = Self.model
        for n in real.indices {
            real[n] = n < Self.window ? Double(frame[frame.startIndex + n]) * model.hann[n] : 0
            imaginary[n] = 0
        }
        transform.transform(real: &real, imaginary: &imaginary)
        // Power at the 1024-point bins 0...512; the 512-point bins are the even ones.
        var levels = [Double](repeating: 0, count: Self.bands)
        var total = 0.0
        for k in 0...Self.window / 2 { total += real[2 * k] * real[2 * k] + imaginary[2 * k] * imaginary[2 * k] }
        for (b, bins) in Self.bandBins.enumerated() {
            var sum = 0.0
            for k in bins { sum += real[2 * k] * real[2 * k] + imaginary[2 * k] * imaginary[2 * k] }
            levels[b] = Decibels.fromPower(sum + 1e-10)
        }
        if framesDone % Self.floorStride == 0 { updateFloors(levels) }
        let meanLevel = levels.reduce(0, +) / Double(Self.bands)
        var row = [Double](repeating: 0, count: Self.featureCount)
        var aboveSum = 0.0
        for b in 0..<Self.bands {
            let above = min(max(levels[b] - floors[b], 0), 40)
            row[b] = above
            aboveSum += above
            row[Self.bands + b] = levels[b] - meanLevel
        }
        row[2 * Self.bands] = pitchStrength(real: real, imaginary: imaginary)
        row[2 * Self.bands + 1] = min(max(Decibels.fromPower(total + 1e-10) + 90, 0), 90) / 10
        features.append(contentsOf: row)
        meanAbove.append(aboveSum / Double(Self.bands))
        framesDone += 1
    }

    private mutating func updateFloors(_ levels: [Double]) {
        if floorRing.isEmpty {
            floorRing = Array(repeating: levels, count: Self.floorSamples)
        } else {
            floorRing[floorRingNext] = levels
        }
        floorRingNext = (floorRingNext + 1) % Self.floorSamples
        // The 10th percentile with linear interpolation (numpy's default) of each band's samples.
        for b in 0..<Self.bands {
            floors[b] = linearQuantile(sorted: floorRing.map { $0[b] }.sorted(), 0.1)
        }
    }

    /// The autocorrelation of the spectrum below 1 kHz, corrected for the window, at its best lag in
    /// 2.5-14.5 ms, over its value at lag 0 (0...1).
    private func pitchStrength(real: [Double], imaginary: [Double]) -> Double {
        let model = Self.model
        let n = Double(2 * Self.window)
        var power = [Double](repeating: 0, count: Self.lowBins + 1)
        for k in 0...Self.lowBins { power[k] = real[k] * real[k] + imaginary[k] * imaginary[k] }
        var zero = power[0]
        for k in 1...Self.lowBins { zero += 2 * power[k] }
        zero /= n
        var best = -Double.infinity
        for (index, lag) in (Self.lowestLag...Self.highestLag).enumerated() {
            let cosines = model.cosines[index]
            var sum = power[0]
            for k in 1...Self.lowBins { sum += 2 * power[k] * cosines[k] }
            best = max(best, sum / n / model.windowCorrelation[lag])
        }
        return min(max(best / max(zero, 1e-20), 0), 1)
    }

    // MARK: - Network and decisions

    private mutating func addProbability(last: Int) {
        let frame = probabilityBase + probabilities.count
        var input = [Float](repeating: 0, count: Self.offsets.count * Self.featureCount + 1)
        var position = 0
        for offset in Self.offsets {
            let row = (min(max(frame + offset, 0), last) - featureBase) * Self.featureCount
            for i in 0..<Self.featureCount { input[position + i] = Float(features[row + i]) }
            position += Self.featureCount
        }
        // The population standard deviation of the mean level above the floor over +-15 frames.
        let radius = Self.smoothingRadius
        var sum = 0.0
        var squares = 0.0
        for j in frame - radius...frame + radius {
            let value = meanAbove[min(max(j, 0), last) - featureBase]
            sum += value
            squares += value * value
        }
        let count = Double(2 * radius + 1)
        let mean = sum / count
        input[position] = Float(max(squares / count - mean * mean, 0).squareRoot())
        let probability = Self.model.probability(input)
        probabilities.append(probability)
        if keepsLikeness { likeness.append(probability) }
    }

    private mutating func decide(last: Int) {
        let frame = decided
        let radius = Self.smoothingRadius
        var sum: Float = 0
        for j in max(frame - radius, 0)...min(frame + radius, last) where j >= probabilityBase {
            sum += probabilities[j - probabilityBase]
        }
        let smoothed = sum / Float(2 * radius + 1)
        if measuresSegments { smoothedSums.append(smoothedSums[smoothedSums.count - 1] + Double(smoothed)) }
        let keep = smoothed >= threshold
        if keep, runStart == nil { runStart = frame }
        if !keep, let start = runStart {
            kept.append(
                VoicedSegment(start: Double(start) * Self.frameSeconds, end: Double(frame) * Self.frameSeconds))
            runStart = nil
        }
        decided += 1
    }

    /// Drops features and outputs no later frame can need.
    private mutating func trim() {
        let neededFeature = probabilityBase + probabilities.count - Self.offsets.last! - Self.smoothingRadius
        let dropFeatures = min(neededFeature - featureBase, meanAbove.count)
        if dropFeatures >= 256 {
            features.removeFirst(dropFeatures * Self.featureCount)
            meanAbove.removeFirst(dropFeatures)
            featureBase += dropFeatures
        }
        let dropProbabilities = min(decided - Self.smoothingRadius - probabilityBase, probabilities.count)
        if dropProbabilities >= 256 {
            probabilities.removeFirst(dropProbabilities)
            probabilityBase += dropProbabilities
        }
    }
}

extension SpeechLikenessVeto {
    /// The fixed tables and the trained network, built once.
    struct Model: Sendable {
        let hann: [Double]
        let windowCorrelation: [Double]
        /// cos(2 pi k lag / 1024) for each lag in 40...232 and k in 0...64.
        let cosines: [[Double]]
        let mean: [Float]
        let deviation: [Float]
        let layers: [(weights: [Float], biases: [Float], inputs: Int, outputs: Int)]

        init() {
            let size = SpeechLikenessVeto.window
            hann = (0..<size).map { 0.5 - 0.5 * cosine(2 * Double.pi * Double($0) / Double(size - 1)) }
            var correlation = [Double](repeating: 0, count: size)
            for lag in 0..<size {
                var sum = 0.0
                for m in 0..<(size - lag) { sum += hann[m] * hann[m + lag] }
                correlation[lag] = sum
            }
            windowCorrelation = correlation.map { $0 / correlation[0] }
            cosines = (SpeechLikenessVeto.lowestLag...SpeechLikenessVeto.highestLag).map { lag in
                (0...SpeechLikenessVeto.lowBins).map { cosine(2 * Double.pi * Double($0 * lag) / Double(2 * size)) }
            }
            mean = Self.floats32(SpeechLikenessVeto.meanFloat32)
            deviation = Self.floats32(SpeechLikenessVeto.deviationFloat32)
            let weights = [
                SpeechLikenessVeto.weights1Float16, SpeechLikenessVeto.weights2Float16,
                SpeechLikenessVeto.weights3Float16,
            ]
            let biases = [
                SpeechLikenessVeto.biases1Float32, SpeechLikenessVeto.biases2Float32, SpeechLikenessVeto.biases3Float32,
            ]
            var inputs = mean.count
            var layers: [(weights: [Float], biases: [Float], inputs: Int, outputs: Int)] = []
            for (index, outputs) in SpeechLikenessVeto.layerSizes.enumerated() {
                let w = Self.floats16(weights[index])
                let b = Self.floats32(biases[index])
                precondition(
                    w.count == inputs * outputs && b.count == outputs, "the generated veto weights are inconsistent")
                layers.append((w, b, inputs, outputs))
                inputs = outputs
            }
            precondition(mean.count == offsets.count * featureCount + 1, "the generated veto has the wrong input size")
            self.layers = layers
        }

        /// The network's output for one input row (0...1).
        func probability(_ input: [Float]) -> Float {
            var values = zip(zip(input, mean), deviation).map { pair, deviation in (pair.0 - pair.1) / deviation }
            for (index, layer) in layers.enumerated() {
                var next = layer.biases
                do {
                    // Spans, not unsafe pointers (strict memory safety): no uniqueness check per store.
                    var sums = next.mutableSpan
                    let weights = layer.weights.span
                    for i in 0..<layer.inputs {
                        let value = values[i]
                        if value == 0 { continue }
                        let row = i * layer.outputs
                        for o in 0..<layer.outputs { sums[o] += value * weights[row + o] }
                    }
                }
                if index < layers.count - 1 {
                    for o in next.indices { next[o] = max(next[o], 0) }
                }
                values = next
            }
            // e^-z = 10^(-z log10(e)): the gate's own power(decibels:), without libm.
            return 1 / (1 + power(decibels: -values[0] * 4.342944819032518))
        }

        /// Little-endian float32 values from base64.
        static func floats32(_ text: String) -> [Float] {
            let raw = Base64.bytes(text)
            return stride(from: 0, to: raw.count - 3, by: 4).map { (at: Int) -> Float in
                var word: UInt32 = 0
                for byte in (0..<4).reversed() { word = word << 8 | UInt32(raw[at + byte]) }
                return Float(bitPattern: word)
            }
        }

        /// Little-endian IEEE half-precision values from base64, widened to `Float` exactly.
        static func floats16(_ text: String) -> [Float] {
            let raw = Base64.bytes(text)
            return stride(from: 0, to: raw.count - 1, by: 2).map { (at: Int) -> Float in
                let half: UInt32 = UInt32(raw[at]) | UInt32(raw[at + 1]) << 8
                let sign = (half & 0x8000) << 16
                let exponent = (half >> 10) & 0x1F
                let fraction = half & 0x3FF
                if exponent == 0 {
                    // Zero or subnormal: fraction x 2^-24.
                    let magnitude = Float(fraction) / 16_777_216
                    return sign != 0 ? -magnitude : magnitude
                }
                if exponent == 0x1F { return Float(bitPattern: sign | 0x7F80_0000 | fraction << 13) }
                return Float(bitPattern: sign | (exponent + 112) << 23 | fraction << 13)
            }
        }
    }
}
