import AudioDSP
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
