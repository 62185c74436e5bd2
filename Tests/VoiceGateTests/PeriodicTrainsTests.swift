import Foundation
import ProofkitCore
import TestSupport
import Testing
import VoiceGate

@Suite("PeriodicTrains")
struct PeriodicTrainsTests {
    /// `count` segments of `duration` seconds starting at `first`, `interval` seconds apart, each
    /// onset moved by the matching entry of `jitter` (seconds) if given.
    func beat(first: Double = 1, count: Int, interval: Double, duration: Double, jitter: [Double] = [])
        -> [VoicedSegment]
    {
        (0..<count).map { index in
            let start = first + Double(index) * interval + (index < jitter.count ? jitter[index] : 0)
            return VoicedSegment(start: start, end: start + duration)
        }
    }

    @Test("runs on a steady beat are a train: every tick of clocks from 8/s to one beat in 3.9 s, a frame of jitter")
    func steadyBeats() {
        for (interval, duration) in [(1.0, 0.62), (2.0, 0.42), (0.125, 0.06), (3.9, 0.3)] {
            let ticks = beat(count: 7, interval: interval, duration: duration, jitter: [0, 0.02, 0, -0.02, 0, 0.02])
            let (kept, trains) = PeriodicTrains.separate(ticks)
            #expect(kept.isEmpty && trains == ticks, "interval \(interval)")
        }
        // A beat the gate missed once (a tick under the threshold) does not break the train.
        var missed = beat(count: 8, interval: 1, duration: 0.5)
        missed.remove(at: 4)
        #expect(PeriodicTrains.membership(missed).allSatisfy { $0 })
    }

    @Test(
        "what is not a train: four beats, off-beat onsets, long runs, unlike lengths, too slow a beat, a reader's rhythm"
    )
    func notTrains() {
        #expect(PeriodicTrains.separate(beat(count: 4, interval: 1, duration: 0.5)).trains.isEmpty)
        // 12 % off the beat on one interval in every three: no five in a row keep it.
        let offBeat = beat(
            count: 12, interval: 1, duration: 0.5,
            jitter: [0, 0, 0.12, 0.12, 0.12, 0.24, 0.24, 0.24, 0.36, 0.36, 0.36, 0.48])
        #expect(PeriodicTrains.separate(offBeat).trains.isEmpty)
        // Real English read at one stressed word a second, at 5 dB under an air conditioner (the
        // evaluation's tuning split; its four runs, and a fifth added on the same beat): the runs keep
        // the beat, but not a clock's even lengths.
        let words = [(4.5, 5.04), (5.46, 5.7), (6.42, 6.9), (7.34, 7.68), (8.3, 8.62)].map {
            VoicedSegment(start: $0, end: $1)
        }
        #expect(PeriodicTrains.separate(words).trains.isEmpty)
        #expect(PeriodicTrains.separate(beat(count: 6, interval: 2, duration: 1.2)).trains.isEmpty)
        #expect(PeriodicTrains.separate(beat(count: 6, interval: 5, duration: 0.4)).trains.isEmpty)
        // One beat three times as long as the others breaks the train; the seven after it make one.
        var unlike = beat(count: 10, interval: 1, duration: 0.2)
        unlike[2].end = unlike[2].start + 0.6
        let split = PeriodicTrains.separate(unlike)
        #expect(split.kept == Array(unlike[0...2]) && split.trains == Array(unlike[3...]))
        // A train in the middle of phrases: only its members go, and the phrases stay in order.
        let phrases =
            [VoicedSegment(start: 0.2, end: 2.1)] + beat(first: 3, count: 5, interval: 1, duration: 0.4)
            + [VoicedSegment(start: 8.3, end: 10.9)]
        let mixed = PeriodicTrains.separate(phrases)
        #expect(mixed.kept == [phrases[0], phrases[6]] && mixed.trains == Array(phrases[1...5]))
        #expect(PeriodicTrains.separate([]).kept.isEmpty)
    }

    @Test(
        "real readings are no clock: every speech and du'a recording keeps all its runs (no train, no repeating level)",
        .enabled(if: TestEnvironment.hasTool("ffmpeg"), "needs ffmpeg"))
    func realSpeech() throws {
        var paths = [
            "speech_en_ljspeech_16k.wav", "speech_ar_quran_16k.wav", "audio/vad_speech_ar.wav",
            "audio/vad_speech_en.wav",
        ].map(TestEnvironment.fixture)
        // With ../shared, every real reading there too (speech, the read basmala, the du'a recordings).
        if let shared = TestEnvironment.sharedData?.path {
            paths += AudioTestTools.contents(of: shared + "/audio/speech").filter { $0.hasSuffix(".wav") }
                .map { shared + "/audio/speech/" + $0 }
            paths.append(shared + "/audio/recitation/rec_001.mp3")
            paths += AudioTestTools.contents(of: shared + "/dua_audio").filter { $0.hasSuffix(".mp3") }
                .map { shared + "/dua_audio/" + $0 }
        }
        try withTemporaryFolder("periodic-trains") { scratch in
            var runs = 0
            for path in paths {
                // ffmpeg decodes every format to 16 kHz mono, as proofkit's reader would.
                let wav = scratch + "/reading.wav"
                _ = try AudioTestTools.require(
                    "ffmpeg", ["-v", "error", "-y", "-i", path, "-ac", "1", "-ar", "16000", wav])
                let audio = try TestAudio.readWAV(wav)
                var gate = try VoiceActivityGate(configuration: VoiceGateConfiguration(sampleRate: 16_000))
                var periodicity = EnvelopePeriodicity(frameSeconds: 0.02)
                for chunk in audio.chunks(of: 1600) {
                    for frame in gate.process(chunk) { periodicity.add(frame.levelDecibels) }
                }
                let segments = gate.finish().segments
                runs += segments.count
                #expect(PeriodicTrains.separate(segments).trains.isEmpty, "\(path): \(segments)")
                #expect(periodicity.separate(segments).periodic.isEmpty, "\(path): \(periodicity.stretches)")
            }
            #expect(runs >= paths.count)
        }
    }
}
