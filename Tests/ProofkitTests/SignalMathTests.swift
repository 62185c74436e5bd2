import AudioDSP
import Foundation
import Proofkit
import ProofkitCore
import TestSupport
import Testing

@Suite("SignalLevels: peak, RMS and clipping")
struct SignalLevelsTests {
    @Test("a full-scale sine has RMS -3.01 dBFS and a peak of 0 dBFS, and is not clipping")
    func sine() {
        var levels = SignalLevels(channels: 1)
        levels.add(SyntheticAudio.sine(frequency: 997, amplitude: 1, sampleRate: 48000, frames: 48000))
        #expect(isApproximatelyEqual(levels.rmsDBFS, -3.0103, absoluteTolerance: 0.01))
        #expect(isApproximatelyEqual(levels.peakDBFS, 0, absoluteTolerance: 0.01))
        #expect(levels.clippedSamples == 0)
    }

    @Test("silence is -infinity; a -40 dBFS tone reads -40 dBFS peak")
    func quiet() {
        var silent = SignalLevels(channels: 2)
        silent.add([Float](repeating: 0, count: 1000))
        #expect(silent.peakDBFS == -.infinity && silent.rmsDBFS == -.infinity)
        var tone = SignalLevels(channels: 1)
        tone.add(SyntheticAudio.sine(frequency: 250, amplitude: 0.01, sampleRate: 8000, frames: 8000))
        #expect(isApproximatelyEqual(tone.peakDBFS, -40, absoluteTolerance: 0.01))
    }

    @Test("clipping counts flat-top runs of 3+ samples per channel, across chunk boundaries")
    func clipping() {
        // A sine driven 4x into hard clipping: count the flat tops independently here.
        let driven = SyntheticAudio.sine(frequency: 100, amplitude: 4, sampleRate: 8000, frames: 8000).map {
            min(1, max(-1, $0))
        }
        var expected = 0
        var run = 0
        for x in driven + [0] {
            if abs(x) >= 32766.0 / 32768.0 {
                run += 1
            } else {
                if run >= 3 { expected += run }
                run = 0
            }
        }
        let stereo = SyntheticAudio.interleave([driven, [Float](repeating: 0.1, count: driven.count)])
        var levels = SignalLevels(channels: 2)
        levels.add(Array(stereo[0..<3000]))
        levels.add(Array(stereo[3000...]))
        #expect(expected > 1000)
        #expect(levels.clippedSamples == expected)
        #expect(isApproximatelyEqual(levels.clippedFraction, Double(expected) / Double(stereo.count)))
    }
}

@Suite("SignalMath.convert: 16-bit to float")
struct SignalMathConvertTests {
    @Test("every 16-bit value becomes exactly s / 32768 (libsndfile's scale)")
    func exact() {
        let all = (Int(Int16.min)...Int(Int16.max)).map { Int16($0) }
        var floats = [Float](repeating: .nan, count: all.count + 3)
        SignalMath.convert(all[...], into: &floats)
        let wrong = all.indices.filter { floats[$0] != Float(all[$0]) / 32768 }
        #expect(wrong.isEmpty, "\(wrong.prefix(5).map { all[$0] })")
        #expect(floats[all.count].isNaN)  // nothing written past the input
        #expect(floats[0] == -1 && floats[all.count - 1] == 32767.0 / 32768)
    }
}

@Suite("SignalLevels.add(int16:): the 16-bit path measures what the float path measures")
struct SignalLevelsInt16Tests {
    /// Noisy stereo with clipped flat tops, -32768 and a few full-scale singles, fed in uneven chunks.
    static func clippedStereo() -> [Int16] {
        var generator = SystemRandomNumberGenerator()
        var samples = (0..<(48000 * 2 + 6)).map { _ in Int16.random(in: -20000...20000, using: &generator) }
        for start in stride(from: 1000, to: 90000, by: 7919) {
            for k in 0..<5 { samples[start + 2 * k] = k.isMultiple(of: 2) ? 32767 : 32766 }  // one channel's flat top
        }
        samples[333] = -32768
        samples[4444] = 32767  // a single crest: not clipping
        return samples
    }

    @Test("peak, RMS, clipped samples and counts agree, chunk boundaries included", arguments: [1, 7, 4096, 100_000])
    func agree(chunkFrames: Int) {
        let samples = Self.clippedStereo()
        var viaFloat = SignalLevels(channels: 2)
        var viaInt16 = SignalLevels(channels: 2)
        var start = 0
        while start < samples.count {
            let end = min(samples.count, start + chunkFrames * 2)
            viaInt16.add(int16: samples[start..<end])
            var floats = [Float](repeating: 0, count: end - start)
            SignalMath.convert(samples[start..<end], into: &floats)
            viaFloat.add(floats)
            start = end
        }
        #expect(viaInt16.peak == viaFloat.peak && viaInt16.peak == 1)
        #expect(viaInt16.sampleCount == samples.count)
        #expect(viaInt16.clippedSamples == viaFloat.clippedSamples)
        #expect(viaInt16.clippedSamples >= 11 * 5)  // every planted flat top, the single crest not
        #expect(isApproximatelyEqual(viaInt16.rmsDBFS, viaFloat.rmsDBFS, absoluteTolerance: 1e-4))
        let exactRMS =
            (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot() / 32768
        #expect(isApproximatelyEqual(viaInt16.rmsDBFS, 20 * log10(exactRMS), absoluteTolerance: 1e-5))
    }
}
