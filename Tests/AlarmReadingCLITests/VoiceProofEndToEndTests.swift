import Foundation
import Inference
import TestSupport
import Testing

/// Helpers for the reading-proof end-to-end tests: sox-made mixtures played through a virtual
/// microphone (the real libasound capture path, an ALSA `file` PCM opened from
/// `PROOFKIT_ALSA_CONFIG`), and JSON parsing of `proofkit voice` output.
enum VoiceProofE2E {
    static let wakingDua = "الْحَمْدُ لِلَّهِ الَّذِي أَحْيَانَا بَعْدَ مَا أَمَاتَنَا وَإِلَيْهِ النُّشُورُ"
    static let hasTools = TestEnvironment.hasTool("sox") && TestEnvironment.hasProofkitBinary
    static let hasEspeak = hasTools && TestEnvironment.hasTool("espeak-ng")
    /// Silero for the built binary: ONNX Runtime and the model set-up builds.
    static let hasSilero =
        OnnxRuntime.isAvailable
        && FileManager.default.fileExists(
            atPath: TestEnvironment.packageRoot.appendingPathComponent("Models/generated/silero_vad.onnx").path)

    /// A mixture made by sox and what a listener could hear in it.
    struct Mixture {
        var wav: String
        var raw: String
        var seconds: Double
        /// Speech regions of the clean speech that stand above the noise level, in mixture time.
        var reference: [(start: Double, end: Double)]
        var referenceSeconds: Double { reference.reduce(0) { $0 + $1.end - $1.start } }
        var speechStart: Double
        var speechEnd: Double
    }

    static func sox(_ arguments: [String]) throws {
        let status = try AudioTestTools.run("sox", arguments).status
        try #require(status == 0, "sox \(arguments.joined(separator: " "))")
    }

    /// Speech (a WAV at 16 kHz) at `speechLevel` dBFS RMS, 2 s into `noise` (a 16 kHz fixture,
    /// repeated) at `noiseLevel` dBFS, with 2 s of room after: mixed by sox (`-m -v`), written as
    /// WAV and as the raw S16_LE the virtual microphone plays. `speechLevel` nil: noise only, 8 s.
    static func mix(speech: String?, noise: String, noiseLevel: Double, speechLevel: Double?, in folder: String) throws
        -> Mixture
    {
        let noiseAudio = try TestAudio.readWAV(TestEnvironment.fixture(noise))
        let noiseGain = pow(10, (noiseLevel - noiseAudio.rmsDecibels) / 20)
        var speechSeconds = 4.0
        var speechGain = 0.0
        var reference: [(start: Double, end: Double)] = []
        if let speech, let speechLevel {
            let clean = try TestAudio.readWAV(speech)
            speechSeconds = clean.seconds
            speechGain = pow(10, (speechLevel - clean.rmsDecibels) / 20)
            reference = clean.scaled(toRMS: speechLevel).activeRegions(above: noiseLevel)
                .map { (start: $0.start + 2, end: $0.end + 2) }
        }
        let total = 2 + speechSeconds + 2
        let room = folder + "/room.wav"
        let repeats = Int(total / noiseAudio.seconds) + 1
        try sox([TestEnvironment.fixture(noise), room, "repeat", String(repeats), "trim", "0", String(total)])
        let voice = folder + "/voice.wav"
        if let speech {
            try sox([speech, "-r", "16000", "-c", "1", voice, "pad", "2", "2"])
        } else {
            try sox(["-n", "-r", "16000", "-c", "1", "-b", "16", voice, "trim", "0", String(total)])
        }
        let wav = folder + "/mix.wav"
        try sox([
            "-m", "-v", String(speechGain), voice, "-v", String(noiseGain), room, "-b", "16", wav, "trim", "0",
            String(total),
        ])
        let raw = folder + "/mix.raw"
        try sox([wav, "-t", "raw", "-e", "signed", "-b", "16", "-r", "16000", "-c", "1", raw])
        return Mixture(
            wav: wav, raw: raw, seconds: total, reference: reference,
            speechStart: 2, speechEnd: 2 + speechSeconds)
    }

    /// An ALSA configuration with `vmic` playing `raw`, and `null`.
    static func config(folder: String, raw: String) throws -> String {
        let path = folder + "/asound.conf"
        try """
        pcm.vmic { type file slave.pcm { type null } file "/dev/null" infile "\(raw)" format "raw" }
        pcm.quiet { type null }
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func jsonLines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    static func segments(_ object: [String: Any]) -> [(start: Double, end: Double)] {
        (object["voiced_segments"] as? [[Double]] ?? []).compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
    }

    /// Seconds of `segments` inside `start..<end`.
    static func overlap(_ segments: [(start: Double, end: Double)], _ start: Double, _ end: Double) -> Double {
        segments.reduce(0) { $0 + max(0, min($1.end, end) - max($1.start, start)) }
    }

    /// The espeak-ng reading of the waking du'a as a 16 kHz WAV in `folder`.
    static func espeakDua(in folder: String) throws -> String {
        let raw = folder + "/espeak.wav"
        let wav = folder + "/dua16k.wav"
        try #require(try AudioTestTools.run("espeak-ng", ["-v", "ar", "-s", "130", "-w", raw, wakingDua]).status == 0)
        try sox([raw, "-r", "16000", "-c", "1", "-b", "16", wav])
        return wav
    }
}

@Suite(
    "proofkit voice --live: the reading proof over a virtual microphone", .enabled(if: VoiceProofE2E.hasTools),
    .offThePool)
struct VoiceLiveProofTests {
    /// (speech, noise, noise level, SNR): real speech fixtures and espeak-ng Arabic, mixed by sox
    /// with real room noise at several levels and signal-to-noise ratios.
    static let cases: [(String, String, Double, Double)] = [
        ("espeak", "noise_ac_16k.wav", -50, 20),
        ("espeak", "noise_fan_16k.wav", -40, 10),
        ("espeak", "noise_night_16k.wav", -45, 15),
        ("speech_ar_quran_16k.wav", "noise_fridge_16k.wav", -50, 15),
        ("speech_ar_quran_16k.wav", "noise_fan_16k.wav", -35, 10),
        ("speech_en_ljspeech_16k.wav", "noise_ac_16k.wav", -45, 15),
    ]

    @Test("voiced seconds match the known speech regions", arguments: cases.indices)
    func speechInNoise(index: Int) throws {
        let (speechName, noise, noiseLevel, snr) = Self.cases[index]
        try #require(speechName != "espeak" || VoiceProofE2E.hasEspeak, "espeak-ng is installed by .ci/setup")
        try withTemporaryFolder { folder in
            let speech =
                speechName == "espeak" ? try VoiceProofE2E.espeakDua(in: folder) : TestEnvironment.fixture(speechName)
            let mix = try VoiceProofE2E.mix(
                speech: speech, noise: noise, noiseLevel: noiseLevel, speechLevel: noiseLevel + snr, in: folder)
            let config = try VoiceProofE2E.config(folder: folder, raw: mix.raw)
            let result = try TestEnvironment.runProofkit(
                [
                    "voice", "--recognizer", "none", "--live", "--device", "vmic", "--json", "--max-seconds",
                    String(mix.seconds),
                ],
                environment: ["PROOFKIT_ALSA_CONFIG": config])
            #expect(result.status == 0, "\(result.stderr)")
            let events = try VoiceProofE2E.jsonLines(result.stdout)
            let end = try #require(events.last)
            #expect(end["event"] as? String == "end")
            let voiced = try #require(end["voiced_seconds"] as? Double)
            let segments = VoiceProofE2E.segments(end)
            let reference = mix.referenceSeconds
            print(
                "live \(speechName) in \(noise) at \(Int(noiseLevel)) dBFS, SNR \(Int(snr)) dB: voiced \(voiced) s, reference \(reference) s"
            )
            #expect(abs(voiced - reference) <= max(0.8, 0.25 * reference), "\(segments) vs \(mix.reference)")
            let inside = VoiceProofE2E.overlap(segments, mix.speechStart - 0.15, mix.speechEnd + 0.15)
            #expect(voiced - inside <= 0.3, "voice outside the speech: \(segments)")
            // The live events agree with the end: progress reaches the final voiced seconds.
            let progress = events.filter { $0["event"] as? String == "progress" }.compactMap {
                $0["voiced_seconds"] as? Double
            }
            #expect(abs((progress.last ?? -1) - voiced) < 0.15)
            let levels = events.filter { $0["event"] as? String == "level" }
            #expect(levels.count >= Int(mix.seconds * 10) - 1)
            #expect(levels.allSatisfy { ($0["threshold_dbfs"] as? Double ?? 0) > ($0["floor_dbfs"] as? Double ?? 0) })
            // Voice-only fallback: the verdict follows the voiced seconds against the reading time.
            let needed = try #require(end["needed_seconds"] as? Double)
            #expect(end["rule"] as? String == "voiceOnly")
            #expect((end["verdict"] as? String == "accepted") == (voiced >= needed))
        }
    }

    @Test(
        "real room noise alone stays near zero voiced seconds, and --strict exits 2",
        arguments: ["noise_ac_16k.wav", "noise_fan_16k.wav", "noise_fridge_16k.wav", "noise_night_16k.wav"])
    func noiseOnly(noise: String) throws {
        try withTemporaryFolder { folder in
            for level in [-50.0, -35.0] {
                let mix = try VoiceProofE2E.mix(
                    speech: nil, noise: noise, noiseLevel: level, speechLevel: nil, in: folder)
                let config = try VoiceProofE2E.config(folder: folder, raw: mix.raw)
                let result = try TestEnvironment.runProofkit(
                    [
                        "voice", "--recognizer", "none", "--live", "--device", "vmic", "--json", "--strict",
                        "--max-seconds", String(mix.seconds),
                    ],
                    environment: ["PROOFKIT_ALSA_CONFIG": config])
                #expect(result.status == 2, "\(result.stderr)")
                let end = try #require(try VoiceProofE2E.jsonLines(result.stdout).last)
                let voiced = try #require(end["voiced_seconds"] as? Double)
                #expect(voiced <= 0.3, "\(noise) at \(level) dBFS: \(VoiceProofE2E.segments(end))")
                #expect(end["verdict"] as? String == "rejected")
                let floor = try #require(end["noise_floor_dbfs"] as? Double)
                #expect(abs(floor - level) < 5, "floor \(floor) for noise at \(level)")
            }
        }
    }

    @Test(
        "a recogniser command that echoes the du'a reaches an accepted verdict, with key words lit in order",
        .enabled(if: VoiceProofE2E.hasEspeak))
    func recognizerAccepts() throws {
        try withTemporaryFolder { folder in
            let mix = try VoiceProofE2E.mix(
                speech: try VoiceProofE2E.espeakDua(in: folder), noise: "noise_ac_16k.wav", noiseLevel: -50,
                speechLevel: -32, in: folder)
            let config = try VoiceProofE2E.config(folder: folder, raw: mix.raw)
            // Reads 3 s of audio, then prints what a recogniser would (merged words, no harakat).
            let script = folder + "/recognizer.sh"
            try """
            #!/bin/sh
            head -c 96000 > /dev/null
            echo "الحمدلله الذي احيانا"
            head -c 32000 > /dev/null
            echo "بعدما اماتنا واليه النشور"
            cat > /dev/null
            """.write(toFile: script, atomically: true, encoding: .utf8)
            let result = try TestEnvironment.runProofkit(
                [
                    "voice", "--live", "--device", "vmic", "--json", "--strict", "--max-seconds", String(mix.seconds),
                    "--recognizer-cmd", "sh " + script,
                ],
                environment: ["PROOFKIT_ALSA_CONFIG": config])
            #expect(result.status == 0, "\(result.stderr)")
            let events = try VoiceProofE2E.jsonLines(result.stdout)
            let start = try #require(events.first)
            #expect(start["recognizer"] as? Bool == true)
            #expect(start["needed_seconds"] as? Double == 12)
            let keyWords = events.filter { $0["event"] as? String == "key_word" }
            #expect(keyWords.compactMap { $0["index"] as? Int } == [0, 1, 2, 3, 4])
            #expect(keyWords.first?["word"] as? String == "الْحَمْدُ")
            let accepted = events.filter { $0["event"] as? String == "accepted" }
            #expect(accepted.count == 1)
            #expect(accepted.first?["rule"] as? String == "keyWords")
            let end = try #require(events.last)
            #expect(end["verdict"] as? String == "accepted")
            #expect((end["heard_key_words"] as? [String])?.count == 5)
            // The accepted event comes after the fourth key word, not before.
            let order = events.compactMap { $0["event"] as? String }
            let fourth = try #require(order.indices.filter { order[$0] == "key_word" }.dropFirst(3).first)
            #expect(try #require(order.firstIndex(of: "accepted")) > fourth)
        }
    }

    @Test("a phrase sharing only two key words is rejected, and --strict exits 2")
    func recognizerRejects() throws {
        try withTemporaryFolder { folder in
            let config = try VoiceProofE2E.config(folder: folder, raw: "/dev/null")
            let result = try TestEnvironment.runProofkit(
                [
                    "voice", "--live", "--device", "quiet", "--json", "--strict", "--max-seconds", "2",
                    "--recognizer-cmd", "echo 'الحمد لله رب العالمين واليه المصير'; cat > /dev/null",
                ],
                environment: ["PROOFKIT_ALSA_CONFIG": config])
            #expect(result.status == 2, "\(result.stderr)")
            let end = try #require(try VoiceProofE2E.jsonLines(result.stdout).last)
            #expect(end["verdict"] as? String == "rejected")
            #expect((end["heard_key_words"] as? [String])?.count == 2)
            #expect(end["rule"] as? String == "keyWords")
        }
    }

    @Test(
        "--record writes what was heard as a WAV that ffprobe reads, sample for sample",
        .enabled(if: TestEnvironment.hasTool("ffprobe")))
    func record() throws {
        try withTemporaryFolder { folder in
            let mix = try VoiceProofE2E.mix(
                speech: TestEnvironment.fixture("speech_en_ljspeech_16k.wav"), noise: "noise_fridge_16k.wav",
                noiseLevel: -50, speechLevel: -30, in: folder)
            let config = try VoiceProofE2E.config(folder: folder, raw: mix.raw)
            let out = folder + "/heard.wav"
            let result = try TestEnvironment.runProofkit(
                [
                    "voice", "--recognizer", "none", "--live", "--device", "vmic", "--json", "--max-seconds", "5",
                    "--record", out,
                    "--plot", folder + "/live.svg",
                ],
                environment: ["PROOFKIT_ALSA_CONFIG": config])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try VoiceProofE2E.jsonLines(result.stdout).last?["recording"] as? String == out)
            let probe = try runProcess(
                "/usr/bin/env",
                [
                    "ffprobe", "-v", "error", "-show_entries", "stream=codec_name,sample_rate,channels,duration",
                    "-of", "default=noprint_wrappers=1", out,
                ])
            #expect(probe.status == 0)
            #expect(probe.stdout.contains("codec_name=pcm_s16le"))
            #expect(probe.stdout.contains("sample_rate=16000"))
            #expect(probe.stdout.contains("channels=1"))
            let duration = probe.stdout.split(separator: "\n").first { $0.hasPrefix("duration=") }
                .flatMap { Double($0.dropFirst("duration=".count)) }
            #expect(abs((duration ?? 0) - 5) < 0.11, "\(probe.stdout)")
            // The recording holds exactly the audio the microphone played.
            let heard = try TestAudio.readWAV(out)
            let played = try TestAudio.readWAV(mix.wav)
            let count = min(heard.samples.count, played.samples.count)
            #expect(count >= 5 * 16000 - 1600)
            #expect(heard.samples.prefix(count) == played.samples.prefix(count))
            #expect(FileManager.default.fileExists(atPath: folder + "/live.svg"))
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains(".tmp-") }
            #expect(leftovers.isEmpty)
        }
    }

    @Test("Ctrl-C ends listening with the verdict, and --record is still written")
    func interrupt() throws {
        try withTemporaryFolder { folder in
            let config = try VoiceProofE2E.config(folder: folder, raw: "/dev/null")
            let out = folder + "/heard.wav"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: TestEnvironment.proofkitBinary)
            process.arguments = [
                "voice", "--recognizer", "none", "--live", "--device", "quiet", "--max-seconds", "100000", "--record",
                out,
            ]
            process.environment = ProcessInfo.processInfo.environment.merging(["PROOFKIT_ALSA_CONFIG": config]) {
                _, new in
                new
            }
            let stdout = Pipe()
            process.standardOutput = stdout
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Ready when the recording's temporary holds more than 0.5 s of audio (16 kHz 16-bit:
            // 16,000 bytes past its header), not after a fixed sleep.
            let deadline = Date().addingTimeInterval(30)
            func recordedBytes() -> Int {
                let names =
                    (try? FileManager.default.contentsOfDirectory(atPath: folder))?.filter { $0.contains(".tmp-") }
                    ?? []
                return names.compactMap {
                    try? FileManager.default.attributesOfItem(atPath: folder + "/" + $0)[.size] as? Int
                }.max() ?? 0
            }
            while recordedBytes() <= 16_000 + 44 && Date() < deadline && process.isRunning { usleep(5_000) }
            process.interrupt()
            let text = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationReason == .exit)
            #expect(process.terminationStatus == 0)
            #expect(text.contains("rejected: "), "\(text)")
            #expect(text.contains("recorded to \(out)"))
            let heard = try TestAudio.readWAV(out)
            #expect(heard.sampleRate == 16000)
            #expect(heard.seconds > 0.5)
        }
    }

    @Test("--record into a missing folder fails before listening: exit 74, nothing on stdout")
    func recordUnwritable() throws {
        try withTemporaryFolder { folder in
            let config = try VoiceProofE2E.config(folder: folder, raw: "/dev/null")
            let result = try TestEnvironment.runProofkit(
                [
                    "voice", "--recognizer", "none", "--live", "--device", "quiet", "--json", "--max-seconds", "1",
                    "--record", folder + "/no/such/x.wav",
                ],
                environment: ["PROOFKIT_ALSA_CONFIG": config])
            #expect(result.status == 74)
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.split(separator: "\n").count == 1)
        }
    }

    @Test("--vad silero without a model exits 69; --vad both warns and goes on with the energy gate")
    func sileroUnavailable() throws {
        try withTemporaryFolder { folder in
            let config = try VoiceProofE2E.config(folder: folder, raw: "/dev/null")
            let environment = ["PROOFKIT_ALSA_CONFIG": config, "PROOFKIT_SILERO_MODEL": folder + "/missing.onnx"]
            let silero = try TestEnvironment.runProofkit(
                [
                    "voice", "--recognizer", "none", "--live", "--device", "quiet", "--json", "--max-seconds", "1",
                    "--vad",
                    "silero",
                ],
                environment: environment)
            #expect(silero.status == 69)
            #expect(silero.stdout.isEmpty)
            #expect(silero.stderr.contains("Silero"))
            let both = try TestEnvironment.runProofkit(
                [
                    "voice", "--recognizer", "none", "--live", "--device", "quiet", "--json", "--max-seconds", "1",
                    "--vad",
                    "both",
                ],
                environment: environment)
            #expect(both.status == 0, "\(both.stderr)")
            #expect(both.stderr.contains("warning"))
            let start = try #require(try VoiceProofE2E.jsonLines(both.stdout).first)
            #expect(start["vad"] as? String == "energy")
            #expect(start["vad_fallback"] is String)
            let bad = try TestEnvironment.runProofkit(["voice", "--recognizer", "none", "--live", "--vad", "neural"])
            #expect(bad.status == 64)
        }
    }

    @Test(
        "--vad silero and --vad both on real speech in a fan's noise",
        .enabled(if: VoiceProofE2E.hasSilero))
    func sileroLive() throws {
        try withTemporaryFolder { folder in
            let mix = try VoiceProofE2E.mix(
                speech: TestEnvironment.fixture("speech_ar_quran_16k.wav"), noise: "noise_fan_16k.wav",
                noiseLevel: -40, speechLevel: -25, in: folder)
            let config = try VoiceProofE2E.config(folder: folder, raw: mix.raw)
            var voicedByMode: [String: Double] = [:]
            for mode in ["energy", "silero", "both"] {
                let result = try TestEnvironment.runProofkit(
                    [
                        "voice", "--recognizer", "none", "--live", "--device", "vmic", "--json", "--max-seconds",
                        String(mix.seconds), "--vad", mode,
                    ],
                    environment: ["PROOFKIT_ALSA_CONFIG": config])
                #expect(result.status == 0, "\(result.stderr)")
                let end = try #require(try VoiceProofE2E.jsonLines(result.stdout).last)
                #expect(end["vad"] as? String == mode)
                let voiced = try #require(end["voiced_seconds"] as? Double)
                let segments = VoiceProofE2E.segments(end)
                voicedByMode[mode] = voiced
                print("live --vad \(mode): voiced \(voiced) s, reference \(mix.referenceSeconds) s")
                #expect(
                    abs(voiced - mix.referenceSeconds) <= max(1.0, 0.3 * mix.referenceSeconds), "\(mode): \(segments)")
                let inside = VoiceProofE2E.overlap(segments, mix.speechStart - 0.15, mix.speechEnd + 0.15)
                #expect(voiced - inside <= 0.3, "\(mode): voice outside the speech: \(segments)")
            }
            // Both = where both agree: never more than either alone.
            let both = try #require(voicedByMode["both"])
            #expect(both <= (voicedByMode["energy"] ?? 0) + 0.05)
            #expect(both <= (voicedByMode["silero"] ?? 0) + 0.05)
        }
    }
}

@Suite("proofkit voice RECORDING", .enabled(if: VoiceProofE2E.hasTools), .offThePool)
struct VoiceRecordingTests {
    @Test("--json on a 44.1 kHz stereo FLAC: voiced seconds, segments, floor and verdict")
    func jsonFields() throws {
        try withTemporaryFolder { folder in
            let mix = try VoiceProofE2E.mix(
                speech: TestEnvironment.fixture("speech_ar_quran_16k.wav"), noise: "noise_ac_16k.wav",
                noiseLevel: -50, speechLevel: -32, in: folder)
            let flac = folder + "/reading.flac"
            try VoiceProofE2E.sox([mix.wav, "-r", "44100", "-c", "2", flac])
            let result = try TestEnvironment.runProofkit(["voice", "--recognizer", "none", flac, "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let objects = try VoiceProofE2E.jsonLines(result.stdout)
            #expect(objects.count == 1)
            let object = try #require(objects.first)
            #expect(object["file"] as? String == flac)
            #expect(object["input_sample_rate"] as? Int == 44100)
            #expect(object["input_channels"] as? Int == 2)
            #expect(abs((object["duration_seconds"] as? Double ?? 0) - mix.seconds) < 0.01)
            let voiced = try #require(object["voiced_seconds"] as? Double)
            #expect(abs(voiced - mix.referenceSeconds) <= max(0.8, 0.2 * mix.referenceSeconds))
            let segments = VoiceProofE2E.segments(object)
            #expect(!segments.isEmpty)
            #expect(abs(segments.reduce(0) { $0 + $1.end - $1.start } - voiced) < 0.01)
            #expect(abs((segments.first?.start ?? 0) - (mix.reference.first?.start ?? 0)) < 0.2)
            let floor = try #require(object["noise_floor_dbfs"] as? Double)
            #expect(abs(floor + 50) < 4)
            #expect(object["verdict"] as? String == (voiced >= 6 ? "accepted" : "rejected"))
            #expect(object["rule"] as? String == "voiceOnly")
            #expect(object["needed_seconds"] as? Double == 6)
        }
    }

    @Test("--transcript-file applies to a recording; --text picks another text")
    func transcriptFile() throws {
        try withTemporaryFolder { folder in
            let mix = try VoiceProofE2E.mix(
                speech: TestEnvironment.fixture("speech_ar_quran_16k.wav"), noise: "noise_night_16k.wav",
                noiseLevel: -50, speechLevel: -30, in: folder)
            let transcript = folder + "/heard.txt"
            try "الحمدلله الذي احيانا\nبعدما اماتنا واليه النشور\n".write(
                toFile: transcript, atomically: true, encoding: .utf8)
            let accepted = try TestEnvironment.runProofkit([
                "voice", mix.wav, "--transcript-file", transcript, "--json", "--strict",
            ])
            #expect(accepted.status == 0, "\(accepted.stderr)")
            let object = try #require(try VoiceProofE2E.jsonLines(accepted.stdout).first)
            #expect(object["verdict"] as? String == "accepted")
            #expect(object["rule"] as? String == "keyWords")
            #expect((object["key_words"] as? [[String: Any]])?.allSatisfy { $0["heard"] as? Bool == true } == true)
            let other = try TestEnvironment.runProofkit(
                ["voice", mix.wav, "--transcript-file", transcript, "--text", "fatiha", "--json", "--strict"])
            #expect(other.status == 2)
            #expect(try VoiceProofE2E.jsonLines(other.stdout).first?["text"] as? String == "fatiha")
            let unknown = try TestEnvironment.runProofkit([
                "voice", "--recognizer", "none", mix.wav, "--text", "nosuchtext",
            ])
            #expect(unknown.status == 66)
        }
    }

    @Test(
        "--plot writes a valid SVG with the level, floor, threshold and voiced bands",
        .enabled(if: TestEnvironment.hasTool("python3")))
    func plot() throws {
        try withTemporaryFolder { folder in
            let mix = try VoiceProofE2E.mix(
                speech: TestEnvironment.fixture("speech_en_ljspeech_16k.wav"), noise: "noise_fan_16k.wav",
                noiseLevel: -45, speechLevel: -30, in: folder)
            let svg = folder + "/levels.svg"
            let result = try TestEnvironment.runProofkit(["voice", "--recognizer", "none", mix.wav, "--plot", svg])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("voiced"))
            // An independent XML parser reads it; count the polylines and the shaded bands.
            let check = try runProcess(
                "/usr/bin/env",
                [
                    "python3", "-c",
                    """
                    import sys, xml.etree.ElementTree as ET
                    root = ET.parse(sys.argv[1]).getroot()
                    ns = '{http://www.w3.org/2000/svg}'
                    assert root.tag == ns + 'svg', root.tag
                    texts = ' '.join(t.text or '' for t in root.iter(ns + 'text'))
                    print(len(list(root.iter(ns + 'polyline'))), 'level' in texts, 'noise floor' in texts, 'threshold' in texts, 'voiced' in texts)
                    """, svg,
                ])
            #expect(check.status == 0, "\(check.stderr)")
            let fields = check.stdout.split(separator: " ").map {
                String($0).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            #expect(fields.count == 5)
            #expect(Int(fields.first ?? "0") ?? 0 >= 3)
            #expect(fields.dropFirst().allSatisfy { $0 == "True" }, "\(check.stdout)")
        }
    }

    @Test("bad recordings: exit 66 / 65 with one line on stderr, no plot file; --record is live only")
    func badInput() throws {
        try withTemporaryFolder { folder in
            let svg = folder + "/out.svg"
            let missing = try TestEnvironment.runProofkit([
                "voice", "--recognizer", "none", folder + "/missing.wav", "--plot", svg,
            ])
            #expect(missing.status == 66)
            #expect(missing.stderr.split(separator: "\n").count == 1)
            #expect(missing.stderr.contains("missing.wav"))
            let junk = folder + "/junk.wav"
            try Data((0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }).write(
                to: URL(fileURLWithPath: junk))
            let bad = try TestEnvironment.runProofkit(["voice", "--recognizer", "none", junk, "--plot", svg, "--json"])
            #expect(bad.status == 65)
            #expect(bad.stdout.isEmpty)
            #expect(bad.stderr.contains("junk.wav"))
            #expect(!FileManager.default.fileExists(atPath: svg))
            let record = try TestEnvironment.runProofkit([
                "voice", "--recognizer", "none", junk, "--record", folder + "/x.wav",
            ])
            #expect(record.status == 64)
        }
    }
}

@Suite("proofkit play", .enabled(if: TestEnvironment.hasProofkitBinary), .offThePool)
struct PlayCommandTests {
    @Test("plays a sound on the null device and reports it in JSON")
    func nullDevice() throws {
        let result = try TestEnvironment.runProofkit(
            ["play", TestEnvironment.fixture("noise_fan_16k.wav"), "--device", "null", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try VoiceProofE2E.jsonLines(result.stdout).first)
        #expect(object["seconds"] as? Double == 5)
        #expect(object["sample_rate"] as? Int == 16000)
        #expect(object["channels"] as? Int == 1)
        #expect(object["device"] as? String == "null")
    }

    @Test("a file sink receives exactly the decoded samples, after the --in wait")
    func fileSink() throws {
        try withTemporaryFolder { folder in
            let raw = folder + "/played.raw"
            let config = folder + "/asound.conf"
            try "pcm.sink { type file slave.pcm { type null } file \"\(raw)\" format \"raw\" }\n"
                .write(toFile: config, atomically: true, encoding: .utf8)
            let sound = TestEnvironment.fixture("speech_ar_quran_16k.wav")
            let started = Date()
            let result = try TestEnvironment.runProofkit(
                ["play", sound, "--device", "sink", "--in", "400ms"], environment: ["PROOFKIT_ALSA_CONFIG": config])
            let elapsed = Date().timeIntervalSince(started)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(elapsed >= 0.4)
            let played = try Data(contentsOf: URL(fileURLWithPath: raw))
            let expected = try TestAudio.readWAV(sound).samples.map { Int(($0 * 32768).rounded()) }
            let got = stride(from: 0, to: played.count - 1, by: 2).map {
                Int(Int16(bitPattern: UInt16(played[$0]) | UInt16(played[$0 + 1]) << 8))
            }
            #expect(got.count == expected.count)
            // The player scales by 32767: every sample within one step of the source.
            let worst = zip(got, expected).map { abs($0 - $1) }.max() ?? 99
            #expect(worst <= 1)
        }
    }

    @Test(
        "a 44.1 kHz stereo MP3 reaches the sink at its own rate and channels",
        .enabled(if: TestEnvironment.hasTool("sox")))
    func stereo() throws {
        try withTemporaryFolder { folder in
            let raw = folder + "/played.raw"
            let config = folder + "/asound.conf"
            try "pcm.sink { type file slave.pcm { type null } file \"\(raw)\" format \"raw\" }\n"
                .write(toFile: config, atomically: true, encoding: .utf8)
            let result = try TestEnvironment.runProofkit(
                ["play", TestEnvironment.fixture("rec_001.mp3"), "--device", "sink", "--json"],
                environment: ["PROOFKIT_ALSA_CONFIG": config])
            #expect(result.status == 0, "\(result.stderr)")
            let object = try #require(try VoiceProofE2E.jsonLines(result.stdout).first)
            let seconds = try #require(object["seconds"] as? Double)
            #expect(object["channels"] as? Int == 2)
            #expect(object["sample_rate"] as? Int == 44100)
            let bytes = try FileManager.default.attributesOfItem(atPath: raw)[.size] as? Int ?? 0
            // Whole stereo S16 frames; `seconds` is rounded to 1 ms in the JSON (44 frames).
            #expect(bytes % 4 == 0)
            #expect(abs(Double(bytes / 4) - seconds * 44100) <= 45, "\(bytes) bytes for \(seconds) s")
        }
    }

    @Test("errors: missing file 66, undecodable 65, missing device 69, no argument 64")
    func errors() throws {
        try withTemporaryFolder { folder in
            #expect(try TestEnvironment.runProofkit(["play", folder + "/none.caf", "--device", "null"]).status == 66)
            let junk = folder + "/junk.caf"
            try Data(repeating: 0x5A, count: 3000).write(to: URL(fileURLWithPath: junk))
            #expect(try TestEnvironment.runProofkit(["play", junk, "--device", "null"]).status == 65)
            let device = try TestEnvironment.runProofkit(
                ["play", TestEnvironment.fixture("noise_ac_16k.wav"), "--device", "nosuchcard", "--in", "30s"])
            #expect(device.status == 69)
            #expect(device.stderr.split(separator: "\n").count == 1)
            #expect(try TestEnvironment.runProofkit(["play"]).status == 64)
            #expect(try TestEnvironment.runProofkit(["play", junk, "--in", "soon"]).status == 64)
        }
    }
}
