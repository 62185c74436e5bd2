import Foundation
import Proofkit
import ProofkitCore
import TestSupport
import Testing

/// The 16-bit fast paths (trim's pass-through, check's own conversion) must give exactly what
/// the float paths give: they exist for speed only.
@Suite("16-bit fast paths: the same results as the float paths", .offThePool)
struct TrimPassThroughTests {
    @Test(
        "16-bit input passes through to the same samples as the float path (cut, fade, --start)",
        arguments: [0.0, 1.25])
    func passThroughEqualsFloatPath(start: Double) throws {
        let fixture = try TrimFixture(seconds: 4, rate: 8000, channels: 2)
        defer { fixture.remove() }
        var fast = AlarmSound.TrimOptions.short
        fast.startSeconds = start
        let fastOutput = fixture.folder + "/fast.caf"
        let fastResult = try AlarmSound.trim(input: fixture.input, output: fastOutput, options: fast)

        // --trim-silence at -120 dBFS takes the float path and, on this input (noise from the
        // first frame), drops nothing.
        var slow = fast
        slow.trimsLeadingSilence = true
        slow.silenceThresholdDBFS = -120
        let slowOutput = fixture.folder + "/slow.caf"
        let slowResult = try AlarmSound.trim(input: fixture.input, output: slowOutput, options: slow)
        let startFrames = Int((start * 8000).rounded())
        #expect(slowResult.skippedInputFrames == startFrames)
        #expect(fastResult.skippedInputFrames == startFrames)

        let fastSamples = try AudioTestTools.soxInt16(fastOutput)
        let slowSamples = try AudioTestTools.soxInt16(slowOutput)
        #expect(fastSamples.count == 2 * 8000 * 2)
        #expect(fastSamples == slowSamples)
        #expect(fastResult.wasCut && slowResult.wasCut && fastResult.fadeFrames == slowResult.fadeFrames)
        #expect(fastResult.check.levels == slowResult.check.levels)
        // Before the fade, the input's own samples, bit for bit.
        let unfaded = (2 * 8000 - fastResult.fadeFrames) * 2
        #expect(
            Array(fastSamples[0..<unfaded]) == Array(fixture.samples[(startFrames * 2)..<(startFrames * 2 + unfaded)]))
    }

    @Test("a 16-bit input shorter than the cut is copied whole, unchanged")
    func shortInputIsCopied() throws {
        let fixture = try TrimFixture(seconds: 3.3, rate: 8000, channels: 1)
        defer { fixture.remove() }
        let output = fixture.folder + "/out.caf"
        let result = try AlarmSound.trim(input: fixture.input, output: output)
        #expect(!result.wasCut && result.fadeFrames == 0)
        #expect(try AudioTestTools.soxInt16(output) == fixture.samples)
    }

    @Test("check gives the same levels for 16-bit PCM (read as 16-bit) and the same samples as float WAV")
    func checkLevelsMatchFloatPath() throws {
        try withTemporaryFolder { folder in
            // A loud tone with flat tops at both full-scale rails (clipping), then quiet noise.
            let rate = 22050
            var samples: [Float] = []
            for index in 0..<(rate * 2) {
                let x = 1.3 * sin(2 * Double.pi * 441 * Double(index) / Double(rate))
                let clipped = min(32767, max(-32768, (x * 32768).rounded()))
                samples.append(Float(clipped) / 32768)
            }
            samples += SyntheticAudio.noise(amplitude: 0.01, frames: rate).map { ($0 * 32768).rounded() / 32768 }
            let pcm16 = folder + "/pcm16.wav"
            let float32 = folder + "/float.wav"
            try AudioTestTools.writeWithSox(
                samples, channels: 1, sampleRate: rate, to: pcm16, soxOutputOptions: ["-D", "-b", "16"])
            try AudioTestTools.require("sox", [pcm16, "-e", "floating-point", "-b", "32", float32])
            let a = try AlarmSound.check(path: pcm16)
            let b = try AlarmSound.check(path: float32)
            #expect(a.format.isLinearPCM16 && !b.format.isLinearPCM16)
            #expect(a.decodedFrames == b.decodedFrames)
            // The same peak, clipping and count exactly; the 16-bit path sums the squares
            // in its own order, so the two RMS values may differ by float rounding (~1e-7 dB) only.
            #expect(a.levels.peak == b.levels.peak)
            #expect(a.levels.clippedSamples == b.levels.clippedSamples)
            #expect(a.levels.sampleCount == b.levels.sampleCount)
            #expect(isApproximatelyEqual(a.levels.rmsDBFS, b.levels.rmsDBFS, absoluteTolerance: 1e-5))
            #expect(a.levels.clippedSamples > 100)
            #expect(a.levels.peak == 1)
        }
    }
}
