import Foundation
import TestSupport
import Testing

private let proofkitPath = AudioTestTools.proofkitBinary
private let hasBinary = FileManager.default.isExecutableFile(atPath: proofkitPath)

/// End-to-end runs of the built `proofkit` binary (`swift build --build-tests` builds it).
@Suite("proofkit trim and check, end to end", .offThePool)
struct TrimCheckEndToEndTests {
    static let binary = proofkitPath

    func proofkit(_ arguments: [String], in folder: String? = nil) throws -> ProcessResult {
        try AudioTestTools.run(Self.binary, arguments, currentDirectory: folder)
    }

    /// ffprobe confirms a CAF an alarm can play: pcm_s16le, the rate and channels, <= 29.0 s.
    func confirmAlarmCAF(_ path: String, rate: Int, channels: Int, maxSeconds: Double = 29.0) throws {
        let probe = try AudioTestTools.ffprobe(path)
        #expect(probe["format_name"] == "caf", "\(path)")
        #expect(probe["codec_name"] == "pcm_s16le", "\(path)")
        #expect(probe["sample_rate"] == String(rate), "\(path)")
        #expect(probe["channels"] == String(channels), "\(path)")
        let duration = try #require(Double(probe["duration"] ?? ""), "\(probe)")
        #expect(duration <= maxSeconds && duration > 0, "\(path): \(duration)")
    }

    // MARK: Compound durations (issue 34)

    @Test(
        "trim --start 1m30s (the help's own example) starts at 90 s; so do --start 90s and --start 1.5m",
        .enabled(if: hasBinary, "run swift build first"))
    func compoundStart() throws {
        try withTemporaryFolder { folder in
            // 100 s at 8 kHz whose sample value is 100 x the second it is in: where a cut starts is read
            // off its samples.
            let rate = 8000
            let samples = (0..<(100 * rate)).map { Int16($0 / rate * 100) }
            try TestAudio.writeWAV(samples, rate: rate, to: folder + "/long.wav")
            for start in ["1m30s", "90s", "1.5m"] {
                let out = folder + "/cut-\(start).caf"
                let result = try proofkit([
                    "trim", folder + "/long.wav", "-o", out, "--start", start, "--max-seconds", "5",
                ])
                #expect(result.status == 0, "--start \(start): \(result.status) \(result.stderr)")
                let cut = try AudioTestTools.soxInt16(out)
                // 1 s in (before the end fade): the 91st second.
                #expect(cut.count > rate && cut[rate] == 9100, "--start \(start): \(cut.count > rate ? cut[rate] : -1)")
            }
            let bad = try proofkit(["trim", folder + "/long.wav", "-o", folder + "/x.caf", "--start", "30s1m"])
            #expect(bad.status == 64)
            #expect(bad.stderr.contains("1m30s"), "\(bad.stderr)")
        }
    }

    // MARK: Every input format, longer than the limit.

    struct Format: Sendable, CustomStringConvertible {
        var name: String
        var file: String
        var command: [String]  // IN and OUT are replaced
        var description: String { name }
    }

    static let formats: [Format] = [
        Format(name: "WAV 16-bit", file: "in.wav", command: ["sox", "IN", "-b", "16", "OUT"]),
        Format(name: "WAV 24-bit", file: "in.wav", command: ["sox", "IN", "-b", "24", "OUT"]),
        Format(name: "WAV float", file: "in.wav", command: ["sox", "IN", "-e", "floating-point", "-b", "32", "OUT"]),
        Format(
            name: "WAV extensible", file: "in.wav",
            command: ["ffmpeg", "-v", "error", "-i", "IN", "-c:a", "pcm_s24le", "OUT"]),
        Format(name: "FLAC", file: "in.flac", command: ["sox", "IN", "OUT"]),
        Format(name: "Ogg Vorbis", file: "in.ogg", command: ["sox", "IN", "OUT"]),
        Format(
            name: "Opus", file: "in.opus", command: ["ffmpeg", "-v", "error", "-i", "IN", "-c:a", "libopus", "OUT"]),
        Format(name: "AIFF", file: "in.aiff", command: ["sox", "IN", "OUT"]),
        Format(name: "CAF", file: "in.caf", command: ["sox", "IN", "-b", "16", "OUT"]),
        Format(name: "MP3", file: "in.mp3", command: ["lame", "--quiet", "IN", "OUT"]),
    ]

    @Test(
        "an input longer than the cut in every format becomes a 16-bit CAF cut exactly that check accepts (WAV 16-bit: 31 s at the default 29 s; the others: 3 s at --max-seconds 2)",
        .enabled(if: hasBinary), arguments: TrimCheckEndToEndTests.formats)
    func everyFormat(_ format: Format) throws {
        try withTemporaryFolder { folder in
            let rate = 48000
            // One format goes through the real default cut; the others through a short one.
            let (seconds, cut) = format.name == "WAV 16-bit" ? (31, 29) : (3, 2)
            let source = folder + "/source.wav"
            try AudioTestTools.require(
                "sox",
                [
                    "-n", "-r", String(rate), "-c", "2", "-b", "16", source,
                    "synth", String(seconds), "sine", "440", "sine", "660", "vol", "0.5",
                ])
            let input = folder + "/" + format.file
            let command = format.command.map { $0 == "IN" ? source : $0 == "OUT" ? input : $0 }
            try AudioTestTools.require(command[0], Array(command.dropFirst()))
            let output = folder + "/alarm.caf"
            let run = try proofkit(["trim", input, "-o", output] + (cut == 29 ? [] : ["--max-seconds", String(cut)]))
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stderr.isEmpty)
            #expect(run.stdout.contains("cut at \(cut).00 s"))
            try confirmAlarmCAF(output, rate: rate, channels: 2, maxSeconds: Double(cut))
            let probe = try AudioTestTools.ffprobe(output)
            #expect(probe["duration"] == "\(cut).000000")
            let check = try proofkit(["check", "--strict", output])
            #expect(check.status == 0 && check.stdout.hasPrefix(output + ": ok"))
        }
    }

    // MARK: Odd but valid inputs.

    struct OddInput: Sendable, CustomStringConvertible {
        var name: String
        var file: String
        var soxArguments: [String]  // after "-n"; OUT replaced
        var rate: Int
        var channels: Int
        var maxSeconds: Double
        /// Extra trim arguments.
        var extra: [String] = []
        var description: String { name }
    }

    static let oddInputs: [OddInput] = [
        OddInput(
            name: "a pure tone", file: "tone.wav",
            soxArguments: ["-r", "44100", "-c", "1", "OUT", "synth", "3", "sine", "1000", "vol", "0.3"], rate: 44100,
            channels: 1, maxSeconds: 3),
        OddInput(
            name: "8 channels", file: "eight.wav",
            soxArguments: ["-r", "44100", "-c", "8", "OUT", "synth", "2", "sine", "300", "vol", "0.3"], rate: 44100,
            channels: 8, maxSeconds: 2),
        OddInput(
            name: "8 kHz", file: "low.wav",
            soxArguments: ["-r", "8000", "-c", "1", "OUT", "synth", "35", "sine", "300", "vol", "0.3"], rate: 8000,
            channels: 1, maxSeconds: 29),
        OddInput(
            name: "192 kHz", file: "high.wav",
            soxArguments: ["-r", "192000", "-c", "2", "-b", "24", "OUT", "synth", "3", "sine", "300", "vol", "0.3"],
            rate: 192000, channels: 2, maxSeconds: 2, extra: ["--max-seconds", "2"]),
        OddInput(
            name: "a very short sound (10 ms)", file: "short.wav",
            soxArguments: ["-r", "16000", "-c", "1", "OUT", "synth", "0.01", "sine", "800", "vol", "0.5"], rate: 16000,
            channels: 1, maxSeconds: 0.01),
        OddInput(
            name: "a FLAC whose extension lies (.mp3)", file: "liar.mp3",
            soxArguments: ["-r", "22050", "-c", "2", "-t", "flac", "OUT", "synth", "4", "sine", "500", "vol", "0.4"],
            rate: 22050, channels: 2, maxSeconds: 4),
    ]

    @Test(
        "odd but valid inputs make a correct CAF", .enabled(if: hasBinary), arguments: TrimCheckEndToEndTests.oddInputs)
    func trimsOddInputs(_ odd: OddInput) throws {
        try withTemporaryFolder { folder in
            let input = folder + "/" + odd.file
            try AudioTestTools.require("sox", ["-n"] + odd.soxArguments.map { $0 == "OUT" ? input : $0 })
            let output = folder + "/out.caf"
            let run = try proofkit(["trim", input, "-o", output, "--json"] + odd.extra)
            #expect(run.status == 0, "\(run.stderr)")
            try confirmAlarmCAF(output, rate: odd.rate, channels: odd.channels, maxSeconds: odd.maxSeconds + 0.0001)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            #expect(json["sample_rate"] as? Int == odd.rate)
            #expect(json["channels"] as? Int == odd.channels)
            #expect((json["check"] as? [String: Any])?["verdict"] as? String == "accepted")
        }
    }

    @Test(
        "real files: a mid-frame MP3 and a real recitation MP3 are trimmed; the default output is ./NAME.caf",
        .enabled(if: hasBinary))
    func realFiles() throws {
        try withTemporaryFolder { folder in
            for (name, rate, channels) in [("odd_midframe_001.mp3", 44100, 2), ("rec_001.mp3", 44100, 2)] {
                let run = try proofkit(["trim", TestEnvironment.fixture(name)], in: folder)
                #expect(run.status == 0, "\(run.stderr)")
                let output = folder + "/" + name.replacingOccurrences(of: ".mp3", with: ".caf")
                try confirmAlarmCAF(output, rate: rate, channels: channels)
            }
            #expect(AudioTestTools.contents(of: folder) == ["odd_midframe_001.caf", "rec_001.caf"])
        }
    }

    @Test(
        "options end to end: --start, --max-seconds, --trim-silence, --normalize, --mono, --rate",
        .enabled(if: hasBinary))
    func options() throws {
        try withTemporaryFolder { folder in
            let input = folder + "/in.wav"
            try AudioTestTools.require(
                "sox",
                [
                    "-n", "-r", "44100", "-c", "2", input, "synth", "2", "sine", "0", ":",
                    "synth", "8", "sine", "440", "vol", "0.2",
                ])
            let output = folder + "/out.caf"
            let run = try proofkit([
                "trim", input, "-o", output, "--start=1", "--trim-silence", "--max-seconds", "5s",
                "--normalize", "-3", "--mono", "--rate", "48000", "--json",
            ])
            #expect(run.status == 0, "\(run.stderr)")
            try confirmAlarmCAF(output, rate: 48000, channels: 1, maxSeconds: 5)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            #expect(json["frames"] as? Int == 5 * 48000)
            #expect(json["cut"] as? Bool == true)
            #expect(abs((json["skipped_seconds"] as? Double ?? 0) - 2) < 0.01)
            #expect(abs((json["peak_dbfs"] as? Double ?? 0) + 3) < 0.02)
        }
    }

    // MARK: Bad input: exit code, one line on stderr, no output.

    struct BadInput: Sendable, CustomStringConvertible {
        var name: String
        var status: Int32
        var words: String
        var description: String { name }
    }

    static let badInputs: [BadInput] = [
        BadInput(name: "missing file", status: 66, words: "no such file"),
        BadInput(name: "folder", status: 66, words: "is a folder"),
        BadInput(name: "empty file", status: 65, words: "is empty"),
        BadInput(name: "random bytes", status: 65, words: "not a readable audio file"),
        BadInput(name: "WAV header with no audio", status: 65, words: "audio"),
        BadInput(name: "truncated Ogg (36 bytes, real)", status: 65, words: "not a readable audio file"),
        BadInput(name: "all digital silence (real)", status: 65, words: "silence"),
        BadInput(name: "AAC in M4A (real)", status: 65, words: "ffmpeg -i in.m4a out.wav"),
        BadInput(name: "raw ADTS AAC (real)", status: 65, words: "ADTS"),
        BadInput(name: "missing output folder", status: 74, words: "cannot create the output"),
        BadInput(name: "output over the input", status: 64, words: "the output is the input"),
        BadInput(name: "--max-seconds above 29.9", status: 64, words: "--max-seconds"),
        BadInput(name: "--rate not a common rate", status: 64, words: "--rate"),
    ]

    @Test(
        "bad input is refused with its exit code, one stderr line naming the file, and no output",
        .enabled(if: hasBinary), arguments: TrimCheckEndToEndTests.badInputs)
    func refusesBadInput(_ bad: BadInput) throws {
        try withTemporaryFolder { folder in
            let tone = folder + "/tone.wav"
            try AudioTestTools.require(
                "sox", ["-n", "-r", "8000", "-c", "1", tone, "synth", "1", "sine", "440", "vol", "0.3"])
            var input = folder + "/input.wav"
            var output = folder + "/out/alarm.caf"
            try FileManager.default.createDirectory(atPath: folder + "/out", withIntermediateDirectories: false)
            var extra: [String] = []
            switch bad.name {
            case "missing file": input = folder + "/nothing.wav"
            case "folder": input = folder + "/out"
            case "empty file": _ = FileManager.default.createFile(atPath: input, contents: Data())
            case "random bytes":
                let bytes = SyntheticAudio.noise(amplitude: 1, frames: 50000).map {
                    UInt8(truncatingIfNeeded: Int(($0 + 1) * 127.5))
                }
                _ = FileManager.default.createFile(atPath: input, contents: Data(bytes))
            case "WAV header with no audio":
                let data = try Data(contentsOf: URL(fileURLWithPath: tone))
                _ = FileManager.default.createFile(atPath: input, contents: data.prefix(44))
            case "truncated Ogg (36 bytes, real)": input = TestEnvironment.fixture("odd_truncated_001.ogg")
            case "all digital silence (real)": input = TestEnvironment.fixture("odd_silence_001.wav")
            case "AAC in M4A (real)": input = TestEnvironment.fixture("rec_003_excerpt2s.m4a")
            case "raw ADTS AAC (real)": input = TestEnvironment.fixture("rec_008_excerpt2s.aac")
            case "missing output folder":
                input = tone
                output = folder + "/no/such/folder/alarm.caf"
            case "output over the input":
                input = folder + "/out/alarm.caf"
                try AudioTestTools.require("sox", [tone, "-b", "16", input])
                output = folder + "/out/../out/alarm.caf"
            case "--max-seconds above 29.9":
                input = tone
                extra = ["--max-seconds", "30"]
            case "--rate not a common rate":
                input = tone
                extra = ["--rate", "12345"]
            default: Issue.record("unknown case")
            }
            let before = AudioTestTools.contents(of: folder + "/out")
            let run = try proofkit(["trim", input, "-o", output] + extra)
            #expect(run.status == bad.status, "\(run.stderr)")
            #expect(run.stdout.isEmpty)
            let first = run.stderrLines.first ?? ""
            #expect(first.contains(bad.words), "\(run.stderr)")
            if bad.status == 64 {
                #expect(run.stderrLines.count <= 3)  // the message, the usage line, the --help hint
            } else {
                #expect(run.stderrLines.count == 1, "\(run.stderr)")
                #expect(
                    first.hasPrefix("proofkit trim: \(input): ") || first.hasPrefix("proofkit trim: \(output): "),
                    "\(first)")
            }
            #expect(AudioTestTools.contents(of: folder + "/out") == before)
            #expect(!AudioTestTools.exists(output) || bad.name == "output over the input")
        }
    }

    @Test(
        "a full disk fails with 74, one line, no output and the old output untouched (tmpfs, else RLIMIT_FSIZE)",
        .enabled(if: hasBinary))
    func fullDisk() throws {
        try withTemporaryFolder { folder in
            let input = folder + "/long.wav"
            try AudioTestTools.require(
                "sox", ["-n", "-r", "44100", "-c", "2", input, "synth", "10", "sine", "440", "vol", "0.3"])
            let disk = folder + "/disk"
            try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: false)
            let mounted = getuid() == 0 && AudioTestTools.mountTmpfs(at: disk, kilobytes: 512)
            defer { if mounted { AudioTestTools.unmount(disk) } }
            let output = disk + "/alarm.caf"
            let original = Data("the alarm from yesterday".utf8)
            _ = FileManager.default.createFile(atPath: output, contents: original)
            let run: ProcessResult
            if mounted {
                run = try proofkit(["trim", input, "-o", output])
            } else {
                // A 512 KiB file size limit, with SIGXFSZ ignored so that write() fails with EFBIG.
                run = try AudioTestTools.run(
                    "/bin/sh",
                    [
                        "-c", "ulimit -f 1024; trap '' XFSZ; exec \"$0\" \"$@\"",
                        Self.binary, "trim", input, "-o", output,
                    ])
            }
            #expect(run.status == 74, "\(run.stderr)")
            #expect(run.stderrLines.count == 1, "\(run.stderr)")
            #expect(run.stderr.contains(output) && run.stderr.contains("cannot write"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == original)
            #expect(AudioTestTools.contents(of: disk) == ["alarm.caf"])
        }
    }

    @Test("a file size limit (RLIMIT_FSIZE) is handled like a full disk", .enabled(if: hasBinary))
    func fileSizeLimit() throws {
        try withTemporaryFolder { folder in
            let input = folder + "/long.wav"
            try AudioTestTools.require(
                "sox", ["-n", "-r", "44100", "-c", "2", input, "synth", "10", "sine", "440", "vol", "0.3"])
            let output = folder + "/alarm.caf"
            let run = try AudioTestTools.run(
                "/bin/sh",
                [
                    "-c", "ulimit -f 1024; trap '' XFSZ; exec \"$0\" \"$@\"",
                    Self.binary, "trim", input, "-o", output,
                ])
            #expect(run.status == 74, "\(run.stderr)")
            #expect(run.stderrLines.count == 1, "\(run.stderr)")
            #expect(AudioTestTools.contents(of: folder) == ["long.wav"])
        }
    }

    @Test("a read-only output folder fails with 74 and writes nothing", .enabled(if: hasBinary && getuid() == 0))
    func readOnlyFolder() throws {
        try withTemporaryFolder { folder in
            let readOnly = folder + "/ro"
            try FileManager.default.createDirectory(atPath: readOnly, withIntermediateDirectories: false)
            try #require(
                AudioTestTools.mountTmpfs(at: readOnly, kilobytes: 64, readOnly: true), "root could not mount a tmpfs")
            defer { AudioTestTools.unmount(readOnly) }
            let run = try proofkit(["trim", TestEnvironment.fixture("rec_001.mp3"), "-o", readOnly + "/alarm.caf"])
            #expect(run.status == 74, "\(run.stderr)")
            #expect(run.stderrLines.count == 1 && run.stderr.contains("Read-only file system"))
            #expect(AudioTestTools.contents(of: readOnly).isEmpty)
        }
    }

    // MARK: check.

    @Test("check: JSON schema, --strict exit 2, header and decoded lengths", .enabled(if: hasBinary))
    func check() throws {
        let run = try proofkit([
            "check", "--json", TestEnvironment.fixture("rec_001.mp3"), TestEnvironment.fixture("rec_007_excerpt3s.wav"),
        ])
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        let mp3 = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(mp3["verdict"] as? String == "rejected")
        #expect((mp3["reasons"] as? [[String: Any]])?.first?["kind"] as? String == "notAlarmFormat")
        let wav = try #require(try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        #expect(wav["verdict"] as? String == "accepted")
        #expect(wav["heavy_clipping"] as? Bool == true)
        #expect(wav["decoded_seconds"] as? Double == 3)
        for key in [
            "path", "verdict", "reasons", "decoded_seconds", "reached_limit", "header_seconds", "peak_dbfs",
            "rms_dbfs", "clipped_samples", "clipped_fraction", "heavy_clipping", "format", "warnings",
        ] {
            #expect(wav[key] != nil, "\(key)")
        }
        let strict = try proofkit(["check", "--strict", TestEnvironment.fixture("rec_001.mp3")])
        #expect(strict.status == 2)
        #expect(strict.stdout.contains("rejected"))
        let silent = try proofkit(["check", TestEnvironment.fixture("odd_silence_001.wav")])
        #expect(silent.status == 0 && silent.stdout.contains("all digital silence"))
        let missing = try proofkit(["check", "/no/such/file.caf"])
        #expect(missing.status == 66 && missing.stderrLines == ["proofkit check: /no/such/file.caf: no such file"])
    }

    @Test("help for trim and check shows usage and examples on stdout", .enabled(if: hasBinary))
    func help() throws {
        for verb in ["trim", "check"] {
            let run = try proofkit([verb, "--help"])
            #expect(run.status == 0 && run.stderr.isEmpty)
            #expect(run.stdout.hasPrefix("usage: proofkit \(verb)"))
            #expect(run.stdout.contains("Examples:") && run.stdout.contains("JSON"))
        }
    }

    @Test(
        "trim of an MP3 cut mid-frame keeps its audio to the cut, as ffmpeg decodes it (it once lost the last 65536-frame read)",
        .enabled(if: hasBinary))
    func truncatedMP3() throws {
        try withTemporaryFolder { folder in
            // 64 kbit/s: 4 s and 333 bytes into the next frame, as `head -c` cuts a download.
            let whole = try Data(contentsOf: URL(fileURLWithPath: TestEnvironment.fixture("rec_001.mp3")))
            try whole.prefix(32333).write(to: URL(fileURLWithPath: folder + "/cut.mp3"))
            let run = try proofkit(["trim", "cut.mp3", "-o", "out.caf"], in: folder)
            #expect(run.status == 0, "\(run.stderr)")
            let kept = try #require(Double(try AudioTestTools.ffprobe(folder + "/out.caf")["duration"] ?? ""))
            let ffmpeg = Double(try AudioTestTools.ffmpegSamples(folder + "/cut.mp3").count / 2) / 44100
            #expect(abs(kept - ffmpeg) < 0.1, "trim kept \(kept) s, ffmpeg decodes \(ffmpeg) s")
        }
    }
}
