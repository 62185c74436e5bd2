import Proofkit
import ProofkitCore

/// `proofkit check SOUND`: is this sound safe to book as an alarm?
enum CheckCommand: Subcommand {
    static let name = "check"
    static let summary = "say whether a sound is safe to book as an alarm, and why not"
    static let synopsis = "proofkit check SOUND... [--strict] [--json]"
    static let discussion = """
        A sound is accepted when all of these hold:
          - it decodes (by content, whatever its extension);
          - it is shorter than 30 s as decoded (not as its header claims; decoding stops at 30 s);
          - it is CAF, WAV or AIFF with 16-bit linear PCM (what an iOS alarm plays);
          - it is not all digital silence, nor nearly silent (peak below -45 dBFS or RMS below
            -60 dBFS).
        Clipping (runs of 3 or more samples at full scale) is reported as a warning, "heavy" from
        0.1% of the samples. A header length that disagrees with the decoded length by 0.5 s or more is a warning.

        A rejected sound still exits 0 (the answer is in the output) unless --strict is given,
        then it exits 2. A file that cannot be opened is an error: 66 missing or a folder, 65 not
        decodable or unsupported (AAC/M4A), a rate outside 8000...384000 Hz, more than 8 channels
        or NaN/infinite samples, 74 unreadable (or a FIFO no writer opens within 10 s). SOUND may
        be a FIFO or /dev/stdin: it is opened once and read at most 128 MiB.

        JSON (--json), one object per SOUND:
          {"path": str, "verdict": "accepted"|"rejected",
           "reasons": [{"kind": "noAudio"|"tooLong"|"notAlarmFormat"|"silent"|"nearlySilent",
                        "detail": str}],
           "decoded_seconds": num, "reached_limit": bool, "header_seconds": num|null,
           "peak_dbfs": num|null, "rms_dbfs": num|null,   (null: digital silence)
           "clipped_samples": int, "clipped_fraction": num, "heavy_clipping": bool,
           "format": {"container": str, "major_format": str, "subtype": str,
                      "sample_rate": int, "channels": int, "header_seconds": num|null},
           "warnings": [str]}

        Examples:
          proofkit check fajr.caf
          proofkit check --strict --json fajr.caf maghrib.caf
        """
    static let options: [OptionSpec] = [
        .flag("strict", help: "exit 2 when a sound is rejected"),
        .flag("json", help: "one JSON object per sound on stdout"),
    ]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        guard !arguments.positionals.isEmpty else { throw UsageError("missing SOUND") }
        var anyRejected = false
        for path in arguments.positionals {
            let report = try AlarmSound.check(path: path)
            if !report.verdict.isAccepted { anyRejected = true }
            if arguments.has("json") {
                io.printJSON(SoundJSON.json(for: report))
            } else {
                let f = report.format
                let facts =
                    "\(decimalText(report.decodedSeconds, places: 2))\(report.reachedLimit ? "+" : "") s, \(f.majorFormatName) \(f.subtypeName), \(f.sampleRate) Hz, \(f.channels) ch, peak \(text(report.levels.peakDBFS)) dBFS, RMS \(text(report.levels.rmsDBFS)) dBFS"
                switch report.verdict {
                case .accepted: io.print("\(displayName(path)): ok (\(facts))")
                case .rejected(let reason): io.print("\(displayName(path)): rejected: \(reason.detail) (\(facts))")
                }
                for warning in report.warnings {
                    io.printError("proofkit check: warning: \(displayName(path)): \(warning)")
                }
            }
        }
        return anyRejected && arguments.has("strict") ? .rejected : .success
    }

    static func text(_ dbfs: Double) -> String {
        dbfs.isFinite ? decimalText(dbfs, places: 2) : "-inf"
    }

}
