import Proofkit
import ProofkitCore

/// `proofkit transcribe REC`: what the built-in recogniser hears.
enum TranscribeCommand: Subcommand {
    static let name = "transcribe"
    static let summary = "print what the built-in Arabic recogniser (Whisper base) hears in a recording"
    static let synopsis =
        "proofkit transcribe RECORDING... [--score-text NAME]... [--threads N] [--max-seconds S] [--json]"
    static let discussion = """
        Runs the recogniser that 'proofkit voice' uses on a recording and prints what it heard:
        OpenAI Whisper base (multilingual), converted to ONNX by the set-up, run by ONNX Runtime on
        this device. A RECORDING is any format proofkit reads (WAV, FLAC, MP3, OGG, CAF, AIFF...,
        any rate and channels), mixed to mono and resampled to 16 kHz. Decoding is greedy, Arabic,
        without timestamps, in 30 s windows whose texts are joined; each window stops at the end of
        text, at 224 tokens, or when a group of tokens repeats 4 times in a row (a loop), and a
        window the model judges to hold no speech is empty. Input longer than --max-seconds
        (default 300, at most 300) is refused (exit 65) before the model is loaded; decoding stops there.

        --score-text NAME also scores that text as 'proofkit voice' does (see 'proofkit dua list';
        --texts FILE adds texts; repeat it to score several texts on one encoding of the audio):
        in each 30 s window, the words of the text that what the recogniser wrote aligns to (its
        letters against the text's, harakat, punctuation, brackets and digits dropped) are scored
        by one decoder pass (each token's log-probability given the audio), and so is what it
        wrote itself; the ratio is the difference of their means over all windows (nats per
        token), about 0 to -1 for the text that was read and below -2 for another. It passes
        (the rule 'proofkit voice' applies beside the key words) when the ratio is at least
        -\(decimalText(ForcedScoreRule.defaultMargin, places: 1)), the scored words have at least \(ForcedScoreRule.defaultMinimumTokens) tokens and cover at least \(Int((ForcedScoreRule.defaultMinimumCoverage * 100).rounded()))% of the
        text's words ("passes").

        Models: whisper_base_encoder.onnx, whisper_base_decoder.onnx, whisper_tokenizer.json and
        whisper_config.json from $PROOFKIT_MODELS, else Models/generated above the executable, else
        ./Models/generated, each checked against its SHA-256 in that folder's manifest.json.

        JSON (--json), one object per RECORDING:
          {"file":PATH,"transcript":TEXT,"seconds":S (audio),"windows":[{"start":S,"text":TEXT,
           "tokens":N,"mean_log_prob":X,"no_speech_prob":P,"stop":"endOfText"|"tokenCap"|
           "repetition"|"noSpeech"}],
           "timing":{"load_seconds":S,"decode_audio_seconds":S,"transcribe_seconds":S,
                     "real_time_factor":X},
           "score":{"text":NAME,"mean_log_prob":X,"tokens":N,"transcript_mean_log_prob":Y|null,
                    "ratio":X-Y|null,"coverage":C|null,"windows":N,"passes":BOOL,"rule_on":true}|
                    {"text":NAME,"mean_log_prob":null,"tokens":null} (the first --score-text),
           "scores":[the same for each --score-text, in order]}

        Exit codes: 0, 64 usage, 65 undecodable or too long RECORDING, 66 missing file, 69 model or ONNX Runtime
        not installed, 78 model damaged (SHA-256 mismatch).

        Examples:
          proofkit transcribe fajr.wav
          proofkit transcribe fajr.wav --json --score-text waking
        """
    static let options: [OptionSpec] = [
        .option(
            "score-text", value: "NAME", repeatable: true, help: "also give the forced score of this text (repeatable)"),
        .option("texts", value: "FILE", help: "a JSON file of extra texts"),
        .option("threads", value: "N", help: "ONNX Runtime threads (default 2)"),
        .option("max-seconds", value: "S", help: "refuse longer recordings (default and most 300)"),
        .flag("json", help: "one JSON object per recording on stdout"),
    ]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        guard !arguments.positionals.isEmpty else { throw UsageError("missing RECORDING") }
        let threads = try arguments.threads(default: 2, allowsZero: false)
        let maxSeconds = try arguments.seconds("max-seconds") ?? 300
        guard maxSeconds > 0, maxSeconds <= 300 else { throw UsageError("--max-seconds must be in (0, 300]") }
        var scoreTexts: [DuaText] = []
        let names = arguments.all("score-text")
        if !names.isEmpty {
            let catalog = try DuaTexts.loadCatalog(arguments, io: io)
            for name in names { scoreTexts.append(try DuaTexts.find(name, in: catalog)) }
        }
        let clock = ContinuousClock()
        var loaded: WhisperRecognizer?
        var loadSeconds = 0.0
        for path in arguments.positionals {
            let decodeStart = clock.now
            let audio: [Float]
            do {
                audio = try WhisperRecognizer.readMono16k(path: path, maxSeconds: maxSeconds).samples
            } catch {
                throw error.path == nil ? error.at(path: path) : error
            }
            let decodeSeconds = (clock.now - decodeStart).secondsValue
            // Loaded once, after the first recording decodes (a bad input is reported first).
            let recognizer: WhisperRecognizer
            if let loaded {
                recognizer = loaded
            } else {
                let loadStart = clock.now
                recognizer = try WhisperRecognizer(
                    store: ModelStore(environment: io.environment), threads: threads)
                loadSeconds = (clock.now - loadStart).secondsValue
                loaded = recognizer
            }
            let start = clock.now
            let features = WhisperFeatures.logMel(of: audio)
            let transcription = try recognizer.transcriber.transcribe(features: features)
            let transcribeSeconds = (clock.now - start).secondsValue
            let scores =
                scoreTexts.isEmpty
                ? []
                : try recognizer.spanScores(
                    texts: scoreTexts.map(\.text), features: features, transcription: transcription
                ).map {
                    RecognizedReading(
                        transcript: transcription.text, span: $0, seconds: transcription.seconds, elapsedSeconds: 0)
                }
            if arguments.has("json") {
                io.printJSON([
                    "file": .string(path), "transcript": .string(transcription.text),
                    "seconds": .rounded(transcription.seconds, places: 3),
                    "windows": .array(transcription.windows.map(windowJSON)),
                    "timing": [
                        "load_seconds": .rounded(loadSeconds, places: 3),
                        "decode_audio_seconds": .rounded(decodeSeconds, places: 3),
                        "transcribe_seconds": .rounded(transcribeSeconds, places: 3),
                        "real_time_factor": .rounded(transcribeSeconds / max(transcription.seconds, 0.01), places: 4),
                    ],
                    "score": scores.isEmpty ? .null : scoreJSON(scores[0], text: scoreTexts[0]),
                    "scores": .array(zip(scores, scoreTexts).map { scoreJSON($0, text: $1) }),
                ])
            } else {
                if arguments.positionals.count > 1 { io.print("\(Formatting.baseName(path)):") }
                io.print(transcription.text.isEmpty ? "(nothing heard)" : transcription.text)
                for (score, scoreText) in zip(scores, scoreTexts) {
                    guard let text = score.score, let span = score.span else {
                        io.print(
                            "forced score of '\(scoreText.name)': none (nothing heard, or no word of the text matches)")
                        continue
                    }
                    var line =
                        "forced score of '\(scoreText.name)': mean log-probability \(decimalText(text.meanLogProbability, places: 2)) over \(text.tokens.count) tokens"
                    if let ratio = ForcedScoreRule.ratio(text: text, transcript: score.transcriptScore) {
                        line += ", \(decimalText(ratio, places: 2)) against what it heard"
                    }
                    line += ", \(span.coveredWords) of \(span.wordCount) words"
                    line += ForcedScoreRule().passes(score) ? " (passes)" : " (does not pass)"
                    io.print(line)
                }
            }
        }
        return .success
    }

    static func windowJSON(_ window: WindowTranscript) -> JSONValue {
        [
            "start": .rounded(window.startSeconds, places: 2), "text": .string(window.text),
            "tokens": .int(window.tokens.count), "mean_log_prob": .rounded(window.meanLogProbability, places: 3),
            "no_speech_prob": .rounded(window.noSpeechProbability, places: 3), "stop": .string(window.stop.rawValue),
        ]
    }

    static func scoreJSON(_ score: RecognizedReading, text: DuaText) -> JSONValue {
        guard case .object(var object) = VoiceResultJSON.forcedScoreJSON(score, rule: ForcedScoreRule())
        else { return ["text": .string(text.name), "mean_log_prob": .null, "tokens": .null] }
        object["text"] = .string(text.name)
        return .object(object)
    }
}
