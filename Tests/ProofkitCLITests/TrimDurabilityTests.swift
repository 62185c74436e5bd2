import Foundation
import TestSupport
import Testing

/// What `proofkit trim` asks of the kernel, seen by strace: the complete output (its final
/// header included) has its writes started (default) or is synced (--sync) before it is renamed
/// into place, and nothing is written to it after that.
@Suite(
    "proofkit trim: the output is on its way to the disk, or with --sync on it, before the rename (strace)", .offThePool
)
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
            [
                "-f", "-qq", "-s", "0", "-o", log,
                "-e", "trace=openat,fcntl,write,pwrite64,fsync,fdatasync,sync_file_range,close,rename",
                AudioTestTools.proofkitBinary,
            ] + arguments,
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
        try AudioTestTools.require(
            "sox",
            ["-D", "-n", "-r", "44100", "-c", "2", "-b", "16", input, "synth", "31", "sine", "440", "vol", "0.5"])
        return input
    }

    /// The temporary's descriptor, and the indices of its writes (through it or a copy of it:
    /// libsndfile writes through its own `F_DUPFD_CLOEXEC` copy), of `call` on it, of its close
    /// and of the rename onto `output`.
    func order(of call: String, in calls: [Call], output: String) throws -> (
        writes: [Int], call: Int, close: Int, rename: Int
    ) {
        let create = try #require(
            calls.firstIndex {
                $0.name == "openat" && $0.first.contains(".\(output).tmp-") && $0.line.contains("O_CREAT")
            })
        let fd = try #require(calls[create].line.split(separator: "=").last?.trimmingCharacters(in: .whitespaces))
        let closeIndex = try #require(
            calls.indices.first { $0 > create && calls[$0].name == "close" && calls[$0].first == fd })
        let callIndex = try #require(
            calls.indices.last { $0 > create && $0 < closeIndex && calls[$0].name == call && calls[$0].first == fd })
        let rename = try #require(
            calls.indices.first { calls[$0].name == "rename" && calls[$0].line.contains("\"\(output)\"") })
        let copies = calls[create..<closeIndex].compactMap { call -> String? in
            guard call.name == "fcntl", call.first == fd, call.line.contains("F_DUPFD") else { return nil }
            return call.line.split(separator: "=").last?.trimmingCharacters(in: .whitespaces)
        }
        let descriptors = Set([fd] + copies)
        let writes = calls.indices.filter {
            $0 > create && $0 < closeIndex && ["write", "pwrite64"].contains(calls[$0].name)
                && descriptors.contains(calls[$0].first)
        }
        return (writes, callIndex, closeIndex, rename)
    }

    @Test(
        "default: the complete file's writes are started (sync_file_range, no wait) before the rename; no fdatasync",
        .enabled(if: canRun))
    func orderedBeforeRename() throws {
        try withTemporaryFolder { folder in
            _ = try makeInput(in: folder)
            let calls = try trace(["trim", "in.wav", "-o", "out.caf"], in: folder)
            let seen = try order(of: "sync_file_range", in: calls, output: "out.caf")
            #expect(seen.writes.count > 10)
            #expect(
                seen.writes.allSatisfy { $0 < seen.call },
                "a write to the temporary after the writeback started: it did not cover the final file")
            #expect(seen.call < seen.close && seen.close < seen.rename)
            #expect(calls[seen.call].line.contains("SYNC_FILE_RANGE_WRITE") && !calls[seen.call].line.contains("WAIT"))
            #expect(
                !calls.contains { $0.name == "fsync" || $0.name == "fdatasync" },
                "the default does not wait for the disk")
            // The output is complete and plays.
            #expect(try AudioTestTools.ffprobe(folder + "/out.caf")["codec_name"] == "pcm_s16le")
        }
    }

    @Test(
        "--sync: every write to the temporary comes before fdatasync, then close, then the rename; same samples",
        .enabled(if: canRun))
    func syncedBeforeRename() throws {
        try withTemporaryFolder { folder in
            _ = try makeInput(in: folder)
            let calls = try trace(["trim", "--sync", "in.wav", "-o", "synced.caf"], in: folder)
            let seen = try order(of: "fdatasync", in: calls, output: "synced.caf")
            #expect(seen.writes.count > 10)
            #expect(
                seen.writes.allSatisfy { $0 < seen.call },
                "a write to the temporary after fdatasync: the synced file was not final")
            #expect(seen.call < seen.close && seen.close < seen.rename)
            #expect(calls[seen.call].line.hasSuffix("= 0"))
            _ = try AudioTestTools.run(
                AudioTestTools.proofkitBinary, ["trim", "in.wav", "-o", "plain.caf"], currentDirectory: folder)
            #expect(
                try AudioTestTools.soxInt16(folder + "/plain.caf") == AudioTestTools.soxInt16(folder + "/synced.caf"))
        }
    }
}
