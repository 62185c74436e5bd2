import Dispatch
import Proofkit
import ProofkitCore
internal import ProofkitSystem

/// `proofkit voice --live`: the reading proof on a capture device, as it is read.
extension VoiceCommand {
    // MARK: - Live

    static func runLive(
        _ arguments: ParsedArguments, mode: VoiceDetectionMode, fallback: VoiceDetectionFallback,
        choice: RecognizerChoice, io: CommandIO
    ) throws -> ExitStatus {
        var choice = choice
        let device = arguments.value("device") ?? "default"
        let live = try openLive(arguments, mode: mode, fallback: fallback, choice: &choice, io: io)
        let json = arguments.has("json")
        let proof = live.proof
        if let reason = live.fallbackReason, fallback != .always {
            io.printError("proofkit voice: warning: Silero is unavailable (\(reason)); using the energy gate alone")
        }
        if json { printStartEvent(live, device: device, choice: choice, io: io) }
        let view = LiveView(
            io: io, json: json, text: proof.configuration.text, usesRecognizer: choice != .none,
            neededSeconds: proof.neededSeconds, frameSeconds: proof.configuration.gate.frameDuration.secondsValue)
        let (summary, pause) = listen(live, view: view, handsFree: arguments.has("hands-free"))
        if let failure = live.captureFailure { throw failure }
        if let failure = summary.failure { throw failure }
        // The built-in recogniser's last words (see LiveReadingProof.finishTranscriber): the final
        // text of each window, which is also its best transcript; then the forced score.
        let conclusion = try live.conclude(
            heardSeconds: summary.heardSeconds, forcedScore: forcedScoreRule(arguments),
            asRecordingWhenRejected: pause?.wholeReading == true)
        printFinalLines(conclusion, heardSeconds: summary.heardSeconds, view: view, json: json, io: io)
        let result = conclusion.result
        if json && conclusion.acceptedByForcedScore {
            io.printJSON(view.jsonEvent(.accepted(result.match), t: summary.heardSeconds))
        }
        var recorded: String?
        if let record = arguments.value("record") {
            try live.commitRecording()
            recorded = record
        }
        if let plot = arguments.value("plot") {
            try writePlot(result, title: "proofkit voice --live (\(device))", to: plot)
        }
        let rule = forcedScoreRule(arguments)
        if json {
            io.printJSON(
                endEvent(
                    conclusion, heardSeconds: summary.heardSeconds, live: live, proof: proof, recorded: recorded,
                    rule: rule))
        } else {
            printSummary(
                conclusion, heardSeconds: summary.heardSeconds, live: live, proof: proof, device: device,
                recorded: recorded,
                rule: rule, io: io)
        }
        return result.match.verdict.isAccepted || !arguments.has("strict") ? .success : .rejected
    }

    /// Opens everything that can fail before listening starts: the sound devices, the recogniser
    /// (`choice` becomes the one loaded), the proof's configuration and the capture.
    private static func openLive(
        _ arguments: ParsedArguments, mode: VoiceDetectionMode, fallback: VoiceDetectionFallback,
        choice: inout RecognizerChoice, io: CommandIO
    ) throws -> LiveReadingProof {
        var options = LiveReadingProof.Options()
        options.soundDevices = try SoundDevices(environment: io.environment)
        let maxSeconds = try arguments.seconds("max-seconds") ?? 120
        guard maxSeconds > 0 else { throw UsageError("--max-seconds must be more than 0") }
        let whisper = try loadWhisper(&choice, io: io)
        let configuration = try proofConfiguration(arguments, mode: mode, choice: choice, io: io)
        options.device = arguments.value("device") ?? "default"
        options.maxSeconds = maxSeconds
        options.recordPath = arguments.value("record")
        options.recognizerCommand = arguments.value("recognizer-cmd")
        options.transcriptFile = arguments.value("transcript-file")
        options.sileroModelPath = ReadingProofSession.sileroModelPath(environment: io.environment)
        options.fallback = fallback
        // With --hands-free, a whole reading the live recogniser rejects is judged again as a
        // recording, as the alarm's listener does (the audio is kept in memory only).
        options.keepsAudio = arguments.has("hands-free") && whisper != nil
        return try LiveReadingProof(configuration: configuration, options: options, whisper: whisper)
    }

    /// The `--json` start event: the device, the text, the gate and the recogniser in use.
    private static func printStartEvent(
        _ live: LiveReadingProof, device: String, choice: RecognizerChoice, io: CommandIO
    ) {
        let proof = live.proof
        io.printJSON([
            "event": "start", "device": .string(device), "sample_rate": .int(live.sampleRate),
            "text": .string(proof.configuration.text.name),
            "vad": .string(proof.configuration.voiceDetection.rawValue),
            "vad_fallback": JSONValue(live.fallbackReason),
            "recognizer": .bool(choice != .none), "recognizer_name": .string(choice.name),
            "needed_seconds": .rounded(proof.neededSeconds, places: 3),
            "required_key_words": .int(proof.configuration.text.requiredKeyWords),
        ])
    }

    /// Listens until the du'a passes, the time is up or Ctrl-C (which ends listening normally:
    /// the verdict is given and --record is kept); with `handsFree`, also at the first pause
    /// after a reading, as the alarm's listener judges.
    /// - Returns: what was heard, and the pause watcher (`nil` without `handsFree`).
    private static func listen(
        _ live: LiveReadingProof, view: LiveView, handsFree: Bool
    ) -> (LiveReadingProof.ListeningSummary, ReadingEnd?) {
        POSIX.setIgnored(.interrupt, true)
        let interrupt = DispatchSource.makeSignalSource(signal: POSIX.Signal.interrupt.rawValue, queue: .global())
        interrupt.setEventHandler { live.stop() }
        interrupt.resume()
        // The proof ends as soon as the du'a passes: nothing more needs to be heard.
        let pause = handsFree ? ReadingEnd() : nil
        let summary = live.run { update in
            view.show(update)
            if pause?.observe(update) == true { live.stop() }
            let events: [ReadingProofEvent]
            switch update {
            case .audio(_, let list), .transcript(_, _, let list): events = list
            default: events = []
            }
            if events.contains(where: { if case .accepted = $0 { true } else { false } }) { live.stop() }
        }
        view.finish()
        interrupt.cancel()
        POSIX.setIgnored(.interrupt, false)
        return (summary, pause)
    }

    /// Prints the built-in recogniser's last words and the events they caused.
    private static func printFinalLines(
        _ conclusion: LiveReadingProof.Conclusion, heardSeconds: Double, view: LiveView, json: Bool, io: CommandIO
    ) {
        for line in conclusion.finalLines {
            if json {
                io.printJSON([
                    "event": "transcript", "t": .rounded(heardSeconds, places: 3), "text": .string(line.text),
                ])
            } else if !io.isStdoutTerminal {
                io.print("» \(line.text)")
            }
            for event in line.events where json { io.printJSON(view.jsonEvent(event, t: heardSeconds)) }
        }
    }

    /// The `--json` end event: what was heard, the capture's health and the verdict.
    private static func endEvent(
        _ conclusion: LiveReadingProof.Conclusion, heardSeconds: Double, live: LiveReadingProof, proof: ReadingProof,
        recorded: String?, rule: ForcedScoreRule?
    ) -> JSONValue {
        let result = conclusion.result
        var object: [String: JSONValue] = [
            "event": "end", "heard_seconds": .rounded(heardSeconds, places: 3),
            "transcript": .array(result.transcript.map { .string($0) }), "heard_text": .string(conclusion.heardText),
            "dropped_chunks": .int(live.droppedChunks), "overruns": .int(live.overruns),
            "recognizer_restarts": .int(live.recognizerRestarts), "recording": JSONValue(recorded),
            "judged_as_recording": .bool(conclusion.acceptedAsRecording),
            "forced_score": live.usesWhisper
                ? VoiceResultJSON.forcedScoreJSON(conclusion.recognition, rule: rule) : .null,
        ]
        object.merge(
            VoiceResultJSON.resultFields(
                result, mode: proof.configuration.voiceDetection,
                fallback: live.fallbackReason, needed: proof.neededSeconds)
        ) { _, new in new }
        return .object(object)
    }

    /// The text summary: what was heard and voiced, the gate, the transcript, the forced score and
    /// the verdict.
    private static func printSummary(
        _ conclusion: LiveReadingProof.Conclusion, heardSeconds: Double, live: LiveReadingProof, proof: ReadingProof,
        device: String, recorded: String?, rule: ForcedScoreRule?, io: CommandIO
    ) {
        let result = conclusion.result
        let heardText = conclusion.heardText
        io.print(
            "heard \(formatSeconds(heardSeconds)) of audio on \(device); voiced \(formatSeconds(result.gate.voicedSeconds)) of \(formatSeconds(proof.neededSeconds)) needed"
        )
        io.print(gateLine(result.decidedBy, fallback: live.fallbackReason, vetoed: result.likeSpeechSegments != nil))
        if !heardText.isEmpty { io.print("transcript: " + heardText) }
        if let recognition = conclusion.recognition, let line = forcedScoreLine(recognition, rule: rule) {
            io.print(line)
        }
        if let recorded { io.print("recorded to \(recorded)") }
        if conclusion.acceptedAsRecording {
            io.print("the live transcript fell short; the whole reading, judged as a recording, passes")
        }
        io.print(ProofText.verdictLine(result.match))
    }
}
