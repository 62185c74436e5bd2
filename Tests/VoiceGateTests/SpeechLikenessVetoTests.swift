import Foundation
import ProofkitCore
import TestSupport
import Testing
import VoiceGate

/// The learned veto on the energy gate's voiced frames (Benchmarks/voice_veto_study.py trains it).
@Suite("SpeechLikenessVeto: voiced frames that do not look like speech are left out")
struct SpeechLikenessVetoTests {
    /// Runs a veto over `audio` in chunks of `chunk` samples.
    func run(_ audio: TestAudio, chunk: Int) -> (likeness: [Float], kept: [VoicedSegment]) {
        var veto = SpeechLikenessVeto(keepsLikeness: true)
        for piece in audio.chunks(of: chunk) { veto.process(piece) }
        let kept = veto.finish()
        return (veto.likeness, kept)
    }

    /// The 10 ms frames inside `segments`.
    func frames(_ segments: [VoicedSegment]) -> Set<Int> {
        Set(segments.flatMap { Int(($0.start * 100).rounded())..<Int(($0.end * 100).rounded()) })
    }

    @Test("the Swift features and network give the study's outputs on a real recording")
    func parityWithTheStudy() throws {
        // speech_likeness_parity.json: the study's numpy features and network on this file
        // (`voice_veto_study.py --parity`).
        let audio = try TestAudio.fixture("audio/vad_speech_ar.wav")
        let json = try Data(
            contentsOf: URL(fileURLWithPath: TestEnvironment.fixture("audio/speech_likeness_parity.json")))
        let root = try JSONReader.parse(bytes: Array(json))
        let expected = (root["probabilities"]?.array ?? []).compactMap { $0.number }
        let smoothed = (root["smoothed"]?.array ?? []).compactMap { $0.number }
        let threshold = try #require(root["threshold"]?.number)
        #expect(Float(threshold) == SpeechLikenessVeto.trainedThreshold)
        let (likeness, kept) = run(audio, chunk: 1000)
        try #require(likeness.count == expected.count, "\(likeness.count) frames, the study \(expected.count)")
        let worst = zip(likeness, expected).map { abs(Double($0) - $1) }.max() ?? 0
        #expect(worst < 0.01, "largest difference from the study's output: \(worst)")
        let keptFrames = frames(kept)
        var decided = 0
        for (index, value) in smoothed.enumerated() where abs(value - threshold) > 0.005 {
            #expect((value >= threshold) == keptFrames.contains(index), "frame \(index): study \(value)")
            decided += 1
        }
        #expect(decided > smoothed.count * 9 / 10)
        #expect(keptFrames.count > 100, "the reading is kept: \(keptFrames.count) frames")
    }

    @Test("the chunk size does not change what is kept", arguments: [1, 160, 7919])
    func chunking(chunk: Int) throws {
        let audio = try TestAudio.fixture("audio/vad_speech_en.wav")
        let reference = run(audio, chunk: 16_000)
        let result = run(audio, chunk: chunk)
        #expect(result.likeness == reference.likeness)
        #expect(result.kept == reference.kept)
    }

    @Test("decisions lag the audio by 350 ms, and finish decides the rest")
    func delay() throws {
        let audio = try TestAudio.fixture("audio/vad_speech_en.wav")
        var veto = SpeechLikenessVeto()
        for piece in audio.chunks(of: 1600) { veto.process(piece) }
        let frames = (audio.samples.count - 512) / 160 + 1
        #expect(abs(veto.decidedSeconds - Double(frames - SpeechLikenessVeto.delayFrames) * 0.01) < 1e-9)
        let open = veto.keptSegments
        let kept = veto.finish()
        #expect(veto.decidedSeconds == Double(frames) * 0.01)
        #expect(VoicedSegments.totalSeconds(kept) >= VoicedSegments.totalSeconds(open))
        var empty = SpeechLikenessVeto()
        empty.process([Float](repeating: 0, count: 100))
        #expect(empty.finish().isEmpty)
    }

    // A real recording of a mosquito (openclonk-data, CC0, Zywx / freesound 188708), 5 s looped to
    // 15 s at the evaluation's noise-alone level. It is one of the held-out noises the energy gate
    // failed on (VOICE_GATE_EVAL.md); issue 14 allows the energy gate 1.0 s of a noise alone.
    @Test("a real mosquito that the energy gate takes for voice is vetoed")
    func mosquito() throws {
        let mosquito = try TestAudio.fixture("audio/veto_mosquito.wav").looped(toSeconds: 15).scaled(toRMS: -36)
        let gate = try gateResult(mosquito)
        let vetoed = VoicedSegments.totalSeconds(
            VoicedSegments.intersection(gate.segments, run(mosquito, chunk: 1600).kept))
        #expect(gate.voicedSeconds > 2, "the energy gate alone: \(gate.voicedSeconds) s")
        #expect(vetoed <= 1.0, "with the veto: \(vetoed) s of 15 s")
    }

    @Test(
        "real readings keep their voiced time",
        arguments: [
            "audio/vad_speech_en.wav", "speech_ar_quran_16k.wav",
            "speech_en_ljspeech_16k.wav",
        ])
    func readingsKept(file: String) throws {
        let speech = try TestAudio.fixture(file)
        let room = SyntheticAudio.whiteNoise(seconds: speech.seconds + 3, levelDecibels: -60)
        let audio = room.mixing(speech, at: 1.5)
        let gate = try gateResult(audio)
        let vetoed = VoicedSegments.totalSeconds(
            VoicedSegments.intersection(gate.segments, run(audio, chunk: 1600).kept))
        #expect(gate.voicedSeconds > 1, "\(file): the energy gate hears \(gate.voicedSeconds) s")
        #expect(vetoed >= 0.85 * gate.voicedSeconds, "\(file): \(vetoed) s of the gate's \(gate.voicedSeconds) s kept")
    }

    // vad_speech_ar.wav carries its own background noise, which starts abruptly when the clip is
    // placed in a quiet room: the energy gate counts that onset as voice from 1.5 s, before the
    // first word (Silero, `proofkit voice --vad silero` on the same mix, hears speech from 3.26 s).
    @Test("a noise onset the energy gate counts before the first word is left out")
    func noiseOnset() throws {
        let speech = try TestAudio.fixture("audio/vad_speech_ar.wav")
        let audio = SyntheticAudio.whiteNoise(seconds: speech.seconds + 3, levelDecibels: -60).mixing(speech, at: 1.5)
        let gate = try gateResult(audio)
        let vetoed = VoicedSegments.intersection(gate.segments, run(audio, chunk: 1600).kept)
        #expect((gate.segments.first?.start ?? 9) < 1.7, "the gate alone: \(gate.segments)")
        #expect((vetoed.first?.start ?? 0) > 3.0, "with the veto: \(vetoed)")
        #expect(VoicedSegments.totalSeconds(vetoed) > 0.8, "the words are kept: \(vetoed)")
    }
}
