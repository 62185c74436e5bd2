import AudioIO
import Dispatch
import Proofkit
import ProofkitCore

#if canImport(Glibc)
    import Glibc
#endif

/// `proofkit voice`: the reading proof, live from a microphone or from a recording.
enum VoiceCommand: Subcommand {
    static let name = "voice"
    static let summary = "reading proof: listen for the du'a (live or from a recording)"
    static let synopsis = """
        proofkit voice --live [--device D] [--recognizer-cmd CMD | --transcript-file F] [options]
        proofkit voice --list-devices [--json]
        """
    static let discussion = """
        Live listening captures mono 16 kHz S16_LE audio from an ALSA device (default 'default';
        'hw:1,0', 'plughw:1,0', ... as 'proofkit voice --list-devices' shows) until --max-seconds of
        audio have been heard, or Ctrl-C.

        --recognizer-cmd CMD runs any recogniser through /bin/sh: proofkit writes the captured
        audio (16 kHz mono S16_LE, headerless) to its stdin and reads one transcript line per line
        of its stdout. When it dies or disconnects it is restarted quietly (the text heard so far
        is kept). --transcript-file F reads transcript lines from a file, '-' from stdin.

        Environment: PROOFKIT_ALSA_CONFIG=FILE opens devices from that ALSA configuration file
        instead of the machine's (for tests and demos without hardware); devices defined there are
        treated as not paced in real time (capture waits for proofkit rather than dropping audio).

        JSON (--json), one object per line:
          {"event":"start","device":D,"sample_rate":16000}
          {"event":"level","t":SECONDS,"level_dbfs":DB}        (every 100 ms of audio)
          {"event":"transcript","t":SECONDS,"text":LINE}
          {"event":"recognizer_restarted","restarts":N}
          {"event":"recognizer_gave_up"}
          {"event":"end","heard_seconds":S,"transcript":[LINES],"dropped_chunks":N,"overruns":N,
           "recognizer_restarts":N}
        --list-devices --json: {"devices":[{"name":N,"description":D,"capture":B,"playback":B}]}

        Exit codes: 69 when the device is missing, busy or goes away (one line on stderr).

        Examples:
          proofkit voice --list-devices
          proofkit voice --live --device plughw:1,0 --recognizer-cmd 'my-asr --lang ar'
          PROOFKIT_ALSA_CONFIG=test.conf proofkit voice --live --device vmic --json --max-seconds 5
        """
    static let options: [OptionSpec] = [
        .flag("live", help: "listen to the microphone"),
        .option("device", value: "D", help: "ALSA capture device (default 'default')"),
        .flag("list-devices", help: "list the ALSA PCM devices and exit"),
        .option("recognizer-cmd", value: "CMD", help: "external recogniser: audio on stdin, lines on stdout"),
        .option("transcript-file", value: "F", help: "transcript lines from a file ('-' for stdin)"),
        .option("max-seconds", value: "S", help: "stop after S seconds of audio (default 120)"),
        .flag("json", help: "one JSON event per line on stdout"),
    ]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        let configuration = try ALSAConfiguration.fromEnvironment(io.environment)
        if arguments.has("list-devices") {
            return listDevices(configuration: configuration, json: arguments.has("json"), io: io)
        }
        guard arguments.has("live") else {
            if arguments.positionals.isEmpty { throw UsageError("give --live, --list-devices or a RECORDING") }
            throw ProofkitError(.internal, "'proofkit voice RECORDING' needs the audio file reader, not in this build yet")
        }
        if !arguments.positionals.isEmpty {
            throw UsageError("--live takes no RECORDING argument ('\(arguments.positionals[0])')")
        }
        if arguments.value("recognizer-cmd") != nil && arguments.value("transcript-file") != nil {
            throw UsageError("give either --recognizer-cmd or --transcript-file, not both")
        }
        let maxSeconds = try arguments.seconds("max-seconds") ?? 120
        guard maxSeconds > 0 else { throw UsageError("--max-seconds must be more than 0") }
        let device = arguments.value("device") ?? "default"
        let capture = try MicrophoneCapture(
            device: device, configuration: configuration,
            overflow: configuration == nil ? .dropOldest : .waitForConsumer)
        let sampleRate = capture.sampleRate
        let stream = capture.start()
        let recognizer = arguments.value("recognizer-cmd").map { ExternalRecognizer(command: $0) }
        let lines = try arguments.value("transcript-file").map { (path) throws(ProofkitError) in
            try transcriptLines(from: path)
        }
        let listening = try LiveListening(
            capture: stream, recognizer: recognizer, transcriptLines: lines, maxSeconds: maxSeconds)
        let json = arguments.has("json")
        if json {
            io.printJSON(["event": "start", "device": .string(device), "sample_rate": .int(sampleRate)])
        }
        let summary = runBlocking {
            await LiveView(io: io, json: json, sampleRate: sampleRate).consume(listening)
        }
        if let failure = listening.failure { throw failure }
        let statistics = listening.statistics
        if json {
            io.printJSON([
                "event": "end", "heard_seconds": .rounded(summary.heardSeconds, places: 3),
                "transcript": .array(summary.transcript.map { .string($0) }),
                "dropped_chunks": .int(statistics.droppedChunks), "overruns": .int(statistics.overruns),
                "recognizer_restarts": .int(recognizer?.restarts ?? 0),
            ])
        } else {
            io.print("heard \(formatSeconds(summary.heardSeconds)) of audio on \(device)")
            if !summary.transcript.isEmpty { io.print("transcript: " + summary.transcript.joined(separator: " ")) }
        }
        return .success
    }

    static func listDevices(configuration: ALSAConfiguration?, json: Bool, io: CommandIO) -> ExitStatus {
        let devices = AudioDevice.all(configuration: configuration)
        if json {
            io.printJSON(["devices": .array(devices.map {
                ["name": .string($0.name), "description": .string($0.description),
                 "capture": .bool($0.canCapture), "playback": .bool($0.canPlay)]
            })])
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

/// What the live view saw, for the final report.
struct ListeningSummary: Sendable {
    var heardSeconds: Double = 0
    var transcript: [String] = []
}

/// Draws the live view (terminal) or writes JSON events, from the listening events.
struct LiveView {
    let io: CommandIO
    let json: Bool
    let sampleRate: Int

    func consume(_ listening: LiveListening) async -> ListeningSummary {
        var summary = ListeningSummary()
        var sumSquares = 0.0
        var framesInWindow = 0
        let window = max(1, sampleRate / 10)  // one level per 100 ms of audio
        var lastLevel = -120.0
        for await event in listening.events {
            switch event {
            case .audio(let chunk):
                summary.heardSeconds = chunk.endSeconds
                for sample in chunk.samples {
                    let value = Double(sample) / 32768
                    sumSquares += value * value
                    framesInWindow += 1
                    if framesInWindow == window {
                        lastLevel = 10 * log10(max(sumSquares / Double(window), 1e-12))
                        if json {
                            io.printJSON(["event": "level", "t": .rounded(chunk.endSeconds, places: 3),
                                          "level_dbfs": .rounded(lastLevel, places: 1)])
                        }
                        sumSquares = 0
                        framesInWindow = 0
                    }
                }
                if !json && io.isStdoutTerminal {
                    io.writeOut("\r\(meter(lastLevel)) \(formatSeconds(summary.heardSeconds))\u{1B}[K")
                }
            case .transcript(let line):
                summary.transcript.append(line)
                if json {
                    io.printJSON(["event": "transcript", "t": .rounded(summary.heardSeconds, places: 3),
                                  "text": .string(line)])
                } else {
                    io.print("\r\u{1B}[K» \(line)")
                }
            case .recognizerRestarted(let count):
                if json { io.printJSON(["event": "recognizer_restarted", "restarts": .int(count)]) }
            case .recognizerGaveUp:
                if json {
                    io.printJSON(["event": "recognizer_gave_up"])
                } else {
                    io.printError("proofkit voice: the recogniser keeps dying; going on with voice only")
                }
            }
        }
        if !json && io.isStdoutTerminal { io.writeOut("\r\u{1B}[K") }
        return summary
    }

    /// A level meter from -70 to 0 dBFS, 30 cells.
    func meter(_ level: Double) -> String {
        let cells = 30
        let filled = max(0, min(cells, Int((level + 70) / 70 * Double(cells))))
        return "[" + String(repeating: "|", count: filled) + String(repeating: " ", count: cells - filled)
            + "] " + String(Int(level.rounded())) + " dBFS"
    }
}

func formatSeconds(_ seconds: Double) -> String {
    let tenths = Int((seconds * 10).rounded())
    return "\(tenths / 10).\(tenths % 10) s"
}

/// Runs async work from the synchronous CLI entry point, blocking this (non-pool) thread until it
/// is done.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let box = BlockingResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        box.value = await body()
        done.signal()
    }
    done.wait()
    return box.value!
}

/// `@unchecked Sendable`: written once before the semaphore is signalled, read after the wait.
final class BlockingResultBox<T>: @unchecked Sendable {
    var value: T?
}
