import ProofkitCore
import Testing

@testable import Proofkit

@Suite("ExternalRecognizer: the program a command starts")
struct RecognizerProgramTests {
    @Test("the first word after NAME=value assignments, quotes removed; shell syntax is left to the shell")
    func programOfCommand() {
        #expect(ExternalRecognizer.program(of: "my-asr --stdin") == "my-asr")
        #expect(ExternalRecognizer.program(of: "  LANG=C LC_ALL=C.UTF-8 whisper-cli -l ar") == "whisper-cli")
        #expect(ExternalRecognizer.program(of: "'/opt/my asr/bin/asr' --x") == "/opt/my asr/bin/asr")
        #expect(ExternalRecognizer.program(of: "asr|tee log") == "asr")
        for shell in ["exec asr", "$HOME/asr", "(asr)", "~/asr", "cd /x && asr", "", "'unclosed"] {
            #expect(ExternalRecognizer.program(of: shell) == nil, "\(shell)")
        }
    }

    @Test("a missing program is runtimeUnavailable (exit 69); one in PATH or given by path passes")
    func installedCheck() throws {
        #expect(throws: ProofkitError.self) {
            try ExternalRecognizer.checkInstalled(command: "no-such-asr-xyz --stdin", path: "/usr/bin:/bin")
        }
        try ExternalRecognizer.checkInstalled(command: "cat > /dev/null", path: "/usr/bin:/bin")
        try ExternalRecognizer.checkInstalled(command: "/bin/sh -c true", path: "")
        do {
            try ExternalRecognizer.checkInstalled(command: "no-such-asr-xyz", path: "/usr/bin")
        } catch {
            #expect(error.code == .runtimeUnavailable)
            #expect(error.message.contains("'no-such-asr-xyz', which is not installed"))
        }
    }
}
