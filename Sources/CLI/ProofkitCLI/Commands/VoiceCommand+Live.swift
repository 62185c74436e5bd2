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
        var options = LiveReadingProof.Options()
        options.soundDevices = try SoundDevices(environment: io.environment)
        let maxSeconds = try arguments.seconds("max-seconds") ?? 120
        guard maxSeconds > 0 else { throw UsageError("--max-seconds must be more than 0") }
        let device = arguments.value("device") ?? "default"
        let whisper = try loadWhisper(&choice, io: io)
        let usesRecognizer = choice != .none
        let configuration = try proofConfiguration(arguments, mode: mode, choice: choice, io: io)
        options.device = device
        options.maxSeconds = maxSeconds
        options.recordPath = arguments.value("record")
        options.recognizerCommand = arguments.value("recognizer-cmd")
        options.transcriptFile = arguments.value("transcript-file")
        options.sileroModelPath = ReadingProofSession.sileroModelPath(environment: io.environment)
        options.fallback = fallback
        // With --hands-free, a whole reading the live recogniser rejects is judged again as a
        // recording, as the alarm's listener does (the audio is kept in memory only).
        options.keepsAudio = arguments.has("hands-free") && whisper != nil
        // Everything that can fail is opened before listening starts.
        let live = try LiveReadingProof(configuration: configuration, options: options, whisper: whisper)
        let json = arguments.has("json")
        let proof = live.proof
        let needed = proof.neededSeconds
        if let reason = live.fallbackReason, fallback != .always {
            io.printError("proofkit voice: warning: Silero is unavailable (\(reason)); using the energy gate alone")
        }
        if json {
            io.printJSON([
                "event": "start", "device": .string(device), "sample_rate": .int(live.sampleRate),
                "text": .string(proof.configuration.text.name),
                "vad": .string(proof.configuration.voiceDetection.rawValue),
                "vad_fallback": JSONValue(live.fallbackReason),
                "recognizer": .bool(usesRecognizer), "recognizer_name": .string(choice.name),
                "needed_seconds": .rounded(needed, places: 3),
                "required_key_words": .int(proof.configuration.text.requiredKeyWords),
            ])
        }
        let view = LiveView(
            io: io, json: json, text: proof.configuration.text, usesRecognizer: usesRecognizer,
            neededSeconds: needed, frameSeconds: proof.configuration.gate.frameDuration.secondsValue)
        // Ctrl-C ends listening normally: the verdict is given and --record is kept.
        POSIX.setIgnored(.interrupt, true)
        let interrupt = DispatchSource.makeSignalSource(signal: POSIX.Signal.interrupt.rawValue, queue: .global())
        interrupt.setEventHandler { live.stop() }
        interrupt.resume()
        // The proof ends as soon as the du'a passes: nothing more needs to be heard. With
        // --hands-free, also at the first pause after a reading, as the alarm's listener judges.
        let pause = arguments.has("hands-free") ? ReadingEnd() : nil
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
        if let failure = live.captureFailure { throw failure }
        if let failure = summary.failure { throw failure }
        // The built-in recogniser's last words (see LiveReadingProof.finishTranscriber): the final
        // text of each window, which is also its best transcript; then the forced score.
        let conclusion = try live.conclude(
            heardSeconds: summary.heardSeconds, forcedScore: forcedScoreRule(arguments),
            asRecordingWhenRejected: pause?.wholeReading == true)
        for line in conclusion.finalLines {
            if json {
                io.printJSON([
                    "event": "transcript", "t": .rounded(summary.heardSeconds, places: 3), "text": .string(line.text),
                ])
            } else if !io.isStdoutTerminal {
                io.print("» \(line.text)")
            }
            for event in line.events where json { io.printJSON(view.jsonEvent(event, t: summary.heardSeconds)) }
        }
        let result = conclusion.result
        let heardText = conclusion.heardText
        let recognition = conclusion.recognition
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
        if json {
            var object: [String: JSONValue] = [
                "event": "end", "heard_seconds": .rounded(summary.heardSeconds, places: 3),
                "transcript": .array(result.transcript.map { .string($0) }), "heard_text": .string(heardText),
                "dropped_chunks": .int(live.droppedChunks), "overruns": .int(live.overruns),
                "recognizer_restarts": .int(live.recognizerRestarts), "recording": JSONValue(recorded),
                "judged_as_recording": .bool(conclusion.acceptedAsRecording),
                "forced_score": live.usesWhisper
                    ? VoiceResultJSON.forcedScoreJSON(recognition, rule: forcedScoreRule(arguments)) : .null,
            ]
            object.merge(
                VoiceResultJSON.resultFields(
                    result, mode: proof.configuration.voiceDetection,
                    fallback: live.fallbackReason, needed: needed)
            ) { _, new in new }
            io.printJSON(.object(object))
        } else {
            io.print(
                "heard \(formatSeconds(summary.heardSeconds)) of audio on \(device); voiced \(formatSeconds(result.gate.voicedSeconds)) of \(formatSeconds(needed)) needed"
            )
            io.print(
                gateLine(result.decidedBy, fallback: live.fallbackReason, vetoed: result.likeSpeechSegments != nil))
            if !heardText.isEmpty { io.print("transcript: " + heardText) }
            if let recognition, let line = forcedScoreLine(recognition, rule: forcedScoreRule(arguments)) {
                io.print(line)
            }
            if let recorded { io.print("recorded to \(recorded)") }
            if conclusion.acceptedAsRecording {
                io.print("the live transcript fell short; the whole reading, judged as a recording, passes")
            }
            io.print(ProofText.verdictLine(result.match))
        }
        return result.match.verdict.isAccepted || !arguments.has("strict") ? .success : .rejected
    }

    /// Which gate decided, for the text output: "gate: silero (energy floor tracked)" or
    /// "gate: energy (Silero unavailable: ...)"; `vetoed` when the speech-likeness veto ran.
}
