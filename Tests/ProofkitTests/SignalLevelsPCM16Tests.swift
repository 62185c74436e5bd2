import AudioDSP
import Foundation
import Proofkit
import ProofkitCore
import TestSupport
import Testing

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
            viaFloat.add(samples[start..<end].map { Float($0) / 32768 })
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
