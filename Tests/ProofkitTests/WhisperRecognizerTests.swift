import DuaMatching
import Foundation
import Proofkit
import ProofkitCore
import SpeechRecognition
import TestSupport
import Testing

/// The models folder the tests use: `$PROOFKIT_MODELS`, else the package's `Models/generated`.
let whisperStore = ModelStore(
    environment: ProcessInfo.processInfo.environment, executablePath: nil,
    currentDirectory: TestEnvironment.packageRoot.path)
let whisperInstalled = WhisperModelFiles.isInstalled(in: whisperStore)

// Serialized: the tests share one recogniser, which runs one call at a time.
@Suite(
    "WhisperRecognizer (ONNX Runtime)", .serialized, .offThePool,
    .enabled(if: whisperInstalled, "the Whisper models are not built (bash .ci/setup)"))
struct WhisperRecognizerTests {
    static let recognizer: WhisperRecognizer? = try? WhisperRecognizer(store: whisperStore)

    @Test(
        "the Quran fixture: the same greedy tokens as the models build's CTranslate2 reference, and the verse's words")
    func quranFixture() throws {
        let recognizer = try #require(Self.recognizer)
        let audio = try TestAudio.fixture("speech_ar_quran_16k.wav")
        #expect(audio.sampleRate == 16_000)
        let transcription = try recognizer.transcribe(samples: audio.samples)
        // The end of al-Anfal 8:75 and the start of at-Tawbah 9:1: "... إن الله بكل شيء عليم ·
        // براءة من الله ورسوله".
        let words = Set(ArabicNormalizer.normalizedWords(transcription.text))
        for word in ["الله", "براءه", "ورسوله"] { #expect(words.contains(word), "\(word) in \(transcription.text)") }
        #expect(transcription.windows.count == 1 && transcription.windows[0].stop == .endOfText)
        // The build's reference (CTranslate2 fp32, greedy) for this clip, when it is there.
        let referencePath = whisperStore.folders.map { $0 + "/whisper_reference.json" }.first {
            FileManager.default.fileExists(atPath: $0)
        }
        if let referencePath {
            let root = try JSONReader.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: referencePath))))
            let clip = root["clips"]?.array?.first { $0["clip"]?.string?.hasSuffix("speech_ar_quran_16k.wav") == true }
            // The installed graphs' own greedy tokens: the int8 ones when the build installed int8.
            let installed = root["weights"]?.string?.hasPrefix("int8") == true ? clip?["int8"] : clip
            let tokens = installed?["tokens"]?.array?.compactMap(\.integer)
            if let tokens { #expect(transcription.windows[0].tokens == tokens) }
        }
    }

    @Test(
        "span scores right after the transcription (the window it left encoded, kept) equal those after the window is encoded afresh"
    )
    func spanScoresReuseTheEncodedWindow() throws {
        let recognizer = try #require(Self.recognizer)
        let audio = try TestAudio.fixture("speech_ar_quran_16k.wav")
        let features = WhisperFeatures.logMel(of: audio.samples)
        let transcription = try recognizer.transcriber.transcribe(features: features)
        let texts = ["إن الله بكل شيء عليم براءة من الله ورسوله", "سبحان ربي العظيم وبحمده"]
        let kept = try recognizer.spanScores(texts: texts, features: features, transcription: transcription)
        // Another window in between, so that the reading's window is encoded again.
        let silence = WhisperFeatures.logMel(of: [Float](repeating: 0, count: 16_000))
        try recognizer.transcriber.model.encode(melWindow: silence.window(startingAt: 0))
        let fresh = try recognizer.spanScores(texts: texts, features: features, transcription: transcription)
        #expect(kept == fresh)
        #expect(!kept[0].parts.isEmpty && kept[0].parts[0].text.logProbabilities.count > 3)
    }

    @Test("transcribeScoringSpans over two windows equals transcribe then spanScores (the real model)")
    func transcribeScoringSpansTwoWindows() throws {
        let recognizer = try #require(Self.recognizer)
        let audio = try TestAudio.fixture("speech_ar_quran_16k.wav")
        let features = WhisperFeatures.logMel(of: Array([[Float]](repeating: audio.samples, count: 4).joined()))
        let texts = ["إن الله بكل شيء عليم براءة من الله ورسوله", "سبحان ربي العظيم وبحمده"]
        let transcription = try recognizer.transcriber.transcribe(features: features)
        #expect(transcription.windows.count == 2)
        let spans = try recognizer.spanScores(texts: texts, features: features, transcription: transcription)
        let both = try recognizer.transcribeScoringSpans(texts: texts, features: features)
        #expect(both.transcription == transcription)
        #expect(both.spans == spans)
        #expect(!both.spans[0].parts.isEmpty)
    }

    @Test("forced scores: the verse that was read scores far above the waking du'a")
    func forcedScore() throws {
        let recognizer = try #require(Self.recognizer)
        let audio = try TestAudio.fixture("speech_ar_quran_16k.wav")
        let verseScore = try recognizer.score(text: "بَرَاءَةٌ مِنَ اللَّهِ وَرَسُولِهِ", samples: audio.samples)
        let verse = try #require(verseScore)
        let waking = DuaCatalog.builtIn.text(named: "waking")!
        let otherScore = try recognizer.score(text: ArabicNormalizer.withoutMarks(waking.text), samples: audio.samples)
        let other = try #require(otherScore)
        #expect(verse.meanLogProbability > other.meanLogProbability + 1.5)
        #expect(verse.logProbabilities.count == verse.tokens.count)
        #expect(verse.logProbabilities.allSatisfy { $0 <= 0 })
    }

    @Test("noise and silence: bounded work, and no key words of the waking du'a")
    func noise() throws {
        let recognizer = try #require(Self.recognizer)
        let matcher = DuaMatcher(text: DuaCatalog.builtIn.text(named: "waking")!)
        for name in ["noise_fan_16k.wav", "noise_ac_16k.wav", "noise_night_16k.wav"] {
            let audio = try TestAudio.fixture(name)
            let transcription = try recognizer.transcribe(samples: audio.samples)
            #expect(transcription.windows.count == 1)
            #expect(transcription.windows[0].tokens.count <= 224)
            #expect(
                matcher.evaluate(transcript: transcription.text).verdict.isAccepted == false,
                "\(name): \(transcription.text)")
        }
        let silence = try recognizer.transcribe(samples: [Float](repeating: 0, count: 16_000 * 5))
        #expect(silence.decoderSteps <= 224)
        #expect(matcher.evaluate(transcript: silence.text).verdict.isAccepted == false)
    }

    @Test("the installed int8 graphs passed the build's check against CTranslate2 (fp32 and faster-whisper's int8)")
    func int8Check() throws {
        let referencePath = try #require(
            whisperStore.folders.map { $0 + "/whisper_reference.json" }.first {
                FileManager.default.fileExists(atPath: $0)
            },
            "whisper_reference.json is made with the graphs")
        let root = try JSONReader.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: referencePath))))
        let weights = try #require(root["weights"]?.string)
        try #require(weights.hasPrefix("int8"), "the set-up builds int8 graphs; these are \(weights)")
        let check = try #require(root["int8_check"])
        let mean = try #require(check["encoder_mean_abs_diff"]?.number)
        let meanTolerance = try #require(check["encoder_mean_abs_tolerance"]?.number)
        let logits = try #require(check["logits_max_abs_diff"]?.number)
        let logitsTolerance = try #require(check["logits_tolerance"]?.number)
        #expect(mean <= meanTolerance && logits <= logitsTolerance)
        let ours = try #require(check["token_edits_from_ct2_fp32"]?.integer)
        let theirs = try #require(check["ct2_int8_token_edits_from_ct2_fp32"]?.integer)
        #expect(ours <= theirs)
        // Every check clip, including the fixture, was compared.
        let clips = try #require(root["clips"]?.array)
        #expect(!clips.isEmpty && clips.allSatisfy { $0["int8"]?["tokens"]?.array != nil })
        // And the graphs this recogniser loaded are those files: the decoder holds no float32
        // token embedding (51865 x 512 x 4 bytes = 106 MB), so it is well under 80 MB.
        let decoder = try #require(
            whisperStore.folders.map { $0 + "/whisper_base_decoder.onnx" }.first {
                FileManager.default.fileExists(atPath: $0)
            })
        let size = try #require(try FileManager.default.attributesOfItem(atPath: decoder)[.size] as? Int)
        #expect(size < 80_000_000)
    }
}
