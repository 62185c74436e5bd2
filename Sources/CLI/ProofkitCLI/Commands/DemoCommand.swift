import Proofkit
import ProofkitCore
import ProofkitDemo

/// `proofkit demo`: the main job on built-in defaults.
///
/// Steps: prepare an alarm sound from the recitation proofkit ships and check it; the photo proof
/// on a photo proofkit ships; the reading proof on a recording proofkit makes. Each step prints
/// one JSON object with `--json`.
enum DemoCommand: Subcommand {
    static let name = "demo"
    static let summary =
        "run the main job on built-in defaults: prepare and check an alarm sound, then the photo and reading proofs"
    static let synopsis = "proofkit demo [-o ALARM.caf] [--json]"
    static let discussion = """
        Step 1, the alarm sound: decodes the recitation embedded in proofkit (the first 14 s of
        the Asr adhan from Makkah, public domain, MP3), drops leading silence, normalises the peak
        to -1 dBFS, writes a 16-bit CAF (default ./proofkit-demo-alarm.caf) and checks it, exactly
        as 'proofkit trim --trim-silence --normalize -1' would. Nothing leaves this device.

        Step 2, the photo proof: 'proofkit mat' with its default engine (EfficientNet-Lite0 int8,
        five crops) judges two pictures embedded in proofkit: a rendered picture of a prayer mat
        that proofkit draws (not a photo: the project ships no photo of a real mat, whose licences
        are unknown) and scikit-image's photo of a cup of coffee (CC0, Rachel Michetti). The first
        should be accepted and the second rejected; the step fails (exit 1) otherwise. Skipped
        (with the reason) when the models are not built or ONNX Runtime is missing.

        Step 3, the reading proof: espeak-ng reads the waking du'a (Sahih al-Bukhari 6312) in
        Arabic, softly (-32 dBFS), into a real recording of an air conditioner (-50 dBFS); the
        voice gate and the du'a matcher judge it twice: with a fixed transcript (the du'a as a
        recogniser writes it, given by the demo, not heard), and with the voice-only fallback.
        Skipped (with the reason) when espeak-ng is not installed. Then, when the built-in
        recogniser (Whisper base) is installed, it transcribes a real recording proofkit ships
        (the first 14 s of the Asr adhan from Makkah, public domain) and the matcher judges what
        it heard as the waking du'a: the adhan is not the du'a, so it is rejected (proofkit ships
        no recording of a du'a: none with a licence to ship was found; try 'proofkit voice
        REC.wav' on your own reading).

        JSON (--json): one object per step, each with "step" naming it:
          {"step": "alarm_sound", "source": str, ...the object 'proofkit trim --json' prints}
          {"step": "photo_proof", "skipped": str|null, "engine": "lite0", "load_ms": num,
           "photos": [{"file": str, "shows": str, "shows_mat": bool,
                       "verdict": "accepted"|"rejected", "score": num, "brightness": num,
                       "hint": str|null, "top1": str, "top1_probability": num}]}
          {"step": "reading_proof", "skipped": str|null, "recording_seconds": num,
           "room_dbfs": num, "speech_dbfs": num, "speech_regions": [[start, end], ...],
           "fixed_transcript": str, "with_transcript": RUN, "voice_only": RUN,
           "recognizer": {"skipped": str|null, "recording": str, "transcript": str,
                          "verdict": "accepted"|"rejected", "reason": str|null, "heard": [str],
                          "required_key_words": int, "seconds": num}}
          (with_transcript: judged with fixed_transcript, given by the demo, not heard;
           recognizer: the built-in recogniser on the embedded adhan, judged as the waking du'a)
          RUN = {"verdict": "accepted"|"rejected", "rule": str, "reason": str|null,
                 "heard": [str], "voiced_seconds": num, "needed_seconds": num}

        Examples:
          proofkit demo
          proofkit demo -o /tmp/fajr.caf --json
        """
    static let options: [OptionSpec] = [
        .option(
            "output", short: "o", value: "FILE",
            help: "where to write the demo alarm sound (default ./proofkit-demo-alarm.caf)"),
        .flag("json", help: "one JSON object per step on stdout"),
    ]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        _ = try arguments.requirePositionals(0, names: "")
        let output = arguments.value("output") ?? "proofkit-demo-alarm.caf"
        let sound = try AlarmSound.demo(output: output)
        let trim = sound.trim
        if arguments.has("json") {
            guard case .object(var object) = SoundJSON.json(for: trim, warnings: trim.check.warnings) else {
                return .failure
            }
            object["step"] = "alarm_sound"
            object["source"] = .string(sound.sourceTitle)
            io.printJSON(.object(object))
        } else {
            let check = trim.check
            io.print("proofkit demo: everything runs on this device.")
            io.print("1. Alarm sound from \(sound.sourceTitle):")
            io.print(
                "   wrote \(output): \(check.decodedSeconds.fixedDecimal(places: 2)) s, \(check.format.sampleRate) Hz, \(check.format.channels == 1 ? "mono" : "\(check.format.channels) channels"), CAF 16-bit PCM, peak \(check.levels.peakDBFS.fixedDecimal(places: 2)) dBFS (skipped \(trim.skippedSeconds.fixedDecimal(places: 2)) s of leading silence)"
            )
            io.print(
                "   check: \(check.verdict.isAccepted ? "accepted: safe to book as an alarm" : "rejected: \(check.verdict)")"
            )
        }
        guard trim.check.verdict.isAccepted else { return .failure }
        let photo = try photoProofStep(arguments, io: io)
        let reading = try readingProofStep(arguments, io: io)
        return photo == .success ? reading : photo
    }

    /// Step 2: the photo proof on two pictures embedded in proofkit.
    static func photoProofStep(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        let outcome = try PhotoProofDemo.run(environment: io.environment)
        let expected = outcome.photos.allSatisfy { $0.result.judgement.verdict.isAccepted == $0.showsMat }
        if arguments.has("json") {
            var object: [String: JSONValue] = [
                "step": "photo_proof", "skipped": JSONValue(outcome.skippedReason),
                "engine": .string(outcome.engine.rawValue),
                "photos": .array(
                    outcome.photos.map { photo in
                        let judgement = photo.result.judgement
                        return [
                            "file": .string(photo.result.path), "shows": .string(photo.title),
                            "shows_mat": .bool(photo.showsMat),
                            "verdict": .string(judgement.verdict.isAccepted ? "accepted" : "rejected"),
                            "score": .rounded(judgement.score, places: 6),
                            "brightness": .rounded(judgement.brightness, places: 4),
                            "hint": JSONValue(judgement.hint), "top1": JSONValue(photo.topClass?.name),
                            "top1_probability": JSONValue(
                                photo.topClass.map { ($0.probability * 1e6).rounded() / 1e6 }),
                        ]
                    }),
            ]
            if let load = outcome.load {
                object["load_ms"] = .rounded(Formatting.msValue(load.readAndVerify + load.sessionCreation), places: 2)
            }
            io.printJSON(.object(object))
        } else {
            io.print("2. Photo proof (\(outcome.engine), five crops, the default 'proofkit mat'):")
            if let reason = outcome.skippedReason {
                io.print("   skipped: \(reason)")
                return .success
            }
            for photo in outcome.photos {
                let judgement = photo.result.judgement
                let top =
                    photo.topClass.map { ", the model sees \"\($0.name)\" \(Formatting.fixed($0.probability, 2))" }
                    ?? ""
                let verdict =
                    judgement.verdict.isAccepted
                    ? "accepted (score \(Formatting.fixed(judgement.score, 2)))"
                    : "rejected (score \(Formatting.fixed(judgement.score, 2))): \(judgement.hint ?? "")"
                io.print("   \(photo.title): \(verdict)\(top)")
            }
            if let load = outcome.load {
                io.print(
                    "   model loaded and checked in \(Formatting.ms(load.readAndVerify + load.sessionCreation)) ms")
            }
        }
        return expected ? .success : .failure
    }

    /// Step 3: the reading proof on a recording proofkit makes.
    static func readingProofStep(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        let outcome = try ReadingProofDemo.run(environment: io.environment)
        let heard = try RecognizerDemo.run(environment: io.environment)
        func json(_ run: ReadingProofDemo.Run?) -> JSONValue {
            guard let run else { return .null }
            return [
                "verdict": .string(run.verdict), "rule": .string(run.rule), "reason": JSONValue(run.reason),
                "heard": .array(run.heardKeyWords.map(JSONValue.string)),
                "voiced_seconds": .rounded(run.voicedSeconds, places: 2),
                "needed_seconds": .rounded(run.neededSeconds, places: 2),
            ]
        }
        if arguments.has("json") {
            io.printJSON([
                "step": "reading_proof", "skipped": JSONValue(outcome.skippedReason),
                "recording_seconds": .rounded(outcome.recordingSeconds, places: 2),
                "room_dbfs": .rounded(outcome.roomLevelDecibels, places: 1),
                "speech_dbfs": .rounded(outcome.speechLevelDecibels, places: 1),
                "speech_regions": .array(
                    outcome.speechRegions.map {
                        [.rounded($0.start, places: 2), .rounded($0.end, places: 2)]
                    }),
                "fixed_transcript": .string(ReadingProofDemo.transcript),
                "with_transcript": json(outcome.withTranscript), "voice_only": json(outcome.voiceOnly),
                "recognizer": [
                    "skipped": JSONValue(heard.skippedReason), "recording": .string(heard.recording),
                    "transcript": .string(heard.transcript), "verdict": .string(heard.verdict),
                    "reason": JSONValue(heard.reason), "heard": .array(heard.heardKeyWords.map(JSONValue.string)),
                    "required_key_words": .int(heard.requiredKeyWords), "seconds": .rounded(heard.seconds, places: 2),
                ],
            ])
        } else {
            io.print("3. Reading proof (the waking du'a, read softly in a room with an air conditioner):")
            if let reason = outcome.skippedReason {
                io.print("   skipped: \(reason)")
            } else {
                io.print(
                    "   recording: \(outcome.recordingSeconds.fixedDecimal(places: 2)) s, speech \(outcome.speechLevelDecibels.fixedDecimal(places: 2)) dBFS over a room at \(outcome.roomLevelDecibels.fixedDecimal(places: 2)) dBFS"
                )
                io.print("   (the first judgement uses a fixed transcript, given by the demo and not heard)")
                for (label, run) in [
                    ("with the fixed transcript", outcome.withTranscript), ("voice only", outcome.voiceOnly),
                ] {
                    guard let run else { continue }
                    let heard = run.heardKeyWords.isEmpty ? "" : ", heard \(run.heardKeyWords.joined(separator: " "))"
                    io.print(
                        "   \(label): \(run.verdict) (\(run.rule): voiced \(run.voicedSeconds.fixedDecimal(places: 2)) s of \(run.neededSeconds.fixedDecimal(places: 2)) s needed\(heard))"
                    )
                }
            }
            if let reason = heard.skippedReason {
                io.print("   the recogniser on a real recording: skipped: \(reason)")
            } else {
                io.print("   the recogniser (Whisper base) on a real recording, \(heard.recording):")
                io.print("     heard: \(heard.transcript)")
                let why = heard.reason.map { ": \($0)" } ?? ""
                io.print(
                    "     as the waking du'a: \(heard.verdict)\(why) (the adhan is not the du'a; \(heard.seconds.fixedDecimal(places: 1)) s)"
                )
            }
        }
        return .success
    }
}
