import AudioDSP
import Foundation
import TestSupport
import Testing

// Moved from Tests/ProofkitTests/SignalMathTests.swift with the code (AudioDSP engine).

@Suite("SignalMath: fades, mixing, silence", .offThePool)
struct SignalMathTests {
    @Test("the fade-out falls monotonically to exactly 0 at the last frame")
    func fade() {
        var samples = [Float](repeating: 1, count: 2 * 100)
        SignalMath.applyFadeOut(&samples, channels: 2)
        #expect(samples[198] == 0 && samples[199] == 0)
        #expect(samples[0] > 0.999)
        for i in stride(from: 2, to: 200, by: 2) { #expect(samples[i] <= samples[i - 2]) }
    }

    @Test("mono is the mean of the channels")
    func mono() {
        #expect(SignalMath.mixToMono([1, 0, 0.5, 0.5, -1, 1], channels: 2) == [0.5, 0.5, 0])
    }

    @Test("the first loud frame is found across channels")
    func firstLoud() {
        let samples: [Float] = [0, 0.001, 0, 0, 0.002, 0.5, 0, 0]
        #expect(SignalMath.firstFrame(atOrAbove: 0.1, in: samples, channels: 2) == 2)
        #expect(SignalMath.firstFrame(atOrAbove: 0.9, in: samples, channels: 2) == nil)
    }
}

@Suite("SincResampler against the ideal signal and against sox", .offThePool)
struct SincResamplerTests {
    /// Resamples in uneven chunks, to exercise streaming.
    func resample(_ input: [Float], channels: Int, from: Int, to: Int) -> [Float] {
        var resampler = SincResampler(inputRate: from, outputRate: to, channels: channels)
        var out: [Float] = []
        var index = 0
        var size = 777
        while index < input.count / channels {
            let n = min(size, input.count / channels - index)
            out += resampler.process(Array(input[(index * channels)..<((index + n) * channels)]))
            index += n
            size = size * 3 % 5000 + 1
        }
        return out + resampler.finish()
    }

    func snr(_ signal: [Float], _ reference: [Float], skip: Int) -> Double {
        let range = skip..<(min(signal.count, reference.count) - skip)
        var err = 0.0
        var ref = 0.0
        for i in range {
            err += Double(signal[i] - reference[i]) * Double(signal[i] - reference[i])
            ref += Double(reference[i]) * Double(reference[i])
        }
        return 10 * log10(ref / err)
    }

    @Test(
        "44.1 to 48 kHz and back, and to 16 kHz: a sine comes out as the ideal sine (SNR > 90 dB) with the exact length",
        arguments: [
            (44100, 48000, 1000.0), (48000, 44100, 5000.0), (8000, 44100, 440.0), (22050, 16000, 3000.0),
            (44100, 16000, 3000.0), (48000, 16000, 5000.0),
            // 16 000 phases: too many to keep, so each output frame's weights are computed as it comes.
            (44101, 16000, 1000.0),
        ])
    func idealSine(from: Int, to: Int, frequency: Double) {
        let frames = from / 2
        let input = SyntheticAudio.sine(frequency: frequency, amplitude: 0.5, sampleRate: from, frames: frames)
        let output = resample(input, channels: 1, from: from, to: to)
        #expect(output.count == SincResampler.outputFrameCount(inputFrames: frames, inputRate: from, outputRate: to))
        #expect(output.count == (frames * to + from - 1) / from)
        let ideal = SyntheticAudio.sine(frequency: frequency, amplitude: 0.5, sampleRate: to, frames: output.count)
        #expect(snr(output, ideal, skip: to / 50) > 90)
    }

    @Test("the output does not depend on how the input is cut: all at once (several blocks) or in uneven chunks")
    func chunking() {
        let input = SyntheticAudio.noise(amplitude: 0.3, frames: 2 * 44100 * 2)  // 2 s of stereo
        var whole = SincResampler(inputRate: 44100, outputRate: 16000, channels: 2)
        let once = whole.process(input) + whole.finish()
        #expect(once.count == 2 * 32000)
        #expect(once == resample(input, channels: 2, from: 44100, to: 16000))
    }

    @Test("downsampling removes what the new rate cannot hold (a 6 kHz tone into 8 kHz is gone)")
    func antiAliasing() {
        let input = SyntheticAudio.sine(frequency: 6000, amplitude: 0.5, sampleRate: 48000, frames: 24000)
        let output = resample(input, channels: 1, from: 48000, to: 8000)
        let kept = output[400..<(output.count - 400)]
        let meanSquare = kept.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(kept.count)
        #expect(10 * log10(meanSquare) < -90)
    }

    @Test(
        "stereo noise resampled 44.1 -> 48 kHz agrees with sox's very-high-quality resampler",
        .enabled(if: TestEnvironment.hasTool("sox")))
    func againstSox() throws {
        try withTemporaryFolder { folder in
            // Band-limited content both resamplers keep: a chord plus noise low-passed by sox at 16 kHz.
            let frames = 44100
            let chord = zip(
                SyntheticAudio.sine(frequency: 440, amplitude: 0.3, sampleRate: 44100, frames: frames),
                SyntheticAudio.sine(frequency: 3520, amplitude: 0.2, sampleRate: 44100, frames: frames)
            ).map { $0 + $1 }
            let noise = SyntheticAudio.noise(amplitude: 0.3, frames: frames)
            let source = folder + "/in.wav"
            try AudioTestTools.writeWithSox(
                SyntheticAudio.interleave([chord, noise]), channels: 2, sampleRate: 44100,
                to: source, soxOutputOptions: ["-e", "floating-point", "-b", "32"])
            let filtered = folder + "/lp.wav"
            try AudioTestTools.require("sox", [source, "-e", "floating-point", "-b", "32", filtered, "sinc", "-16000"])
            let input = try AudioTestTools.soxSamples(filtered)
            let ours = resample(input, channels: 2, from: 44100, to: 48000)
            let soxOut = folder + "/sox48.wav"
            try AudioTestTools.require(
                "sox", [filtered, "-e", "floating-point", "-b", "32", soxOut, "rate", "-v", "48000"])
            let theirs = try AudioTestTools.soxSamples(soxOut)
            #expect(ours.count == theirs.count)
            #expect(snr(ours, theirs, skip: 4800) > 60)
        }
    }
}
