import ProofkitCore

// Level statistics over interleaved samples (peak, RMS, clipping): the hot loops of check and
// trim, on spans cut so that their subscripts need no bounds checks. No I/O.

/// Running level statistics over interleaved samples, fed chunk by chunk.
///
/// - Peak: the largest `|x|`.
/// - RMS: over all samples of all channels.
/// - Clipping: samples in runs of at least ``clipRunLength`` consecutive samples of one channel
///   at or beyond ``clipThreshold`` (flat tops, the mark of a clipped master). A single sample
///   touching full scale, as a full-scale sine does at its crest, is not clipping.
public struct SignalLevels: Sendable, Equatable {
    /// `|x|` at or above this counts towards clipping: 32766/32768, one step below 16-bit full scale.
    public static let clipThreshold: Float = 32766.0 / 32768.0
    /// The shortest flat-top run that counts as clipping, in samples.
    public static let clipRunLength = 3

    /// Channels per frame.
    public let channels: Int
    /// The largest absolute sample seen, in 0...(1 or more for float input).
    public private(set) var peak: Float = 0
    /// Samples seen (all channels).
    public private(set) var sampleCount: Int = 0
    /// Samples that belong to clipped flat tops.
    public private(set) var clippedSamples: Int = 0
    private var sumOfSquares: Double = 0
    private var runs: [Int]

    /// Whether a sample was NaN or infinite (float input only; 16-bit samples never are). Such a
    /// signal has no meaningful level.
    public var hasNonFiniteSamples: Bool { !sumOfSquares.isFinite }

    /// Creates empty statistics for `channels` channels (at least 1).
    public init(channels: Int) {
        precondition(channels >= 1)
        self.channels = channels
        self.runs = [Int](repeating: 0, count: channels)
    }

    /// Adds interleaved samples (whole frames).
    public mutating func add(_ samples: [Float]) {
        add(samples[...])
    }

    /// Adds interleaved samples (whole frames).
    public mutating func add(_ samples: ArraySlice<Float>) {
        let input = samples.span
        var chunkPeak: Float = 0
        var sum: Double = 0
        // Pass 1: peak and sum of squares, 8 lanes at a time, float blocks summed as Double. Each
        // group of 8 is a span of its own, so its subscripts need no bounds checks.
        var start = 0
        while start < input.count {
            let block = input.extracting(start..<min(start + 4096, input.count))
            var squares = SIMD8<Float>()
            var peaks = SIMD8<Float>()
            var index = 0
            while index + 8 <= block.count {
                let group = block.extracting(index..<(index + 8))
                let v = SIMD8<Float>(group[0], group[1], group[2], group[3], group[4], group[5], group[6], group[7])
                squares += v * v
                let magnitude = v.replacing(with: -v, where: v .< 0)
                peaks.replace(with: magnitude, where: magnitude .> peaks)
                index += 8
            }
            var partial = squares.sum()
            var blockPeak = peaks.max()
            while index < block.count {
                let x = block[index]
                partial += x * x
                blockPeak = max(blockPeak, abs(x))
                index += 1
            }
            sum += Double(partial)
            chunkPeak = max(chunkPeak, blockPeak)
            start += block.count
        }
        // Pass 2, only when something reaches full scale: flat-top runs per channel.
        let threshold = SignalLevels.clipThreshold
        if chunkPeak >= threshold {
            clippedSamples += countFlatTops(input, minimumRun: SignalLevels.clipRunLength) { abs($0) >= threshold }
        } else if chunkPeak > 0 || !input.isEmpty {
            for channel in 0..<channels { runs[channel] = 0 }
        }
        peak = max(peak, chunkPeak)
        sumOfSquares += sum
        sampleCount += samples.count
    }

    /// Adds interleaved 16-bit samples (whole frames), read as `sample / 32768`, whose sum of
    /// squares and extremes the caller has measured: the same statistics as converting them to
    /// floats and calling ``add(_:)-([Float])``, with no float buffer. The facade measures them in
    /// C with the CPU's 16-bit multiply-add (what `proofkit check` runs on).
    /// - Parameters:
    ///   - samples: the samples, interleaved.
    ///   - sumOfSquares: the exact sum of their squares, in 16-bit units (full scale squared is 2^30).
    ///   - lowest: the lowest sample, or 0 when all are positive.
    ///   - highest: the highest sample, or 0 when all are negative.
    public mutating func add(int16 samples: ArraySlice<Int16>, sumOfSquares: UInt64, lowest: Int16, highest: Int16) {
        let chunkPeak = max(Int32(highest), -Int32(lowest))
        // Flat tops, only when something reaches the clip threshold (32766 of 32768).
        if chunkPeak >= 32766 {
            clippedSamples += countFlatTops(samples.span, minimumRun: SignalLevels.clipRunLength) {
                abs(Int32($0)) >= 32766
            }
        } else if !samples.isEmpty {
            for channel in 0..<channels { runs[channel] = 0 }
        }
        peak = max(peak, Float(chunkPeak) / 32768)
        self.sumOfSquares += Double(sumOfSquares) / (32768.0 * 32768.0)  // exact: a power of two
        sampleCount += samples.count
    }

    /// Counts the samples in runs of at least `minimumRun` consecutive samples of one channel
    /// that are `atRail`, carrying each channel's open run across chunks in ``runs``.
    private mutating func countFlatTops<Sample>(
        _ input: Span<Sample>, minimumRun: Int, atRail: (Sample) -> Bool
    ) -> Int {
        var clipped = 0
        var channel = 0
        for index in input.indices {
            if atRail(input[index]) {
                runs[channel] += 1
                let run = runs[channel]
                if run == minimumRun {
                    clipped += minimumRun
                } else if run > minimumRun {
                    clipped += 1
                }
            } else {
                runs[channel] = 0
            }
            channel += 1
            if channel == channels { channel = 0 }
        }
        return clipped
    }

    /// Frames seen.
    public var frameCount: Int { sampleCount / channels }

    /// The peak in dBFS (`-infinity` for digital silence).
    public var peakDBFS: Double { Decibels.fromAmplitude(Double(peak)) }

    /// The RMS level in dBFS (`-infinity` for digital silence or no samples).
    public var rmsDBFS: Double {
        sampleCount > 0 ? Decibels.fromAmplitude((sumOfSquares / Double(sampleCount)).squareRoot()) : -.infinity
    }

    /// Fraction of samples in clipped flat tops, 0...1.
    public var clippedFraction: Double {
        sampleCount > 0 ? Double(clippedSamples) / Double(sampleCount) : 0
    }
}
