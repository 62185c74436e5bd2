import Proofkit
import ProofkitCore

/// `proofkit trim INPUT [-o OUTPUT.caf]`: makes an alarm sound.
enum TrimCommand: Subcommand {
    static let name = "trim"
    static let summary = "turn a recitation or adhan into a CAF alarm sound (16-bit PCM, under 30 s)"
    static let synopsis =
        "proofkit trim INPUT [-o OUTPUT.caf] [--max-seconds S] [--start S] [--trim-silence] [--normalize DBFS] [--mono] [--rate HZ] [--sync] [--json]"
    static let discussion = """
        Decodes INPUT (MP3, WAV incl. extensible/24-bit/float, FLAC, Ogg Vorbis, Opus, AIFF, CAF, at
        any rate and channel count; detected by content, not by extension), stops at 29.000 s of
        decoded audio (sample-exact) with a 30 ms raised-cosine fade-out only when it cuts, and
        writes CAF with 16-bit little-endian linear PCM. Input that is shorter is kept whole,
        without a fade. Rate and channels are kept unless --rate or --mono is given. Only the part
        that is kept is decoded, so a one-hour input costs no more than a 30-second one.

        The output defaults to the input's name with .caf, in the current folder. An output ending
        in .wav is written as WAV (16-bit PCM) instead; a name ending in another audio format's
        extension (.mp3, .flac, .ogg, .m4a, ...) is refused (exit 64). An existing output is
        replaced only when it is a regular, writable file (a device node, FIFO or read-only file
        is refused, exit 74), keeping its mode (and, as root, its owner); the output may never be
        the input itself. Temporaries left by a killed trim (.NAME.tmp-XXXXXX, over 5 minutes
        old) are removed. INPUT may be a FIFO or /dev/stdin (read once, at most 128 MiB; a FIFO
        with no writer is given up after 10 s). Rates outside 8000...384000 Hz and more than 8
        channels are refused (exit 65). The output is written atomically: a temporary file in the
        same folder, checked, its writes to the disk started, then renamed into place. Programs
        see the old file or the complete new one, and so does the disk after a power cut on ext4
        (default data=ordered, as on Raspberry Pi OS), which commits the rename only after the
        data it exposes. --sync also waits until the new file is on the disk (fdatasync) before
        the rename, so it survives a power cut right after trim returns, on any file system; it
        costs the disk's write time (a few ms on an SSD, more on an SD card).
        On any failure no output appears and an existing one is left as it was. The check is
        'proofkit check' on the written sound; if it fails (e.g. the input was all silence),
        trim fails and writes nothing.

        AAC/M4A/ADTS input is refused (libsndfile cannot decode it); convert it first, e.g.
        ffmpeg -i in.m4a out.wav

        Exit codes: 0 written; 64 bad option or output name; 65 undecodable, unsupported,
        unplayable or silent input; 66 input missing or a folder; 74 cannot read the input or
        write the output (folder, permissions, full disk, not a regular file, read-only).

        JSON (--json), one object:
          {"input": str, "output": str, "sample_rate": int, "channels": int, "frames": int,
           "seconds": num, "cut": bool, "fade_ms": num, "skipped_seconds": num,
           "gain_db": num|null, "peak_dbfs": num|null, "rms_dbfs": num|null,
           "clipped_samples": int,
           "input_format": {"container": str, "major_format": str, "subtype": str,
                            "sample_rate": int, "channels": int, "header_seconds": num|null},
           "check": <the object 'proofkit check --json' prints>, "warnings": [str]}

        Examples:
          proofkit trim adhan.mp3                       # writes ./adhan.caf, at most 29 s
          proofkit trim adhan.mp3 -o fajr.caf --trim-silence --normalize -1
          proofkit trim long.flac --start 1m30s --max-seconds 20 --mono --rate 44100
          proofkit trim recitation.ogg -o alarm.caf --json
        """
    static let options: [OptionSpec] = [
        .option("output", short: "o", value: "FILE", help: "output file (default: ./INPUTNAME.caf; .wav writes WAV)"),
        .option("max-seconds", value: "S", help: "cut after S seconds of audio (default 29, at most 29.9)"),
        .option("start", value: "S", help: "skip S seconds first (e.g. 2.5, 1m30s)"),
        .flag("trim-silence", help: "drop leading silence (below --silence-threshold)"),
        .option("silence-threshold", value: "DBFS", help: "level that counts as silence (default -50)"),
        .option("normalize", value: "DBFS", help: "scale so the peak is DBFS (e.g. -1), never clipping"),
        .flag("mono", help: "mix all channels to one"),
        .option("rate", value: "HZ", help: "resample to HZ (8000 ... 96000; default: keep)"),
        .flag("sync", help: "wait until the output is on the disk before the rename (fdatasync)"),
        .flag("json", help: "one JSON object on stdout"),
    ]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        let input = try arguments.requirePositionals(1, names: "INPUT")[0]
        var options = AlarmSound.TrimOptions()
        if let max = try arguments.seconds("max-seconds") {
            guard max > 0, max <= AlarmSound.largestMaxSeconds else {
                throw UsageError(
                    "--max-seconds must be above 0 and at most \(AlarmSound.largestMaxSeconds), got '\(arguments.value("max-seconds") ?? "")'"
                )
            }
            options.maxSeconds = max
        }
        if let start = try arguments.seconds("start") { options.startSeconds = start }
        options.trimsLeadingSilence = arguments.has("trim-silence")
        if let threshold = try arguments.double("silence-threshold") {
            guard threshold < 0, threshold >= -120 else {
                throw UsageError("--silence-threshold must be between -120 and 0 dBFS")
            }
            options.silenceThresholdDBFS = threshold
        }
        if let peak = try arguments.double("normalize") {
            guard peak <= 0, peak >= -60 else {
                throw UsageError(
                    "--normalize must be between -60 and 0 dBFS, got '\(arguments.value("normalize") ?? "")'")
            }
            options.normalizePeakDBFS = peak
        }
        options.mixesToMono = arguments.has("mono")
        options.syncsToDisk = arguments.has("sync")
        if let rate = try arguments.int("rate") {
            guard AlarmSound.commonSampleRates.contains(rate) else {
                throw UsageError(
                    "--rate must be one of \(AlarmSound.commonSampleRates.map(String.init).joined(separator: ", ")), got \(rate)"
                )
            }
            options.sampleRate = rate
        }
        let output = arguments.value("output") ?? defaultOutput(for: input)
        if output.hasSuffix("/") || output.isEmpty { throw UsageError("-o needs a file name, got '\(output)'") }
        options.container = output.lowercased().hasSuffix(".wav") ? .wav : .caf
        if let dot = output.lastIndex(of: "."), !output[dot...].contains("/") {
            let suffix = output[output.index(after: dot)...].lowercased()
            if otherAudioExtensions.contains(suffix) {
                throw UsageError(
                    "-o '\(displayName(output))' names a .\(suffix) file, but trim writes CAF or WAV (16-bit PCM); use a name ending in .caf or .wav"
                )
            }
        }

        let result = try AlarmSound.trim(input: input, output: output, options: options)
        let check = result.check
        var warnings = check.warnings
        if result.check.isHeavilyClipped, options.normalizePeakDBFS == nil {
            warnings.append("the input is clipped; --normalize -1 leaves a little headroom but cannot undo clipping")
        }
        if arguments.has("json") {
            io.printJSON(SoundJSON.json(for: result, warnings: warnings))
        } else {
            var line =
                "\(displayName(output)): \(decimalText(check.decodedSeconds, places: 2)) s, \(check.format.sampleRate) Hz, \(check.format.channels) channel\(check.format.channels == 1 ? "" : "s"), \(result.check.format.majorFormatName) 16-bit PCM"
            if result.wasCut {
                line +=
                    "; cut at \(decimalText(check.decodedSeconds, places: 2)) s with a \(SoundJSON.fadeMilliseconds(result)) ms fade-out"
            } else {
                line += "; whole input kept"
            }
            if result.skippedInputFrames > 0 { line += "; skipped \(decimalText(result.skippedSeconds, places: 2)) s" }
            if let gain = result.gainDB { line += "; gain \(decimalText(gain, places: 2)) dB" }
            line += "; check: \(check.verdict.name)"
            io.print(line)
            for warning in warnings { io.printError("proofkit trim: warning: \(displayName(output)): \(warning)") }
        }
        return .success
    }

    /// Extensions of audio formats that trim does not write: an output named so would hold
    /// CAF bytes under a name that says otherwise, so it is refused.
    static let otherAudioExtensions: Set<String> = [
        "mp3", "mp2", "mpga", "flac", "ogg", "oga", "opus", "m4a", "m4r", "m4b", "mp4", "aac", "adts",
        "aif", "aiff", "aifc", "wma", "amr", "3gp", "webm", "mka", "au", "snd", "w64", "rf64", "ac3", "alac",
    ]

    /// `INPUTNAME.caf` in the current folder (the input's folder part and extension dropped).
    static func defaultOutput(for input: String) -> String {
        var base = input.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? input
        if let dot = base.lastIndex(of: "."), dot != base.startIndex { base = String(base[..<dot]) }
        return base + ".caf"
    }

}
