import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// Issue 15: hostile and unlucky input against the built `proofkit`. Each suite names the
// defect it guards; every test here failed before its fix.

private var binaryBuilt: Bool { TestEnvironment.hasProofkitBinary }

/// Runs the built `proofkit` with `arguments` in `folder`.
private func proofkit(_ arguments: [String], in folder: String? = nil, stdin: Data? = nil) throws -> ProcessResult {
    try TestEnvironment.runProofkit(arguments, stdin: stdin, currentDirectory: folder)
}

/// Runs `script` with /bin/sh in `folder` (for redirections, FIFOs, signals and limits), the
/// built `proofkit` as `$PK`. Started with `posix_spawn` and an empty signal mask and default
/// actions: the test runner's threads block SIGTERM, and a child started by Foundation's
/// `Process` from them inherits that (so `timeout` and `kill -TERM` would do nothing).
private func shell(_ script: String, in folder: String) throws -> ShellResult {
    let out = folder + "/.shell-out"
    let err = folder + "/.shell-err"
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var all = sigset_t()
    var none = sigset_t()
    sigfillset(&all)
    sigemptyset(&none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
    let command = "cd '\(folder)' || exit 99\n" + script
    var arguments: [UnsafeMutablePointer<CChar>?] =
        ["/bin/sh", "-c", command].map { (text: String) in strdup(text) } + [nil]
    defer { for pointer in arguments { free(pointer) } }
    var environment = ProcessInfo.processInfo.environment
    environment["PK"] = TestEnvironment.proofkitBinary
    var environ: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in environ { free(pointer) } }
    var pid: pid_t = 0
    let started = posix_spawn(&pid, "/bin/sh", &actions, &attributes, &arguments, &environ)
    guard started == 0 else { throw POSIXError(.init(rawValue: started) ?? .EIO) }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let stdout = (try? Data(contentsOf: URL(fileURLWithPath: out))) ?? Data()
    let stderr = (try? Data(contentsOf: URL(fileURLWithPath: err))) ?? Data()
    try? FileManager.default.removeItem(atPath: out)
    try? FileManager.default.removeItem(atPath: err)
    let signal = status & 0x7F
    return ShellResult(
        status: signal == 0 ? (status >> 8) & 0xFF : 128 + signal,
        stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
}

/// What a ``shell(_:in:)`` script returned and printed.
private struct ShellResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// A 16-bit PCM WAV whose header says `rate` and `channels` (`frames` frames of a quiet ramp).
func handMadeWAV(rate: UInt32, channels: UInt16, frames: Int) -> Data {
    var data = Data()
    func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    let bytes = frames * Int(channels) * 2
    data.append(contentsOf: Array("RIFF".utf8))
    u32(UInt32(36 + bytes))
    data.append(contentsOf: Array("WAVE".utf8))
    data.append(contentsOf: Array("fmt ".utf8))
    u32(16)
    u16(1)
    u16(channels)
    u32(rate)
    u32(rate &* UInt32(channels) &* 2)
    u16(channels &* 2)
    u16(16)
    data.append(contentsOf: Array("data".utf8))
    u32(UInt32(bytes))
    for index in 0..<(frames * Int(channels)) {
        u16(UInt16(bitPattern: Int16(truncatingIfNeeded: (index % 2000) * 8 - 8000)))
    }
    return data
}

/// A 16-bit little-endian PCM CAF whose `desc` chunk says `rate` (a Float64, may be NaN).
func handMadeCAF(rate: Double, channels: UInt32, frames: Int) -> Data {
    var data = Data()
    func be32(_ v: UInt32) { withUnsafeBytes(of: v.bigEndian) { data.append(contentsOf: $0) } }
    func be64(_ v: UInt64) { withUnsafeBytes(of: v.bigEndian) { data.append(contentsOf: $0) } }
    data.append(contentsOf: Array("caff".utf8))
    data.append(contentsOf: [0, 1, 0, 0])
    data.append(contentsOf: Array("desc".utf8))
    be64(32)
    be64(rate.bitPattern)
    data.append(contentsOf: Array("lpcm".utf8))
    be32(2)
    be32(2 * channels)
    be32(1)
    be32(channels)
    be32(16)
    let bytes = frames * Int(channels) * 2
    data.append(contentsOf: Array("data".utf8))
    be64(UInt64(bytes + 4))
    be32(0)
    for index in 0..<(frames * Int(channels)) {
        withUnsafeBytes(of: Int16(truncatingIfNeeded: (index % 2000) * 8 - 8000).littleEndian) {
            data.append(contentsOf: $0)
        }
    }
    return data
}

private func makeTone(in folder: String, name: String = "tone.wav", seconds: Int = 3) throws -> String {
    let path = folder + "/" + name
    try AudioTestTools.require(
        "sox",
        ["-D", "-n", "-r", "16000", "-c", "1", "-b", "16", path, "synth", "\(seconds)", "sine", "440", "vol", "0.5"])
    return path
}

private func fileType(_ path: String) -> mode_t? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return info.st_mode & S_IFMT
}

private func statOf(_ path: String) -> stat? {
    var info = stat()
    return stat(path, &info) == 0 ? info : nil
}

@Suite(
    "outputs are replaced only when they should be, keeping mode and owner",
    .enabled(if: binaryBuilt, "run swift build first"), .offThePool)
struct OutputReplacementTests {
    @Test("#1 trim -o refuses a FIFO and a device node (exit 74), leaving them as they were")
    func refusesNonRegularOutputs() throws {
        try withTemporaryFolder { folder in
            _ = try makeTone(in: folder)
            #expect(mkfifo(folder + "/pipe", 0o644) == 0)
            var targets = ["pipe"]
            if geteuid() == 0, mknod(folder + "/mynull", S_IFCHR | 0o666, dev_t(0x103)) == 0 {
                targets.append("mynull")
            }
            for target in targets {
                let before = fileType(folder + "/" + target)
                let result = try proofkit(["trim", "tone.wav", "-o", target], in: folder)
                #expect(result.status == 74, "\(target): \(result.stderr)")
                #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains("not a regular file"))
                #expect(fileType(folder + "/" + target) == before, "\(target) was replaced")
            }
            #expect(!AudioTestTools.contents(of: folder).contains { $0.contains(".tmp-") }, "temporary left")
        }
    }

    @Test("#12 trim keeps the output's mode (600) and, as root, its owner; refuses a read-only (444) output")
    func keepsModeAndOwner() throws {
        try withTemporaryFolder { folder in
            _ = try makeTone(in: folder)
            let output = folder + "/out.caf"
            #expect(FileManager.default.createFile(atPath: output, contents: Data("old".utf8)))
            #expect(chmod(output, 0o600) == 0)
            let root = geteuid() == 0
            if root { #expect(chown(output, 1234, 4321) == 0) }
            let result = try proofkit(["trim", "tone.wav", "-o", "out.caf"], in: folder)
            #expect(result.status == 0, "\(result.stderr)")
            let after = try #require(statOf(output))
            #expect(after.st_mode & 0o7777 == 0o600)
            #expect(after.st_size > 1000)
            if root { #expect(after.st_uid == 1234 && after.st_gid == 4321) }

            // A read-only output is not replaced (even by root, who could).
            #expect(chmod(output, 0o444) == 0)
            let sizeBefore = after.st_size
            let refused = try proofkit(["trim", "tone.wav", "-o", "out.caf", "--max-seconds", "1"], in: folder)
            #expect(refused.status == 74, "\(refused.stderr)")
            #expect(refused.stderr.contains("read-only"))
            #expect(statOf(output)?.st_size == sizeBefore && statOf(output).map { $0.st_mode & 0o7777 } == 0o444)
        }
    }

    @Test("#12 plan --state keeps the state file's mode and refuses a read-only one")
    func stateModeKept() throws {
        try withTemporaryFolder { folder in
            let state = folder + "/alarms.json"
            #expect(FileManager.default.createFile(atPath: state, contents: Data("{}".utf8)))
            #expect(chmod(state, 0o600) == 0)
            let base = [
                "plan", "--lat", "24.8607", "--lon", "67.0011", "--tz", "Asia/Karachi", "--days", "1",
                "--now", "2026-11-30T04:00:00+05:00", "--state", state,
            ]
            let result = try proofkit(base)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(statOf(state).map { $0.st_mode & 0o7777 } == 0o600)
            #expect(chmod(state, 0o444) == 0)
            let before = try Data(contentsOf: URL(fileURLWithPath: state))
            let refused = try proofkit(base + ["--days", "2"])
            #expect(refused.status == 74 && refused.stderr.contains("read-only"), "\(refused.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: state)) == before)
        }
    }

    @Test("#8 a stale temporary of ours (over 5 minutes old) is removed by the next trim; a fresh one is left")
    func staleTemporariesRemoved() throws {
        try withTemporaryFolder { folder in
            _ = try makeTone(in: folder)
            let stale = folder + "/.out.caf.tmp-AbC123"
            let fresh = folder + "/.out.caf.tmp-XyZ789"
            let unrelated = folder + "/.other.caf.tmp-AbC123"
            for path in [stale, fresh, unrelated] {
                #expect(FileManager.default.createFile(atPath: path, contents: Data(count: 4096)))
            }
            let old = Date().addingTimeInterval(-600)
            for path in [stale, unrelated] {
                try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path)
            }
            let result = try proofkit(["trim", "tone.wav", "-o", "out.caf"], in: folder)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(!AudioTestTools.exists(stale), "the stale temporary is still there")
            #expect(AudioTestTools.exists(fresh), "a fresh temporary (maybe a running trim's) was removed")
            #expect(AudioTestTools.exists(unrelated), "another output's temporary was removed")
        }
    }

    @Test(
        "#13 -o with another format's extension is a usage error and writes nothing; .wav and .caf still work",
        arguments: ["x.mp3", "x.flac", "x.ogg", "x.m4a", "x.opus", "x.aiff"])
    func refusesMisleadingExtension(_ name: String) throws {
        try withTemporaryFolder { folder in
            _ = try makeTone(in: folder)
            let result = try proofkit(["trim", "tone.wav", "-o", name], in: folder)
            #expect(result.status == 64, "\(result.stderr)")
            #expect(result.stderr.contains(".caf") && result.stderr.contains(".wav"))
            #expect(AudioTestTools.contents(of: folder) == ["tone.wav"])
        }
    }
}

@Suite(
    "rates and channel counts nothing can play are refused",
    .enabled(if: binaryBuilt, "run swift build first"), .offThePool)
struct UnplayableFormatTests {
    static let cases: [(String, Data)] = [
        ("1hz.wav", handMadeWAV(rate: 1, channels: 1, frames: 4000)),
        ("4000hz.wav", handMadeWAV(rate: 4000, channels: 1, frames: 4000)),
        ("1024ch.wav", handMadeWAV(rate: 16000, channels: 1024, frames: 400)),
        ("9ch.wav", handMadeWAV(rate: 16000, channels: 9, frames: 4000)),
        ("nan.caf", handMadeCAF(rate: .nan, channels: 1, frames: 4000)),
        ("fast.caf", handMadeCAF(rate: 768_000, channels: 1, frames: 4000)),
    ]

    @Test("check, trim and voice refuse them with exit 65 and one line, quickly", arguments: 0..<6)
    func refused(_ index: Int) throws {
        let (name, bytes) = Self.cases[index]
        try withTemporaryFolder { folder in
            try bytes.write(to: URL(fileURLWithPath: folder + "/" + name))
            for arguments in [["check", name], ["trim", name, "-o", "out.caf"], ["voice", name, "--text", "waking"]] {
                let started = Date()
                let result = try proofkit(arguments, in: folder)
                #expect(result.status == 65, "\(arguments): \(result.status) \(result.stderr)")
                #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
                // (libsndfile itself refuses the NaN rate of nan.caf, with its own words.)
                #expect(
                    result.stderr.contains("Hz") || result.stderr.contains("channels") || name == "nan.caf",
                    "\(result.stderr)")
                // A bound on the work, not a speed figure: the 1 Hz file once took 41 s; a refusal
                // takes milliseconds, and 30 s leaves room for a machine loaded by parallel tests.
                #expect(Date().timeIntervalSince(started) < 30)
            }
            #expect(!AudioTestTools.exists(folder + "/out.caf"))
        }
    }

    @Test("the limits themselves are accepted: 8000 Hz mono and 48000 Hz with 8 channels")
    func limitsAccepted() throws {
        try withTemporaryFolder { folder in
            try AudioTestTools.require(
                "sox",
                [
                    "-D", "-n", "-r", "8000", "-c", "1", "-b", "16", folder + "/a.wav", "synth", "2", "sine", "440",
                    "vol",
                    "0.5",
                ])
            try AudioTestTools.require(
                "sox",
                [
                    "-D", "-n", "-r", "48000", "-c", "8", "-b", "16", folder + "/b.wav", "synth", "2", "sine", "440",
                    "vol",
                    "0.5",
                ])
            for name in ["a.wav", "b.wav"] {
                let result = try proofkit(["check", name], in: folder)
                #expect(result.status == 0, "\(name): \(result.stderr)")
            }
        }
    }
}

@Suite(
    "endless and size-0 inputs are capped while reading",
    .enabled(if: binaryBuilt, "run swift build first"), .offThePool)
struct BoundedInputTests {
    @Test("dua check - < /dev/zero stops at the cap with exit 65 (under a 1 GB address-space limit)")
    func duaStandardInputCapped() throws {
        try withTemporaryFolder { folder in
            let result = try shell(
                "ulimit -v 1500000; exec timeout 60 \"$PK\" dua check --text waking - < /dev/zero", in: folder)
            #expect(result.status == 65, "\(result.status) \(result.stderr)")
            #expect(
                result.stderr.split(separator: "\n").count == 1 && result.stderr.contains("MiB"), "\(result.stderr)")
        }
    }

    @Test(
        "/proc/self/pagemap (size 0, endless) is refused as too large by --texts, --transcript-file, plan --state, bench --compare"
    )
    func sizeZeroFilesCapped() throws {
        try withTemporaryFolder { folder in
            _ = try makeTone(in: folder)
            #expect(symlink("/proc/self/pagemap", folder + "/state.json") == 0)
            let runs: [[String]] = [
                ["dua", "check", "--texts", "/proc/self/pagemap", "--text", "waking", "x"],
                ["voice", "tone.wav", "--transcript-file", "/proc/self/pagemap", "--text", "waking"],
                ["plan", "--lat", "24.86", "--lon", "67.0", "--tz", "Asia/Karachi", "--state", "state.json"],
                ["bench", "--compare", "/proc/self/pagemap", "/proc/self/pagemap"],
            ]
            for arguments in runs {
                let result = try shell(
                    "ulimit -v 1500000; exec timeout 60 \"$PK\" " + arguments.map { "'\($0)'" }.joined(separator: " "),
                    in: folder)
                #expect(result.status == 65, "\(arguments): \(result.status) \(result.stderr)")
                #expect(
                    result.stderr.split(separator: "\n").count == 1 && result.stderr.contains("over"),
                    "\(arguments): \(result.stderr)")
            }
            #expect(
                try proofkit(
                    ["voice", "tone.wav", "--transcript-file", "/proc/self/pagemap", "--text", "waking"], in: folder
                )
                .stderr.contains("transcript file"), "#14: the transcript file is not a texts file")
        }
    }
}

@Suite(
    "plan --state refuses foreign files, keeps unknown keys, and locks",
    .enabled(if: binaryBuilt, "run swift build first"), .offThePool)
struct StateFileHardeningTests {
    let base = [
        "plan", "--lat", "24.8607", "--lon", "67.0011", "--tz", "Asia/Karachi", "--days", "2",
        "--now", "2026-11-30T04:00:00+05:00",
    ]

    @Test(
        "#2 foreign JSON objects and wrong types are refused with 65, the file untouched",
        arguments: [
            #"{"texts": [{"name": "x", "arabic": "بسم"}]}"#,
            #"{"machine": {"cpu": "x"}, "results": []}"#,
            #"{"version": 1, "outcomes": {"occurrence": "fajr.2026-11-30", "kind": "escape", "at": "2026-11-30T05:20:00+05:00"}}"#,
            #"{"version": 1, "fingerprint": 5}"#,
            #"{"version": 1, "postponed": []}"#,
            #"{"version": 1, "merged": [1, 2]}"#,
            #"{"version": 1, "alarms": [{"id": "a", "sound": 3}]}"#,
            #"{"version": 2}"#,
        ])
    func refusesForeign(_ contents: String) throws {
        try withTemporaryFolder { folder in
            let state = folder + "/state.json"
            try contents.write(toFile: state, atomically: false, encoding: .utf8)
            let result = try proofkit(base + ["--state", state])
            #expect(result.status == 65, "\(contents): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
            #expect(try String(contentsOfFile: state, encoding: .utf8) == contents)
        }
    }

    @Test("#2 unknown keys (top level and in entries) survive a plan; a recorded escape stays recorded")
    func keepsUnknownKeys() throws {
        try withTemporaryFolder { folder in
            let state = folder + "/state.json"
            try
                #"{"version": 1, "app": {"theme": "dark", "n": [1, 2]}, "outcomes": [{"occurrence": "fajr.2026-11-30", "kind": "escape", "at": "2026-11-30T05:20:00+05:00", "note": "snoozed"}]}"#
                .write(toFile: state, atomically: false, encoding: .utf8)
            let result = try proofkit(base + ["--state", state, "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let saved = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: state))) as? [String: Any])
            let app = try #require(saved["app"] as? [String: Any])
            #expect(app["theme"] as? String == "dark" && (app["n"] as? [Int]) == [1, 2])
            let outcomes = try #require(saved["outcomes"] as? [[String: Any]])
            #expect(
                outcomes.count == 1 && outcomes[0]["kind"] as? String == "escape"
                    && outcomes[0]["note"] as? String == "snoozed")
            #expect(saved["version"] as? Int == 1 && saved["format"] as? String == "proofkit-alarm-state")
            #expect(!result.stdout.contains("fajr.2026-11-30.0"), "the escaped morning was planned again")
        }
    }

    @Test("#3 a second writer waits for the lock a bounded time, then exits 75; the file is untouched")
    func lockTimeout() throws {
        try withTemporaryFolder { folder in
            let state = folder + "/state.json"
            try "{}".write(toFile: state, atomically: false, encoding: .utf8)
            let args = (base + ["--state", state, "--lock-wait", "1"]).map { "'\($0)'" }.joined(separator: " ")
            // The other writer holds the lock once it has touched `held` (a readiness signal, not a
            // sleep) and touches `released` as it lets go 4 s later. proofkit must give up on its own
            // (75) while the lock is still held, after its 1 s wait: timed inside the shell, from just
            // before it starts to just after it ends, so the machine's load does not count.
            let result = try shell(
                "flock .state.json.lock sh -c 'touch held; sleep 4; touch released' & while [ ! -e held ]; do sleep 0.01; done; "
                    + "s=$(date +%s%N); \"$PK\" \(args); st=$?; e=$(date +%s%N); echo \"status=$st\"; "
                    + "echo \"elapsed_ms=$(( (e - s) / 1000000 ))\"; if [ -e released ]; then echo released-first; fi; wait",
                in: folder)
            #expect(result.stdout.contains("status=75"), "\(result.stdout) \(result.stderr)")
            #expect(result.stderr.contains("lock"), "\(result.stderr)")
            #expect(
                !result.stdout.contains("released-first"), "proofkit waited until the lock was let go: \(result.stdout)"
            )
            let elapsed = result.stdout.split(separator: "\n").first { $0.hasPrefix("elapsed_ms=") }
                .flatMap { Int($0.dropFirst("elapsed_ms=".count)) }
            let milliseconds = try #require(elapsed, "\(result.stdout)")
            #expect(milliseconds >= 900 && milliseconds < 4000, "waited \(milliseconds) ms for a 1 s --lock-wait")
            #expect(try String(contentsOfFile: state, encoding: .utf8) == "{}")
        }
    }

    @Test("#3 two plans started together: the second sees the first's alarms (5 of 5 rounds)")
    func concurrentPlansSerialise() throws {
        try withTemporaryFolder { folder in
            let state = folder + "/state.json"
            for round in 0..<5 {
                try "{}".write(toFile: state, atomically: false, encoding: .utf8)
                let fajr = (base + ["--prayers", "fajr", "--state", state, "--json"]).map { "'\($0)'" }.joined(
                    separator: " ")
                let maghrib = (base + ["--prayers", "maghrib", "--state", state, "--json"]).map { "'\($0)'" }.joined(
                    separator: " ")
                let result = try shell("\"$PK\" \(fajr) > a.json & \"$PK\" \(maghrib) > b.json & wait", in: folder)
                #expect(result.status == 0)
                var cancels = 0
                for name in ["a.json", "b.json"] {
                    let object = try #require(
                        try JSONSerialization.jsonObject(
                            with: Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
                            as? [String: Any])
                    cancels +=
                        (object["operations"] as? [[String: Any]] ?? []).filter { $0["op"] as? String == "cancel" }
                        .count
                }
                // The later run cancels the earlier run's 14 alarms (7 rings x 2 days): it read them.
                #expect(cancels == 14, "round \(round): \(cancels) cancels; a run did not see the other's alarms")
            }
        }
    }
}

@Suite(
    "FIFOs, pipes and /dev/stdin are opened once",
    .enabled(if: binaryBuilt, "run swift build first"), .offThePool)
struct StreamInputTests {
    @Test("WAV, MP3 and FLAC through a FIFO; WAV through /dev/stdin from a pipe", arguments: ["wav", "mp3", "flac"])
    func fifoInputs(_ kind: String) throws {
        try withTemporaryFolder { folder in
            let tone = try makeTone(in: folder)
            let name = "tone." + kind
            if kind != "wav" { try AudioTestTools.require("ffmpeg", ["-v", "error", "-i", tone, folder + "/" + name]) }
            #expect(mkfifo(folder + "/f", 0o644) == 0)
            for verb in ["check f", "trim f -o out.caf"] {
                let result = try shell("cat \(name) > f & exec timeout 30 \"$PK\" \(verb)", in: folder)
                #expect(result.status == 0, "\(verb) \(kind): \(result.status) \(result.stderr)")
            }
            #expect(AudioTestTools.exists(folder + "/out.caf"))
            let piped = try shell("cat \(name) | timeout 30 \"$PK\" check /dev/stdin", in: folder)
            #expect(piped.status == 0, "/dev/stdin \(kind): \(piped.stderr)")
        }
    }

    @Test("a FIFO with no writer does not hang: a clear line and exit 74 within the wait")
    func fifoWithoutWriter() throws {
        try withTemporaryFolder { folder in
            #expect(mkfifo(folder + "/f", 0o644) == 0)
            let started = Date()
            let result = try shell("exec timeout 30 \"$PK\" check f", in: folder)
            #expect(result.status == 74, "\(result.status) \(result.stderr)")
            #expect(result.stderr.contains("no writer"), "\(result.stderr)")
            #expect(Date().timeIntervalSince(started) < 20)
        }
    }
}

@Suite(
    "bench children die with the parent; file names that are not UTF-8 open",
    .enabled(if: binaryBuilt, "run swift build first"), .offThePool)
struct ProcessAndNameTests {
    @Test("#10 kill -TERM or -KILL of bench leaves no --child running", arguments: ["TERM", "KILL"])
    func benchChildDiesWithParent(_ signal: String) throws {
        try withTemporaryFolder { folder in
            let script = """
                "$PK" bench --model lite0 --threads 1 --runs 100000 >/dev/null 2>&1 &
                parent=$!
                child=""
                for i in $(seq 300); do child=$(pgrep -P $parent); [ -n "$child" ] && break; sleep 0.1; done
                [ -n "$child" ] || { kill -9 $parent; echo nochild; exit 0; }
                sleep 1
                kill -\(signal) $parent; wait $parent
                sleep 1
                # A dead child may stay a zombie until init reaps it: gone or Z is dead.
                case "$(ps -o stat= -p $child 2>/dev/null | tr -d ' ')" in ""|Z*) echo clean;; *) echo orphan; kill -9 $child;; esac
                """
            let result = try shell(script, in: folder)
            if result.stdout.contains("nochild") { return }  // no model to measure on this machine
            #expect(result.stdout.contains("clean"), "\(result.stdout) \(result.stderr)")
        }
    }

    @Test("#11 check and trim open and write names with bytes that are not UTF-8 (Latin-1 é)")
    func latin1Names() throws {
        try withTemporaryFolder { folder in
            _ = try makeTone(in: folder)
            let script = """
                name=$(printf 'caf\\351.wav'); out=$(printf 'o\\351.caf')
                cp tone.wav "$name"
                "$PK" check "$name" >/dev/null; echo "check=$?"
                "$PK" trim "$name" -o "$out" >/dev/null; echo "trim=$?"
                [ -f "$out" ] && echo written
                "$PK" check "$(printf 'missing\\351.wav')"
                """
            let result = try shell(script, in: folder)
            #expect(
                result.stdout.contains("check=0") && result.stdout.contains("trim=0")
                    && result.stdout.contains("written"),
                "\(result.stdout) \(result.stderr)")
            #expect(
                result.stderr.contains("missing\\xE9.wav"), "the name is shown with its byte escaped: \(result.stderr)")
        }
    }

    @Test(
        "#11 PROOFKIT_MODELS naming a folder that is not UTF-8 is used (it once failed with 69: not installed)",
        .enabled(
            if: AudioTestTools.exists(
                TestEnvironment.packageRoot.appendingPathComponent("Models/generated/manifest.json").path),
            "no Models/generated (run Models/build.sh)"))
    func latin1ModelsFolder() throws {
        let models = TestEnvironment.packageRoot.appendingPathComponent("Models/generated").path
        try withTemporaryFolder { folder in
            let photo = TestEnvironment.fixture("images/demo_mat.jpg")
            // The same models through a plain name and through a Latin-1 one (mod\xE9).
            let script = """
                ln -s '\(models)' plain; latin=$(printf 'mod\\351'); ln -s '\(models)' "$latin"
                PROOFKIT_MODELS="$PWD/plain" "$PK" mat '\(photo)' --threads 1; echo "plain=$?"
                PROOFKIT_MODELS="$PWD/$latin" "$PK" mat '\(photo)' --threads 1; echo "latin=$?"
                """
            let result = try shell(script, in: folder)
            let lines = result.stdout.split(separator: "\n").map(String.init)
            let plain = try #require(lines.firstIndex { $0.hasPrefix("plain=") }, "\(result.stdout) \(result.stderr)")
            let latin = try #require(lines.firstIndex { $0.hasPrefix("latin=") }, "\(result.stdout) \(result.stderr)")
            #expect(lines[plain] == "plain=0", "\(result.stdout) \(result.stderr)")
            #expect(lines[latin] == "latin=0", "the Latin-1 models folder was not used: \(result.stderr)")
            // The same verdict either way.
            #expect(Array(lines[..<plain]) == Array(lines[(plain + 1)..<latin]))
        }
    }

    @Test("#11 squat reads a pose file whose name is not UTF-8 (it once failed with 66: no such file)")
    func latin1PoseFile() throws {
        try withTemporaryFolder { folder in
            let fixture = TestEnvironment.fixture("squat/sqf_video16_squat.jsonl")
            let script = """
                name=$(printf 'pos\\351.jsonl')
                cp '\(fixture)' "$name"
                "$PK" squat "$name" --json > by-name.json; echo "squat=$?"
                "$PK" squat - --json < "$name" > by-stdin.json
                a=$(grep -o '"reason":"[^"]*"' by-name.json); b=$(grep -o '"reason":"[^"]*"' by-stdin.json | tail -1)
                [ -n "$a" ] && [ "$a" = "$b" ] && echo same
                """
            let result = try shell(script, in: folder)
            #expect(
                result.stdout.contains("squat=0") && result.stdout.contains("same"), "\(result.stdout) \(result.stderr)"
            )
        }
    }
}

/// A 32-bit float WAV of `frames` mono samples, every `nanEvery`th of them NaN.
func handMadeFloatWAV(frames: Int, nanEvery: Int) -> Data {
    var data = Data()
    func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    data.append(contentsOf: Array("RIFF".utf8))
    u32(UInt32(36 + frames * 4))
    data.append(contentsOf: Array("WAVE".utf8))
    data.append(contentsOf: Array("fmt ".utf8))
    u32(16)
    u16(3)
    u16(1)
    u32(16000)
    u32(64000)
    u16(4)
    u16(32)
    data.append(contentsOf: Array("data".utf8))
    u32(UInt32(frames * 4))
    for index in 0..<frames {
        let value: Float = index % nanEvery == 0 ? .nan : Float(sin(Double(index) * 0.17) * 0.5)
        u32(value.bitPattern)
    }
    return data
}

@Suite(
    "exit codes follow the table; names are quoted safely",
    .enabled(if: binaryBuilt, "run swift build first"), .offThePool)
struct ExitCodeConsistencyTests {
    @Test("/proc/self/mem is an I/O error (74) for every reader")
    func procSelfMem() throws {
        try withTemporaryFolder { folder in
            #expect(symlink("/proc/self/mem", folder + "/state.json") == 0)
            for arguments in [
                ["check", "/proc/self/mem"], ["trim", "/proc/self/mem", "-o", "x.caf"],
                ["dua", "check", "--texts", "/proc/self/mem", "x"],
                ["plan", "--lat", "24.86", "--lon", "67.0", "--tz", "Asia/Karachi", "--state", "state.json"],
            ] {
                let result = try proofkit(arguments, in: folder)
                #expect(result.status == 74, "\(arguments): \(result.status) \(result.stderr)")
                #expect(result.stderr.split(separator: "\n").count == 1)
            }
        }
    }

    @Test("a state path that is too long is 74 with the system's reason, not 'no such state file'")
    func longStatePath() throws {
        let long = "/tmp/" + String(repeating: "x", count: 5000) + ".json"
        let result = try proofkit(["plan", "--lat", "24.86", "--lon", "67.0", "--tz", "Asia/Karachi", "--state", long])
        #expect(result.status == 74, "\(result.status) \(result.stderr)")
        #expect(!result.stderr.contains("no such") && result.stderr.contains("too long"), "\(result.stderr)")
        #expect(result.stderr.count < 1200, "the path is shortened in the message")
    }

    @Test("an unreadable optional config file does not stop dua")
    func unreadableConfig() throws {
        try withTemporaryFolder { folder in
            try FileManager.default.createDirectory(atPath: folder + "/proofkit", withIntermediateDirectories: true)
            #expect(symlink("/proc/self/mem", folder + "/proofkit/duas.json") == 0)
            let result = try runProcess(
                TestEnvironment.proofkitBinary, ["dua", "list"], environment: ["XDG_CONFIG_HOME": folder])
            #expect(result.status == 0, "\(result.stderr)")
        }
    }

    @Test("a float WAV with NaN samples is invalid data (65), not 'RMS - dBFS'")
    func nanSamples() throws {
        try withTemporaryFolder { folder in
            try handMadeFloatWAV(frames: 16000, nanEvery: 100).write(to: URL(fileURLWithPath: folder + "/nan.wav"))
            let result = try proofkit(["check", "nan.wav"], in: folder)
            #expect(
                result.status == 65 && result.stderr.contains("NaN"),
                "\(result.status) \(result.stdout) \(result.stderr)")
        }
    }

    @Test("plan: --proof-window without a unit and --now in year 9999 are usage errors (64)")
    func planArguments() throws {
        let base = ["plan", "--lat", "24.86", "--lon", "67.0", "--tz", "Asia/Karachi"]
        for extra in [["--proof-window", "30"], ["--now", "9999-12-31T23:59:59Z"]] {
            let result = try proofkit(base + extra)
            #expect(result.status == 64, "\(extra): \(result.status) \(result.stdout.prefix(300))")
        }
        #expect(try proofkit(base + ["--proof-window", "30m", "--now", "2026-11-30T04:00:00+05:00"]).status == 0)
    }

    @Test("times: a table that would run past 9999-12-31 is a usage error (64); the last day itself prints")
    func timesLastYear() throws {
        let base = ["times", "--lat", "21.4225", "--lon", "39.8262", "--tz", "Asia/Riyadh", "--date"]
        let past = try proofkit(base + ["9999-12-31", "--days", "2"])
        #expect(past.status == 64 && past.stdout.isEmpty, "\(past.stdout)")
        #expect(past.stderr.hasPrefix("proofkit times: --date 9999-12-31 with --days 2 runs past 9999-12-31\n"))
        let last = try proofkit(base + ["9999-12-30", "--days", "2"])
        #expect(last.status == 0, "\(last.stderr)")
        let rows = last.stdout.split(separator: "\n").filter { $0.hasPrefix("9999-") }
        #expect(
            rows.count == 2
                && rows.allSatisfy { $0.split(separator: " ").dropFirst().allSatisfy { !$0.hasPrefix("T") } })
    }

    @Test("ANSI escapes in a file name are shown escaped, never raw")
    func ansiNames() throws {
        try withTemporaryFolder { folder in
            let result = try proofkit(["check", "\u{1B}[31mred\u{1B}[0m.wav"], in: folder)
            #expect(result.status == 66)
            #expect(!result.stderr.contains("\u{1B}") && result.stderr.contains("\\u{1B}[31mred"), "\(result.stderr)")
        }
    }

    @Test("a manifest sha256 that is not 64 hex digits is a model error (78) with a short message")
    func malformedManifestDigest() throws {
        try withTemporaryFolder { folder in
            let models = TestEnvironment.packageRoot.appendingPathComponent("Models/generated").path
            try #require(AudioTestTools.exists(models + "/manifest.json"), "needs the models (bash .ci/setup)")
            for name in try FileManager.default.contentsOfDirectory(atPath: models) where name != "manifest.json" {
                #expect(symlink(models + "/" + name, folder + "/" + name) == 0)
            }
            var manifest = try #require(
                try JSONSerialization.jsonObject(
                    with: Data(contentsOf: URL(fileURLWithPath: models + "/manifest.json")))
                    as? [String: Any])
            var files = try #require(manifest["files"] as? [String: Any])
            for (name, value) in files {
                guard var entry = value as? [String: Any], entry["sha256"] != nil else { continue }
                entry["sha256"] = String(repeating: "z", count: 1 << 20)
                files[name] = entry
            }
            manifest["files"] = files
            try JSONSerialization.data(withJSONObject: manifest).write(
                to: URL(fileURLWithPath: folder + "/manifest.json"))
            let photo = models + "/clip_standin_test_mat.png"
            let result = try runProcess(
                TestEnvironment.proofkitBinary, ["mat", photo], environment: ["PROOFKIT_MODELS": folder])
            #expect(result.status == 78, "\(result.status) \(result.stderr.prefix(300))")
            #expect(result.stderr.count < 1000, "the value is not echoed")
        }
    }
}
