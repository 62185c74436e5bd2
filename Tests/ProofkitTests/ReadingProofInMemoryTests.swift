import DuaMatching
import Foundation
import Proofkit
import ProofkitCore
import TestSupport
import Testing

/// The recording path over audio held in memory (what the hands-free listener judges a whole
/// reading with when the live transcript falls short) is the recording path over the file.
@Suite(
    "ReadingProofRecording over samples in memory", .serialized, .offThePool,
    .enabled(if: whisperInstalled, "the Whisper models are not built (bash .ci/setup)"))
struct ReadingProofInMemoryTests {
    /// The verse the fixture reads (the end of al-Anfal 8:75) as a text; the catalogue picks its
    /// key words, as for a user's texts file.
    static let verseJSON = """
        {"texts": [{"name": "anfal75", "title": "al-Anfal 8:75", "reading_seconds": 2,
                    "text": "إِنَّ اللَّهَ بِكُلِّ شَيْءٍ عَلِيمٌ"}]}
        """

    @Test("run(samples:) gives run(path:)'s verdict, gate, transcript and span score on a real recitation")
    func samplesEqualFile() throws {
        let whisper = try WhisperRecognizer(store: whisperStore)
        let path = TestEnvironment.fixture("speech_ar_quran_16k.wav")
        let audio = try TestAudio.readWAV(path)
        #expect(audio.sampleRate == 16_000)
        let catalog = try DuaCatalog(json: Self.verseJSON)
        let verse = try #require(catalog.text(named: "anfal75"))
        let configuration = ReadingProofConfiguration(
            text: verse, usesRecognizer: true, voiceDetection: .preferred, allowsReadTwice: false,
            vetoesUnlikeSpeech: true)
        let silero = ReadingProofSession.sileroModelPath(environment: ["PROOFKIT_MODELS": whisperStore.folders[0]])
        let recognize = ReadingProofRecording.wholeReadingRecognizer { whisper }
        let fromFile = try ReadingProofRecording.run(
            path: path, configuration: configuration, sileroModelPath: silero, recognize: recognize)
        let inMemory = try ReadingProofRecording.run(
            samples: audio.samples, configuration: configuration, sileroModelPath: silero, recognize: recognize)
        #expect(inMemory.result.match.verdict == fromFile.result.match.verdict)
        #expect(inMemory.result.match.rule == fromFile.result.match.rule)
        #expect(abs(inMemory.result.gate.voicedSeconds - fromFile.result.gate.voicedSeconds) < 1e-9)
        #expect(abs(inMemory.decodedSeconds - fromFile.decodedSeconds) < 1e-9)
        #expect(inMemory.recognition?.transcript == fromFile.recognition?.transcript)
        #expect(inMemory.recognition?.span?.text == fromFile.recognition?.span?.text)
        #expect(inMemory.format.container == .other("memory") && inMemory.format.sampleRate == 16_000)
        // And the evidence is real: the verse's words were heard and its text accepted.
        let words = Set(ArabicNormalizer.normalizedWords(inMemory.recognition?.transcript ?? ""))
        #expect(words.isSuperset(of: ["الله", "بكل", "شيء"]), "\(inMemory.recognition?.transcript ?? "")")
        #expect(inMemory.result.match.verdict.isAccepted, "\(inMemory.result.match)")
    }

    @Test(
        "a live reading kept in memory and judged again as a recording: the file's verdict; only the newest keptSeconds are kept"
    )
    func keptLiveReading() throws {
        let whisper = try WhisperRecognizer(store: whisperStore)
        let path = TestEnvironment.fixture("speech_ar_quran_16k.wav")
        let audio = try TestAudio.readWAV(path)
        try withTemporaryFolder { folder in
            // A virtual microphone (ALSA's file plugin): 1 s of silence, then the recitation.
            var raw = Data(count: 32_000)
            for sample in audio.samples {
                let bits = UInt16(bitPattern: Int16((max(-1, min(1, sample)) * 32767).rounded()))
                raw.append(UInt8(truncatingIfNeeded: bits))
                raw.append(UInt8(truncatingIfNeeded: bits >> 8))
            }
            try raw.write(to: URL(fileURLWithPath: folder + "/mic.raw"))
            try """
            pcm.vmic { type file slave.pcm { type null } file "/dev/null" infile "\(folder)/mic.raw" format "raw" }
            """.write(toFile: folder + "/asound.conf", atomically: true, encoding: .utf8)
            let catalog = try DuaCatalog(json: Self.verseJSON)
            let configuration = ReadingProofConfiguration(
                text: try #require(catalog.text(named: "anfal75")), usesRecognizer: true, voiceDetection: .preferred,
                allowsReadTwice: false, vetoesUnlikeSpeech: true)
            var options = LiveReadingProof.Options()
            options.device = "vmic"
            options.soundDevices = try SoundDevices(environment: ["PROOFKIT_ALSA_CONFIG": folder + "/asound.conf"])
            options.maxSeconds = audio.seconds + 2
            options.sileroModelPath = ReadingProofSession.sileroModelPath(
                environment: ["PROOFKIT_MODELS": whisperStore.folders[0]])
            options.keepsAudio = true

            func listen(_ options: LiveReadingProof.Options) throws -> (LiveReadingProof, Double) {
                let live = try LiveReadingProof(configuration: configuration, options: options, whisper: whisper)
                let summary = live.run { _ in }
                #expect(live.captureFailure == nil && summary.failure == nil)
                _ = try live.finishTranscriber()
                return (live, summary.heardSeconds)
            }
            let (live, heard) = try listen(options)
            let kept = try #require(try live.judgeKeptAudio(forcedScore: ForcedScoreRule.recordingDefault))
            // Judged from 0.2 s before the first voice (the 1 s of silence the microphone played
            // first is left out) to the end.
            let onset = try #require(live.finish().gate.segments.first).start
            #expect(onset > 0.9, "\(onset)")
            let expected = heard - (onset - LiveReadingProof.keptLeadSeconds)
            #expect(abs(kept.decodedSeconds - expected) < 0.05, "kept \(kept.decodedSeconds) s of \(heard) s heard")
            #expect(kept.result.match.verdict.isAccepted, "\(kept.result.match)")
            let fromFile = try ReadingProofRecording.run(
                path: path, configuration: configuration, sileroModelPath: options.sileroModelPath,
                recognize: ReadingProofRecording.wholeReadingRecognizer { whisper })
            #expect(kept.result.match.verdict.isAccepted == fromFile.result.match.verdict.isAccepted)
            #expect(abs(kept.result.gate.voicedSeconds - fromFile.result.gate.voicedSeconds) < 0.3)

            // At most keptSeconds, the newest: the last 2 s heard (voice runs into them, so none is
            // left out before it).
            options.keptSeconds = 2
            let (short, shortHeard) = try listen(options)
            let lastVoice = try #require(short.finish().gate.segments.last)
            #expect(
                lastVoice.start < shortHeard - 2 && lastVoice.end > shortHeard - 2, "\(lastVoice) of \(shortHeard) s")
            let tail = try #require(try short.judgeKeptAudio(forcedScore: nil))
            #expect(abs(tail.decodedSeconds - 2) < 0.05, "\(tail.decodedSeconds)")
            // Without keepsAudio nothing is kept, and nothing is judged again.
            options.keepsAudio = false
            let (none, _) = try listen(options)
            #expect(try none.judgeKeptAudio(forcedScore: nil) == nil)
        }
    }

    @Test(
        "after a pass the live recogniser transcribes nothing more: finish(transcribingRest: false) makes no last run")
    func noLastRunAfterPass() async throws {
        let whisper = try WhisperRecognizer(store: whisperStore)
        let audio = try TestAudio.readWAV(TestEnvironment.fixture("speech_ar_quran_16k.wav")).samples
        /// 2 s of the recitation (a run is due after 1.2 s of voice), its line awaited, then 1 s
        /// more (no run due yet), then finish.
        func runs(transcribingRest: Bool) async throws -> (runs: Int, lines: [String], first: String) {
            let live = WhisperLiveTranscriber(recognizer: whisper)
            live.append(Array(audio.prefix(32_000)), voiced: true)
            let first = try await withThrowingTaskGroup(of: String?.self) { group in
                group.addTask { await live.lines.first { _ in true } }
                group.addTask {
                    try await Task.sleep(for: .seconds(60))
                    return nil
                }
                defer { group.cancelAll() }
                return try await group.next() ?? nil
            }
            let line = try #require(first, "no line within 60 s")
            live.append(Array(audio.dropFirst(32_000).prefix(16_000)), voiced: true)
            let finished = try live.finish(transcribingRest: transcribingRest)
            return (finished.runs, finished.lines, line)
        }
        let passed = try await runs(transcribingRest: false)
        #expect(passed.runs == 1, "\(passed)")
        #expect(passed.lines == [passed.first], "\(passed)")
        // As before for a reading not yet judged: the last second is transcribed too.
        let notYet = try await runs(transcribingRest: true)
        #expect(notYet.runs == 2, "\(notYet)")
        #expect(notYet.lines.count == 1 && notYet.lines != [notYet.first], "\(notYet)")
    }
}
