public import AudioDSP
import AudioIO
import ProofkitCore

// Level statistics over interleaved samples (peak, RMS, clipping) and the 16-bit to float
// conversion: the hot loops of check and trim, with unaligned SIMD loads and AudioIO's 16-bit
// statistics in C, so they stay here rather than in the strict-memory-safety AudioDSP engine
// (which has the pure operations: resampling, fades, mixing, gain). No I/O.

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
        var chunkPeak: Float = 0
        var sum: Double = 0
        samples.withUnsafeBufferPointer { input in
            // Pass 1: peak and sum of squares, 8 lanes at a time, float blocks summed as Double.
            guard let base = input.baseAddress else { return }
            let raw = UnsafeRawPointer(base)
            var start = 0
            while start < input.count {
                let end = min(start + 4096, input.count)
                var squares = SIMD8<Float>()
                var peaks = SIMD8<Float>()
                var index = start
                while index + 8 <= end {
                    let v = raw.loadUnaligned(fromByteOffset: index * 4, as: SIMD8<Float>.self)
                    squares += v * v
                    let magnitude = v.replacing(with: -v, where: v .< 0)
                    peaks.replace(with: magnitude, where: magnitude .> peaks)
                    index += 8
                }
                var partial = squares.sum()
                var blockPeak = peaks.max()
                while index < end {
                    let x = input[index]
                    partial += x * x
                    blockPeak = max(blockPeak, abs(x))
                    index += 1
                }
                sum += Double(partial)
                chunkPeak = max(chunkPeak, blockPeak)
                start = end
            }
            // Pass 2, only when something reaches full scale: flat-top runs per channel.
            let threshold = SignalLevels.clipThreshold
            let minimumRun = SignalLevels.clipRunLength
            let channels = self.channels
            if chunkPeak >= threshold {
                clippedSamples += countFlatTops(input, channels: channels, minimumRun: minimumRun) {
                    abs($0) >= threshold
                }
            } else if chunkPeak > 0 || !input.isEmpty {
                for channel in 0..<channels { runs[channel] = 0 }
            }
        }
        peak = max(peak, chunkPeak)
        sumOfSquares += sum
        sampleCount += samples.count
    }

    /// Adds interleaved 16-bit samples (whole frames), read as `sample / 32768`: the same
    /// statistics as converting them to floats and calling ``add(_:)-([Float])``, in one pass
    /// with no float buffer (what `proofkit check` and `trim`'s read-back run on).
    public mutating func add(int16 samples: ArraySlice<Int16>) {
        var chunkPeak: Int32 = 0
        var sum: Double = 0
        samples.withUnsafeBufferPointer { input in
            guard input.baseAddress != nil else { return }
            // Exact: the squares are summed as integers (in C, with the CPU's 16-bit
            // multiply-add), and no float buffer or second pass is needed.
            let measured = PCM16Statistics.measure(input)
            sum = Double(measured.sumOfSquares)
            let highest = measured.highest
            let lowest = measured.lowest
            chunkPeak = max(Int32(highest), -Int32(lowest))
            // Flat tops, only when something reaches the clip threshold (32766 of 32768).
            let channels = self.channels
            if chunkPeak >= 32766 {
                clippedSamples += countFlatTops(input, channels: channels, minimumRun: SignalLevels.clipRunLength) {
                    abs(Int32($0)) >= 32766
                }
            } else if !input.isEmpty {
                for channel in 0..<channels { runs[channel] = 0 }
            }
        }
        peak = max(peak, Float(chunkPeak) / 32768)
        sumOfSquares += sum / (32768.0 * 32768.0)  // exact: a power of two
        sampleCount += samples.count
    }

    /// Counts the samples in runs of at least `minimumRun` consecutive samples of one channel
    /// that are `atRail`, carrying each channel's open run across chunks in ``runs``.
    private mutating func countFlatTops<Sample>(
        _ input: UnsafeBufferPointer<Sample>, channels: Int, minimumRun: Int, atRail: (Sample) -> Bool
    ) -> Int {
        var clipped = 0
        runs.withUnsafeMutableBufferPointer { runs in
            var channel = 0
            for x in input {
                if atRail(x) {
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

extension SignalMath {
    /// Converts 16-bit samples to floats, `s / 32768` (exact; what libsndfile gives when it
    /// reads 16-bit PCM as float), into the start of `buffer`, which must hold
    /// `samples.count` (traps otherwise). A plain loop that the compiler vectorises.
    public static func convert(_ samples: ArraySlice<Int16>, into buffer: inout [Float]) {
        precondition(buffer.count >= samples.count, "buffer too small")
        samples.withUnsafeBufferPointer { input in
            buffer.withUnsafeMutableBufferPointer { output in
                for index in 0..<input.count { output[index] = Float(input[index]) * (1.0 / 32768) }
            }
        }
    }
}
