import Foundation
import TestSupport
import Testing

private let modelsFolder = TestEnvironment.modelsFolder

private func jsonObject(_ text: String) throws -> [String: Any] {
    let line = try #require(text.split(separator: "\n").last)
    return try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
}

/// The MANIFEST.tsv texts of a dua_audio folder, by file name.
func duaManifestTexts(_ folder: String) throws -> [String: String] {
    let manifest = try String(contentsOfFile: folder + "/MANIFEST.tsv", encoding: .utf8)
    var texts: [String: String] = [:]
    for line in manifest.split(separator: "\n").dropFirst() {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
        texts[String(fields[0])] = String(fields[6])
    }
    return texts
}

/// Writes a texts file (`{"texts": entries}`) as `texts.json` in `folder`; returns its path.
func writeTextsFile(_ entries: [[String: Any]], in folder: String) throws -> String {
    let path = folder + "/texts.json"
    try JSONSerialization.data(withJSONObject: ["texts": entries]).write(to: URL(fileURLWithPath: path))
    return path
}

@Suite(
    "proofkit transcribe and voice --recognizer",
    .enabled(if: TestEnvironment.hasProofkitBinary, "build proofkit first"), .offThePool)
struct TranscribeEndToEndTests {
    static let quran = TestEnvironment.fixture("speech_ar_quran_16k.wav")

    @Test("usage: the recogniser choices and their conflicts exit 64")
    func usage() throws {
        for arguments in [
            ["voice", Self.quran, "--recognizer", "bogus"],
            ["voice", Self.quran, "--recognizer", "cmd"],
            ["voice", "--live", "--recognizer", "whisper", "--recognizer-cmd", "x"],
            ["voice", Self.quran, "--recognizer", "none", "--transcript-file", "x"],
            ["transcribe"],
            ["transcribe", Self.quran, "--threads", "0"],
            // 100000 threads made ONNX Runtime start them: 4 GiB and no end in 60 s.
            ["transcribe", Self.quran, "--threads", "100000"],
        ] {
            let result = try TestEnvironment.runProofkit(arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.hasPrefix("proofkit \(arguments[0]): "))
        }
    }

    @Test(
        "a missing model: --recognizer whisper and transcribe exit 69; the default falls back with one line on stderr")
    func missingModel() throws {
        try withTemporaryFolder { empty in
            let environment = ["PROOFKIT_MODELS": empty]
            let explicit = try TestEnvironment.runProofkit(
                ["voice", Self.quran, "--recognizer", "whisper"], environment: environment)
            #expect(explicit.status == 69)
            #expect(explicit.stdout.isEmpty)
            #expect(explicit.stderr.contains("whisper_") && explicit.stderr.split(separator: "\n").count == 1)
            let transcribe = try TestEnvironment.runProofkit(["transcribe", Self.quran], environment: environment)
            #expect(transcribe.status == 69 && transcribe.stdout.isEmpty)
            let fallback = try TestEnvironment.runProofkit(["voice", Self.quran, "--json"], environment: environment)
            #expect(fallback.status == 0)
            let lines = fallback.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].contains("not available") && lines[0].contains("voice only"))
            let object = try jsonObject(fallback.stdout)
            #expect(object["recognizer"] as? String == "none")
            #expect(object["rule"] as? String == "voiceOnly")
            #expect(object["transcript"] is NSNull)
        }
    }

    @Test("input over the length limit is refused (65) before any model is needed; a missing file is 66")
    func tooLong() throws {
        try withTemporaryFolder { folder in
            let long = folder + "/long.wav"
            try TestAudio.writeWAV([Int16](repeating: 0, count: 16_000 * 40), rate: 16_000, to: long)
            let result = try TestEnvironment.runProofkit(
                ["transcribe", long, "--max-seconds", "30"], environment: ["PROOFKIT_MODELS": folder])
            #expect(result.status == 65, "\(result.stderr)")
            #expect(result.stderr.contains("longer than 30 s"))
            let missing = try TestEnvironment.runProofkit(["transcribe", folder + "/nothing.wav"])
            #expect(missing.status == 66)
        }
    }

    @Test(
        "transcribe: the Quran fixture's verse, as text and as JSON",
        .enabled(if: TestEnvironment.hasWhisperModels, "the Whisper models are not built"))
    func transcribeFixture() throws {
        let text = try TestEnvironment.runProofkit(["transcribe", Self.quran])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("ورسوله") && text.stdout.contains("الله"))
        let json = try TestEnvironment.runProofkit(["transcribe", Self.quran, "--json", "--score-text", "waking"])
        let object = try jsonObject(json.stdout)
        #expect((object["transcript"] as? String)?.contains("براءة") == true)
        #expect(abs((object["seconds"] as? Double ?? 0) - 8.77) < 0.02)
        let timing = try #require(object["timing"] as? [String: Any])
        #expect((timing["transcribe_seconds"] as? Double ?? -1) > 0)
        let score = try #require(object["score"] as? [String: Any])
        #expect((score["mean_log_prob"] as? Double ?? 0) < -1)  // not the text that was read
    }

    @Test(
        "a damaged model (one byte flipped in a copy) exits 78",
        .enabled(if: TestEnvironment.hasWhisperModels, "the Whisper models are not built"))
    func damagedModel() throws {
        try withTemporaryFolder { folder in
            let manager = FileManager.default
            for name in ["manifest.json", "whisper_tokenizer.json", "whisper_config.json", "whisper_base_encoder.onnx"]
            {
                try manager.copyItem(atPath: modelsFolder + "/" + name, toPath: folder + "/" + name)
            }
            try manager.createSymbolicLink(
                atPath: folder + "/whisper_base_decoder.onnx",
                withDestinationPath: modelsFolder + "/whisper_base_decoder.onnx")
            let handle = try #require(FileHandle(forUpdatingAtPath: folder + "/whisper_base_encoder.onnx"))
            try handle.seek(toOffset: 1_000_000)
            let byte = try #require(try handle.read(upToCount: 1)).first!
            try handle.seek(toOffset: 1_000_000)
            try handle.write(contentsOf: Data([byte ^ 0x01]))
            try handle.close()
            let environment = ["PROOFKIT_MODELS": folder]
            for arguments in [
                ["transcribe", Self.quran], ["voice", Self.quran, "--recognizer", "whisper"], ["voice", Self.quran],
            ] {
                let result = try TestEnvironment.runProofkit(arguments, environment: environment)
                #expect(result.status == 78, "\(arguments): \(result.stderr)")
                #expect(result.stderr.contains("SHA-256"))
            }
        }
    }

    @Test(
        "voice with the recogniser: noise is rejected by the key words, silence without running it",
        .enabled(if: TestEnvironment.hasWhisperModels, "the Whisper models are not built"))
    func noiseAndSilence() throws {
        let noise = try TestEnvironment.runProofkit(["voice", TestEnvironment.fixture("noise_fan_16k.wav"), "--json"])
        let object = try jsonObject(noise.stdout)
        #expect(object["recognizer"] as? String == "whisper")
        #expect(object["verdict"] as? String == "rejected")
        #expect(object["rule"] as? String == "keyWords")
        let silence = try TestEnvironment.runProofkit([
            "voice", TestEnvironment.fixture("odd_silence_001.wav"), "--json",
        ])
        let quiet = try jsonObject(silence.stdout)
        #expect(quiet["verdict"] as? String == "rejected")
        #expect((quiet["recognizer_skipped"] as? String)?.contains("no voice") == true)
    }

    @Test(
        "live: the voiced audio is transcribed as it comes and the verse's key words light up",
        .enabled(if: TestEnvironment.hasWhisperModels, "the Whisper models are not built"))
    func live() throws {
        try withTemporaryFolder { folder in
            // The fixture as a virtual microphone (raw S16_LE after 1 s of silence), unpaced.
            let audio = try TestAudio.fixture("speech_ar_quran_16k.wav")
            var raw = Data(count: 32_000)
            for sample in audio.samples {
                let value = Int16(max(-32768, min(32767, (sample * 32768).rounded())))
                withUnsafeBytes(of: value.littleEndian) { raw.append(contentsOf: $0) }
            }
            try raw.write(to: URL(fileURLWithPath: folder + "/mic.raw"))
            try """
            pcm.vmic { type file slave.pcm { type null } file "/dev/null" infile "\(folder)/mic.raw" format "raw"
                       hint.description "virtual microphone" }
            """.write(toFile: folder + "/asound.conf", atomically: true, encoding: .utf8)
            try
                #"{"texts": [{"name": "tawbah", "text": "إِنَّ اللَّهَ بِكُلِّ شَيْءٍ عَلِيمٌ بَرَاءَةٌ مِنَ اللَّهِ وَرَسُولِهِ", "reading_seconds": 5}]}"#
                .write(toFile: folder + "/texts.json", atomically: true, encoding: .utf8)
            let result = try TestEnvironment.runProofkit(
                [
                    "voice", "--live", "--device", "vmic", "--json", "--max-seconds", "10", "--text", "tawbah",
                    "--texts",
                    folder + "/texts.json",
                ],
                environment: ["PROOFKIT_ALSA_CONFIG": folder + "/asound.conf"])
            #expect(result.status == 0, "\(result.stderr)")
            let events = try result.stdout.split(separator: "\n").map {
                try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
            #expect(events.first?["recognizer_name"] as? String == "whisper")
            let transcripts = events.filter { $0["event"] as? String == "transcript" }.compactMap {
                $0["text"] as? String
            }
            #expect(transcripts.contains { $0.contains("ورسوله") }, "\(transcripts)")
            let end = try #require(events.last)
            #expect(end["verdict"] as? String == "accepted")
            #expect(end["rule"] as? String == "keyWords")
        }
    }

    @Test(
        "real du'a recordings: one is accepted for its own text (key words picked), not for another, not as the waking du'a",
        .enabled(
            if: TestEnvironment.hasWhisperModels && TestEnvironment.sharedData != nil,
            "needs the Whisper models and ../shared"))
    func duaRecordings() throws {
        let data = TestEnvironment.sharedData!.appendingPathComponent("dua_audio").path
        let texts = try duaManifestTexts(data)
        try withTemporaryFolder { folder in
            let entries: [[String: Any]] = [
                ["name": "clothes", "text": try #require(texts["5hm.mp3"]), "reading_seconds": 8],
                ["name": "leaving", "text": try #require(texts["18hm.mp3"]), "reading_seconds": 9],
            ]
            let textsFile = try writeTextsFile(entries, in: folder)
            func verdict(_ recording: String, _ text: String) throws -> [String: Any] {
                let result = try TestEnvironment.runProofkit([
                    "voice", data + "/" + recording, "--text", text, "--texts", textsFile, "--json",
                ])
                #expect(result.status == 0, "\(result.stderr)")
                return try jsonObject(result.stdout)
            }
            let own = try verdict("5hm.mp3", "clothes")
            #expect(own["verdict"] as? String == "accepted", "\(own["transcript"] ?? "")")
            #expect(own["rule"] as? String == "keyWords")
            #expect(((own["forced_score"] as? [String: Any])?["mean_log_prob"] as? Double ?? -9) > -1.5)
            let other = try verdict("18hm.mp3", "clothes")
            #expect(other["verdict"] as? String == "rejected")
            // 5hm begins "الحمد لله الذي", as the waking du'a does: it must not pass as it.
            let waking = try verdict("5hm.mp3", "waking")
            #expect(waking["verdict"] as? String == "rejected")
            #expect(((waking["forced_score"] as? [String: Any])?["mean_log_prob"] as? Double ?? 0) < -2)
        }
    }

    @Test(
        "voice --forced-score: a real recording whose key words Whisper misspells is accepted by the forced score, and not for another text or as the waking du'a",
        .enabled(
            if: TestEnvironment.hasWhisperModels && TestEnvironment.sharedData != nil,
            "needs the Whisper models and ../shared"))
    func forcedScoreRecordings() throws {
        let data = TestEnvironment.sharedData!.appendingPathComponent("dua_audio").path
        let texts = try duaManifestTexts(data)
        try withTemporaryFolder { folder in
            // 34hm: "سبحانك اللهم ربنا وبحمدك اللهم اغفر لي", 6 s; Whisper writes its key words apart
            // from how the text spells them, so too few are heard.
            let entries: [[String: Any]] = [
                ["name": "ruku", "text": try #require(texts["34hm.mp3"]), "reading_seconds": 6],
                ["name": "clothes", "text": try #require(texts["5hm.mp3"]), "reading_seconds": 8],
            ]
            let textsFile = try writeTextsFile(entries, in: folder)
            func verdict(_ text: String) throws -> [String: Any] {
                let result = try TestEnvironment.runProofkit([
                    "voice", data + "/34hm.mp3", "--text", text, "--texts", textsFile, "--json", "--forced-score",
                ])
                #expect(result.status == 0, "\(result.stderr)")
                return try jsonObject(result.stdout)
            }
            let own = try verdict("ruku")
            let ownScore = try #require(own["forced_score"] as? [String: Any])
            #expect(own["verdict"] as? String == "accepted", "\(own["transcript"] ?? "") \(ownScore)")
            #expect(own["rule"] as? String == "forcedScore")
            #expect(ownScore["passes"] as? Bool == true)
            for other in ["clothes", "waking"] {
                let result = try verdict(other)
                let score = try #require(result["forced_score"] as? [String: Any])
                #expect(result["verdict"] as? String == "rejected", "\(other): \(score)")
                #expect(score["passes"] as? Bool == false)
                #expect((score["ratio"] as? Double ?? 0) < -2)
            }
            // transcribe scores all three on one encoding and agrees with voice.
            let transcribe = try TestEnvironment.runProofkit(
                [
                    "transcribe", data + "/34hm.mp3", "--texts", textsFile, "--json", "--score-text", "ruku",
                    "--score-text", "clothes", "--score-text", "waking",
                ])
            #expect(transcribe.status == 0, "\(transcribe.stderr)")
            let scores = try #require(try jsonObject(transcribe.stdout)["scores"] as? [[String: Any]])
            #expect(scores.map { $0["text"] as? String } == ["ruku", "clothes", "waking"])
            #expect(scores.map { $0["passes"] as? Bool } == [true, false, false])
            #expect(abs((scores[0]["ratio"] as? Double ?? 9) - (ownScore["ratio"] as? Double ?? 0)) < 0.01)
        }
    }
}

/// The default rule on real recordings: the key words, or the span forced score (Benchmarks/whisper_dua_eval.md).
@Suite(
    "proofkit voice: the span forced score by default",
    .enabled(if: TestEnvironment.hasProofkitBinary, "build proofkit first"), .offThePool)
struct SpanForcedScoreEndToEndTests {
    /// Whether the tests that read ../shared/data/dua_audio can run: the Whisper models and ../shared.
    static let hasDuaData = TestEnvironment.hasWhisperModels && TestEnvironment.sharedData != nil

    /// The dua_audio folder and its MANIFEST texts by file (the tests using it are gated by ``hasDuaData``).
    static func duaData() throws -> (folder: String, texts: [String: String]) {
        let shared = try #require(TestEnvironment.sharedData, "needs ../shared/data/dua_audio")
        let folder = shared.appendingPathComponent("dua_audio").path
        return (folder, try duaManifestTexts(folder))
    }

    /// A texts file with 254hm's text (a hadith: «قال رسول الله ﷺ: من قال: سبحان الله وبحمده في
    /// يوم مئة مرة ...»; the reader says only "سبحان الله وبحمده") and 5hm's.
    static func textsFile(_ texts: [String: String], in folder: String) throws -> String {
        try writeTextsFile(
            [
                ["name": "hadith", "text": try #require(texts["254hm.mp3"]), "reading_seconds": 2],
                ["name": "clothes", "text": try #require(texts["5hm.mp3"]), "reading_seconds": 8],
            ], in: folder)
    }

    @Test(
        "a recording of the words inside a narrated text passes by the span forced score by default; not for another text, not with --no-forced-score",
        .enabled(if: hasDuaData, "needs the Whisper models and ../shared/data/dua_audio"))
    func recording() throws {
        let (data, texts) = try Self.duaData()
        try withTemporaryFolder { folder in
            let textsFile = try Self.textsFile(texts, in: folder)
            func verdict(_ text: String, _ extra: [String] = []) throws -> [String: Any] {
                let result = try TestEnvironment.runProofkit(
                    ["voice", data + "/254hm.mp3", "--text", text, "--texts", textsFile, "--json"] + extra)
                #expect(result.status == 0, "\(result.stderr)")
                return try jsonObject(result.stdout)
            }
            let own = try verdict("hadith")
            let score = try #require(own["forced_score"] as? [String: Any])
            #expect(own["verdict"] as? String == "accepted", "\(own["transcript"] ?? "") \(score)")
            #expect(own["rule"] as? String == "forcedScore")
            #expect(score["passes"] as? Bool == true && score["rule_on"] as? Bool == true)
            // The words heard are a small part of the narrated text.
            #expect((score["coverage"] as? Double ?? 1) < 0.5)
            #expect((own["transcript"] as? String)?.isEmpty == false)
            #expect(own["heard"] is [Any])
            let keyWordsOnly = try verdict("hadith", ["--no-forced-score"])
            #expect(keyWordsOnly["verdict"] as? String == "rejected")
            #expect(keyWordsOnly["rule"] as? String == "keyWords")
            #expect((keyWordsOnly["forced_score"] as? [String: Any])?["rule_on"] as? Bool == false)
            for other in ["clothes", "waking"] {
                let result = try verdict(other)
                #expect(result["verdict"] as? String == "rejected", "\(other): \(result["forced_score"] ?? "")")
            }
            let both = try TestEnvironment.runProofkit([
                "voice", data + "/254hm.mp3", "--forced-score", "--no-forced-score",
            ])
            #expect(both.status == 64)
        }
    }

    @Test(
        "live: the same rule judges the voiced audio when listening ends (virtual microphone)",
        .enabled(if: hasDuaData, "needs the Whisper models and ../shared/data/dua_audio"))
    func live() throws {
        let (data, texts) = try Self.duaData()
        try withTemporaryFolder { folder in
            let textsFile = try Self.textsFile(texts, in: folder)
            // The recording as a virtual microphone: 1 s of silence, then 254hm as 16 kHz S16_LE (ffmpeg).
            _ = try AudioTestTools.require(
                "ffmpeg",
                [
                    "-v", "error", "-i", data + "/254hm.mp3", "-f", "s16le", "-ac", "1", "-ar", "16000",
                    folder + "/speech.raw",
                ])
            var raw = Data(count: 32_000)
            raw.append(try Data(contentsOf: URL(fileURLWithPath: folder + "/speech.raw")))
            raw.append(Data(count: 32_000))
            try raw.write(to: URL(fileURLWithPath: folder + "/mic.raw"))
            try """
            pcm.vmic { type file slave.pcm { type null } file "/dev/null" infile "\(folder)/mic.raw" format "raw"
                       hint.description "virtual microphone" }
            """.write(toFile: folder + "/asound.conf", atomically: true, encoding: .utf8)
            func listen(_ extra: [String]) throws -> [[String: Any]] {
                let result = try TestEnvironment.runProofkit(
                    [
                        "voice", "--live", "--device", "vmic", "--json", "--max-seconds", "6", "--text", "hadith",
                        "--texts", textsFile,
                    ] + extra,
                    environment: ["PROOFKIT_ALSA_CONFIG": folder + "/asound.conf"])
                #expect(result.status == 0, "\(result.stderr)")
                return try result.stdout.split(separator: "\n").map {
                    try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
                }
            }
            let events = try listen([])
            let end = try #require(events.last)
            let score = try #require(end["forced_score"] as? [String: Any], "\(end)")
            #expect(end["verdict"] as? String == "accepted", "\(end["transcript"] ?? "") \(score)")
            #expect(end["rule"] as? String == "forcedScore")
            #expect(score["passes"] as? Bool == true)
            #expect(events.contains { $0["event"] as? String == "accepted" && $0["rule"] as? String == "forcedScore" })
            let keyWordsOnly = try #require(try listen(["--no-forced-score"]).last)
            #expect(keyWordsOnly["verdict"] as? String == "rejected")
            #expect(keyWordsOnly["rule"] as? String == "keyWords")
        }
    }
}
