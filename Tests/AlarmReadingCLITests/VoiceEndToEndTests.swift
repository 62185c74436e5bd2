import Foundation
import TestSupport
import Testing

/// Writes mono S16_LE samples as a headerless file.
private func writeRawFile(_ samples: [Int16], to path: String) throws {
    var data = Data(capacity: samples.count * 2)
    for sample in samples {
        let bits = UInt16(bitPattern: sample)
        data.append(UInt8(truncatingIfNeeded: bits))
        data.append(UInt8(truncatingIfNeeded: bits >> 8))
    }
    try data.write(to: URL(fileURLWithPath: path))
}

/// Writes an ALSA configuration defining `vmic`, a virtual microphone playing `raw`.
private func writeConfig(folder: String, raw: String) throws -> String {
    let path = folder + "/asound.conf"
    try """
    pcm.vmic { type file slave.pcm { type null } file "/dev/null" infile "\(raw)" format "raw"
               hint.description "virtual microphone" }
    pcm.quiet { type null }
    """.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

private func jsonLines(_ text: String) throws -> [[String: Any]] {
    try text.split(separator: "\n").map {
        try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
}

@Suite(
    "proofkit voice end to end", .enabled(if: TestEnvironment.hasProofkitBinary, "build proofkit first"), .offThePool)
struct VoiceEndToEndTests {
    @Test("a missing capture device exits 69 with one line on stderr and nothing on stdout")
    func missingDevice() throws {
        let result = try TestEnvironment.runProofkit([
            "voice", "--recognizer", "none", "--live", "--device", "nosuchmic",
        ])
        #expect(result.status == 69)
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "libasound's own chatter must be silenced: \(result.stderr)")
        #expect(lines.first?.contains("'nosuchmic'") == true)
    }

    @Test(
        "--recognizer-cmd whose program is not installed: exit 69 naming it, before listening (issue 34; it printed 'rejected')"
    )
    func recognizerCommandMissing() throws {
        try withTemporaryFolder { folder in
            try writeRawFile([Int16](repeating: 0, count: 16_000), to: folder + "/mic.raw")
            let config = try writeConfig(folder: folder, raw: folder + "/mic.raw")
            for (command, program) in [
                ("my-asr --stdin", "my-asr"), ("LANG=C '\(folder)/no such asr' --lang ar", folder + "/no such asr"),
            ] {
                let result = try TestEnvironment.runProofkit(
                    ["voice", "--live", "--device", "vmic", "--recognizer-cmd", command, "--max-seconds", "1"],
                    environment: ["PROOFKIT_ALSA_CONFIG": config])
                #expect(result.status == 69, "\(command): \(result.status) \(result.stderr)")
                #expect(result.stdout.isEmpty, "\(command): \(result.stdout)")
                #expect(result.stderr.contains("'\(program)', which is not installed"), "\(command): \(result.stderr)")
                #expect(result.stderr.split(separator: "\n").count == 1)
            }
            // An installed program still runs (the shell's own `cat` reads the audio and prints nothing).
            let installed = try TestEnvironment.runProofkit(
                [
                    "voice", "--live", "--device", "vmic", "--recognizer-cmd", "cat > /dev/null", "--max-seconds", "1",
                    "--vad", "energy",
                ],
                environment: ["PROOFKIT_ALSA_CONFIG": config])
            #expect(installed.status == 0, "\(installed.stderr)")
        }
    }

    @Test(
        "a recording that cannot be judged is refused before any model loads: a 1 Hz WAV is 65 in under 64 MiB",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/time"), "needs GNU time"))
    func inputCheckedBeforeModels() throws {
        try withTemporaryFolder { folder in
            // A valid RIFF WAVE header declaring 1 Hz mono 16-bit, with 16 samples.
            var wav = Data("RIFF".utf8)
            func le(_ value: Int, _ bytes: Int) -> Data { Data((0..<bytes).map { UInt8((value >> (8 * $0)) & 0xFF) }) }
            wav += le(36 + 32, 4) + Data("WAVEfmt ".utf8) + le(16, 4) + le(1, 2) + le(1, 2) + le(1, 4) + le(2, 4)
            wav += le(2, 2) + le(16, 2) + Data("data".utf8) + le(32, 4) + Data(count: 32)
            try wav.write(to: URL(fileURLWithPath: folder + "/1hz.wav"))
            for (name, status) in [("1hz.wav", Int32(65)), ("missing.wav", 66)] {
                let result = try runProcess(
                    "/usr/bin/time",
                    ["-f", "peak-kib %M", TestEnvironment.proofkitBinary, "voice", folder + "/" + name])
                #expect(result.status == status, "\(name): \(result.status) \(result.stderr)")
                let peak = result.stderr.split(separator: "\n").last { $0.hasPrefix("peak-kib ") }
                let kib = try #require(peak.flatMap { Int($0.dropFirst("peak-kib ".count)) }, "\(result.stderr)")
                #expect(kib < 64 * 1024, "\(name): peak RSS \(kib) KiB: a model was loaded first")
            }
        }
    }

    @Test("the transcript: line shows what was heard once, not each interim guess joined")
    func transcriptLineIsCurrentBest() throws {
        try withTemporaryFolder { folder in
            let config = try writeConfig(folder: folder, raw: "/dev/null")
            // A streaming recogniser's interim guesses, each repeating and extending the one before,
            // then a new phrase.
            let lines = ["الحمدلله", "الحمدلله الذي", "الحمدلله الذي احيانا", "بعدما اماتنا"]
            let command = "printf '" + lines.joined(separator: "\\n") + "\\n'; cat > /dev/null"
            let result = try TestEnvironment.runProofkit(
                ["voice", "--live", "--device", "quiet", "--recognizer-cmd", command, "--max-seconds", "1"],
                environment: ["PROOFKIT_ALSA_CONFIG": config])
            #expect(result.status == 0, "\(result.stderr)")
            let shown = result.stdout.split(separator: "\n").filter { $0.hasPrefix("transcript: ") }
            #expect(shown == ["transcript: الحمدلله الذي احيانا بعدما اماتنا"], "\(result.stdout)")
            let json = try TestEnvironment.runProofkit(
                ["voice", "--live", "--device", "quiet", "--recognizer-cmd", command, "--max-seconds", "1", "--json"],
                environment: ["PROOFKIT_ALSA_CONFIG": config])
            let end = try #require(try jsonLines(json.stdout).last)
            #expect(end["heard_text"] as? String == "الحمدلله الذي احيانا بعدما اماتنا")
            #expect((end["transcript"] as? [String]) == lines, "every line received is still listed")
        }
    }

    @Test("--list-devices lists the machine's devices, or those of PROOFKIT_ALSA_CONFIG")
    func listDevices() throws {
        let machine = try TestEnvironment.runProofkit(["voice", "--list-devices"])
        #expect(machine.status == 0)
        #expect(machine.stdout.contains("null"))
        try withTemporaryFolder { folder in
            let config = try writeConfig(folder: folder, raw: "/dev/null")
            let result = try TestEnvironment.runProofkit(
                ["voice", "--list-devices", "--json"], environment: ["PROOFKIT_ALSA_CONFIG": config])
            #expect(result.status == 0)
            let object = try #require(try jsonLines(result.stdout).first)
            let devices = try #require(object["devices"] as? [[String: Any]])
            #expect(devices.compactMap { $0["name"] as? String } == ["vmic", "quiet"])
            #expect(devices.first?["description"] as? String == "virtual microphone")
        }
    }

    @Test("live JSON from a virtual microphone: levels follow the audio, then an end event")
    func liveJSON() throws {
        try withTemporaryFolder { folder in
            // 1 s silence, 1 s of a 300 Hz tone with amplitude 0.1 (RMS -23.0 dBFS), then silence.
            var samples = [Int16](repeating: 0, count: 16000)
            samples += (0..<16000).map {
                Int16((0.1 * 32767 * sin(2 * Double.pi * 300 * Double($0) / 16000)).rounded())
            }
            try writeRawFile(samples, to: folder + "/mic.raw")
            let config = try writeConfig(folder: folder, raw: folder + "/mic.raw")
            let result = try TestEnvironment.runProofkit(
                ["voice", "--recognizer", "none", "--live", "--device", "vmic", "--json", "--max-seconds", "3"],
                environment: ["PROOFKIT_ALSA_CONFIG": config])
            #expect(result.status == 0, "\(result.stderr)")
            let events = try jsonLines(result.stdout)
            #expect(events.first?["event"] as? String == "start")
            #expect(events.first?["sample_rate"] as? Int == 16000)
            let end = try #require(events.last)
            #expect(end["event"] as? String == "end")
            #expect((end["heard_seconds"] as? Double ?? 0) >= 3)
            #expect(end["dropped_chunks"] as? Int == 0)
            let levels: [(Double, Double)] = events.filter { $0["event"] as? String == "level" }.compactMap { event in
                guard let t = event["t"] as? Double, let level = event["level_dbfs"] as? Double else { return nil }
                return (t, level)
            }
            #expect(levels.count >= 29)
            for (t, level) in levels {
                if t > 1.15 && t < 1.95 { #expect(abs(level + 23.0) < 0.5, "tone at \(t) s reads \(level)") }
                // Digital silence reads the gate's silence level, -100 dBFS.
                if t < 0.95 || t > 2.15 { #expect(level <= -100, "silence at \(t) s reads \(level)") }
            }
        }
    }

    @Test("a recogniser that dies after each line is restarted and every line is kept")
    func recognizerRestart() throws {
        try withTemporaryFolder { folder in
            try writeRawFile([Int16](repeating: 500, count: 16000), to: folder + "/mic.raw")
            // The virtual microphone is a FIFO fed by a writer that pauses after the first second,
            // as a real microphone is paced: the first recogniser dies while audio is still coming,
            // however slowly the machine starts processes (an unpaced file would be read to its
            // end before a loaded machine had even started the recogniser).
            let fifo = folder + "/mic.fifo"
            #expect(mkfifo(fifo, 0o600) == 0)
            let writer = Process()
            writer.executableURL = URL(fileURLWithPath: "/bin/sh")
            writer.arguments = ["-c", "{ cat '\(folder)/mic.raw'; sleep 2; head -c 160000 /dev/zero; } > '\(fifo)'"]
            try writer.run()
            defer {
                if writer.isRunning { writer.terminate() }
                writer.waitUntilExit()
            }
            let config = try writeConfig(folder: folder, raw: fifo)
            // First run: reads some audio, prints one line, exits (a disconnect). Later runs print
            // the rest and keep reading until stdin closes, as a healthy recogniser does.
            let script = folder + "/fake-recognizer.sh"
            try """
            #!/bin/sh
            if [ ! -e "\(folder)/started" ]; then
              touch "\(folder)/started"
              head -c 3200 > /dev/null
              echo "الحمد لله"
              exit 0
            fi
            head -c 3200 > /dev/null
            echo "الذي احيانا بعد ما اماتنا"
            echo "واليه النشور"
            cat > /dev/null
            """.write(toFile: script, atomically: true, encoding: .utf8)
            let result = try TestEnvironment.runProofkit(
                [
                    "voice", "--live", "--device", "vmic", "--json", "--max-seconds", "4",
                    "--recognizer-cmd", "sh " + script,
                ],
                environment: ["PROOFKIT_ALSA_CONFIG": config])
            #expect(result.status == 0, "\(result.stderr)")
            let events = try jsonLines(result.stdout)
            let end = try #require(events.last)
            #expect(end["transcript"] as? [String] == ["الحمد لله", "الذي احيانا بعد ما اماتنا", "واليه النشور"])
            #expect(end["recognizer_restarts"] as? Int == 1)
            #expect(events.contains { $0["event"] as? String == "recognizer_restarted" })
            #expect(result.stderr.isEmpty)
        }
    }

    @Test("transcript lines come from stdin with --transcript-file -")
    func transcriptStdin() throws {
        try withTemporaryFolder { folder in
            let config = try writeConfig(folder: folder, raw: "/dev/null")
            let result = try TestEnvironment.runProofkit(
                ["voice", "--live", "--device", "quiet", "--json", "--max-seconds", "2", "--transcript-file", "-"],
                stdin: Data("الحمد لله\nواليه النشور\n".utf8), environment: ["PROOFKIT_ALSA_CONFIG": config])
            #expect(result.status == 0, "\(result.stderr)")
            let transcripts = try jsonLines(result.stdout).filter { $0["event"] as? String == "transcript" }
            #expect(transcripts.compactMap { $0["text"] as? String } == ["الحمد لله", "واليه النشور"])
        }
    }

    @Test("usage errors exit 64")
    func usage() throws {
        let none = try TestEnvironment.runProofkit(["voice"])
        #expect(none.status == 64)
        let both = try TestEnvironment.runProofkit(
            ["voice", "--live", "--recognizer-cmd", "x", "--transcript-file", "y"])
        #expect(both.status == 64)
    }
}
