import ProofkitCore
import Proofkit

/// `proofkit demo`: the main job on built-in defaults.
///
/// For now: prepare an alarm sound from the recitation proofkit ships, and check it. The photo
/// and reading proofs join later (each adds one step to ``run(_:io:)`` and one JSON object).
enum DemoCommand: Subcommand {
    static let name = "demo"
    static let summary = "run the main job on built-in defaults: prepare and check an alarm sound, then the photo and reading proofs"
    static let synopsis = "proofkit demo [-o ALARM.caf] [--json]"
    static let discussion = """
        Step 1, the alarm sound: decodes the recitation embedded in proofkit (the first 14 s of
        the Asr adhan from Makkah, public domain, MP3), drops leading silence, normalises the peak
        to -1 dBFS, writes a 16-bit CAF (default ./proofkit-demo-alarm.caf) and checks it, exactly
        as 'proofkit trim --trim-silence --normalize -1' would. Nothing leaves this device.

        JSON (--json): one object per step, each with "step" naming it:
          {"step": "alarm_sound", "source": str, ...the object 'proofkit trim --json' prints}

        Examples:
          proofkit demo
          proofkit demo -o /tmp/fajr.caf --json
        """
    static let options: [OptionSpec] = [
        .option("output", short: "o", value: "FILE", help: "where to write the demo alarm sound (default ./proofkit-demo-alarm.caf)"),
        .flag("json", help: "one JSON object per step on stdout"),
    ]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        _ = try arguments.requirePositionals(0, names: "")
        let output = arguments.value("output") ?? "proofkit-demo-alarm.caf"
        let sound = try AlarmSound.demo(output: output)
        let trim = sound.trim
        if arguments.has("json") {
            guard case .object(var object) = TrimCommand.json(for: trim, warnings: trim.check.warnings) else {
                return .failure
            }
            object["step"] = "alarm_sound"
            object["source"] = .string(sound.sourceTitle)
            io.printJSON(.object(object))
        } else {
            let check = trim.check
            io.print("proofkit demo: everything runs on this device.")
            io.print("1. Alarm sound from \(sound.sourceTitle):")
            io.print("   wrote \(output): \(String(seconds: check.decodedSeconds)) s, \(check.format.sampleRate) Hz, \(check.format.channels == 1 ? "mono" : "\(check.format.channels) channels"), CAF 16-bit PCM, peak \(String(seconds: check.levels.peakDBFS)) dBFS (skipped \(String(seconds: trim.skippedSeconds)) s of leading silence)")
            io.print("   check: \(check.verdict.isAccepted ? "accepted: safe to book as an alarm" : "rejected: \(check.verdict)")")
        }
        return trim.check.verdict.isAccepted ? .success : .failure
    }
}
