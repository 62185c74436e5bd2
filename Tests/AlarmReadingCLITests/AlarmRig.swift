import Foundation
import TestSupport
import Testing

let alarmModelsBuilt = FileManager.default.fileExists(
    atPath: TestEnvironment.packageRoot.path + "/Models/generated/efficientnet_lite0_int8.onnx")

/// The alarm tests' rig (AlarmEndToEndTests, AlarmTrustTests): a store folder, a speaker that writes what it plays into OUT.raw (ALSA's file plugin over a
/// null slave, in a configuration of its own), an alarm sound, and the service as a child process.
final class AlarmRig: @unchecked Sendable {  // used by one test at a time; concurrentPerform only reads it
    let folder: String
    let store: String
    let out: String
    let config: String
    let sound: String
    var service: Process?
    var logPath: String { folder + "/service.log" }

    /// - Parameter store: the store's path inside the rig's folder [`store`].
    init(store name: String = "store") throws {
        folder = try TestFolder.make()
        store = folder + "/" + name
        out = folder + "/OUT.raw"
        config = folder + "/asound.conf"
        sound = folder + "/tone.wav"
        try """
        pcm.speaker { type file slave.pcm { type null } file "\(out)" format "raw" }
        """.write(toFile: config, atomically: true, encoding: .utf8)
        // 1 s of 440 Hz at half scale, 16 kHz mono 16-bit WAV.
        let samples = (0..<16000).map { Int16((0.5 * 32767 * sin(2 * Double.pi * 440 * Double($0) / 16000)).rounded()) }
        try TestAudio.writeWAV(samples, rate: 16000, to: sound)
    }

    deinit {
        stopService(signal: SIGKILL)
        try? FileManager.default.removeItem(atPath: folder)
    }

    func startService(
        ringSeconds: Double, device: String = "speaker", arguments more: [String] = [],
        environment extra: [String: String] = [:]
    ) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestEnvironment.proofkitBinary)
        process.arguments =
            [
                "alarm", "run", "--store", store, "--device", device, "--ring-seconds", String(ringSeconds),
            ] + more
        var environment = ProcessInfo.processInfo.environment
        environment["PROOFKIT_ALSA_CONFIG"] = config
        environment.merge(extra) { _, new in new }
        process.environment = environment
        if !FileManager.default.fileExists(atPath: logPath) {
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        process.standardError = log
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        service = process
        // Ready when it answers on its socket. A readiness wait, not a measurement: at the start of
        // the full suite (every suite launching at once on 2 cores) the service logged "start" and
        // the pings still had not seen it running 10 s after launch, and once (with the Whisper
        // suites starting beside it) not after 30 s, so the bound is generous.
        let deadline = Date().addingTimeInterval(90)
        while Date() < deadline {
            if let ping = try? alarm(["status", "--json"]), ping.stdout.contains("\"service\":\"running\"") { return }
            usleep(50_000)
        }
        Issue.record("the service did not come up: \(self.log)")
    }

    func stopService(signal: Int32 = SIGTERM) {
        guard let service, service.isRunning else { return }
        kill(service.processIdentifier, signal)
        service.waitUntilExit()
        self.service = nil
    }

    /// Starts `alarm prove ID --squat -` (a live keypoint stream on stdin) as a child, its output
    /// dropped. Returns the process and the pipe that feeds it; closing the pipe ends the stream.
    func startLiveSquatProof(_ id: String) throws -> (Process, Pipe) {
        let prove = Process()
        prove.executableURL = URL(fileURLWithPath: TestEnvironment.proofkitBinary)
        prove.arguments = ["alarm", "prove", id, "--squat", "-", "--store", store]
        let input = Pipe()
        prove.standardInput = input
        prove.standardOutput = FileHandle.nullDevice
        prove.standardError = FileHandle.nullDevice
        try prove.run()
        return (prove, input)
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    func alarm(_ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
        try TestEnvironment.runProofkit(["alarm"] + arguments + ["--store", store], environment: environment)
    }

    /// Books a one-off chain whose first ring is `seconds` ahead, on a whole second.
    func add(in seconds: Int, window: Int, gap: Int, extra: [String] = []) throws -> (id: String, first: Date) {
        let first = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + Double(seconds)).rounded(.up))
        let formatter = ISO8601DateFormatter()
        let result = try alarm(
            [
                "add", "--at", formatter.string(from: first), "--sound", sound, "--window", "\(window)s",
                "--gap", "\(gap)s", "--gap-growth", "0s", "--json",
            ] + extra)
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        return (try #require(object["id"] as? String), first)
    }

    /// Watches OUT.raw and returns the instant non-silent samples (|x| > 1000) first appear in
    /// it, or `nil` by `deadline`. Each ring reopens (truncates) the file; with `fresh`, what an
    /// earlier ring left in it is removed first (the file plugin creates it again).
    func firstSound(by deadline: Date, fresh: Bool = false) -> Date? {
        if fresh { try? FileManager.default.removeItem(atPath: out) }
        var offset = 0
        while Date() < deadline {
            if let data = FileManager.default.contents(atPath: out) {
                if data.count < offset { offset = 0 }
                var index = offset & ~1
                while index + 1 < data.count {
                    let value = Int16(bitPattern: UInt16(data[index]) | UInt16(data[index + 1]) << 8)
                    if abs(Int(value)) > 1000 { return Date() }
                    index += 2
                }
                offset = data.count
            }
            usleep(10_000)
        }
        return nil
    }

    /// Whether OUT.raw stays unchanged (no sample written) for `seconds`.
    func staysQuiet(for seconds: Double) -> Bool {
        let before = FileManager.default.contents(atPath: out) ?? Data()
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if (FileManager.default.contents(atPath: out) ?? Data()) != before { return false }
            usleep(20_000)
        }
        return true
    }

    func status() throws -> [String: Any] {
        let result = try alarm(["status", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }
}

func rings(of chain: String, in status: [String: Any]) -> [[String: Any]] {
    let chains = status["chains"] as? [[String: Any]] ?? []
    return chains.first { $0["id"] as? String == chain }?["rings"] as? [[String: Any]] ?? []
}
