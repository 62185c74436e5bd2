import Dispatch
import Proofkit
import ProofkitCore
internal import ProofkitSystem

/// `proofkit voice`: the reading proof, live from a microphone or from a recording.
enum VoiceCommand: Subcommand {
    static let name = "voice"
    static let summary = "reading proof: listen for the du'a (live or from a recording)"
    static let synopsis = """
        proofkit voice --live [--device D] [--recognizer whisper|none | --recognizer-cmd CMD | --transcript-file F] [options]
               proofkit voice RECORDING [--recognizer whisper|none | --transcript-file F] [--plot levels.svg] [options]
               proofkit voice --list-devices [--json]
        """
    static let discussion = """
        The reading proof: the voice gate measures how long the person reads aloud (against the
        room's moving noise floor), and the du'a matcher looks for the text's key words in what a
        recogniser heard. With the built-in recogniser: accepted when enough key words are heard,
        or when the model finds the words of the text it heard about as likely as what it wrote
        itself (the forced score, below; --no-forced-score leaves the key words alone). With
        another recogniser (or transcript lines): also when voice lasted twice the reading time
        with two key words. With none: the voice-only fallback, accepted when voice lasted the
        text's reading time. The output says which rule decided.

        Live listening captures mono 16 kHz S16_LE audio from an ALSA device (default 'default';
        'hw:1,0', 'plughw:1,0', ... as 'proofkit voice --list-devices' shows) until --max-seconds of
        audio have been heard, or Ctrl-C (which still ends with the verdict and keeps --record).
        On a terminal it shows the du'a with its key words lighting up as they are heard, a level
        meter with the floor and the moving threshold, and the voiced seconds against what is
        needed; it ends with the verdict. A RECORDING (any format proofkit
        reads: WAV, FLAC, MP3, OGG, CAF, AIFF..., any rate and channels; mixed to mono and resampled
        to 16 kHz) runs through the same engine.

        --recognizer whisper|cmd|none chooses who hears the words. whisper (the default when its
        model is installed) is the built-in Arabic recogniser, OpenAI Whisper base on ONNX Runtime
        on this device ('proofkit transcribe' shows what it hears): a RECORDING is transcribed whole
        (its first 300 s; not at all when the gate heard no voice), and live, the voiced audio is
        transcribed again every 1.2 s of new voice on a thread of its own, so the words light up as
        they are read. With it the read-twice rule is off (it hears the whole reading): the key
        words decide, or the forced score. The forced score: in each 30 s window the model wrote
        something in, what it wrote is aligned to the text (letters against letters, harakat,
        punctuation, brackets, digits and markup dropped, a lone و joined to the next word, word
        breaks ignored), and the words of the text it covers are scored by one decoder pass (the
        mean log-probability per token of those words given the audio), beside the same for what
        it wrote; the difference, the ratio, is about 0 to -1 for the text that was read and below
        -2 for another. Narration or instructions in a text that nobody reads aloud ("قال رسول
        الله ﷺ: ...", "(ثلاثا)") and the parts of a long text in other windows do not count
        against it. Accepted by it (rule "forcedScore") when the ratio over all windows is at least
        -\(decimalText(ForcedScoreRule.defaultMargin, places: 1)), the scored words have at least \(ForcedScoreRule.defaultMinimumTokens) tokens and cover at least \(Int((ForcedScoreRule.defaultMinimumCoverage * 100).rounded()))% of the text's words. A
        RECORDING is scored after it is transcribed; live, the voiced audio of each window is
        scored against its last transcript when listening ends without a pass (an "accepted"
        event with rule "forcedScore" then comes just before "end"; after a pass while
        listening nothing more is transcribed or scored, and "forced_score" is null).
        --forced-score is the default (kept for scripts); --no-forced-score turns it off.
        Benchmarks/whisper_dua_eval.md has its figures. When its model is not installed the
        default goes on with the voice-only rule and says so in one line on stderr; --recognizer
        whisper then exits 69, and a damaged model exits 78. none: voice only. cmd: --recognizer-cmd (which implies it).

        --recognizer-cmd CMD runs any recogniser through /bin/sh: proofkit writes the captured
        audio (16 kHz mono S16_LE, headerless) to its stdin and reads one transcript line per line
        of its stdout. When it dies or disconnects it is restarted quietly (the text heard so far
        is kept). --transcript-file F reads transcript lines from a file, '-' from stdin (with a
        RECORDING, the lines apply at its end; at most 4 MiB, exit 65 past it). A RECORDING at a
        rate outside 8000...384000 Hz or with more than 8 channels is refused (exit 65).

        --vad energy|silero|both chooses what counts as voice: the room-level energy gate
        (cheapest; it rejects clock ticks, drips and typing by their lack of voiced, harmonic
        stretches, and most running water by its bubbles' pure tones, jumping pitch and decay),
        the Silero VAD neural model, or both (voiced only where both agree). The energy gate
        also leaves out voiced frames that a small learned check (trained on other rooms' noise)
        finds unlike speech, so a buzzing insect or a busy clock stops counting, and Silero's
        segments are dropped whole when that check finds them unlike speech on average
        (bubbling on its own) and end at most 0.3 s past the last stretch it finds speech-like,
        leaving out a short one more than 0.6 s from the rest (in noise, Silero runs on after
        the voice); --no-veto counts all of these (JSON
        "vad_veto"). Without
        --vad the gate is silero when ONNX Runtime and the Silero model are installed, else energy;
        the energy gate's noise floor is tracked and shown either way, and the output says which
        gate decided ("gate: ..." line; "vad" and "vad_fallback" in JSON). Silero is
        silero_vad.onnx in $PROOFKIT_MODELS, else Models/generated above the executable or in the
        current folder (PROOFKIT_SILERO_MODEL=FILE names the file itself); it must have the SHA-256
        that the folder's manifest.json (else proofkit's committed digest) gives, or voice exits 78.
        Without ONNX Runtime or the model, '--vad silero' exits 69 and '--vad both' warns on stderr
        and goes on with the energy gate.

        --text NAME picks the text (default waking; 'proofkit dua list'), --texts FILE adds texts
        (see 'proofkit dua --help'). --record out.wav (live only) keeps what was heard, written
        atomically as 16 kHz mono 16-bit WAV when listening ends. --plot levels.svg draws the level,
        the floor, the threshold and the voiced regions over time, coloured by the gate that decided
        them, with the energy gate's and Silero's own voiced regions as two lanes at the top. A
        rejection exits 0, or 2 with --strict.

        Environment: PROOFKIT_ALSA_CONFIG=FILE opens devices from that ALSA configuration file
        instead of the machine's (for tests and demos without hardware); devices defined there are
        treated as not paced in real time (capture waits for proofkit rather than dropping audio).

        JSON (--json), live: one object per line, in order (t = seconds of audio):
          {"event":"start","device":D,"sample_rate":16000,"text":NAME,"vad":MODE,
           "vad_fallback":STRING|null,"recognizer":BOOL,"recognizer_name":"whisper"|"cmd"|
           "transcript-file"|"none","needed_seconds":S,"required_key_words":N}
          {"event":"level","t":T,"level_dbfs":DB,"floor_dbfs":DB,"threshold_dbfs":DB,"voiced":BOOL}
                                                       (every 100 ms of audio; t = end of that audio)
          {"event":"progress","t":T,"voiced_seconds":S,"needed_seconds":S,"key_words_heard":N,
           "required_key_words":N}                     (with each level, and after a key word)
          {"event":"voice_started"|"voice_stopped","t":T}
          {"event":"transcript","t":T,"text":LINE}
          {"event":"key_word","t":T,"index":I,"word":W}   (each key word, the first time only)
          {"event":"accepted","t":T,"rule":"keyWords"|"readTwice"|"voiceOnly"|"forcedScore"}   (at most once)
          {"event":"recognizer_restarted","restarts":N}
          {"event":"recognizer_gave_up"}
          {"event":"end","heard_seconds":S,"transcript":[LINES],"heard_text":TEXT,"dropped_chunks":N,"overruns":N,
           "recognizer_restarts":N,"recording":PATH|null,"judged_as_recording":BOOL,
           ...the RESULT fields below}
          (heard_text: what was heard, once: the built-in recogniser's final text of each window, or
          a recogniser's lines with each interim guess replaced by the line that repeats and extends it;
          judged_as_recording: with --hands-free, a whole reading the live transcript rejected was
          judged again as a recording, from 0.2 s before its first voice, and passed)
        RECORDING: one object: {"file":PATH,"duration_seconds":S,"input_sample_rate":HZ,
          "input_channels":N,"recognizer":"whisper"|"transcript-file"|"none","transcript":TEXT|null,
          "forced_score":FORCED|null,"recognizer_seconds":S|null,
          "recognizer_skipped":STRING|null, ...RESULT}
        RESULT fields: "text":NAME,"vad":MODE,"vad_fallback":STRING|null,"vad_veto":BOOL,"voiced_seconds":S,
          "voiced_segments":[[START,END],...] (seconds),"silero_segments":[[START,END],...]|null
          (Silero's own, before the veto; null with --vad energy),"silero_likeness":[L,...]|null (the
          veto's mean likeness 0-1 over each of them; one under 0.2 is left out; null without the
          veto),"veto_segments":[[START,END],...]|null
          (the stretches the veto found speech-like; null when it did not run),
          "periodic_segments":[[START,END],...]|null (energy-gate runs that are a clock's: onsets
          on a beat, or inside a stretch whose level repeats on a beat; never counted; null with
          --vad silero),
          "noise_floor_dbfs":DB (final floor),
          "needed_seconds":S,"key_words":[{"word":W,"heard":BOOL}],"heard_key_words":[W...],
          "heard":[W...] (the same),
          "required_key_words":N,"verdict":"accepted"|"rejected",
          "rule":"keyWords"|"readTwice"|"voiceOnly"|"forcedScore" (the rule that decided: the words,
          read twice, voice only, the forced score),"reason":STRING|null
        FORCED (whisper; also in the live "end" event): {"mean_log_prob":X (the text's scored words,
          all windows),"tokens":N,"transcript_mean_log_prob":Y|null,"ratio":X-Y|null,"coverage":C
          (share of the text's words scored),"windows":N,"passes":BOOL (the forced-score rule's
          verdict),"rule_on":BOOL (false with --no-forced-score)}
        --list-devices --json: {"devices":[{"name":N,"description":D,"capture":B,"playback":B}]}

        Exit codes: 0 (also for a rejection), 2 rejected with --strict, 64 usage, 65 undecodable
        RECORDING, 66 missing file, 69 device missing/busy/gone, Silero unavailable or
        --recognizer whisper not installed, 74 cannot write --record/--plot, 78 Silero or
        recogniser model damaged (SHA-256 mismatch) or not the model it should be.

        Examples:
          proofkit voice --list-devices
          proofkit voice --live --device plughw:1,0 --recognizer-cmd 'my-asr --lang ar'
          proofkit voice --live --vad both --record fajr.wav --strict
          proofkit voice fajr.wav --json --plot levels.svg
          proofkit voice fajr.wav --recognizer none
          proofkit voice fajr.wav --no-forced-score --json
          proofkit voice fajr.wav --transcript-file fajr.txt --text kursi
          PROOFKIT_ALSA_CONFIG=test.conf proofkit voice --live --device vmic --json --max-seconds 5
        """
    static let options: [OptionSpec] = [
        .flag("live", help: "listen to the microphone"),
        .option("device", value: "D", help: "ALSA capture device (default 'default')"),
        .flag(
            "hands-free",
            help:
                "with --live: end at a pause (1.5 s after a whole reading, else 4 s) and judge a whole reading the live transcript rejects again as a recording, as the alarm's listener does"
        ),
        .flag("list-devices", help: "list the ALSA PCM devices and exit"),
        .option(
            "recognizer", value: "R", choices: ["whisper", "cmd", "none"],
            help: "whisper (default when installed), cmd or none"),
        .option(
            "recognizer-cmd", value: "CMD", help: "external recogniser: audio on stdin, lines on stdout (implies cmd)"),
        .option("transcript-file", value: "F", help: "transcript lines from a file ('-' for stdin)"),
        .option("max-seconds", value: "S", help: "stop after S seconds of audio (default 120)"),
        .option("text", value: "NAME", help: "the text to read (default: waking)"),
        .option("texts", value: "FILE", help: "a JSON file of extra texts"),
        .option(
            "vad", value: "MODE", choices: VoiceDetectionMode.allCases.map(\.rawValue),
            help: "energy, silero or both (default: silero if installed, else energy)"),
        .flag("no-veto", help: "count voiced frames (energy) or segments (silero) that do not look like speech too"),
        .option("record", value: "OUT.wav", help: "keep what was heard (live only)"),
        .option("plot", value: "OUT.svg", help: "draw level, floor, threshold and voiced regions"),
        .flag("forced-score", help: "accept by the forced score too (whisper; the default, kept for scripts)"),
        .flag("no-forced-score", help: "the key words alone decide (whisper)"),
        .flag("strict", help: "exit 2 when the proof is rejected"),
        .flag("json", help: "one JSON event per line on stdout"),
    ]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        if arguments.has("list-devices") {
            let devices = try SoundDevices(environment: io.environment)
            return try listDevices(devices, json: arguments.has("json"), io: io)
        }
        if arguments.value("recognizer-cmd") != nil && arguments.value("transcript-file") != nil {
            throw UsageError("give either --recognizer-cmd or --transcript-file, not both")
        }
        let choice = try recognizerChoice(arguments)
        let mode: VoiceDetectionMode
        let fallback: VoiceDetectionFallback
        if let vad = arguments.value("vad") {
            guard let parsed = VoiceDetectionMode(rawValue: vad) else {
                throw UsageError("--vad must be energy, silero or both, not '\(vad)'")
            }
            mode = parsed
            fallback = .bothOnly
        } else {
            // The default gate: Silero when installed, else the energy gate (said in the output).
            mode = .preferred
            fallback = .always
        }
        guard arguments.has("live") else {
            guard arguments.positionals.count == 1 else {
                throw UsageError(
                    arguments.positionals.isEmpty
                        ? "give --live, --list-devices or a RECORDING" : "give one RECORDING")
            }
            for flag in ["record", "recognizer-cmd", "device", "max-seconds"] where arguments.value(flag) != nil {
                throw UsageError("--\(flag) works only with --live")
            }
            if arguments.has("hands-free") { throw UsageError("--hands-free works only with --live") }
            if arguments.has("forced-score") && arguments.has("no-forced-score") {
                throw UsageError("give either --forced-score or --no-forced-score, not both")
            }
            return try runRecording(
                arguments.positionals[0], arguments, mode: mode, fallback: fallback, choice: choice, io: io)
        }
        if !arguments.positionals.isEmpty {
            throw UsageError("--live takes no RECORDING argument ('\(arguments.positionals[0])')")
        }
        if arguments.has("forced-score") && arguments.has("no-forced-score") {
            throw UsageError("give either --forced-score or --no-forced-score, not both")
        }
        return try runLive(arguments, mode: mode, fallback: fallback, choice: choice, io: io)
    }

    /// Which recogniser hears the reading.
    enum RecognizerChoice: Equatable {
        /// The built-in Whisper; `explicit` when asked for with --recognizer whisper.
        case whisper(explicit: Bool)
        /// --recognizer-cmd.
        case command
        /// --transcript-file.
        case transcriptFile
        /// None: the voice-only fallback.
        case none

        /// The name in JSON output.
        var name: String {
            switch self {
            case .whisper: "whisper"
            case .command: "cmd"
            case .transcriptFile: "transcript-file"
            case .none: "none"
            }
        }
    }

    /// The recogniser the arguments ask for (the default, whisper, is confirmed when it loads).
    static func recognizerChoice(_ arguments: ParsedArguments) throws(UsageError) -> RecognizerChoice {
        let asked = arguments.value("recognizer")
        if let asked, !["whisper", "cmd", "none"].contains(asked) {
            throw UsageError("--recognizer must be whisper, cmd or none, not '\(asked)'")
        }
        if arguments.value("transcript-file") != nil {
            if asked != nil { throw UsageError("--transcript-file gives the transcript: leave out --recognizer") }
            return .transcriptFile
        }
        if arguments.value("recognizer-cmd") != nil {
            if let asked, asked != "cmd" {
                throw UsageError("--recognizer-cmd goes with --recognizer cmd, not '\(asked)'")
            }
            return .command
        }
        switch asked {
        case "cmd": throw UsageError("--recognizer cmd needs --recognizer-cmd CMD")
        case "none": return .none
        case "whisper": return .whisper(explicit: true)
        default: return .whisper(explicit: false)
        }
    }

    /// Loads the built-in recogniser for `choice`. For the default choice, a recogniser that is
    /// not installed (or no ONNX Runtime) gives `nil` and ONE line on stderr; asked for explicitly,
    /// that exits 69. A damaged model exits 78 either way.
    static func loadWhisper(_ choice: inout RecognizerChoice, io: CommandIO) throws(ProofkitError) -> WhisperRecognizer?
    {
        try startWhisper(&choice, io: io)?.wait()
    }

    /// Starts loading the built-in recogniser for `choice` on a thread of its own, after checking
    /// at once what would make it "not installed" (see ``loadWhisper(_:io:)``, whose rules it
    /// follows: the fallback to `.none` and its one line are decided here, a damaged model is
    /// thrown by `wait()`).
    static func startWhisper(_ choice: inout RecognizerChoice, io: CommandIO) throws(ProofkitError)
        -> WhisperRecognizer.Loading?
    {
        guard case .whisper(let explicit) = choice else { return nil }
        let store = ModelStore(environment: io.environment)
        do {
            try WhisperRecognizer.checkInstalled(store: store)
        } catch {
            guard !explicit, error.code == .runtimeUnavailable else { throw error }
            io.printError(
                "proofkit voice: the built-in recogniser is not available (\(error.message)); judging by voice only")
            choice = .none
            return nil
        }
        return WhisperRecognizer.Loading(store: store, threads: 2)
    }

    /// Transcribes a whole recording and scores the text by spans (the recording path's
    /// recogniser), once `loading` is done (its wait counts in the recogniser's seconds).
    static func recognize(with loading: WhisperRecognizer.Loading) -> (_ samples: [Float], _ text: DuaText)
        throws(ProofkitError)
        -> RecognizedReading
    {
        ReadingProofRecording.wholeReadingRecognizer { () throws(ProofkitError) in try loading.wait() }
    }

    /// The forced-score rule the arguments ask for: the default one unless --no-forced-score.
    static func forcedScoreRule(_ arguments: ParsedArguments) -> ForcedScoreRule? {
        arguments.has("no-forced-score") ? nil : ForcedScoreRule.recordingDefault
    }

    /// The proof settings from the arguments.
    static func proofConfiguration(
        _ arguments: ParsedArguments, mode: VoiceDetectionMode, choice: RecognizerChoice, io: CommandIO
    ) throws(ProofkitError) -> ReadingProofConfiguration {
        let catalog = try DuaTexts.loadCatalog(arguments, io: io)
        let text = try DuaTexts.find(arguments.value("text") ?? DuaCatalog.defaultName, in: catalog)
        var isWhisper = false
        if case .whisper = choice { isWhisper = true }
        return ReadingProofConfiguration(
            text: text, usesRecognizer: choice != .none, voiceDetection: mode, allowsReadTwice: !isWhisper,
            vetoesUnlikeSpeech: !arguments.has("no-veto"))
    }

    // MARK: - A recording

    /// Judges a recording: refuses a bad input before any model loads, then prints the verdict.
    static func runRecording(
        _ path: String, _ arguments: ParsedArguments, mode: VoiceDetectionMode, fallback: VoiceDetectionFallback,
        choice: RecognizerChoice, io: CommandIO
    ) throws -> ExitStatus {
        var choice = choice
        // The input first (exists, readable once, decodable header, playable rate): a bad one is
        // refused before any model is loaded.
        let recording = try ReadingProofRecording.Recording(path: path)
        // Whisper loads on a thread of its own while the recording is decoded, resampled, gated
        // and run through Silero (issue 38); its errors still come first, as when it loaded first.
        let whisper = try startWhisper(&choice, io: io)
        let judged = try judgeRecording(
            recording, path, arguments, mode: mode, fallback: fallback, choice: choice, whisper: whisper, io: io)
        let outcome = judged.outcome
        if let reason = outcome.fallbackReason, fallback != .always {
            io.printError("proofkit voice: warning: Silero is unavailable (\(reason)); using the energy gate alone")
        }
        if let plot = arguments.value("plot") {
            try writePlot(outcome.result, title: "proofkit voice: \(Formatting.baseName(path))", to: plot)
        }
        if arguments.has("json") {
            io.printJSON(
                recordingJSON(outcome, path: path, choice: choice, transcript: judged.transcript, arguments))
        } else {
            printRecording(
                outcome, path: path, text: judged.configuration.text, choice: choice,
                allowsReadTwice: judged.configuration.allowsReadTwice, arguments, io: io)
        }
        return outcome.result.match.verdict.isAccepted || !arguments.has("strict") ? .success : .rejected
    }

    /// Reads `--transcript-file` and judges the recording with the options' configuration; waits
    /// for Whisper's load either way, so a damaged model exits 78 even when no voice was heard.
    /// - Returns: the configuration, the outcome and the transcript file's lines.
    private static func judgeRecording(
        _ recording: ReadingProofRecording.Recording, _ path: String, _ arguments: ParsedArguments,
        mode: VoiceDetectionMode, fallback: VoiceDetectionFallback, choice: RecognizerChoice,
        whisper: WhisperRecognizer.Loading?, io: CommandIO
    ) throws -> (configuration: ReadingProofConfiguration, outcome: ReadingProofRecording.Outcome, transcript: [String])
    {
        let configuration: ReadingProofConfiguration
        let outcome: ReadingProofRecording.Outcome
        var transcript: [String] = []
        do {
            if let file = arguments.value("transcript-file") { transcript = try transcriptLines(file) }
            configuration = try proofConfiguration(arguments, mode: mode, choice: choice, io: io)
            do {
                outcome = try ReadingProofRecording.run(
                    recording: recording, configuration: configuration,
                    sileroModelPath: ReadingProofSession.sileroModelPath(environment: io.environment),
                    transcript: transcript,
                    fallback: fallback, recognize: whisper.map(recognize(with:)),
                    forcedScoreRule: forcedScoreRule(arguments))
            } catch {
                throw error.path == nil ? error.at(path: path) : error
            }
        } catch {
            _ = try whisper?.wait()
            throw error
        }
        _ = try whisper?.wait()  // a damaged model exits 78 even when no voice was heard
        return (configuration, outcome, transcript)
    }

    /// The non-empty lines of a transcript file (`-`: stdin), spaces trimmed at both ends.
    private static func transcriptLines(_ file: String) throws(ProofkitError) -> [String] {
        let contents =
            file == "-"
            ? try DuaTexts.readStandardInput(joinedBy: "\n", what: "transcript file")
            : try DuaTexts.readTextFile(file, required: true, what: "transcript file") ?? ""
        return contents.split(whereSeparator: \.isNewline).map { line in
            String(line.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
        }
        .filter { !$0.isEmpty }
    }

    /// The `--json` object of a recording: the input, the proof's fields and the recogniser's.
    private static func recordingJSON(
        _ outcome: ReadingProofRecording.Outcome, path: String, choice: RecognizerChoice, transcript: [String],
        _ arguments: ParsedArguments
    ) -> JSONValue {
        var object: [String: JSONValue] = [
            "file": .string(path), "duration_seconds": .rounded(outcome.decodedSeconds, places: 3),
            "input_sample_rate": .int(outcome.format.sampleRate), "input_channels": .int(outcome.format.channels),
        ]
        object.merge(
            VoiceResultJSON.resultFields(
                outcome.result, mode: outcome.voiceDetection, fallback: outcome.fallbackReason,
                needed: outcome.neededSeconds)
        ) { _, new in new }
        object["recognizer"] = .string(choice.name)
        let recognition = outcome.recognition
        object["transcript"] =
            choice == .none ? .null : .string(recognition?.transcript ?? transcript.joined(separator: " "))
        object["forced_score"] = VoiceResultJSON.forcedScoreJSON(recognition, rule: forcedScoreRule(arguments))
        object["recognizer_seconds"] = recognition.map { .rounded($0.elapsedSeconds, places: 3) } ?? .null
        object["recognizer_skipped"] = JSONValue(recognition?.skippedReason)
        return .object(object)
    }

    /// A recording's text report: the audio, the voiced time, the gate, what was heard and the verdict.
    private static func printRecording(
        _ outcome: ReadingProofRecording.Outcome, path: String, text: DuaText, choice: RecognizerChoice,
        allowsReadTwice: Bool, _ arguments: ParsedArguments, io: CommandIO
    ) {
        let result = outcome.result
        io.print("\(Formatting.baseName(path)): \(formatSeconds(outcome.decodedSeconds)) of audio, \(text.title)")
        io.print(
            "voiced \(formatSeconds(result.gate.voicedSeconds)) in \(result.gate.segments.count) segment(s), \(choice == .none || allowsReadTwice ? "needs" : "reading time") \(formatSeconds(outcome.neededSeconds)); noise floor \(Int(result.gate.finalFloorDecibels.rounded())) dBFS"
        )
        io.print(
            gateLine(
                outcome.voiceDetection, fallback: outcome.fallbackReason, vetoed: result.likeSpeechSegments != nil))
        if let recognition = outcome.recognition {
            if let skipped = recognition.skippedReason {
                io.print("recogniser: \(skipped)")
            } else {
                io.print("heard: " + (recognition.transcript.isEmpty ? "(nothing)" : recognition.transcript))
            }
            if let line = forcedScoreLine(recognition, rule: forcedScoreRule(arguments)) { io.print(line) }
        }
        if choice != .none {
            io.print(
                "key words heard: \(result.heardKeyWords.count) of \(text.keyWords.count) (\(text.requiredKeyWords) needed)"
            )
        }
        io.print(ProofText.verdictLine(result.match))
    }

    /// Which gate decided, for the text output: "gate: silero (energy floor tracked)" or
    /// "gate: energy (Silero unavailable: ...)"; `vetoed` when the speech-likeness veto ran.
    static func gateLine(_ mode: VoiceDetectionMode, fallback: String?, vetoed: Bool) -> String {
        let veto = vetoed ? ", frames that do not look like speech left out" : ""
        if let fallback { return "gate: energy (Silero unavailable: \(fallback)\(veto))" }
        switch mode {
        case .energy: return vetoed ? "gate: energy (frames that do not look like speech left out)" : "gate: energy"
        case .silero:
            return vetoed
                ? "gate: silero (segments that do not look like speech left out; the energy gate tracks the noise floor)"
                : "gate: silero (the energy gate tracks the noise floor)"
        case .both: return "gate: both (voiced where the energy gate and Silero agree)"
        }
    }

    /// The text output's forced-score line, or `nil` when there is no score. It says first
    /// whether the score passes and, when it does not, each reason in plain words (a share of the
    /// text's words heard alone reads like a near pass, even when the text was not read).
    /// - Parameter rule: the rule in use, `nil` with --no-forced-score (then the line says so).
    static func forcedScoreLine(
        _ recognition: RecognizedReading, rule: ForcedScoreRule?
    ) -> String? {
        guard let score = recognition.score else { return nil }
        let mean = "mean log-probability \(decimalText(score.meanLogProbability, places: 2)) per token"
        guard let ratio = ForcedScoreRule.ratio(text: score, transcript: recognition.transcriptScore) else {
            return "forced score of the text: \(mean) (nothing heard to compare it with)"
        }
        guard let rule else {
            return "forced score of the text: \(mean), \(decimalText(ratio, places: 2)) against what was heard "
                + "(not used: --no-forced-score)"
        }
        if rule.passes(recognition) {
            return "forced score: passes: the recogniser finds the text about as likely as what it heard ("
                + "\(decimalText(ratio, places: 2)) per token; \(decimalText(-rule.margin, places: 1)) or more passes)"
        }
        var reasons: [String] = []
        if ratio < -rule.margin {
            reasons.append(
                "the recogniser finds this text far less likely than what it heard (\(decimalText(ratio, places: 2)) "
                    + "per token; \(decimalText(-rule.margin, places: 1)) or more passes), so this text was not what was read"
            )
        }
        if let span = recognition.span, span.coverage < rule.minimumCoverage {
            reasons.append(
                "what was heard lines up with only \(span.coveredWords) of the text's \(span.wordCount) words "
                    + "(\(Int((rule.minimumCoverage * 100).rounded()))% needed)")
        }
        let tokens = recognition.span?.text?.tokens.count ?? score.tokens.count
        if tokens < rule.minimumTokens {
            reasons.append("the text scored is too short to judge (\(tokens) tokens; \(rule.minimumTokens) needed)")
        }
        return "forced score: does not pass: "
            + (reasons.isEmpty ? "the scores are incomplete" : reasons.joined(separator: "; "))
    }

    static func writePlot(_ result: ReadingProofResult, title: String, to path: String) throws(ProofkitError) {
        let track = result.gate.track
        var plot = SVGPlot(title: title, xLabel: "time (s)", yLabel: "level (dBFS)")
        let lowest: Float = -90
        // The voiced regions, coloured by the gate that decided them, and each gate's own voiced
        // regions as a lane at the top (Silero's only when it ran).
        let decider: (label: String, color: String) =
            switch result.decidedBy {
            case .energy: ("voiced (energy gate decided)", "#2ca02c")
            case .silero: ("voiced (Silero decided)", "#9467bd")
            case .both: ("voiced (energy gate and Silero agreed)", "#17becf")
            }
        for (index, segment) in result.gate.segments.enumerated() {
            plot.addBand(
                from: segment.start, to: segment.end, label: index == 0 ? decider.label : nil, color: decider.color)
        }
        func lane(_ segments: [VoicedSegment], at y: Double) -> [(x: Double, y: Double)] {
            segments.flatMap { [(x: $0.start, y: y), (x: $0.end, y: y), (x: .nan, y: .nan)] }
        }
        plot.addLine(lane(result.energySegments, at: -2), label: "energy gate: voice", color: "#2ca02c")
        if !result.periodicSegments.isEmpty {
            plot.addLine(
                lane(result.periodicSegments, at: -3.5), label: "clock-like (not voice)", color: "#8c564b")
        }
        if let kept = result.likeSpeechSegments {
            plot.addLine(lane(kept, at: -5), label: "looks like speech (veto)", color: "#ff7f0e")
        }
        if result.decidedBy.usesSilero {
            plot.addLine(lane(result.sileroSegments, at: -5), label: "Silero: voice", color: "#9467bd")
        }
        plot.addLine(
            track.map { (x: $0.seconds, y: Double(max(lowest, $0.levelDecibels))) }, label: "level", color: "#1f77b4")
        plot.addLine(
            track.map { (x: $0.seconds, y: Double(max(lowest, $0.floorDecibels))) }, label: "noise floor",
            color: "#7f7f7f")
        plot.addLine(
            track.map { (x: $0.seconds, y: Double(max(lowest, $0.thresholdDecibels))) }, label: "threshold",
            color: "#d62728")
        try writeFileAtomically(plot.render(), to: path)
    }

    static func listDevices(_ soundDevices: SoundDevices, json: Bool, io: CommandIO) throws(ProofkitError)
        -> ExitStatus
    {
        let devices = try soundDevices.list()
        if json {
            io.printJSON([
                "devices": .array(
                    devices.map {
                        [
                            "name": .string($0.name), "description": .string($0.description),
                            "capture": .bool($0.canCapture), "playback": .bool($0.canPlay),
                        ]
                    })
            ])
        } else {
            for device in devices {
                let description = device.description.split(whereSeparator: \.isNewline).joined(separator: " - ")
                let pad = String(repeating: " ", count: max(1, 28 - device.name.count))
                io.print(device.name + pad + description)
            }
        }
        return .success
    }

}
