import Foundation
import ProofkitCLI
import Synchronization
import TestSupport
import Testing

/// Captures what a command writes, for in-process runs.
final class CapturedIO: Sendable {
    let out = Mutex("")
    let err = Mutex("")
    var io: CommandIO {
        CommandIO(
            writeOut: { text in self.out.withLock { $0 += text } },
            writeErr: { text in self.err.withLock { $0 += text } })
    }
    var stdout: String { out.withLock { $0 } }
    var stderr: String { err.withLock { $0 } }
}

@Suite("proofkit in process", .offThePool)
struct CLIInProcessTests {
    @Test("help lists every verb on stdout and exits 0")
    func help() {
        let captured = CapturedIO()
        let status = ProofkitCLI.run(arguments: ["proofkit", "help"], io: captured.io)
        #expect(status == 0)
        for verb in [
            "demo", "trim", "check", "play", "mat", "voice", "dua", "transcribe", "squat", "pose", "times", "plan",
            "bench",
        ] {
            #expect(captured.stdout.contains("  \(verb) "), "help misses \(verb)")
        }
        #expect(captured.stderr.isEmpty)
    }

    @Test(
        "each verb's --help prints usage on stdout and exits 0",
        arguments: [
            "demo", "trim", "check", "play", "mat", "voice", "dua", "transcribe", "squat", "pose", "times", "plan",
            "bench",
        ])
    func verbHelp(verb: String) {
        let captured = CapturedIO()
        let status = ProofkitCLI.run(arguments: ["proofkit", verb, "--help"], io: captured.io)
        #expect(status == 0)
        #expect(captured.stdout.hasPrefix("usage: proofkit \(verb)"))
        #expect(captured.stdout.contains("--help"))
        #expect(captured.stderr.isEmpty)
    }

    @Test("an unknown verb is a usage error on stderr")
    func unknownVerb() {
        let captured = CapturedIO()
        let status = ProofkitCLI.run(arguments: ["proofkit", "fly"], io: captured.io)
        #expect(status == 64)
        #expect(captured.stdout.isEmpty)
        #expect(captured.stderr == "proofkit: unknown command 'fly'; try 'proofkit help'\n")
    }

    @Test("an unknown flag on a verb is one line plus usage, exit 64")
    func unknownFlag() {
        let captured = CapturedIO()
        let status = ProofkitCLI.run(arguments: ["proofkit", "check", "--loud", "x.caf"], io: captured.io)
        #expect(status == 64)
        #expect(captured.stdout.isEmpty)
        let lines = captured.stderr.split(separator: "\n")
        #expect(lines.first == "proofkit check: unknown option '--loud'")
        #expect(lines.dropFirst().first?.hasPrefix("usage: proofkit check") == true)
    }

    @Test("help exit-codes prints the table")
    func exitCodes() {
        let captured = CapturedIO()
        #expect(ProofkitCLI.run(arguments: ["proofkit", "help", "exit-codes"], io: captured.io) == 0)
        for code in ["64", "65", "66", "69", "74", "78"] { #expect(captured.stdout.contains("  \(code) ")) }
    }
}

@Suite("proofkit binary", .enabled(if: TestEnvironment.hasProofkitBinary, "run swift build first"), .offThePool)
struct CLIBinaryTests {
    @Test("--version prints the version and exits 0")
    func version() throws {
        let result = try TestEnvironment.runProofkit(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("proofkit "))
        #expect(result.stderr.isEmpty)
    }

    @Test("no arguments prints help")
    func noArguments() throws {
        let result = try TestEnvironment.runProofkit([])
        #expect(result.status == 0)
        #expect(result.stdout.contains("usage: proofkit <command>"))
    }

    @Test("usage errors exit 64 with stderr only")
    func usageError() throws {
        let result = try TestEnvironment.runProofkit(["trim", "--nope"])
        #expect(result.status == 64)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("proofkit trim: unknown option '--nope'\n"))
    }

    @Test(
        "results that cannot be written (stdout on /dev/full) are 74 with the reason, never 0; a reader that stops early (head) is not a failure",
        .enabled(if: FileManager.default.fileExists(atPath: "/dev/full"), "needs /dev/full"))
    func unwritableOutput() throws {
        let times = ["times", "--lat", "21.42", "--lon", "39.83", "--tz", "Asia/Riyadh", "--date", "2026-12-06"]
        for arguments in [times, times + ["--json"], times + ["--days", "200"], ["help", "man"], ["--version"]] {
            let full = try runProcess(
                "/bin/bash", ["-c", "exec \"$0\" \"$@\" > /dev/full", TestEnvironment.proofkitBinary] + arguments)
            #expect(full.status == 74, "\(arguments): \(full.stderr)")
            #expect(
                full.stderr == "proofkit: cannot write the results to standard output (No space left on device)\n",
                "\(arguments): \(full.stderr)")
        }
        // A command that fails keeps its own code.
        let bad = try runProcess(
            "/bin/bash", ["-c", "exec \"$0\" times --lat 91 > /dev/full", TestEnvironment.proofkitBinary])
        #expect(bad.status == 64, "\(bad.stderr)")
        // 200 days of times into a pipe whose reader takes one line: EPIPE is quiet, and 0.
        let head = try runProcess(
            "/bin/bash",
            ["-c", "set -o pipefail; \"$0\" \"$@\" | head -1", TestEnvironment.proofkitBinary] + times + [
                "--days", "200",
            ])
        #expect(head.status == 0 && head.stderr.isEmpty, "\(head.stderr)")
        #expect(head.stdout.split(separator: "\n").count == 1)
    }
}
