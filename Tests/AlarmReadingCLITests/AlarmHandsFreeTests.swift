import Foundation
import TestSupport
import Testing

// Issue 35: the alarm takes its proof without a keyboard. The service runs as a child process
// with the file-plugin speaker and a virtual microphone (ALSA's file plugin with an infile the
// test fills before the service opens it; it starts from the beginning at every open), and a
// virtual key (a FIFO of `struct input_event`s). Real du'a recordings come from
// ../shared/data/dua_audio (evaluation only: never copied into the fixtures).

/// The recording as headerless 16 kHz mono S16_LE (ffmpeg decodes it).
private func raw16k(_ path: String, in folder: String) throws -> Data {
    let out = folder + "/" + URL(fileURLWithPath: path).lastPathComponent + ".raw"
    _ = try AudioTestTools.require(
        "ffmpeg", ["-v", "error", "-y", "-i", path, "-f", "s16le", "-ac", "1", "-ar", "16000", out])
    return try Data(contentsOf: URL(fileURLWithPath: out))
}

/// Points the rig's ALSA configuration at a virtual microphone `vmic` playing `audio` (after 1 s
/// of silence; silence after it).
private func useMicrophone(_ rig: AlarmRig, playing audio: Data) throws {
    var raw = Data(count: 32_000)
    raw.append(audio)
    try raw.write(to: URL(fileURLWithPath: rig.folder + "/mic.raw"))
    try """
    pcm.speaker { type file slave.pcm { type null } file "\(rig.out)" format "raw" }
    pcm.vmic { type file slave.pcm { type null } file "/dev/null" infile "\(rig.folder)/mic.raw" format "raw" }
    """.write(toFile: rig.config, atomically: true, encoding: .utf8)
}

/// Waits until the service log has a line containing `text`; returns that line.
private func waitForLine(_ rig: AlarmRig, containing text: String, seconds: Double) -> Substring? {
    let deadline = Date().addingTimeInterval(seconds)
    repeat {
        if let line = rig.log.split(separator: "\n").first(where: { $0.contains(text) }) { return line }
        usleep(50_000)
    } while Date() < deadline
    return nil
}

/// The instant a log line was written (its first 24 characters).
private func stamp(_ line: Substring) throws -> Date {
    try #require(ISO8601DateFormatter.withFractions.date(from: String(line.prefix(24))), "\(line)")
}

/// The pitch of each third of a chime the speaker wrote (16 kHz mono S16_LE), by zero crossings.
private func chimeNotes(_ path: String) throws -> [Double] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let samples = stride(from: 0, to: data.count - 1, by: 2).map {
        Int16(bitPattern: UInt16(data[$0]) | UInt16(data[$0 + 1]) << 8)
    }
    try #require(samples.count >= 3 * 1600, "no chime in \(path): \(samples.count) samples")
    let third = samples.count / 3
    return (0..<3).map { part in
        let piece = samples[(part * third)..<((part + 1) * third)]
        let crossings = zip(piece, piece.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
        return Double(crossings) / 2 / (Double(piece.count) / 16_000)
    }
}

/// The notes of the chime the speaker played last (``chimeNotes(_:)``), waiting up to `seconds` for
/// it: the chime follows the verdict on the prover's thread, and under load it comes seconds after
/// the log line. Waits until the file no longer holds the ring's 440 Hz tone and stops growing.
private func awaitChime(_ path: String, seconds: Double = 30) throws -> [Double] {
    let deadline = Date().addingTimeInterval(seconds)
    var last = -1
    while Date() < deadline {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        if size == last, let notes = try? chimeNotes(path), !notes.allSatisfy({ abs($0 - 440) < 30 }) {
            return notes
        }
        last = size
        usleep(300_000)
    }
    return try chimeNotes(path)
}

@Suite(
    "hands-free: the service listens between rings, a key is a Stop button, chimes answer",
    .serialized, .enabled(if: TestEnvironment.hasProofkitBinary, "build proofkit first"), .offThePool)
struct AlarmHandsFreeTests {
    static let needsDuas = Testing.ConditionTrait.enabled(
        if: SpanForcedScoreEndToEndTests.hasDuaData, "needs the Whisper models and ../shared/data/dua_audio")

    @Test(
        "after the first ring the microphone reads the chain's du'a: the chain ends as a hands-free voice proof, nothing more rings, a rising chime",
        needsDuas)
    func readingEndsChain() throws {
        let rig = try AlarmRig()
        let (data, texts) = try SpanForcedScoreEndToEndTests.duaData()
        let textsFile = try SpanForcedScoreEndToEndTests.textsFile(texts, in: rig.folder)
        try useMicrophone(rig, playing: try raw16k(data + "/254hm.mp3", in: rig.folder))
        try rig.startService(ringSeconds: 2, arguments: ["--mic", "vmic"])
        let (id, _) = try rig.add(
            in: 2, window: 120, gap: 90, extra: ["--proof", "voice", "--text", "hadith", "--texts", textsFile])
        let listen = try #require(
            waitForLine(rig, containing: "listen \(id) listening on vmic", seconds: 30), "\(rig.log)")
        #expect(listen.contains("'hadith'"))
        let status = try rig.status()
        let handsFree = try #require(status["hands_free"] as? [String: Any], "\(status)")
        #expect(handsFree["mic_status"] as? String == "ok")
        #expect((handsFree["listening"] as? String)?.contains("listening on vmic for 'hadith'") == true, "\(handsFree)")
        _ = try #require(waitForLine(rig, containing: "proof \(id) voice hands-free", seconds: 60), "\(rig.log)")
        // The proof is in the history as what it was, and the backup is cancelled.
        let after = try rig.status()
        let outcome = try #require((after["outcomes"] as? [[String: Any]])?.first)
        #expect(outcome["kind"] as? String == "proof" && outcome["chain"] as? String == id)
        #expect((outcome["detail"] as? String)?.hasPrefix("voice hands-free text=hadith") == true, "\(outcome)")
        let all = try rig.alarm(["history", "--json"])
        let history = try #require(try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [String: Any])
        #expect((history["proofs_by_how"] as? [String: Any])?["hands-free"] as? Int == 1, "\(history)")
        #expect(!rig.log.contains("ring-due \(id) \(id).r1"))
        // The last sound the speaker played is the rising chime.
        let notes = try awaitChime(rig.out)
        #expect(notes[0] < notes[1] && notes[1] < notes[2], "\(notes)")
        #expect(abs(notes[0] - 659) < 60 && abs(notes[2] - 1319) < 120, "\(notes)")
    }

    @Test(
        "the microphone reads another du'a, then silence: rejected with a falling chime, the chain goes on and the backup rings on time",
        needsDuas)
    func otherReadingRejected() throws {
        let rig = try AlarmRig()
        let (data, texts) = try SpanForcedScoreEndToEndTests.duaData()
        let textsFile = try SpanForcedScoreEndToEndTests.textsFile(texts, in: rig.folder)
        try useMicrophone(rig, playing: try raw16k(data + "/5hm.mp3", in: rig.folder))
        try rig.startService(ringSeconds: 2, arguments: ["--mic", "vmic"])
        let (id, first) = try rig.add(
            in: 2, window: 120, gap: 60, extra: ["--proof", "voice", "--text", "hadith", "--texts", textsFile])
        // Judged at the reading's end (in the full suite on 2 cores the recogniser lags far behind).
        _ = try #require(waitForLine(rig, containing: "rejected \(id) voice hands-free", seconds: 58), "\(rig.log)")
        let notes = try awaitChime(rig.out)
        #expect(notes[0] > notes[1] && notes[1] > notes[2], "\(notes)")
        // The backup rings at its time: the slot gives the microphone up first.
        let ring = try #require(waitForLine(rig, containing: "ring \(id) \(id).r1 late_ms=", seconds: 62), "\(rig.log)")
        #expect(abs(try stamp(ring).timeIntervalSince(first.addingTimeInterval(60))) < 1.0, "\(ring)")
        // The microphone was given up before the ring: the slot was stopped for it, or had ended by
        // itself (its last reading judged less than a second before the backup's time).
        let lines = rig.log.split(separator: "\n")
        let released = try #require(
            lines.first { $0.contains("listen-stop \(id) reason=ring due") || $0.contains("listen-end \(id)") },
            "\(rig.log)")
        #expect(try stamp(released) <= stamp(ring), "\(released)\n\(ring)")
        #expect(!rig.log.contains("proof \(id)"), "\(rig.log)")
    }

    @Test(
        "the microphone plays the alarm's own sound (a recitation): it never passes, and the backup rings",
        .enabled(if: TestEnvironment.hasWhisperModels, "needs the Whisper models"))
    func ownSoundNeverPasses() throws {
        let rig = try AlarmRig()
        let recitation = TestEnvironment.fixture("speech_ar_quran_16k.wav")
        try useMicrophone(rig, playing: try raw16k(recitation, in: rig.folder))
        try rig.startService(ringSeconds: 2, arguments: ["--mic", "vmic"])
        let first = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 2).rounded(.up))
        let added = try rig.alarm([
            "add", "--at", ISO8601DateFormatter().string(from: first), "--sound", recitation, "--window", "60s",
            "--gap", "30s", "--gap-growth", "0s", "--proof", "voice", "--json",
        ])
        #expect(added.status == 0, "\(added.stderr)")
        let id = try #require(
            (try JSONSerialization.jsonObject(with: Data(added.stdout.utf8)) as? [String: Any])?["id"] as? String)
        _ = try #require(waitForLine(rig, containing: "listen \(id) listening on vmic", seconds: 30), "\(rig.log)")
        _ = try #require(waitForLine(rig, containing: "ring \(id) \(id).r1 late_ms=", seconds: 40), "\(rig.log)")
        #expect(!rig.log.contains("proof \(id)"), "\(rig.log)")
        #expect(rings(of: id, in: try rig.status()).contains { $0["state"] as? String == "scheduled" })
    }

    @Test(
        "a key press during a ring silences it within 200 ms and listening starts at once",
        .enabled(if: TestEnvironment.hasWhisperModels, "needs the Whisper models"))
    func keyStartsListening() throws {
        let rig = try AlarmRig()
        try useMicrophone(rig, playing: Data(count: 32_000))
        let keys = rig.folder + "/keys"
        #expect(mkfifo(keys, 0o600) == 0)
        try rig.startService(ringSeconds: 30, arguments: ["--input", keys, "--mic", "vmic"])
        // The recogniser loads when the service starts (so that the first words after a ring are
        // heard); the key is pressed once it has.
        _ = try #require(waitForLine(rig, containing: "recognizer-loaded", seconds: 60), "\(rig.log)")
        let (id, first) = try rig.add(in: 2, window: 60, gap: 40)
        _ = try #require(rig.firstSound(by: first.addingTimeInterval(3)), "the first ring was not heard: \(rig.log)")
        let writer = try #require(FileHandle(forWritingAtPath: keys))
        var press = Data(count: 16)  // struct input_event: time, then type 1 (EV_KEY), code 57 (space), value 1
        for value in [UInt16(1), UInt16(57)] {
            withUnsafeBytes(of: value.littleEndian) { press.append(contentsOf: $0) }
        }
        withUnsafeBytes(of: Int32(1).littleEndian) { press.append(contentsOf: $0) }
        let pressed = Date()
        writer.write(press)
        try writer.close()
        let end = try #require(waitForLine(rig, containing: "ring-end \(id) \(id).r0", seconds: 3), "\(rig.log)")
        #expect(try stamp(end).timeIntervalSince(pressed) <= 0.2, "\(end); pressed \(pressed)")
        let listen = try #require(
            waitForLine(rig, containing: "listen \(id) listening on vmic", seconds: 10), "\(rig.log)")
        // At once: the microphone is open a moment after the ring ends (0.1 s here when the machine
        // is quiet; the bound leaves room for the full suite's load).
        #expect(try stamp(listen).timeIntervalSince(try stamp(end)) < 2.0, "\(end)\n\(listen)")
        #expect(rig.staysQuiet(for: 1), "the ring went on after the key")
    }

    @Test(
        "a typed voice proof reads the chain's text: the hadith recording proves the chain booked with --text hadith, not one with the waking du'a",
        needsDuas)
    func typedProofReadsChainText() throws {
        let rig = try AlarmRig()
        let (data, texts) = try SpanForcedScoreEndToEndTests.duaData()
        let textsFile = try SpanForcedScoreEndToEndTests.textsFile(texts, in: rig.folder)
        // Due now (no service: nothing rings, the store alone says what is due).
        let (hadith, _) = try rig.add(
            in: 1, window: 300, gap: 120, extra: ["--proof", "voice", "--text", "hadith", "--texts", textsFile])
        let (waking, first) = try rig.add(in: 1, window: 300, gap: 120, extra: ["--proof", "voice"])
        while Date() < first.addingTimeInterval(0.3) { usleep(100_000) }
        let reading = data + "/254hm.mp3"
        let refused = try rig.alarm(["prove", waking, "--voice", reading, "--strict"])
        #expect(refused.status == 2, "\(refused.stdout) \(refused.stderr)")
        #expect(
            refused.stdout.contains("'waking'") && refused.stdout.contains("proof rejected: chain \(waking) goes on"))
        let proof = try rig.alarm(["prove", hadith, "--voice", reading, "--strict"])
        #expect(proof.status == 0, "\(proof.stdout) \(proof.stderr)")
        #expect(proof.stdout.contains("'hadith'") && proof.stdout.contains("accepted:"), "\(proof.stdout)")
        #expect(proof.stdout.contains("proof accepted: chain \(hadith) ended"), "\(proof.stdout)")
        let status = try rig.status()
        let outcomes = try #require(status["outcomes"] as? [[String: Any]], "\(status)")
        #expect(outcomes.contains { $0["chain"] as? String == hadith && $0["kind"] as? String == "proof" })
        #expect(outcomes.contains { $0["chain"] as? String == waking && $0["kind"] as? String == "rejected" })
    }

    @Test("no microphone: status says listening is off and why, the chain rings as before, a typed proof ends it")
    func noMicrophone() throws {
        let rig = try AlarmRig()
        try rig.startService(ringSeconds: 2, arguments: ["--mic", "nomic"])
        let (id, first) = try rig.add(in: 2, window: 60, gap: 30, extra: ["--proof", "squat"])
        let text = try rig.alarm(["status"])
        #expect(text.stdout.contains("hands-free listening: off (microphone nomic: not found"), "\(text.stdout)")
        #expect(text.stdout.contains("typed proofs work as before"))
        // A squat chain does not listen (auto); a voice chain would, and says why it cannot.
        #expect(text.stdout.contains("\(id)") && text.stdout.contains("no listening"), "\(text.stdout)")
        let voice = try rig.add(in: 3, window: 60, gap: 30, extra: ["--proof", "any"])
        _ = try #require(rig.firstSound(by: first.addingTimeInterval(3)), "the first ring was not heard: \(rig.log)")
        _ = try #require(
            waitForLine(rig, containing: "listen-off \(voice.id) the microphone nomic", seconds: 15), "\(rig.log)")
        let json = try rig.status()
        let handsFree = try #require(json["hands_free"] as? [String: Any], "\(json)")
        #expect((handsFree["mic_status"] as? String)?.hasPrefix("not found") == true, "\(handsFree)")
        #expect((handsFree["listening"] as? String)?.contains("off, the microphone nomic cannot be opened") == true)
        let proof = try rig.alarm(["prove", id, "--squat", try fourteenSquats(in: rig.folder)])
        #expect(proof.status == 0 && proof.stdout.contains("proof accepted: chain \(id) ended"), "\(proof.stdout)")
        // Booking: --listen on needs a proof the voice can give; --text is checked against the texts.
        let bad = try rig.alarm(["add", "--at", "+1h", "--sound", rig.sound, "--proof", "mat", "--listen", "on"])
        #expect(bad.status == 64 && bad.stderr.contains("--listen on"), "\(bad.stderr)")
        let unknown = try rig.alarm(["add", "--at", "+1h", "--sound", rig.sound, "--text", "nosuch"])
        #expect(unknown.status != 0 && unknown.stderr.contains("nosuch"), "\(unknown.stderr)")
    }
}

@Suite(
    "hands-free privacy: audio stays in memory, no socket but the control socket",
    .enabled(if: TestEnvironment.hasProofkitBinary, "build proofkit first"), .offThePool)
struct AlarmHandsFreePrivacyTests {
    @Test(
        "under strace, a service that rings and listens opens no socket but its control socket and writes no file but the store's, the speaker's and /dev/null",
        .enabled(
            if: TestEnvironment.hasWhisperModels && FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"),
            "needs the Whisper models and strace"))
    func nothingLeaves() throws {
        let rig = try AlarmRig()
        try useMicrophone(rig, playing: Data(count: 64_000))
        let trace = rig.folder + "/trace.txt"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/strace")
        process.arguments = [
            "-f", "-qq", "-e", "trace=%network,openat,creat,rename,unlink,mknodat", "-o", trace,
            TestEnvironment.proofkitBinary, "alarm", "run", "--store", rig.store, "--device", "speaker", "--mic",
            "vmic",
            "--ring-seconds", "1",
        ]
        process.environment = ProcessInfo.processInfo.environment.merging(["PROOFKIT_ALSA_CONFIG": rig.config]) {
            _, new in new
        }
        _ = FileManager.default.createFile(atPath: rig.logPath, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: rig.logPath))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        _ = try #require(waitForLine(rig, containing: "recognizer-loaded", seconds: 60), "\(rig.log)")
        let (id, _) = try rig.add(in: 2, window: 60, gap: 30, extra: ["--proof", "voice"])
        _ = try #require(waitForLine(rig, containing: "listen \(id) listening on vmic", seconds: 20), "\(rig.log)")
        usleep(4_000_000)  // a few seconds of listening
        // SIGTERM to the service itself (strace would detach and leave it running); strace ends
        // with it. Bounded: both are killed after 15 s.
        let start = try #require(rig.log.split(separator: "\n").first { $0.contains(" start - ") }, "\(rig.log)")
        let pid = try #require(
            start.split(separator: " ").first { $0.hasPrefix("pid=") }.flatMap { Int32($0.dropFirst(4)) }, "\(start)")
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(15)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning {
            kill(pid, SIGKILL)
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
        let sockets = lines.filter { $0.contains("socket(") && !$0.contains("= -1") }
        #expect(sockets.count == 1 && sockets.allSatisfy { $0.contains("AF_UNIX") }, "\(sockets)")
        #expect(lines.filter { $0.contains("connect(") && !$0.contains("= -1") }.isEmpty)
        let binds = lines.filter { $0.contains("bind(") }
        #expect(binds.count == 1 && binds[0].contains(rig.store + "/control.sock"), "\(binds)")
        let writes = lines.filter {
            $0.contains("openat(") && ($0.contains("O_WRONLY") || $0.contains("O_RDWR") || $0.contains("O_CREAT"))
                && !$0.contains("= -1")
        }
        let allowed = [rig.store + "/", rig.out, "\"/dev/null\""]
        let others = writes.filter { line in !allowed.contains { line.contains($0) } }
        #expect(others.isEmpty, "files written besides the store, the speaker and /dev/null: \(others)")
        #expect(rig.log.contains("listen \(id)"))
    }
}

@Suite(
    "hands-free by camera: the service watches for the mat and for squats between rings",
    .enabled(if: TestEnvironment.hasProofkitBinary, "build proofkit first"), .offThePool)
struct AlarmHandsFreeCameraTests {
    @Test(
        "after the first ring a mat held in front of the (fake) camera ends a mat chain as a hands-free proof",
        .enabled(if: alarmModelsBuilt, "needs the models (bash .ci/setup)"),
        .enabled(if: FakeCamera.library != nil, "needs cc to build the fake camera"))
    func matInView() throws {
        let rig = try AlarmRig()
        let camera = try FakeCamera.environment(frames: [TestEnvironment.fixture("images/demo_mat.jpg")])
        try rig.startService(ringSeconds: 2, arguments: ["--mic", "none"], environment: camera)
        let (id, _) = try rig.add(in: 2, window: 90, gap: 60, extra: ["--proof", "mat"])
        let watch = try #require(
            waitForLine(rig, containing: "listen \(id) watching /dev/video0 for the mat", seconds: 30), "\(rig.log)")
        #expect(!watch.isEmpty)
        _ = try #require(
            waitForLine(rig, containing: "proof \(id) mat hands-free camera=/dev/video0", seconds: 60), "\(rig.log)")
        let status = try rig.status()
        let outcome = try #require((status["outcomes"] as? [[String: Any]])?.first)
        #expect(
            outcome["kind"] as? String == "proof" && (outcome["detail"] as? String)?.hasPrefix("mat hands-free") == true
        )
        #expect(!rig.log.contains("ring-due \(id) \(id).r1"))
    }

    @Test(
        "a squat chain is watched for squats: a room seen by the camera never passes, and the camera is given up before the backup rings on time",
        .enabled(if: alarmModelsBuilt, "needs the models (bash .ci/setup)"),
        .enabled(if: FakeCamera.library != nil, "needs cc to build the fake camera"))
    func squatChainWatched() throws {
        let rig = try AlarmRig()
        let camera = try FakeCamera.environment(frames: [TestEnvironment.fixture("images/demo_coffee.jpg")])
        try rig.startService(ringSeconds: 2, arguments: ["--mic", "none"], environment: camera)
        let (id, first) = try rig.add(in: 2, window: 60, gap: 20, extra: ["--proof", "squat"])
        _ = try #require(
            waitForLine(rig, containing: "listen \(id) watching /dev/video0 for 10 squats until", seconds: 30),
            "\(rig.log)")
        let ring = try #require(waitForLine(rig, containing: "ring \(id) \(id).r1 late_ms=", seconds: 40), "\(rig.log)")
        #expect(abs(try stamp(ring).timeIntervalSince(first.addingTimeInterval(20))) < 1.0, "\(ring)")
        let lines = rig.log.split(separator: "\n")
        let released = try #require(
            lines.first { $0.contains("listen-stop \(id) reason=ring due") || $0.contains("listen-end \(id)") },
            "\(rig.log)")
        #expect(try stamp(released) <= stamp(ring), "\(released)\n\(ring)")
        #expect(!rig.log.contains("proof \(id)") && !rig.log.contains("listen-off \(id)"), "\(rig.log)")
    }

    @Test(
        "a squat chain ends hands-free when a real video's squats (played until 10 are counted) are done in front of the camera",
        .enabled(if: alarmModelsBuilt, "needs the models (bash .ci/setup)"),
        .enabled(if: FakeCamera.library != nil, "needs cc to build the fake camera"),
        .enabled(if: PoseFixtures.squatVideo != nil, "no squat video: set PROOFKIT_SQUAT_VIDEO"),
        .enabled(if: TestEnvironment.hasTool("ffmpeg"), "needs ffmpeg"))
    func squatChainEndedBySquats() throws {
        let rig = try AlarmRig()
        let frames = try PoseFixtures.squatVideoFrames(into: rig.folder)
        try #require(frames.count > 15)
        let camera = try FakeCamera.environment(frames: frames)  // the video again and again
        try rig.startService(ringSeconds: 2, arguments: ["--mic", "none"], environment: camera)
        let (id, _) = try rig.add(in: 2, window: 180, gap: 90, extra: ["--proof", "squat"])
        _ = try #require(
            waitForLine(rig, containing: "listen \(id) watching /dev/video0 for 10 squats until", seconds: 30),
            "\(rig.log)")
        _ = try #require(
            waitForLine(rig, containing: "proof \(id) squat hands-free camera=/dev/video0", seconds: 80), "\(rig.log)")
        let status = try rig.status()
        let outcome = try #require((status["outcomes"] as? [[String: Any]])?.first)
        #expect(
            outcome["kind"] as? String == "proof"
                && (outcome["detail"] as? String)?.hasPrefix("squat hands-free") == true, "\(outcome)")
        #expect(!rig.log.contains("ring-due \(id) \(id).r1"), "\(rig.log)")
    }

    @Test(
        "an 'any' chain is watched for the mat and for squats on the same frames: the mat held in view ends it",
        .enabled(if: alarmModelsBuilt, "needs the models (bash .ci/setup)"),
        .enabled(if: FakeCamera.library != nil, "needs cc to build the fake camera"))
    func anyChainWatchedForBoth() throws {
        let rig = try AlarmRig()
        let camera = try FakeCamera.environment(frames: [TestEnvironment.fixture("images/demo_mat.jpg")])
        try rig.startService(ringSeconds: 2, arguments: ["--mic", "none"], environment: camera)
        let (id, _) = try rig.add(in: 2, window: 90, gap: 60, extra: ["--proof", "any"])
        _ = try #require(
            waitForLine(rig, containing: "listen \(id) watching /dev/video0 for the mat or 10 squats", seconds: 30),
            "\(rig.log)")
        _ = try #require(
            waitForLine(rig, containing: "proof \(id) mat hands-free camera=/dev/video0", seconds: 60), "\(rig.log)")
        #expect(!rig.log.contains("ring-due \(id) \(id).r1"))
    }
}
