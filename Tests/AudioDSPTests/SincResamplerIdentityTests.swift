import AudioDSP
import Foundation
import TestSupport
import Testing

/// The scalar resampler `SincResampler` was before its polyphase rewrite (commit 4841ab7), as an
/// oracle: for every output frame, its weights computed from the table, summed from the first tap
/// to the last, and the taps within the input summed in the same order (mono: then times 1 / sum
/// of the weights; several channels: each weight times 1 / sum first). Whole signals only.
enum ScalarResamplerOracle {
    static func resample(_ input: [Float], channels: Int, from inputRate: Int, to outputRate: Int) -> [Float] {
        var a = inputRate
        var b = outputRate
        while b != 0 { (a, b) = (b, a % b) }
        let (step, den) = (inputRate / a, outputRate / a)
        let scale = min(1, Double(outputRate) / Double(inputRate))
        let halfWidth = Int((32 / (scale * 0.94)).rounded(.up)) + 1
        let filterScale = scale * 0.94 * 512
        let table = makeTable()
        let tableLimit = table.count - 2
        let frames = input.count / channels
        let count = (frames * outputRate + inputRate - 1) / inputRate
        var out = [Float](repeating: 0, count: count * channels)
        var weights = [Float](repeating: 0, count: 2 * halfWidth)
        for n in 0..<count {
            let position = n * step
            let fraction = Double(position % den) / Double(den)
            let first = position / den - halfWidth + 1
            var sum: Float = 0
            for tap in 0..<(2 * halfWidth) {
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
            let norm: Float = sum != 0 ? 1 / sum : 0
            let lo = max(0, -first)
            let hi = min(2 * halfWidth, frames - first)
            guard lo < hi else { continue }
            if channels == 1 {
                var acc: Float = 0
                for tap in lo..<hi { acc += weights[tap] * input[first + tap] }
                out[n] = acc * norm
            } else {
                for tap in lo..<hi {
                    let w = weights[tap] * norm
                    for channel in 0..<channels {
                        out[n * channels + channel] += w * input[(first + tap) * channels + channel]
                    }
                }
            }
        }
        return out
    }

    /// The Kaiser-windowed sinc table: 32 zero crossings, 512 points each, beta 9.
    static func makeTable() -> [Float] {
        func besselI0(_ x: Double) -> Double {
            var (sum, term, k) = (1.0, 1.0, 1.0)
            while term > 1e-12 * sum {
                term *= (x / 2 / k) * (x / 2 / k)
                sum += term
                k += 1
            }
            return sum
        }
        return (0..<(32 * 512 + 2)).map { i in
            let x = Double(i) / 512
            guard x < 32 else { return 0 }
            let sinc = x == 0 ? 1.0 : sin(Double.pi * x) / (Double.pi * x)
            let r = x / 32
            return Float(sinc * (besselI0(9 * (1 - r * r).squareRoot()) / besselI0(9)))
        }
    }
}

@Suite("SincResampler gives the scalar resampler's samples bit for bit, on real recordings", .offThePool)
struct SincResamplerIdentityTests {
    /// At most `seconds` of a fixture decoded by ffmpeg, interleaved, and as mono (the channels' mean).
    func recording(_ name: String, channels: Int, seconds: Int, rate: Int) throws -> (stereo: [Float], mono: [Float]) {
        let all = try AudioTestTools.ffmpegSamples(TestEnvironment.fixture(name))
        let samples = Array(all.prefix(seconds * rate * channels))
        return (samples, SignalMath.mixToMono(samples, channels: channels))
    }

    /// Resamples in chunks of the given sizes (cycled), then flushes.
    func resample(_ input: [Float], channels: Int, from: Int, to: Int, chunks: [Int]) -> [Float] {
        var resampler = SincResampler(inputRate: from, outputRate: to, channels: channels)
        var out: [Float] = []
        var index = 0
        var k = 0
        while index < input.count / channels {
            let n = min(chunks[k % chunks.count], input.count / channels - index)
            out += resampler.process(Array(input[(index * channels)..<((index + n) * channels)]))
            index += n
            k += 1
        }
        return out + resampler.finish()
    }

    @Test(
        "bit-identical to the oracle, mono and stereo, in any chunking: 44.1 and 48 kHz recordings to 16 kHz, and rates whose phases are not kept",
        .enabled(if: TestEnvironment.hasTool("ffmpeg")),
        arguments: [
            // (fixture, its channels, its rate, the rate it is resampled from, to)
            ("rec_001.mp3", 2, 44100, 44100, 16000),
            ("rec_003_excerpt2s.m4a", 2, 48000, 48000, 16000),
            ("rec_007_excerpt3s.wav", 1, 44100, 44100, 16000),
            ("rec_007_excerpt3s.wav", 1, 44100, 22050, 16000),
            // 16 000 phases (44101 -> 16000) and 16 001 (44100 -> 16001): too many to keep, so each
            // output frame's weights are computed as it comes.
            ("rec_007_excerpt3s.wav", 1, 44100, 44101, 16000),
            ("rec_001.mp3", 2, 44100, 44100, 16001),
        ])
    func identical(name: String, channels: Int, fileRate: Int, from: Int, to: Int) throws {
        let (stereo, mono) = try recording(name, channels: channels, seconds: 2, rate: fileRate)
        try #require(mono.count > fileRate)
        var inputs = [(mono, 1)]
        if channels > 1 { inputs.append((stereo, channels)) }
        for (input, inputChannels) in inputs {
            let expected = ScalarResamplerOracle.resample(input, channels: inputChannels, from: from, to: to)
            #expect(expected.contains { $0 != 0 })
            var once = SincResampler(inputRate: from, outputRate: to, channels: inputChannels)
            let whole = once.process(input) + once.finish()
            #expect(whole.map(\.bitPattern) == expected.map(\.bitPattern))
            // The live path's sizes (a 20 ms period), the recording path's (8192), and uneven ones.
            for chunks in [[from / 50], [8192], [1, 777, 3, 5000, 64, 12345]] {
                let pieces = resample(input, channels: inputChannels, from: from, to: to, chunks: chunks)
                #expect(pieces.map(\.bitPattern) == expected.map(\.bitPattern), "chunks \(chunks)")
            }
        }
    }
}
