import DuaMatching
import ProofkitCore
import ReadingRules
import SpeechRecognition
import TestSupport
import Testing
import VoiceGate

@Suite("ReadingProof")
struct ReadingProofTests {
    /// Real speech read twice (at 3 s and 12 s) in a real air-conditioned room.
    func room(withSpeech: Bool) throws -> TestAudio {
        let room = try TestAudio.fixture("noise_ac_16k.wav").looped(toSeconds: 24).scaled(toRMS: -50)
        guard withSpeech else { return room }
        let speech = try TestAudio.fixture("speech_en_ljspeech_16k.wav").scaled(toRMS: -32)
        return room.mixing(speech, at: 3).mixing(speech, at: 12)
    }

    @Test("key words from transcript lines light up once each, and acceptance is emitted once")
    func keyWords() throws {
        var proof = try ReadingProof()
        var events: [ReadingProofEvent] = []
        let audio = try room(withSpeech: true)
        for (i, chunk) in audio.chunks(of: 1600).enumerated() {
            events += proof.process(audio: chunk)
            if i == 40 { events += proof.process(transcript: "الحمد لله الذي") }
            if i == 45 { events += proof.process(transcript: "الحمدلله الذي احيانا بعدما", at: 4.5) }
            if i == 50 { events += proof.process(transcript: "اماتنا واليه النشور") }
        }
        let hits = events.compactMap { event -> HeardKeyWord? in
            if case .keyWordHeard(let hit) = event { return hit }
            return nil
        }
        #expect(hits.map(\.index) == [0, 1, 2, 3, 4])
        #expect(hits[0].word == "الْحَمْدُ")
        #expect(hits[1].seconds == 4.5)
        #expect(isApproximatelyEqual(hits[0].seconds, 4.1, absoluteTolerance: 0.05))
        let accepted = events.filter { if case .accepted = $0 { return true } else { return false } }
        #expect(accepted.count == 1)
        let result = proof.finish()
        #expect(result.match.verdict == .accepted(score: 5))
        #expect(result.match.rule == .keyWords)
        #expect(result.transcript.count == 3)
    }

    @Test("level events come at 10 Hz with voice on/off at the speech")
    func meter() throws {
        var proof = try ReadingProof()
        var events: [ReadingProofEvent] = []
        for chunk in try room(withSpeech: true).chunks(of: 512) { events += proof.process(audio: chunk) }
        let levels = events.compactMap { event -> ReadingLevel? in
            if case .level(let level) = event { return level }
            return nil
        }
        #expect(abs(levels.count - 240) <= 1)
        #expect(levels.allSatisfy { $0.thresholdDecibels > $0.floorDecibels })
        let starts = events.compactMap { event -> Double? in
            if case .voiceStarted(let seconds) = event { return seconds }
            return nil
        }
        #expect(starts.contains { abs($0 - 3) < 0.3 })
        #expect(starts.contains { abs($0 - 12) < 0.3 })
        #expect(starts.allSatisfy { $0 >= 2.9 })
    }

    @Test("without a recogniser, voice alone for the reading time is accepted")
    func voiceOnly() throws {
        var proof = try ReadingProof(configuration: ReadingProofConfiguration(usesRecognizer: false))
        for chunk in try room(withSpeech: true).chunks(of: 1600) { _ = proof.process(audio: chunk) }
        let result = proof.finish()
        #expect(result.match.rule == .voiceOnly)
        #expect(result.match.verdict.isAccepted)
        #expect(result.gate.voicedSeconds > 12)

        var quiet = try ReadingProof(configuration: ReadingProofConfiguration(usesRecognizer: false))
        for chunk in try room(withSpeech: false).chunks(of: 1600) { _ = quiet.process(audio: chunk) }
        #expect(!quiet.finish().match.verdict.isAccepted)
        #expect(quiet.voicedSeconds == 0)
    }

    @Test("energy mode leaves out a real mosquito's buzz (the veto), keeps the reading, and runs only at 16 kHz")
    func speechLikenessVeto() throws {
        func finished(_ audio: TestAudio, _ configuration: ReadingProofConfiguration) throws -> (
            result: ReadingProofResult, streamed: Double
        ) {
            var proof = try ReadingProof(configuration: configuration)
            var streamed = 0.0
            for chunk in audio.chunks(of: 1600) {
                _ = proof.process(audio: chunk)
                #expect(proof.voicedSeconds >= streamed - 1e-9, "voiced seconds never shrink")
                streamed = proof.voicedSeconds
            }
            return (proof.finish(), streamed)
        }
        // The mosquito (openclonk-data, CC0), looped to 15 s at the evaluation's noise-alone level.
        let mosquito = try TestAudio.fixture("audio/veto_mosquito.wav").looped(toSeconds: 15).scaled(toRMS: -36)
        let vetoed = try finished(mosquito, ReadingProofConfiguration(usesRecognizer: false))
        let alone = try finished(mosquito, ReadingProofConfiguration(usesRecognizer: false, vetoesUnlikeSpeech: false))
        #expect(alone.result.gate.voicedSeconds > 2 && vetoed.result.gate.voicedSeconds <= 1.0)
        #expect(vetoed.result.likeSpeechSegments != nil && alone.result.likeSpeechSegments == nil)
        #expect(vetoed.result.energySegments == alone.result.energySegments, "the gate's own lane is unchanged")
        #expect(vetoed.result.match.voicedSeconds == vetoed.result.gate.voicedSeconds)
        // The reading in the air-conditioned room keeps its voice (decided 350 ms late while streaming).
        let reading = try finished(try room(withSpeech: true), ReadingProofConfiguration(usesRecognizer: false))
        let unvetoed = try finished(
            try room(withSpeech: true), ReadingProofConfiguration(usesRecognizer: false, vetoesUnlikeSpeech: false))
        #expect(reading.result.gate.voicedSeconds >= 0.85 * unvetoed.result.gate.voicedSeconds)
        #expect(reading.streamed <= reading.result.gate.voicedSeconds)
        // The veto reads 16 kHz only: at 8 kHz the energy gate decides alone.
        let low = TestAudio(
            samples: stride(from: 0, to: mosquito.samples.count, by: 2).map { mosquito.samples[$0] }, sampleRate: 8000)
        let eight = try finished(
            low, ReadingProofConfiguration(gate: VoiceGateConfiguration(sampleRate: 8000), usesRecognizer: false))
        #expect(eight.result.likeSpeechSegments == nil)
    }

    @Test(
        "energy mode: a spoken word rung on a clock's beat never counts (separate runs, or one long run), the same word off the beat does, a reading keeps all its voice"
    )
    func periodicTrains() throws {
        // A real 0.52 s word in the air-conditioned room, rung at `onsets`.
        let word = try TestAudio.spokenWord()
        func rung(at onsets: [Double]) throws -> TestAudio { try room(withSpeech: false).mixing(word, at: onsets) }
        // The most voice counted while streaming, and whether the proof was accepted on the way.
        var most = 0.0
        var accepted = false
        func finished(_ audio: TestAudio, vetoes: Bool = true) throws -> ReadingProofResult {
            var proof = try ReadingProof(
                configuration: ReadingProofConfiguration(
                    usesRecognizer: false, voiceDetection: .energy, vetoesUnlikeSpeech: vetoes))
            (most, accepted) = (0, false)
            for chunk in audio.chunks(of: 1600) {
                let events = proof.process(audio: chunk)
                accepted = accepted || events.contains { if case .accepted = $0 { true } else { false } }
                most = max(most, proof.voicedSeconds)
            }
            let result = proof.finish()
            #expect(isApproximatelyEqual(proof.voicedSeconds, result.gate.voicedSeconds, absoluteTolerance: 0.4))
            return result
        }
        // Every 2 s (a slow tick-tock whose tick alone passes the gate).
        let beat = try rung(at: stride(from: 1.0, to: 23, by: 2).map { $0 })
        for vetoes in [true, false] {
            let result = try finished(beat, vetoes: vetoes)
            #expect(result.energySegments.count == 11 && result.periodicSegments == result.energySegments)
            #expect(result.gate.voicedSeconds == 0 && result.gate.segments.isEmpty)
        }
        // The same word at uneven gaps (1.3-3.1 s) is voice, every time.
        let gaps = [1.3, 2.6, 1.7, 3.1, 1.5, 2.2, 2.9, 1.6, 2.4]
        let offBeat = try finished(try rung(at: gaps.reduce(into: [1.0]) { $0.append($0.last! + $1) }))
        #expect(offBeat.periodicSegments.isEmpty && offBeat.gate.segments.count == 10)
        #expect(offBeat.gate.voicedSeconds > 4)
        // A real reading, twice: nothing is taken as a train.
        let reading = try finished(try room(withSpeech: true))
        #expect(reading.periodicSegments.isEmpty && reading.gate.voicedSeconds > 12)
        // Rung every 0.6 s the word never falls silent: one long run, no train, but its level repeats
        // on the beat. It never counts, and while streaming it never comes near the reading time, so
        // the voice-only fallback cannot accept it before it is named.
        let rang = try finished(try rung(at: stride(from: 1.0, to: 23, by: 0.6).map { $0 }))
        let needed = try ReadingProof(configuration: ReadingProofConfiguration(usesRecognizer: false)).neededSeconds
        #expect(
            rang.energySegments.count <= 3 && rang.periodicSegments == rang.energySegments,
            "\(rang.energySegments) \(rang.periodicSegments)")
        #expect(rang.gate.voicedSeconds == 0 && !accepted)
        #expect(most < 0.5 * needed, "streamed at most \(most) s of \(needed) s")
        // A reading that starts half a second after the ringing stops keeps all its voice.
        let speech = try TestAudio.fixture("speech_en_ljspeech_16k.wav").scaled(toRMS: -30)
        let quietRoom = try room(withSpeech: false)
        let afterClock = try finished(
            quietRoom.mixing(word, at: stride(from: 1.0, to: 10, by: 0.6).map { $0 }).mixing(speech, at: 10.5))
        let alone = try finished(quietRoom.mixing(speech, at: 10.5))
        #expect(alone.gate.voicedSeconds > 6 && afterClock.gate.voicedSeconds == alone.gate.voicedSeconds)
        // Silero decides without the energy gate's runs: no clock's segments are reported there.
        var silero = try ReadingProof(
            configuration: ReadingProofConfiguration(usesRecognizer: false, voiceDetection: .silero))
        _ = silero.process(audio: beat.samples, speechProbabilities: [])
        #expect(silero.finish().periodicSegments.isEmpty)
    }

    @Test(
        "silero mode drops a whole Silero segment that does not look like speech, keeps a reading's, and cuts Silero's tail after it"
    )
    func sileroSegmentVeto() throws {
        // Silero's probabilities are given (no model here): `speaking(t)` says where it would hear
        // speech. The veto judges the audio itself.
        func finished(_ audio: TestAudio, vetoes: Bool = true, speaking: (Double) -> Bool) throws -> ReadingProofResult
        {
            var proof = try ReadingProof(
                configuration: ReadingProofConfiguration(
                    usesRecognizer: false, voiceDetection: .silero, vetoesUnlikeSpeech: vetoes))
            let size = ReadingProof.sileroChunkSize(sampleRate: 16_000)
            var streamed = 0.0
            for (index, chunk) in audio.chunks(of: size).enumerated() {
                let seconds = Double(index * size) / 16_000
                _ = proof.process(audio: chunk, speechProbabilities: [speaking(seconds) ? 0.9 : 0.05])
                #expect(proof.voicedSeconds >= streamed - 1e-9, "voiced seconds never shrink")
                streamed = proof.voicedSeconds
            }
            let result = proof.finish()
            #expect(streamed <= result.gate.voicedSeconds + 1e-9)
            return result
        }
        // A Silero that takes the whole of a real mosquito's buzz (openclonk-data, CC0) for speech.
        let mosquito = try TestAudio.fixture("audio/veto_mosquito.wav").looped(toSeconds: 15).scaled(toRMS: -36)
        let dropped = try finished(mosquito) { _ in true }
        let counted = try finished(mosquito, vetoes: false) { _ in true }
        #expect(counted.gate.voicedSeconds > 14 && dropped.gate.voicedSeconds == 0)
        #expect(dropped.sileroSegments == counted.sileroSegments, "Silero's own lane is unchanged")
        #expect(dropped.likeSpeechSegments != nil && counted.likeSpeechSegments == nil)
        #expect(!dropped.match.verdict.isAccepted)
        // Two readings in an air-conditioned room, where Silero hears them: both segments stay whole.
        let speech = try TestAudio.fixture("speech_en_ljspeech_16k.wav")
        let length = Double(speech.samples.count) / 16_000
        let reading = try finished(try room(withSpeech: true)) {
            ($0 >= 3 && $0 < 3 + length) || ($0 >= 12 && $0 < 12 + length)
        }
        #expect(reading.sileroSegments.count == 2)
        #expect(reading.gate.segments == reading.sileroSegments)
        // A Silero that stays on for 1.2 s of the room after the second reading (as it does in
        // noise): the tail is cut to within the edge padding of the veto's last kept frame.
        let end = 12 + length
        let lingering: (Double) -> Bool = { ($0 >= 3 && $0 < 3 + length) || ($0 >= 12 && $0 < end + 1.2) }
        let tail = try finished(try room(withSpeech: true), speaking: lingering)
        let unvetoed = try finished(try room(withSpeech: true), vetoes: false, speaking: lingering)
        let last = try #require(tail.gate.segments.last)
        let uncut = try #require(unvetoed.gate.segments.last)
        #expect(uncut.end > end + 1.1, "\(uncut)")
        #expect(last.end <= end + SpeechLikenessVeto.edgePaddingSeconds + 0.2, "\(last)")
        #expect(last.start == uncut.start && last.end > end - 0.5, "the reading itself is kept: \(last)")
        #expect(tail.gate.segments.first == reading.gate.segments.first)
        // Silero runs on over something the veto takes for speech, 0.9 s after the reading: a short
        // stretch of it (a 0.15 s piece of a real word) is isolated and is not an edge, so the tail is
        // still cut; a whole word (0.52 s) is, and the segment reaches it.
        let word = try TestAudio.spokenWord()
        let piece = TestAudio(samples: Array(word.samples.prefix(2_400)), sampleRate: 16_000)
        let runOn: (Double) -> Bool = { ($0 >= 3 && $0 < 3 + length) || ($0 >= 12 && $0 < end + 1.8) }
        let isolated = try finished(try room(withSpeech: true).mixing(piece, at: end + 0.9), speaking: runOn)
        let joined = try finished(try room(withSpeech: true).mixing(word, at: end + 0.9), speaking: runOn)
        let keptPiece = try #require(isolated.likeSpeechSegments?.last)
        #expect(keptPiece.start > end + 0.6 && keptPiece.duration < SpeechLikenessVeto.edgeIsolatedShortestSeconds)
        let cut = try #require(isolated.gate.segments.last)
        #expect(cut.end <= end + SpeechLikenessVeto.edgePaddingSeconds + 0.2 && cut.start == last.start, "\(cut)")
        let reached = try #require(joined.gate.segments.last)
        #expect(reached.end > end + 1.3, "\(reached)")
    }

    @Test("two key words and twice the reading time of voice: accepted by the read-twice rule")
    func readTwice() throws {
        var proof = try ReadingProof()
        _ = proof.process(transcript: "الحمد لله الذي بعثنا واليه المصير", at: 1)
        #expect(!proof.current.verdict.isAccepted)
        for chunk in try room(withSpeech: true).chunks(of: 1600) { _ = proof.process(audio: chunk) }
        let result = proof.finish()
        #expect(result.match.rule == .readTwice)
        #expect(result.match.verdict.isAccepted)
    }
}

@Suite("ReadingProofRecording: the forced-score rule beside the key words")
struct ForcedScoreAcceptanceTests {
    static func score(_ value: Double, count: Int = 20) -> ForcedScore {
        ForcedScore(tokens: Array(0..<count), logProbabilities: Array(repeating: value, count: count))
    }
    /// The waking du'a's key-word verdict on a transcript with one of its five key words.
    static let rejected = DuaMatcher(text: DuaCatalog.builtIn.text(named: "waking")!)
        .evaluate(transcript: "الحمد لله", voicedSeconds: 6)

    @Test(
        "a key-word rejection becomes acceptance by the forced score only when the rule passes; an acceptance is kept")
    func combine() {
        #expect(!Self.rejected.verdict.isAccepted)
        let rule = ForcedScoreRule()
        let read = RecognizedReading(
            transcript: "بس مك", score: Self.score(-0.6), transcriptScore: Self.score(-0.25), seconds: 6,
            elapsedSeconds: 1)
        let accepted = rule.accepting(Self.rejected, recognition: read)
        #expect(accepted.verdict.isAccepted)
        #expect(accepted.rule == DuaRule.forcedScore)
        #expect(accepted.heard == Self.rejected.heard)
        let other = RecognizedReading(
            transcript: "الحمد لله", score: Self.score(-3.5), transcriptScore: Self.score(-0.25), seconds: 6,
            elapsedSeconds: 1)
        #expect(
            rule.accepting(Self.rejected, recognition: other) == Self.rejected
        )
        let nothing = RecognizedReading(
            transcript: "", score: Self.score(-0.6), transcriptScore: nil, seconds: 6, elapsedSeconds: 1)
        #expect(
            rule.accepting(Self.rejected, recognition: nothing)
                == Self.rejected)
        var byKeyWords = Self.rejected
        byKeyWords.verdict = Verdict.accepted(score: 4)
        #expect(rule.accepting(byKeyWords, recognition: other) == byKeyWords)
    }

    /// A span score of one window: words first..<end of a text of `words` words.
    static func span(_ first: Int, _ end: Int, of words: Int, text: Double) -> SpanScore {
        SpanScore(
            parts: [
                SpanPart(
                    span: TextSpan(firstWord: first, endWord: end, edits: 0, transcriptLetters: 12),
                    text: Self.score(text), transcript: Self.score(-0.25))
            ],
            wordCount: words)
    }

    @Test("with a span score, the default rule is on and needs the ratio, the tokens and the coverage")
    func spanRule() throws {
        let rule = try #require(ForcedScoreRule.recordingDefault)
        #expect(rule == ForcedScoreRule())
        // The three words of a dhikr inside a 19-word hadith: 16% of its words.
        let dhikr = RecognizedReading(
            transcript: "سبحان الله وبحمده", span: Self.span(5, 8, of: 19, text: -0.3), seconds: 2.5, elapsedSeconds: 1)
        #expect(dhikr.score?.tokens.count == 20 && dhikr.transcriptScore != nil)
        #expect(rule.passes(dhikr))
        #expect(
            rule.accepting(Self.rejected, recognition: dhikr).rule
                == DuaRule.forcedScore)
        // Two words of a 19-word text are under the coverage minimum, whatever their score.
        let fragment = RecognizedReading(
            transcript: "سبحان الله", span: Self.span(5, 7, of: 19, text: -0.3), seconds: 1.5, elapsedSeconds: 1)
        #expect(!rule.passes(fragment))
        #expect(
            rule.accepting(Self.rejected, recognition: fragment)
                == Self.rejected)
        // Nothing heard: no parts, no score.
        let nothing = RecognizedReading(
            transcript: "", span: SpanScore(parts: [], wordCount: 9), seconds: 3, elapsedSeconds: 1)
        #expect(nothing.score == nil && !rule.passes(nothing))
    }
}

@Suite("ReadingProof.currentTranscript")
struct CurrentTranscriptTests {
    @Test("an interim guess is replaced by the line that repeats and extends it; other lines follow")
    func collapsesInterimGuesses() {
        #expect(
            ReadingProof.currentTranscript(["a", "a b", "a  b c", "d", "d e", "x y"]) == ["a  b c", "d e", "x y"])
        #expect(ReadingProof.currentTranscript(["a b", "a c"]) == ["a b", "a c"], "a revision is not an extension")
        #expect(ReadingProof.currentTranscript(["ab", "abc"]) == ["ab", "abc"], "whole words only")
        #expect(ReadingProof.currentTranscript(["a", " ", "a"]) == ["a"])
        #expect(ReadingProof.currentTranscript([]) == [])
    }
}
