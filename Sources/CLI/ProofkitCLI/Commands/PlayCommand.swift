import Proofkit
import ProofkitCore
internal import ProofkitSystem

/// `proofkit play`: hear an alarm sound through ALSA, as Fajr will sound.
enum PlayCommand: Subcommand {
    static let name = "play"
    static let summary = "play an alarm sound through ALSA"
    static let synopsis = "proofkit play SOUND [--device D] [--in 10s] [--volume PERCENT] [--json]"
    static let discussion = """
        Decodes SOUND (any format proofkit reads: CAF, WAV, AIFF, FLAC, MP3, OGG...; up to 10
        minutes) and plays it through an ALSA playback device, at its own rate and channels (ALSA's
        plug layer converts where the device differs). --in waits first (e.g. 10s, 1m, 500ms), so
        you can put the phone down and hear it as you would at dawn. A progress bar is drawn on
        stderr when it is a terminal.

        The file and the device are opened before the wait, so a bad file or a missing device fails
        at once. PROOFKIT_ALSA_CONFIG=FILE opens devices from that ALSA configuration instead of the
        machine's (see 'proofkit voice --help').

        JSON (--json), one object when playing ends:
          {"file":PATH,"device":D,"seconds":S,"sample_rate":HZ,"channels":N,"waited_seconds":S,
           "underruns":N,"volume":PERCENT}

        Exit codes: 64 usage, 65 undecodable sound, 66 missing file, 69 device missing or busy.

        Examples:
          proofkit play fajr.caf
          proofkit play fajr.caf --volume 40          # try the level before booking it
          proofkit play adhan.mp3 --device plughw:1,0 --in 10s
          proofkit play fajr.caf --device null --json
        """
    static let options: [OptionSpec] = [
        .option("device", value: "D", help: "ALSA playback device (default 'default')"),
        .option("in", value: "DURATION", help: "wait this long before playing (e.g. 10s)"),
        .option(
            "volume", value: "PERCENT", help: "play at this volume, 1-100, as 'alarm add --volume' rings (default 100)"),
        .flag("json", help: "one JSON object when playing ends"),
    ]

    /// The longest sound played, in seconds (bounds the memory used).
    static let maximumSeconds = 600

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        let path = try arguments.requirePositionals(1, names: "the SOUND to play")[0]
        let wait = try arguments.seconds("in") ?? 0
        guard wait >= 0, wait <= 86_400 else { throw UsageError("--in must be between 0 and 24h") }
        let device = arguments.value("device") ?? "default"
        let volume = try arguments.percent("volume") ?? 100
        let devices = try SoundDevices(environment: io.environment)

        let (clip, isCut) = try SoundFile.readClip(path: path, maximumSeconds: maximumSeconds)
        guard clip.frameCount > 0 else {
            throw ProofkitError(.decodeFailed, "there is no audio in it", path: path)
        }
        if isCut {
            io.printError(
                "proofkit play: \(path) is longer than \(maximumSeconds / 60) minutes; playing the first \(maximumSeconds / 60)"
            )
        }
        var player = try devices.openSpeaker(device)

        if wait > 0 {
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: .milliseconds(Int64(wait * 1000)))
            while clock.now < deadline {
                let left = deadline - clock.now
                if io.isStderrTerminal {
                    let seconds = Int(left.seconds.rounded(.up))
                    io.writeErr("\rplaying \(baseName(path)) in \(seconds) s\u{1B}[K")
                }
                let step: Duration = left < .milliseconds(250) ? left : .milliseconds(250)
                sleepFor(step)
            }
            if io.isStderrTerminal { io.writeErr("\r\u{1B}[K") }
        }

        var bar = ProgressBar(io: io, label: "playing \(baseName(path))", total: clip.frameCount)
        let rate = clip.sampleRate
        let underruns = try player.play(clip, volume: Float(volume / 100)) { heard, _ in
            bar.update(heard, detail: "\(formatSeconds(Double(heard) / Double(rate))) / \(formatSeconds(clip.seconds))")
        }
        bar.finish()
        try player.close()
        if arguments.has("json") {
            io.printJSON([
                "file": .string(path), "device": .string(device), "seconds": .rounded(clip.seconds, places: 3),
                "sample_rate": .int(clip.sampleRate), "channels": .int(clip.channels),
                "waited_seconds": .rounded(wait, places: 3), "underruns": .int(underruns),
                "volume": .rounded(volume, places: 1),
            ])
        } else {
            io.print(
                "played \(baseName(path)) (\(formatSeconds(clip.seconds)), \(clip.sampleRate) Hz, \(clip.channels) channel\(clip.channels == 1 ? "" : "s")) on \(device)"
            )
        }
        return .success
    }

    static func sleepFor(_ duration: Duration) {
        POSIX.sleep(seconds: duration.seconds)
    }

    static func baseName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}
