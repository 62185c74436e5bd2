import Foundation
import ProofkitCore
import TestSupport
import Testing
import VoiceGate

/// Runs the gate over `audio` in 100 ms chunks, as a microphone delivers them.
func gateResult(
    _ audio: TestAudio, configuration: VoiceGateConfiguration? = nil, chunk: Int = 1600
) throws -> VoiceGateResult {
    var gate = try VoiceActivityGate(
        configuration: configuration ?? VoiceGateConfiguration(sampleRate: audio.sampleRate))
    for piece in audio.chunks(of: chunk) { _ = gate.process(piece) }
    return gate.finish()
}

/// Seconds of `segments` that fall inside `start..<end`.
func overlap(_ segments: [VoicedSegment], _ start: Double, _ end: Double) -> Double {
    segments.reduce(0) { $0 + max(0, min($1.end, end) - max($1.start, start)) }
}

/// `audio` with its level raised by up to `decibels` around each of `centres` seconds, with a
/// Gaussian envelope of `width` seconds (a car passing: the swell lasts about 2.5 x `width`).
func swelling(_ audio: TestAudio, centres: [Double], width: Double, decibels: Double) -> TestAudio {
    var out = audio.samples
    for i in out.indices {
        let t = Double(i) / Double(audio.sampleRate)
        var swell = 0.0
        for centre in centres {
            let x = (t - centre) / width
            swell = max(swell, exp(-x * x))
        }
        out[i] *= Float(pow(10, swell * decibels / 20))
    }
    return TestAudio(samples: out, sampleRate: audio.sampleRate)
}

let noiseFixtures = ["noise_ac_16k.wav", "noise_fan_16k.wav", "noise_fridge_16k.wav", "noise_night_16k.wav"]
let speechFixtures = ["speech_en_ljspeech_16k.wav", "speech_ar_quran_16k.wav"]
/// The waking du'a (Sahih al-Bukhari 6312), for espeak-ng.
let wakingDua = "الْحَمْدُ لِلَّهِ الَّذِي أَحْيَانَا بَعْدَ مَا أَمَاتَنَا وَإِلَيْهِ النُّشُورُ"

/// A mixture: `noise` looped to `total` seconds, with `speech` at `speechLevel` dBFS inserted at
/// `offset` seconds. Returns the mixture and the reference voiced seconds: the clean speech's
/// frames that stand above the noise level (what a listener could hear), gaps < 300 ms bridged.
func mixture(
    speech: TestAudio, noise: TestAudio, noiseLevel: Double, speechLevel: Double,
    offset: Double = 4, total: Double = 20
) -> (audio: TestAudio, reference: Double, start: Double, end: Double) {
    let room = noise.looped(toSeconds: total).scaled(toRMS: noiseLevel)
    let voice = speech.scaled(toRMS: speechLevel)
    let regions = voice.activeRegions(above: noiseLevel)
    let reference = regions.reduce(0) { $0 + $1.end - $1.start }
    return (room.mixing(voice, at: offset), reference, offset, offset + voice.seconds)
}

@Suite("VoiceActivityGate: noise stays silent")
struct NoiseOnlyTests {
    @Test("real room noise alone counts (almost) no voice", arguments: noiseFixtures, [-50.0, -40.0, -30.0])
    func roomNoise(name: String, level: Double) throws {
        let noise = try TestAudio.fixture(name).looped(toSeconds: 30).scaled(toRMS: level)
        let result = try gateResult(noise)
        #expect(result.voicedSeconds <= 0.3, "\(name) at \(level) dBFS: \(result.segments)")
        // The floor settles near the noise's own level as sox measures it (within a few dB).
        #expect(abs(Double(result.finalFloorDecibels) - level) < 4, "floor \(result.finalFloorDecibels)")
    }

    @Test("a ticking clock in a quiet room is not voice", arguments: [0.1, 0.3, 0.8] as [Float])
    func clockTicks(peak: Float) throws {
        let ticks = SyntheticAudio.clockTicks(seconds: 30, interval: 1, tickPeak: peak)
        let result = try gateResult(ticks)
        #expect(result.voicedSeconds == 0, "\(result.segments)")
    }

    @Test("fast ticking (a kitchen timer, 4 per second) is not voice")
    func fastTicks() throws {
        let ticks = SyntheticAudio.clockTicks(seconds: 20, interval: 0.25, tickPeak: 0.3)
        #expect(try gateResult(ticks).voicedSeconds == 0)
    }

    @Test(
        "street-like noise with passing cars counts no voice",
        arguments: [2, 3, 4, 5] as [UInt64], [12.0, 18.0])
    func street(seed: UInt64, swell: Double) throws {
        let street = SyntheticAudio.street(seconds: 30, swellDecibels: swell, seed: seed)
        let result = try gateResult(street)
        // A car's swell is loud but smooth: it never shows the syllable cue.
        #expect(result.voicedSeconds <= 0.3, "\(result.segments)")
    }

    @Test(
        "real room noise swelling like passing cars (12-18 dB over 1.5-2.5 s) counts no voice",
        arguments: ["noise_ac_16k.wav", "noise_fan_16k.wav", "noise_fridge_16k.wav"],
        [(1.2, 12.0), (1.2, 18.0), (0.8, 18.0)])
    func realNoiseSwells(name: String, swell: (width: Double, decibels: Double)) throws {
        let room = try TestAudio.fixture(name).looped(toSeconds: 30).scaled(toRMS: -45)
        let cars = swelling(
            room, centres: Array(stride(from: 1.5, to: 30, by: 5.5)), width: swell.width, decibels: swell.decibels)
        let result = try gateResult(cars)
        #expect(result.voicedSeconds <= 0.3, "\(result.segments)")
    }

    @Test("without the syllable and voicing cues, the same passing cars pass for voice")
    func streetWithoutCue() throws {
        let street = SyntheticAudio.street(seconds: 30, swellDecibels: 18)
        let result = try gateResult(
            street, configuration: VoiceGateConfiguration(modulationDecibels: 0, minimumHarmonicity: 0))
        #expect(result.voicedSeconds >= 5, "the cues are what reject the cars: \(result.segments)")
        // Either cue alone rejects them.
        #expect(
            try gateResult(street, configuration: VoiceGateConfiguration(modulationDecibels: 0)).voicedSeconds <= 1.5)
        #expect(
            try gateResult(street, configuration: VoiceGateConfiguration(minimumHarmonicity: 0)).voicedSeconds <= 0.3)
    }

    @Test(
        "real fan or air conditioner switching on 20-30 dB above a quiet room is not voice, and the floor follows it",
        arguments: [
            ("noise_fridge_16k.wav", "noise_fan_16k.wav", -35.0),
            ("noise_fridge_16k.wav", "noise_ac_16k.wav", -35.0),
            ("noise_night_16k.wav", "noise_fan_16k.wav", -35.0),
            ("noise_fridge_16k.wav", "noise_fan_16k.wav", -25.0),
        ])
    func noiseSwitchesOn(roomName: String, fanName: String, fanLevel: Double) throws {
        let quiet = try TestAudio.fixture(roomName).looped(toSeconds: 25).scaled(toRMS: -55)
        let fan = try TestAudio.fixture(fanName).looped(toSeconds: 10).scaled(toRMS: fanLevel)
        let audio = quiet.mixing(fan, at: 5)
        var gate = try VoiceActivityGate()
        for chunk in audio.chunks(of: 1600) { _ = gate.process(chunk) }
        let result = gate.finish()
        // The step shows no syllable cue: no voice at all, not even while the floor catches up.
        #expect(result.voicedSeconds <= 0.3, "\(result.segments)")
        // The floor rose to the fan within 5 s of it starting ...
        let atFan = result.track.filter { $0.seconds > 10 && $0.seconds < 15 }
        #expect(atFan.allSatisfy { abs(Double($0.floorDecibels) - fanLevel) < 4 }, "floor under the fan")
        // ... and fell back to the quiet room after it stopped (20 dB/s).
        let quietAgain = 15 + (fanLevel + 55) / 20 + 0.5
        let after = result.track.filter { $0.seconds > quietAgain }
        #expect(after.allSatisfy { $0.floorDecibels < -50 }, "floor after the fan")
        // A loud run without the cue lifts the floor fast (40 dB/s after 1.2 s): the fan is part
        // of the room about 2 s after it starts.
        let settled = result.track.filter { $0.seconds > 7.5 && $0.seconds < 9 }
        #expect(
            settled.allSatisfy { abs(Double($0.floorDecibels) - fanLevel) < 4 }, "floor 2.5 s after the fan started")
    }

    @Test("a ticking clock over a running fan is not voice")
    func ticksOverFan() throws {
        let ticks = SyntheticAudio.clockTicks(seconds: 20, interval: 1, tickPeak: 0.3, roomDecibels: -70)
        let fan = try TestAudio.fixture("noise_fan_16k.wav").looped(toSeconds: 20).scaled(toRMS: -40)
        #expect(try gateResult(fan.mixing(ticks, at: 0)).voicedSeconds == 0)
    }

    @Test("digital silence is silence")
    func digitalSilence() throws {
        let result = try gateResult(TestAudio(samples: [Float](repeating: 0, count: 16_000 * 5), sampleRate: 16_000))
        #expect(result.voicedSeconds == 0)
        #expect(result.finalFloorDecibels == -100)
        #expect(isApproximatelyEqual(result.analysedSeconds, 5, absoluteTolerance: 0.02))
    }
}

@Suite("VoiceActivityGate: speech is counted")
struct SpeechTests {
    @Test(
        "real speech in real room noise: voiced seconds match the audible speech",
        arguments: speechFixtures, noiseFixtures)
    func realSpeech(speechName: String, noiseName: String) throws {
        let speech = try TestAudio.fixture(speechName)
        let noise = try TestAudio.fixture(noiseName)
        for snr in [20.0, 15.0, 10.0] {
            let mix = mixture(speech: speech, noise: noise, noiseLevel: -45, speechLevel: -45 + snr)
            let result = try gateResult(mix.audio)
            let error = result.voicedSeconds - mix.reference
            print(
                "accuracy \(speechName) in \(noiseName) SNR \(Int(snr)) dB: voiced \(result.voicedSeconds) s, reference \(mix.reference) s, error \(error) s"
            )
            // Within 15% at 15 dB SNR and above; at 10 dB the quiet ends of a reciter's phrases
            // sink into the noise (up to 25%), and the running-water cues (a voiced stretch must
            // be multi-harmonic, glide in pitch and hold its level) lose some of the reciter's
            // noisier vowels too: up to 36% (about 21% without them) on the recitation over an air
            // conditioner, a fan or a fridge.
            let tolerance = snr >= 15 ? 0.15 : 0.36
            #expect(abs(error) <= max(0.8, tolerance * mix.reference), "SNR \(snr): \(result.segments)")
            // Voice is found only where the speech is.
            let inside = overlap(result.segments, mix.start - 0.1, mix.end + 0.1)
            #expect(result.voicedSeconds - inside <= 0.2, "voice outside the speech: \(result.segments)")
        }
    }

    @Test("soft dawn speech: -35 dBFS speech in a -50 dBFS room", arguments: speechFixtures)
    func dawnSpeech(speechName: String) throws {
        let speech = try TestAudio.fixture(speechName)
        let room = try TestAudio.fixture("noise_fridge_16k.wav")
        let mix = mixture(speech: speech, noise: room, noiseLevel: -50, speechLevel: -35)
        let result = try gateResult(mix.audio)
        #expect(
            abs(result.voicedSeconds - mix.reference) <= max(0.8, 0.2 * mix.reference),
            "\(result.voicedSeconds) vs \(mix.reference)")
    }

    @Test("speech 10 dB above a running fan", arguments: speechFixtures)
    func speechOverFan(speechName: String) throws {
        let speech = try TestAudio.fixture(speechName)
        let fan = try TestAudio.fixture("noise_fan_16k.wav")
        let mix = mixture(speech: speech, noise: fan, noiseLevel: -35, speechLevel: -25)
        let result = try gateResult(mix.audio)
        #expect(result.voicedSeconds >= 0.7 * mix.reference, "\(result.voicedSeconds) vs \(mix.reference)")
        #expect(result.voicedSeconds <= mix.reference + 0.8)
    }

    @Test(
        "espeak-ng Arabic (the waking du'a) in real noise at several SNRs and levels",
        .enabled(if: TestEnvironment.hasTool("espeak-ng") && TestEnvironment.hasTool("sox")),
        arguments: noiseFixtures)
    func espeakArabic(noiseName: String) throws {
        let speech = try TestTools.espeakArabic(wakingDua)
        let noise = try TestAudio.fixture(noiseName)
        for (noiseLevel, snr) in [(-55.0, 20.0), (-50.0, 15.0), (-45.0, 10.0), (-35.0, 10.0), (-40.0, 6.0)] {
            let mix = mixture(speech: speech, noise: noise, noiseLevel: noiseLevel, speechLevel: noiseLevel + snr)
            let result = try gateResult(mix.audio)
            let error = result.voicedSeconds - mix.reference
            print(
                "accuracy espeak-ng ar in \(noiseName) at \(Int(noiseLevel)) dBFS SNR \(Int(snr)) dB: voiced \(result.voicedSeconds) s, reference \(mix.reference) s, error \(error) s"
            )
            let tolerance = snr >= 15 ? 0.15 : 0.25
            #expect(abs(error) <= max(0.8, tolerance * mix.reference), "\(noiseLevel)/\(snr): \(result.segments)")
        }
    }

    @Test("two readings separated by silence give two segments at the right places")
    func segmentsAtKnownOffsets() throws {
        let speech = try TestAudio.fixture("speech_en_ljspeech_16k.wav").scaled(toRMS: -30)
        let room = try TestAudio.fixture("noise_ac_16k.wav").looped(toSeconds: 30).scaled(toRMS: -50)
        let audio = room.mixing(speech, at: 3).mixing(speech, at: 17)
        let result = try gateResult(audio)
        let regions = speech.activeRegions(above: -50)
        let firstStart = try #require(regions.first).start
        let lastEnd = try #require(regions.last).end
        #expect(result.segments.contains { abs($0.start - (3 + firstStart)) < 0.1 })
        #expect(result.segments.contains { abs($0.start - (17 + firstStart)) < 0.1 })
        #expect(result.segments.contains { abs($0.end - (3 + lastEnd)) < 0.15 })
        #expect(result.segments.contains { abs($0.end - (17 + lastEnd)) < 0.15 })
        #expect(overlap(result.segments, 12, 17) == 0)
    }
}

@Suite("VoiceActivityGate: streaming and configuration")
struct GateMechanicsTests {
    @Test("any chunking gives the same result", arguments: [1, 7, 160, 320, 4096, 1_000_000])
    func chunking(size: Int) throws {
        let speech = try TestAudio.fixture("speech_en_ljspeech_16k.wav")
        let mix = mixture(
            speech: speech, noise: try TestAudio.fixture("noise_ac_16k.wav"),
            noiseLevel: -45, speechLevel: -30, total: 14)
        let reference = try gateResult(mix.audio, chunk: 1600)
        let other = try gateResult(mix.audio, chunk: size)
        #expect(other.segments == reference.segments)
        #expect(other.finalFloorDecibels == reference.finalFloorDecibels)
        #expect(other.track.count == reference.track.count)
    }

    @Test("process returns one frame per 20 ms, with live state matching the track")
    func frames() throws {
        var gate = try VoiceActivityGate()
        var frames: [VoiceGateFrame] = []
        let audio = try TestAudio.fixture("speech_en_ljspeech_16k.wav")
        for chunk in audio.chunks(of: 1000) { frames += gate.process(chunk) }
        #expect(frames.count == audio.samples.count / 320)
        #expect(frames == gate.finish().track)
        #expect(frames.allSatisfy { $0.thresholdDecibels - $0.floorDecibels == 6 })
        #expect(isApproximatelyEqual(frames[10].seconds, 0.2, absoluteTolerance: 1e-9))
        #expect(gate.voicedSeconds == gate.finish().voicedSeconds)
    }

    @Test("a frame's level is its RMS in dBFS, as sox reports it")
    func levelMatchesSox() throws {
        let tone = (0..<16_000).map { Float(0.25 * sin(2 * Double.pi * 440 * Double($0) / 16_000)) }
        var gate = try VoiceActivityGate()
        let frames = gate.process(tone)
        // RMS of a 0.25 sine: 0.25 / sqrt(2) -> -15.05 dBFS.
        #expect(frames.allSatisfy { abs($0.levelDecibels + 15.05) < 0.1 })
    }

    @Test("recordsTrack off keeps no track but the same verdicts")
    func noTrack() throws {
        let audio = try TestAudio.fixture("speech_en_ljspeech_16k.wav")
        let with = try gateResult(audio)
        let without = try gateResult(audio, configuration: VoiceGateConfiguration(recordsTrack: false))
        #expect(without.track.isEmpty)
        #expect(without.segments == with.segments)
    }

    @Test("bad settings are refused with invalidArgument")
    func badConfiguration() {
        let bad: [VoiceGateConfiguration] = [
            VoiceGateConfiguration(sampleRate: 100),
            VoiceGateConfiguration(frameDuration: .milliseconds(1)),
            VoiceGateConfiguration(marginDecibels: 0),
            VoiceGateConfiguration(marginDecibels: 6, hysteresisDecibels: 7),
            VoiceGateConfiguration(hangOver: .seconds(-1)),
            VoiceGateConfiguration(floorFallDecibelsPerSecond: .nan),
            VoiceGateConfiguration(minimumDominantFrequencyRatio: 0.2, maximumDominantFrequencyRatio: 0.1),
            VoiceGateConfiguration(modulationDecibels: -1),
            VoiceGateConfiguration(modulationWindow: .milliseconds(5)),
            VoiceGateConfiguration(unmodulatedWindow: .seconds(11)),
            VoiceGateConfiguration(unmodulatedFloorRiseDecibelsPerSecond: .infinity),
        ]
        for configuration in bad {
            #expect(throws: ProofkitError.self) { try VoiceActivityGate(configuration: configuration) }
            do {
                _ = try VoiceActivityGate(configuration: configuration)
            } catch {
                #expect(error.code == .invalidArgument)
            }
        }
    }

    @Test("reset forgets the room")
    func reset() throws {
        var gate = try VoiceActivityGate()
        _ = gate.process(try TestAudio.fixture("noise_fan_16k.wav").samples)
        gate.reset()
        #expect(gate.analysedSeconds == 0)
        #expect(gate.finish().track.isEmpty)
    }
}

@Suite("VoiceActivityGate: impulsive periodic noise")
struct ImpulsiveNoiseTests {
    /// Speech at -26 dBFS, 3 s into a clock ticking `perSecond` times a second over a quiet room.
    func speechOverClock(perSecond: Double, speech name: String) throws -> (
        audio: TestAudio, start: Double, end: Double
    ) {
        let clock = SyntheticAudio.clockTicks(seconds: 16, interval: 1 / perSecond, tickPeak: 0.5, roomDecibels: -65)
        let speech = try TestAudio.fixture(name).scaled(toRMS: -26)
        return (clock.mixing(speech, at: 3), 3, 3 + speech.seconds)
    }

    @Test(
        "a clock ticking 1 to 8 times a second during a reading: voice stays inside the speech and ends with it",
        arguments: [1.0, 4.0, 8.0], speechFixtures)
    func clockDuringReading(perSecond: Double, speech: String) throws {
        let (audio, start, end) = try speechOverClock(perSecond: perSecond, speech: speech)
        let result = try gateResult(audio)
        let room = SyntheticAudio.whiteNoise(seconds: 16, levelDecibels: -65)
        let alone = try gateResult(room.mixing(TestAudio.fixture(speech).scaled(toRMS: -26), at: 3))
        let outside = result.voicedSeconds - overlap(result.segments, start, end + 0.2)
        #expect(outside <= 0.2, "\(perSecond)/s: \(result.segments)")
        #expect(
            result.voicedSeconds <= alone.voicedSeconds * 1.2 + 0.2,
            "\(result.voicedSeconds) vs \(alone.voicedSeconds) without the clock")
        #expect(
            result.voicedSeconds >= alone.voicedSeconds * 0.7,
            "\(result.voicedSeconds) vs \(alone.voicedSeconds) without the clock")
        // The last segment ends where the speech ends, not seconds later.
        #expect((result.segments.last?.end ?? 0) <= end + 0.2, "\(result.segments)")
    }

    @Test("without the voicing cue the same clock is counted as reading (the cue is what rejects it)")
    func withoutVoicingCue() throws {
        let (audio, start, end) = try speechOverClock(perSecond: 8, speech: "speech_en_ljspeech_16k.wav")
        let withCue = try gateResult(audio)
        let without = try gateResult(audio, configuration: VoiceGateConfiguration(minimumHarmonicity: 0))
        #expect(without.voicedSeconds > withCue.voicedSeconds + 1, "\(without.segments) vs \(withCue.segments)")
        #expect(withCue.voicedSeconds - overlap(withCue.segments, start, end + 0.2) <= 0.2)
    }

    @Test("a fast clock (8 per second) alone, loud, is not voice", arguments: [0.2, 0.6] as [Float])
    func fastLoudClock(peak: Float) throws {
        let ticks = SyntheticAudio.clockTicks(seconds: 20, interval: 0.125, tickPeak: peak, roomDecibels: -70)
        #expect(try gateResult(ticks).voicedSeconds == 0)
    }

    @Test("the voicing settings are checked")
    func voicingSettings() {
        for bad in [
            VoiceGateConfiguration(minimumHarmonicity: 1.5), VoiceGateConfiguration(minimumHarmonicity: -.infinity),
            VoiceGateConfiguration(lowestPitch: 400, highestPitch: 70), VoiceGateConfiguration(lowestPitch: 10),
            VoiceGateConfiguration(minimumVoicedStretch: .seconds(2)), VoiceGateConfiguration(voicedTail: .seconds(-1)),
        ] {
            #expect(throws: ProofkitError.self) { _ = try VoiceActivityGate(configuration: bad) }
        }
    }
}
