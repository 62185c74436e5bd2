import Foundation
import Testing
import TestSupport

/// What `proofkit trim` asks of the kernel, seen by strace: the output is synced complete (its
/// final header included) before it is renamed into place, unless --no-sync.
@Suite("proofkit trim: the output reaches the disk before the rename (strace)")
struct TrimDurabilityTests {
    static var canRun: Bool {
        FileManager.default.isExecutableFile(atPath: AudioTestTools.proofkitBinary) && TestEnvironment.hasTool("strace")
    }

    /// One traced system call: its name and its first argument (a descriptor or a path).
    struct Call {
        var name: String
        var first: String
        var line: String
    }

    /// Runs `proofkit ARGS` under strace in `folder` and returns the file calls, in order.
    func trace(_ arguments: [String], in folder: String) throws -> [Call] {
        let log = folder + "/strace.log"
        let outcome = try AudioTestTools.run(
            "strace",
            ["-f", "-qq", "-s", "0", "-o", log,
             "-e", "trace=openat,write,pwrite64,fsync,fdatasync,sync_file_range,close,rename",
             AudioTestTools.proofkitBinary] + arguments,
            currentDirectory: folder)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let text = try String(contentsOfFile: log, encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: #"^(?:\d+\s+)?([a-z0-9_]+)\((?:AT_FDCWD, )?([^,)]*)"#)
        return text.split(separator: "\n").compactMap { line in
            let line = String(line)
            let range = NSRange(line.startIndex..., in: line)
            guard let match = pattern.firstMatch(in: line, range: range),
                let name = Range(match.range(at: 1), in: line), let first = Range(match.range(at: 2), in: line)
            else { return nil }
            return Call(name: String(line[name]), first: String(line[first]), line: line)
        }
    }

    func makeInput(in folder: String) throws -> String {
        let input = folder + "/in.wav"
        try AudioTestTools.require("sox", ["-D", "-n", "-r", "44100", "-c", "2", "-b", "16", input, "synth", "31", "sine", "440", "vol", "0.5"])
        return input
    }

    @Test("default: every write to the temporary comes before fdatasync, then close, then the rename",
          .enabled(if: canRun))
    func syncedBeforeRename() throws {
        let folder = try AudioTestTools.makeScratchFolder()
        defer { AudioTestTools.remove(folder) }
        _ = try makeInput(in: folder)
        let calls = try trace(["trim", "in.wav", "-o", "out.caf"], in: folder)
        let create = try #require(calls.firstIndex { $0.name == "openat" && $0.first.contains(".out.caf.tmp-") && $0.line.contains("O_CREAT") })
        let fd = try #require(calls[create].line.split(separator: "=").last?.trimmingCharacters(in: .whitespaces))
        let sync = try #require(calls.indices.first { $0 > create && $0 > 0 && calls[$0].name == "fdatasync" && calls[$0].first == fd })
        let close = try #require(calls.indices.first { $0 > create && calls[$0].name == "close" && calls[$0].first == fd })
        let rename = try #require(calls.indices.first { calls[$0].name == "rename" && calls[$0].line.contains("\"out.caf\"") })
        let writes = calls.indices.filter { $0 > create && $0 < close && ["write", "pwrite64"].contains(calls[$0].name) && calls[$0].first == fd }
        #expect(writes.count > 10)
        #expect(writes.allSatisfy { $0 < sync }, "a write to the temporary after fdatasync: the synced file was not final")
        #expect(sync < close && close < rename)
        #expect(calls[sync].line.hasSuffix("= 0"))
        // The output is complete and plays.
        #expect(try AudioTestTools.ffprobe(folder + "/out.caf")["codec_name"] == "pcm_s16le")
    }

    @Test("--no-sync: no fsync or fdatasync at all, and the output is the same", .enabled(if: canRun))
    func noSync() throws {
        let folder = try AudioTestTools.makeScratchFolder()
        defer { AudioTestTools.remove(folder) }
        _ = try makeInput(in: folder)
        let calls = try trace(["trim", "--no-sync", "in.wav", "-o", "fast.caf"], in: folder)
        #expect(!calls.contains { $0.name == "fsync" || $0.name == "fdatasync" || $0.name == "sync_file_range" })
        #expect(calls.contains { $0.name == "rename" })
        _ = try AudioTestTools.run(AudioTestTools.proofkitBinary, ["trim", "in.wav", "-o", "synced.caf"], currentDirectory: folder)
        #expect(try AudioTestTools.soxInt16(folder + "/fast.caf") == AudioTestTools.soxInt16(folder + "/synced.caf"))
    }
}
