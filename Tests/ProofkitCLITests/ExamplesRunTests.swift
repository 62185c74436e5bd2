import Foundation
import TestSupport
import Testing

// Issue 34: every example of every `--help` and of the README's command blocks runs as written,
// in a folder holding the files the examples name (made from the fixtures), with `proofkit` on
// PATH and virtual ALSA devices (the `file` plugin: `default`, `vmic`, `speaker`, `null`, and
// `plughw:CARD,DEV`). A run passes when it exits 0, or 2 when the example says --strict (a
// rejection, as documented). Skipped, each with its reason: `alarm` examples (they need the
// service, and the lead's alarm work), `bench` (minutes of benchmark runs per example), and README
// lines that install, package or set up the machine.

private let canRun =
    TestEnvironment.hasProofkitBinary
    && FileManager.default.fileExists(
        atPath: TestEnvironment.packageRoot.path + "/Models/generated/whisper_base_encoder.onnx")
    && TestEnvironment.hasTool("sox")

/// Why an example is not run, or `nil` to run it.
private func skipReason(_ line: String) -> String? {
    if line.contains("\n") { return nil }  // a whole README block
    let words = line.split(separator: " ")
    guard let verbIndex = words.firstIndex(of: "proofkit"), verbIndex + 1 < words.count else {
        return "not a proofkit command"
    }
    switch words[verbIndex + 1] {
    case "alarm": return "alarm examples need the alarm service (issue 32, the lead's)"
    case "bench": return "a benchmark run takes minutes"
    case "squat" where words.contains("--camera"):
        return "live squats need a person squatting in front of the camera (CameraSquatTests has the live counter)"
    default: return nil
    }
}

/// The commands whose `--help` examples run, in groups that run side by side (each in a folder of
/// its own): the Whisper ones apart, so that no group waits for all the others.
private let helpVerbGroups = [
    ["demo", "trim", "check", "play"], ["mat", "squat", "times", "plan", "doctor"], ["voice", "dua"], ["transcribe"],
]

/// The examples of `proofkit CMD --help` for each of `verbs` (the lines under "Examples:").
private func helpExamples(of verbs: [String]) throws -> [String] {
    var examples: [String] = []
    for verb in verbs {
        let help = try TestEnvironment.runProofkit([verb, "--help"]).stdout
        guard let section = help.components(separatedBy: "Examples:").dropFirst().first else { continue }
        for line in section.split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            guard text.hasPrefix("proofkit ") else { continue }
            examples.append(text)
        }
    }
    return examples
}

/// The README's examples: each `proofkit ...` line of its sh blocks (a trailing `# comment`
/// dropped), or a whole block when it writes a file with a here-document (the virtual devices'
/// block, whose lines depend on each other).
private func readmeExamples() throws -> [String] {
    let readme = try String(
        contentsOf: TestEnvironment.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
    var examples: [String] = []
    for block in readme.components(separatedBy: "```sh\n").dropFirst() {
        let body = block.components(separatedBy: "```").first ?? ""
        if body.contains("<<'") {
            examples.append(body)
            continue
        }
        for line in body.split(separator: "\n") {
            var text = String(line)
            if let comment = text.range(of: " # ") ?? text.range(of: "  #") {
                text = String(text[..<comment.lowerBound])
            }
            text = text.trimmingCharacters(in: .whitespaces)
            // `proofkit ...`, or one with an environment assignment before it.
            let words = text.split(separator: " ")
            guard let index = words.firstIndex(of: "proofkit"), words[..<index].allSatisfy({ $0.contains("=") }) else {
                continue
            }
            examples.append(text)
        }
    }
    return examples
}

private struct SetUpFailure: Error {
    let message: String
}

/// A folder with every file the examples name, `proofkit` and `my-asr` on a PATH of its own, and
/// an ALSA configuration of virtual devices.
private struct ExampleFolder {
    let folder: String
    let environment: [String: String]

    init() throws {
        let folder = try TestFolder.make()
        let fixtures = TestEnvironment.packageRoot.path + "/Tests/TestSupport/Fixtures/"
        let manager = FileManager.default
        func copy(_ fixture: String, _ names: [String]) throws {
            for name in names {
                let target = folder + "/" + name
                try? manager.createDirectory(
                    atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try manager.copyItem(atPath: fixtures + fixture, toPath: target)
            }
        }
        try copy("rec_001.mp3", ["adhan.mp3"])
        try copy(
            "images/demo_mat.jpg",
            [
                "photo.jpg", "IMG_2041.jpg", "my_mat.jpg", "my_mat_2.jpg", "mat.jpg", "morning/1.jpg", "morning/2.jpg",
                "squat.jpg", "frames/0001.jpg", "frames/0002.jpg",  // pose: nobody in view is a frame, not an error
            ])
        try copy("speech_ar_quran_16k.wav", ["fajr.wav", "morning.wav", "reading.wav"])
        try copy("squat/pna_1666_squat.jsonl", ["morning.jsonl", "set.jsonl", "poses.jsonl"])
        try copy("video/walkers.mp4", ["squats.mp4", "morning.mp4"])  // pose, squat --video: a real video of people
        try "الحمد لله\n".write(toFile: folder + "/fajr.txt", atomically: true, encoding: .utf8)
        // 2 minutes of sound for `--start 1m30s`, and an Ogg Vorbis.
        _ = try AudioTestTools.require(
            "sox", ["-n", "-r", "44100", "-c", "2", folder + "/long.flac", "synth", "120", "sine", "440", "vol", "0.3"])
        _ = try AudioTestTools.require("sox", [fixtures + "speech_en_ljspeech_16k.wav", folder + "/recitation.ogg"])
        for (source, out) in [("adhan.mp3", "fajr.caf"), ("reading.wav", "maghrib.caf")] {
            let made = try TestEnvironment.runProofkit(["trim", folder + "/" + source, "-o", folder + "/" + out])
            guard made.status == 0 else { throw SetUpFailure(message: "trim \(source): \(made.stderr)") }
        }
        // The microphone hears the reading: 16 kHz mono S16_LE, no header.
        _ = try AudioTestTools.require(
            "sox",
            [
                folder + "/reading.wav", "-t", "raw", "-r", "16000", "-c", "1", "-e", "signed", "-b", "16",
                folder + "/mic.raw",
            ])
        let mic = "type file slave.pcm { type null } file \"/dev/null\" infile \"\(folder)/mic.raw\" format \"raw\""
        try """
        pcm.!default { \(mic) }
        pcm.vmic { \(mic) }
        pcm.speaker { type file slave.pcm { type null } file "\(folder)/out.raw" format "raw" }
        pcm.null { type null }
        pcm.plughw { @args [ CARD DEV ] @args.CARD { type string } @args.DEV { type integer } \(mic) }
        """.write(toFile: folder + "/asound.conf", atomically: true, encoding: .utf8)
        let bin = folder + "/bin"
        try manager.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try manager.createSymbolicLink(atPath: bin + "/proofkit", withDestinationPath: TestEnvironment.proofkitBinary)
        // `my-asr`, the README's stand-in for any recogniser: reads the audio, hears nothing.
        try "#!/bin/sh\ncat > /dev/null\n".write(toFile: bin + "/my-asr", atomically: true, encoding: .utf8)
        try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: bin + "/my-asr")
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = bin + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["PROOFKIT_ALSA_CONFIG"] = folder + "/asound.conf"
        environment["XDG_CONFIG_HOME"] = folder + "/config"
        environment["XDG_STATE_HOME"] = folder + "/state"  // an alarm store of its own, never the user's
        environment["PROOFKIT_MODELS"] = nil
        self.folder = folder
        self.environment = environment
    }

    /// Runs `line` with /bin/sh in the folder (globs and redirections as a user's shell does). A
    /// camera example runs in front of the tests' fake webcam (LD_PRELOAD), which shows the mat.
    func run(_ line: String) throws -> ProcessResult {
        var environment = self.environment
        if line.contains("--camera") || line.contains("proofkit camera") {
            environment.merge(try FakeCamera.environment(frames: [TestEnvironment.fixture("images/demo_mat.jpg")])) {
                _, new in new
            }
        }
        return try runProcess(
            "/usr/bin/timeout", ["300", "/bin/sh", "-e", "-c", line], environment: environment, currentDirectory: folder
        )
    }
}

@Suite(
    "every example in the README and in every --help runs as written",
    .enabled(if: canRun, "needs the built binary, the models and sox"), .offThePool)
struct ExamplesRunTests {
    @Test("--help examples", arguments: helpVerbGroups)
    func helpExamplesRun(verbs: [String]) throws {
        try runAll(try helpExamples(of: verbs), atLeast: verbs.count)
    }

    @Test("README examples")
    func readmeExamplesRun() throws {
        try runAll(try readmeExamples(), atLeast: 10)
    }

    /// Runs each example not skipped in a fresh ``ExampleFolder``, one after another (a README
    /// block may use what an earlier one made); at least `atLeast` examples must be found.
    func runAll(_ examples: [String], atLeast: Int) throws {
        #expect(examples.count >= atLeast, "\(examples.count) examples")
        let folder = try ExampleFolder()
        defer { try? FileManager.default.removeItem(atPath: folder.folder) }
        var ran = 0
        for example in examples {
            if skipReason(example) != nil { continue }
            let result = try folder.run(example)
            let allowed: Set<Int32> = example.contains("--strict") ? [0, 2] : [0]
            #expect(allowed.contains(result.status), "\(example): exit \(result.status): \(result.stderr)")
            ran += 1
        }
        #expect(ran > 0, "every example was skipped")
    }
}
