import Foundation
import Inference
import Proofkit
import ProofkitCore
import ProofkitDemo
import TestSupport
import Testing
import VoiceGate

@Suite("ReadingProof with Silero probabilities")
struct SileroModeReadingProofTests {
    @Test("ReadingProof in silero and both modes counts what the probabilities and the gate say")
    func proofModes() throws {
        // A real room with real speech at 3 s; the probabilities claim speech only from 4 s to 6 s.
        let room = try TestAudio.fixture("noise_ac_16k.wav").looped(toSeconds: 14).scaled(toRMS: -50)
        let speech = try TestAudio.fixture("speech_en_ljspeech_16k.wav").scaled(toRMS: -30)
        let audio = room.mixing(speech, at: 3)
        let probabilities = speechProbabilities(seconds: 14, spans: [(4, 6)])
        var results: [VoiceDetectionMode: ReadingProofResult] = [:]
        for mode in VoiceDetectionMode.allCases {
            var proof = try ReadingProof(configuration: .init(usesRecognizer: false, voiceDetection: mode))
            var next = 0
            var voicedLevels = 0
            for chunk in audio.chunks(of: 512) where chunk.count == 512 {
                let events = proof.process(
                    audio: chunk, speechProbabilities: next < probabilities.count ? [probabilities[next]] : [])
                next += 1
                voicedLevels +=
                    events.filter { if case .level(let l) = $0 { return l.isVoiced } else { return false } }.count
            }
            let result = proof.finish()
            #expect(
                isApproximatelyEqual(
                    result.gate.voicedSeconds, VoicedSegments.totalSeconds(result.gate.segments),
                    absoluteTolerance: 1e-9))
            #expect(isApproximatelyEqual(result.gate.voicedSeconds, proof.voicedSeconds, absoluteTolerance: 1e-9))
            #expect(result.speechProbabilities.count == (mode == .energy ? 0 : next))
            // The meter's voiced flag covers the mode's voiced time (plus the energy gate's
            // 300 ms hang-over after each segment), less the live decision's delay at each
            // segment's start (a run turns voice on once it shows a voiced stretch that glides in
            // pitch and holds its level; its segment then starts at the run's first loud frame).
            let flagged = Double(voicedLevels) * 0.1
            #expect(
                flagged >= result.gate.voicedSeconds - 0.3 * Double(max(1, result.gate.segments.count)),
                "\(mode): \(result.gate.segments)")
            #expect(flagged <= result.gate.voicedSeconds + 0.4 * Double(result.gate.segments.count) + 0.2, "\(mode)")
            results[mode] = result
        }
        let energy = try #require(results[.energy]).gate
        let silero = try #require(results[.silero]).gate
        let both = try #require(results[.both]).gate
        #expect(energy.voicedSeconds > 5)
        #expect(abs(silero.voicedSeconds - 2) < 0.1, "\(silero.segments)")
        #expect(both.segments == VoicedSegments.intersection(energy.segments, silero.segments))
        // The speech pauses at 5.6 s, so both is less than silero's 2 s there.
        #expect(both.voicedSeconds <= silero.voicedSeconds && both.voicedSeconds <= energy.voicedSeconds)
        #expect(both.voicedSeconds > 1.2)
    }
}

@Suite(
    "ReadingProofSession with the real Silero model",
    .enabled(
        if: OnnxRuntime.isAvailable
            && FileManager.default.fileExists(
                atPath: TestEnvironment.packageRoot.appendingPathComponent(SileroVoiceDetector.defaultModelPath).path)
    ))
struct ReadingProofSessionTests {
    let modelPath = TestEnvironment.packageRoot.appendingPathComponent(SileroVoiceDetector.defaultModelPath).path

    @Test("silero finds the speech in a fan's noise; chunking does not matter", arguments: [160, 1600, 7777])
    func silero(chunk: Int) throws {
        let fan = try TestAudio.fixture("noise_fan_16k.wav").looped(toSeconds: 14).scaled(toRMS: -40)
        let speech = try TestAudio.fixture("speech_ar_quran_16k.wav").scaled(toRMS: -28)
        let audio = fan.mixing(speech, at: 3)
        var session = try ReadingProofSession(
            configuration: .init(usesRecognizer: false, voiceDetection: .silero), sileroModelPath: modelPath)
        for piece in audio.chunks(of: chunk) { _ = try session.process(audio: piece) }
        let (_, result) = try session.finish()
        #expect(result.speechProbabilities.count == (audio.samples.count + 511) / 512)
        let segments = result.gate.segments
        let outside =
            result.gate.voicedSeconds
            - segments.reduce(0) { $0 + max(0, min($1.end, 3 + speech.seconds + 0.2) - max($1.start, 2.8)) }
        #expect(outside < 0.3, "\(segments)")
        let reference = speech.activeSeconds()
        #expect(
            abs(result.gate.voicedSeconds - reference) < max(1.0, 0.25 * reference),
            "\(result.gate.voicedSeconds) vs \(reference)")
        // Same probabilities as the detector run on the whole signal at once.
        var detector = try SileroVoiceDetector(modelPath: modelPath)
        let whole = try detector.probabilities(ofSamples: audio.samples)
        #expect(zip(whole, result.speechProbabilities).allSatisfy { abs($0 - $1) < 1e-4 })
    }

    @Test("noise alone: no speech in silero mode")
    func noise() throws {
        var session = try ReadingProofSession(
            configuration: .init(usesRecognizer: false, voiceDetection: .silero), sileroModelPath: modelPath)
        for name in ["noise_ac_16k.wav", "noise_fan_16k.wav", "noise_night_16k.wav"] {
            for piece in try TestAudio.fixture(name).scaled(toRMS: -35).chunks(of: 1600) {
                _ = try session.process(audio: piece)
            }
        }
        let (_, result) = try session.finish()
        #expect(result.gate.voicedSeconds < 0.5, "\(result.gate.segments)")
    }

    @Test("a missing model: silero throws runtimeUnavailable, both falls back to energy with a reason")
    func missingModel() throws {
        #expect(throws: ProofkitError.self) {
            _ = try ReadingProofSession(
                configuration: .init(voiceDetection: .silero), sileroModelPath: "/nonexistent.onnx")
        }
        do {
            _ = try ReadingProofSession(configuration: .init(voiceDetection: .silero), sileroModelPath: nil)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .runtimeUnavailable)
        }
        let session = try ReadingProofSession(
            configuration: .init(voiceDetection: .both), sileroModelPath: "/nonexistent.onnx")
        #expect(session.proof.configuration.voiceDetection == .energy)
        #expect(session.fallbackReason != nil)
    }
}

@Suite("ReadingProofDemo", .enabled(if: TestEnvironment.hasTool("espeak-ng")))
struct ReadingProofDemoTests {
    @Test("espeak-ng Arabic in a real room: accepted with the transcript; voice-only finds the two readings")
    func demo() throws {
        try withTemporaryFolder { folder in
            let kept = folder + "/demo.wav"
            let outcome = try ReadingProofDemo.run(
                roomNoisePath: TestEnvironment.fixture("noise_ac_16k.wav"), keepRecordingAt: kept,
                environment: ProcessInfo.processInfo.environment)
            #expect(outcome.skippedReason == nil)
            let withTranscript = try #require(outcome.withTranscript)
            #expect(withTranscript.verdict == "accepted")
            #expect(withTranscript.rule == "keyWords")
            #expect(withTranscript.heardKeyWords.count == 5)
            let voiceOnly = try #require(outcome.voiceOnly)
            #expect(outcome.speechRegions.count == 2)
            // Voice is found inside the two readings only, and covers most of them.
            let speech = outcome.speechRegions.reduce(0) { $0 + $1.duration }
            let inside = voiceOnly.segments.reduce(0.0) { total, segment in
                total
                    + outcome.speechRegions.reduce(0) {
                        $0 + max(0, min(segment.end, $1.end + 0.1) - max(segment.start, $1.start - 0.1))
                    }
            }
            #expect(voiceOnly.voicedSeconds - inside < 0.2, "\(voiceOnly.segments)")
            #expect(voiceOnly.voicedSeconds > 0.6 * speech, "\(voiceOnly.voicedSeconds) of \(speech)")
            #expect(voiceOnly.verdict == (voiceOnly.voicedSeconds >= voiceOnly.neededSeconds ? "accepted" : "rejected"))
            #expect(abs(outcome.finalFloorDecibels + 50) < 4)
            // The kept recording is a real 16 kHz WAV of the stated length.
            let audio = try TestAudio.readWAV(kept)
            #expect(audio.sampleRate == 16000)
            #expect(abs(audio.seconds - outcome.recordingSeconds) < 0.001)
        }
    }

    @Test("without espeak-ng on PATH the demo is skipped with a reason, not an error")
    func skipped() throws {
        let outcome = try ReadingProofDemo.run(environment: ["PATH": "/nonexistent"])
        #expect(outcome.skippedReason?.contains("espeak-ng") == true)
        #expect(outcome.withTranscript == nil)
    }
}
