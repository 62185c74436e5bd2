import Foundation

/// Mono audio for engine tests: samples in -1...1 and their rate. Test-only; the engines' tests
/// must not depend on the `AudioIO` adapter, so this reads WAV itself.
public struct TestAudio: Sendable {
    /// Samples in -1...1 (the first channel, or the mean of the channels).
    public var samples: [Float]
    /// Samples per second, in Hz.
    public var sampleRate: Int

    /// Creates audio from samples.
    public init(samples: [Float], sampleRate: Int) {
        self.samples = samples
        self.sampleRate = sampleRate
    }

    /// Duration in seconds.
    public var seconds: Double { Double(samples.count) / Double(sampleRate) }

    /// Reads a RIFF/WAVE file with 16-bit PCM (format tag 1, or 0xFFFE with a PCM sub-format),
    /// mixing channels to mono. A tiny test-only reader: it walks the chunks, needs `fmt ` before
    /// `data`, and refuses anything else.
    /// - Throws: `TestAudioError` when the file is missing or not 16-bit PCM WAV.
    public static func readWAV(_ path: String) throws -> TestAudio {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TestAudioError("cannot read \(path)")
        }
        let bytes = [UInt8](data)
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        func tag(_ at: Int) -> String { String(decoding: bytes[at..<at + 4], as: UTF8.self) }
        guard bytes.count >= 12, tag(0) == "RIFF", tag(8) == "WAVE" else {
            throw TestAudioError("\(path) is not a RIFF/WAVE file")
        }
        var offset = 12
        var channels = 0
        var rate = 0
        var bits = 0
        while offset + 8 <= bytes.count {
            let id = tag(offset)
            let size = u32(offset + 4)
            let body = offset + 8
            if id == "fmt " {
                let format = u16(body)
                channels = u16(body + 2)
                rate = u32(body + 4)
                bits = u16(body + 14)
                let isPCM = format == 1 || (format == 0xFFFE && size >= 26 && u16(body + 24) == 1)
                guard isPCM, bits == 16, channels >= 1 else {
                    throw TestAudioError("\(path): only 16-bit PCM WAV is supported")
                }
            } else if id == "data" {
                guard channels > 0 else { throw TestAudioError("\(path): data before fmt") }
                let end = min(bytes.count, body + size)
                let frameCount = (end - body) / (2 * channels)
                var samples = [Float](repeating: 0, count: frameCount)
                for frame in 0..<frameCount {
                    var total: Float = 0
                    for channel in 0..<channels {
                        let at = body + (frame * channels + channel) * 2
                        total += Float(Int16(bitPattern: UInt16(u16(at)))) / 32768
                    }
                    samples[frame] = total / Float(channels)
                }
                return TestAudio(samples: samples, sampleRate: rate)
            }
            offset = body + size + (size & 1)
        }
        throw TestAudioError("\(path): no data chunk")
    }

    /// Writes 16-bit PCM mono samples as a RIFF/WAVE file (44-byte header).
    /// - Parameters:
    ///   - samples: the PCM samples.
    ///   - rate: the sample rate, in Hz.
    ///   - path: where to write (replaced if it exists).
    /// - Throws: what `Data.write(to:)` throws.
    public static func writeWAV(_ samples: [Int16], rate: Int, to path: String) throws {
        var data = Data()
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        data.append(contentsOf: Array("RIFF".utf8))
        append(UInt32(36 + samples.count * 2))
        data.append(contentsOf: Array("WAVEfmt ".utf8))
        append(UInt32(16))
        append(UInt16(1))
        append(UInt16(1))
        append(UInt32(rate))
        append(UInt32(rate * 2))
        append(UInt16(2))
        append(UInt16(16))
        data.append(contentsOf: Array("data".utf8))
        append(UInt32(samples.count * 2))
        for sample in samples { append(sample) }
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// Writes this audio as a 16-bit PCM mono WAV file (samples clipped to -1...1).
    /// - Parameter path: where to write (replaced if it exists).
    /// - Throws: what `Data.write(to:)` throws.
    public func writeWAV(to path: String) throws {
        let pcm = samples.map { Int16((max(-1, min(1, $0)) * 32767).rounded()) }
        try Self.writeWAV(pcm, rate: sampleRate, to: path)
    }

    /// Reads a fixture WAV from `Tests/TestSupport/Fixtures`.
    public static func fixture(_ name: String) throws -> TestAudio {
        try readWAV(TestEnvironment.fixture(name))
    }

    /// A real spoken word, 0.52 s (the Quran fixture's first, 1.36-1.88 s), at -30 dBFS RMS: voiced,
    /// harmonic and speech-like by every per-run cue, as a clock's pitched ring can be.
    public static func spokenWord() throws -> TestAudio {
        let quran = try fixture("speech_ar_quran_16k.wav")
        return TestAudio(samples: Array(quran.samples[21_760..<30_080]), sampleRate: 16_000).scaled(toRMS: -30)
    }

    /// This audio with `other` mixed in at each of `onsets` (seconds).
    public func mixing(_ other: TestAudio, at onsets: [Double]) -> TestAudio {
        onsets.reduce(self) { $0.mixing(other, at: $1) }
    }

    /// The RMS level of all samples, in dBFS (`20 log10 rms`, as `sox stats` "RMS lev dB").
    public var rmsDecibels: Double { Self.rmsDecibels(samples[...]) }

    /// The RMS level of a slice, in dBFS.
    public static func rmsDecibels(_ samples: ArraySlice<Float>) -> Double {
        guard !samples.isEmpty else { return -200 }
        var total = 0.0
        for x in samples { total += Double(x) * Double(x) }
        return 10 * log10(max(total / Double(samples.count), 1e-20))
    }

    /// A copy scaled so that its RMS level is `decibels` dBFS.
    public func scaled(toRMS decibels: Double) -> TestAudio {
        let gain = Float(pow(10, (decibels - rmsDecibels) / 20))
        return TestAudio(samples: samples.map { $0 * gain }, sampleRate: sampleRate)
    }

    /// A copy scaled by `decibels` dB.
    public func amplified(by decibels: Double) -> TestAudio {
        let gain = Float(pow(10, decibels / 20))
        return TestAudio(samples: samples.map { $0 * gain }, sampleRate: sampleRate)
    }

    /// This audio repeated (with a 20 ms crossfade at each seam) to exactly `seconds`.
    public func looped(toSeconds seconds: Double) -> TestAudio {
        let count = Int(seconds * Double(sampleRate))
        let fade = min(samples.count / 4, sampleRate / 50)
        var out = [Float]()
        out.reserveCapacity(count + samples.count)
        while out.count < count {
            if out.isEmpty || fade == 0 {
                out.append(contentsOf: samples)
            } else {
                let start = out.count - fade
                for i in 0..<fade {
                    let t = Float(i) / Float(fade)
                    out[start + i] = out[start + i] * (1 - t) + samples[i] * t
                }
                out.append(contentsOf: samples[fade...])
            }
        }
        return TestAudio(samples: Array(out.prefix(count)), sampleRate: sampleRate)
    }

    /// A copy with `other` added in, starting at `offset` seconds (`other` must have the same rate).
    public func mixing(_ other: TestAudio, at offset: Double) -> TestAudio {
        precondition(other.sampleRate == sampleRate, "mix needs equal sample rates")
        var out = samples
        let start = Int(offset * Double(sampleRate))
        for (i, x) in other.samples.enumerated() where start + i < out.count {
            out[start + i] += x
        }
        return TestAudio(samples: out, sampleRate: sampleRate)
    }

    /// The stretches where this (clean) audio carries sound: 20 ms frames within `range` dB of the
    /// loudest frame, gaps under `bridging` seconds bridged, runs under 60 ms dropped. This is the
    /// reference "known speech" of a clean recording, worked out on the clean signal alone.
    public func activeRegions(range: Double = 30, bridging: Double = 0.3) -> [(start: Double, end: Double)] {
        activeRegions(above: frameLevels().max().map { $0 - range } ?? 0, bridging: bridging)
    }

    /// The 20 ms frame levels, in dBFS.
    public func frameLevels() -> [Double] {
        let frame = sampleRate / 50
        var levels: [Double] = []
        var at = 0
        while frame > 0, at + frame <= samples.count {
            levels.append(Self.rmsDecibels(samples[at..<at + frame]))
            at += frame
        }
        return levels
    }

    /// The stretches where 20 ms frames of this (clean) audio are above `threshold` dBFS, gaps
    /// under `bridging` seconds bridged, runs under 60 ms dropped. With `threshold` at a noise's
    /// level, this is the speech that can be heard over that noise.
    public func activeRegions(above threshold: Double, bridging: Double = 0.3) -> [(start: Double, end: Double)] {
        let levels = frameLevels()
        var regions: [(start: Double, end: Double)] = []
        for (i, level) in levels.enumerated() where level >= threshold {
            let start = Double(i) * 0.02
            let end = start + 0.02
            if let last = regions.last, start - last.end <= bridging {
                regions[regions.count - 1].end = end
            } else {
                regions.append((start, end))
            }
        }
        return regions.filter { $0.end - $0.start >= 0.06 }
    }

    /// Total seconds of ``activeRegions(range:bridging:)``.
    public func activeSeconds(range: Double = 30, bridging: Double = 0.3) -> Double {
        activeRegions(range: range, bridging: bridging).reduce(0) { $0 + $1.end - $1.start }
    }

    /// Chunks of `size` samples (the last may be shorter), as a live microphone delivers them.
    public func chunks(of size: Int) -> [[Float]] {
        stride(from: 0, to: samples.count, by: size).map {
            Array(samples[$0..<min(samples.count, $0 + size)])
        }
    }
}

/// A failure reading test audio.
public struct TestAudioError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// SplitMix64 (Steele, Lea and Flood 2014): a small, fast, seedable generator, so every test that
/// draws random values draws the same ones on every machine and every run.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in -1...1.
    public mutating func uniform() -> Float { Float.random(in: -1...1, using: &self) }
}

/// Deterministic synthetic sounds for the gate's tests (seeded, no randomness from the system).
public enum SyntheticAudio {
    /// The tests' seeded generator (``SplitMix64``).
    public typealias Generator = SplitMix64

    /// A ticking clock: a sharp decaying 3 kHz + 1.2 kHz click every `interval` seconds over quiet
    /// room noise at `roomDecibels` dBFS; each tick peaks near `tickPeak` and dies in ~15 ms.
    public static func clockTicks(
        seconds: Double, sampleRate: Int = 16_000, interval: Double = 1.0, tickPeak: Float = 0.3,
        roomDecibels: Double = -55, seed: UInt64 = 1
    ) -> TestAudio {
        var rng = Generator(seed: seed)
        let count = Int(seconds * Double(sampleRate))
        let roomGain = Float(pow(10, roomDecibels / 20) * 3.0.squareRoot())
        var out = (0..<count).map { _ in rng.uniform() * roomGain }
        let rate = Double(sampleRate)
        var tick = 0.25
        while tick < seconds {
            let start = Int(tick * rate)
            for i in 0..<Int(0.04 * rate) where start + i < count {
                let t = Double(i) / rate
                let envelope = exp(-t / 0.004)
                let tone = 0.6 * sin(2 * .pi * 3000 * t) + 0.4 * sin(2 * .pi * 1200 * t)
                out[start + i] += tickPeak * Float(envelope * tone) + tickPeak * 0.3 * Float(envelope) * rng.uniform()
            }
            tick += interval
        }
        return TestAudio(samples: out, sampleRate: sampleRate)
    }

    /// Street-like noise heard through a window: brown-ish rumble whose level swells by about
    /// `swellDecibels` as cars pass (each pass ~4 s, rising and falling smoothly), plus a steady
    /// hiss, around `levelDecibels` dBFS.
    public static func street(
        seconds: Double, sampleRate: Int = 16_000, levelDecibels: Double = -45,
        swellDecibels: Double = 12, seed: UInt64 = 2
    ) -> TestAudio {
        var rng = Generator(seed: seed)
        let count = Int(seconds * Double(sampleRate))
        var out = [Float](repeating: 0, count: count)
        var brown: Float = 0
        var lowPass: Float = 0
        let passes: [Double] = stride(from: 1.5, to: seconds, by: 5.5).map { $0 }
        for i in 0..<count {
            let t = Double(i) / Double(sampleRate)
            brown = 0.995 * brown + 0.05 * rng.uniform()
            lowPass += 0.2 * (rng.uniform() - lowPass)
            var swell = 0.0
            for centre in passes {
                let x = (t - centre) / 1.2
                swell = max(swell, exp(-x * x))
            }
            let gain = Float(pow(10, swell * swellDecibels / 20))
            out[i] = gain * (brown * 0.7 + lowPass * 0.3) + 0.05 * rng.uniform()
        }
        return TestAudio(samples: out, sampleRate: sampleRate).scaled(toRMS: levelDecibels)
    }

    /// Running water as a synthesiser makes it: bubbles (damped sinusoids at their Minnaert
    /// resonance, 150-1,500 Hz log-uniform, each rising by up to 20 % as it rings for 8-40 ms) at
    /// about `bubblesPerSecond` at random times, over a band-passed rush (low-passed white noise,
    /// 12 dB below the bubbles), the whole slowly swelling by `swellDecibels` at 0.3-1.5 Hz, at
    /// `levelDecibels` dBFS RMS. Pitched, syllable-like in its swells, and not a voice.
    public static func bubblingWater(
        seconds: Double, sampleRate: Int = 16_000, bubblesPerSecond: Double = 30,
        swellDecibels: Double = 8, levelDecibels: Double = -36, seed: UInt64 = 4
    ) -> TestAudio {
        var rng = Generator(seed: seed)
        let rate = Double(sampleRate)
        let count = Int(seconds * rate)
        var out = [Float](repeating: 0, count: count)
        var time = 0.0
        while true {
            time += -log(max(1e-9, Double(rng.uniform()) * 0.5 + 0.5)) / bubblesPerSecond
            guard time < seconds else { break }
            let frequency = 150 * pow(10, Double(rng.uniform() * 0.5 + 0.5))  // 150-1,500 Hz
            let decay = 0.008 + 0.032 * Double(rng.uniform() * 0.5 + 0.5)
            let rise = 0.2 * Double(rng.uniform() * 0.5 + 0.5)
            let amplitude = Float(0.3 + 0.7 * Double(rng.uniform() * 0.5 + 0.5))
            let start = Int(time * rate)
            var phase = 0.0
            for i in 0..<Int(5 * decay * rate) where start + i < count {
                let t = Double(i) / rate
                phase += 2 * .pi * frequency * (1 + rise * t / (5 * decay)) / rate
                out[start + i] += amplitude * Float(exp(-t / decay) * sin(phase))
            }
        }
        let bubbles = TestAudio(samples: out, sampleRate: sampleRate)
        let bubbleLevel = TestAudio.rmsDecibels(out[...])
        var lowPass: Float = 0
        let rush = (0..<count).map { _ -> Float in
            lowPass += 0.3 * (rng.uniform() - lowPass)
            return lowPass
        }
        let mixed = bubbles.mixing(
            TestAudio(samples: rush, sampleRate: sampleRate).scaled(toRMS: bubbleLevel - 12), at: 0)
        return swelled(mixed, rateHz: 0.3...1.5, decibels: swellDecibels, seed: seed &+ 1).scaled(toRMS: levelDecibels)
    }

    /// Broadband noise with a slow swell, as a shower, a tap, rain on a window, wind or a hiss
    /// sounds: white noise through a one-pole low-pass (`smoothing`, 0...1: 1 leaves it white,
    /// 0.05 is a dull rush), its level swinging by `swellDecibels` at `rateHz` (a sinusoidal
    /// swell in dB, plus a random wander), at `levelDecibels` dBFS RMS.
    public static func swellingNoise(
        seconds: Double, sampleRate: Int = 16_000, smoothing: Float = 0.3, rateHz: Double = 2,
        swellDecibels: Double = 12, levelDecibels: Double = -36, seed: UInt64 = 5
    ) -> TestAudio {
        var rng = Generator(seed: seed)
        let count = Int(seconds * Double(sampleRate))
        var lowPass: Float = 0
        let rate = Double(sampleRate)
        var out = [Float](repeating: 0, count: count)
        for i in 0..<count {
            lowPass += smoothing * (rng.uniform() - lowPass)
            let t = Double(i) / rate
            let swell = 0.5 + 0.5 * sin(2 * .pi * rateHz * t)
            out[i] = lowPass * Float(pow(10, swell * swellDecibels / 20))
        }
        return TestAudio(samples: out, sampleRate: sampleRate).scaled(toRMS: levelDecibels)
    }

    /// `audio` whose level wanders by up to `decibels` (a sum of two sinusoids in dB at random
    /// rates within `rateHz`).
    static func swelled(_ audio: TestAudio, rateHz: ClosedRange<Double>, decibels: Double, seed: UInt64) -> TestAudio {
        var rng = Generator(seed: seed)
        let span = rateHz.upperBound - rateHz.lowerBound
        let rates = (0..<2).map { _ in rateHz.lowerBound + span * Double(rng.uniform() * 0.5 + 0.5) }
        let rate = Double(audio.sampleRate)
        let samples = audio.samples.enumerated().map { i, x -> Float in
            let t = Double(i) / rate
            let swell = 0.5 + 0.25 * sin(2 * .pi * rates[0] * t) + 0.25 * sin(2 * .pi * rates[1] * t + 1)
            return x * Float(pow(10, swell * decibels / 20))
        }
        return TestAudio(samples: samples, sampleRate: audio.sampleRate)
    }

    /// A synthetic reading: `syllables` vowels of 120-260 ms with 80-200 ms gaps, from 0.25 s
    /// on, each a glottal pulse train (pitch gliding from about `pitch` Hz by up to ±15 %, with
    /// 1 % jitter) through three formant resonators (one of /a/, /i/, /u/, /e/, /o/), with
    /// 40 ms attack and decay. Returns the audio (peak about 0.3) and the vowels' seconds.
    public static func vowelSequence(
        syllables: Int = 12, sampleRate: Int = 16_000, pitch: Double = 120, seed: UInt64 = 6
    ) -> (audio: TestAudio, voiced: [(start: Double, end: Double)]) {
        var rng = Generator(seed: seed)
        let rate = Double(sampleRate)
        let formants: [[Double]] = [
            [730, 1090, 2440], [270, 2290, 3010], [300, 870, 2240], [530, 1840, 2480], [570, 840, 2410],
        ]
        var out: [Float] = Array(repeating: 0, count: Int(0.25 * rate))
        var voiced: [(start: Double, end: Double)] = []
        for index in 0..<syllables {
            let length = Int((0.12 + 0.14 * Double(rng.uniform() * 0.5 + 0.5)) * rate)
            let gap = Int((0.08 + 0.12 * Double(rng.uniform() * 0.5 + 0.5)) * rate)
            let glide = 0.15 * Double(rng.uniform())
            let vowel = formants[index % formants.count]
            // The glottal source: one pulse per period, low-passed (a -12 dB/octave slope).
            var source = [Double](repeating: 0, count: length)
            var next = 0.0
            while Int(next) < length {
                source[Int(next)] = 1
                let f0 = pitch * (1 + glide * next / Double(length)) * (1 + 0.01 * Double(rng.uniform()))
                next += rate / f0
            }
            var s1 = 0.0
            var s2 = 0.0
            for i in source.indices {
                s1 += 0.15 * (source[i] * 40 - s1)
                s2 += 0.15 * (s1 - s2)
                source[i] = s2
            }
            var signal = [Double](repeating: 0, count: length)
            for (k, formant) in vowel.enumerated() {
                // A two-pole resonator at the formant, 80-120 Hz wide.
                let bandwidth = 80.0 + 20 * Double(k)
                let r = exp(-.pi * bandwidth / rate)
                let a1 = 2 * r * cos(2 * .pi * formant / rate)
                let a2 = -r * r
                var y1 = 0.0
                var y2 = 0.0
                let gain = [1.0, 0.5, 0.25][k] * (1 - r)
                for i in 0..<length {
                    let y = gain * source[i] + a1 * y1 + a2 * y2
                    y2 = y1
                    y1 = y
                    signal[i] += y
                }
            }
            let ramp = Int(0.04 * rate)
            let start = Double(out.count) / rate
            for i in 0..<length {
                let envelope = min(1, Double(i) / Double(ramp), Double(length - 1 - i) / Double(ramp))
                out.append(Float(signal[i] * envelope))
            }
            voiced.append((start, start + Double(length) / rate))
            out.append(contentsOf: repeatElement(0, count: gap))
        }
        let peak = out.reduce(0) { max($0, abs($1)) }
        return (TestAudio(samples: out.map { $0 * 0.3 / max(peak, 1e-9) }, sampleRate: sampleRate), voiced)
    }

    /// White noise at `levelDecibels` dBFS RMS.
    public static func whiteNoise(
        seconds: Double, sampleRate: Int = 16_000, levelDecibels: Double, seed: UInt64 = 3
    ) -> TestAudio {
        var rng = Generator(seed: seed)
        let gain = Float(pow(10, levelDecibels / 20) * 3.0.squareRoot())
        let count = Int(seconds * Double(sampleRate))
        return TestAudio(samples: (0..<count).map { _ in rng.uniform() * gain }, sampleRate: sampleRate)
    }
}

/// Speech made by external tools for tests (espeak-ng, sox).
public enum TestTools {
    /// Arabic speech from espeak-ng, resampled by sox to 16 kHz mono 16-bit.
    /// - Throws: when a tool fails.
    public static func espeakArabic(_ text: String, speed: Int = 130) throws -> TestAudio {
        try withTemporaryFolder { folder in
            let raw = folder + "/espeak.wav"
            let wav = folder + "/speech16k.wav"
            try AudioTestTools.require("espeak-ng", ["-v", "ar", "-s", String(speed), "-w", raw, text])
            try AudioTestTools.require("sox", [raw, "-r", "16000", "-c", "1", "-b", "16", wav])
            return try TestAudio.readWAV(wav)
        }
    }
}

/// Plain signals as sample arrays (the same family as the sounds above: deterministic, seeded).
extension SyntheticAudio {
    /// A sine of `frequency` Hz at `amplitude`, `frames` long, mono.
    public static func sine(frequency: Double, amplitude: Double = 0.5, sampleRate: Int, frames: Int)
        -> [Float]
    {
        (0..<frames).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / Double(sampleRate))) }
    }

    /// Uniform white noise at `amplitude` from a fixed seed, mono (xorshift: the values the
    /// resampler and file tests were written against).
    public static func noise(amplitude: Double = 0.3, frames: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15)
        -> [Float]
    {
        var state = seed
        return (0..<frames).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Float(amplitude * (Double(state >> 11) / Double(1 << 53) * 2 - 1))
        }
    }

    /// Interleaves per-channel signals of equal length.
    public static func interleave(_ channels: [[Float]]) -> [Float] {
        guard let first = channels.first else { return [] }
        var out = [Float](repeating: 0, count: first.count * channels.count)
        for (c, channel) in channels.enumerated() {
            for (i, x) in channel.enumerated() { out[i * channels.count + c] = x }
        }
        return out
    }
}
