import Foundation
import ProofkitCore
import ProofkitSystem
import TestSupport
import Testing

@testable import Proofkit
@testable import ProofkitBenchRunner

// The stand-ins that let the `proofkit` binary link FoundationEssentials only, checked against the
// full Foundation's own implementations (which the tests may link).

@Suite("Text helpers equal Foundation's", .offThePool)
struct TextHelperTests {
    static let samples = [
        "", " ", "\t\n", "fajr", "  fajr  ", "\tasr\t", "\n isha \r\n", "\u{00A0}maghrib\u{2003}", "a b\tc",
        "\u{2028}x\u{0085}", "  \u{0663}\u{0660} ", "x\n", "é ", " 41",
    ]

    @Test("trimmingSpaces is trimmingCharacters(in: .whitespaces)", arguments: samples)
    func spaces(_ text: String) {
        #expect(text.trimmingSpaces() == text.trimmingCharacters(in: .whitespaces))
        #expect(text[...].trimmingSpaces() == text.trimmingCharacters(in: .whitespaces))
    }

    @Test("trimmingSpacesAndNewlines is trimmingCharacters(in: .whitespacesAndNewlines)", arguments: samples)
    func spacesAndNewlines(_ text: String) {
        #expect(text.trimmingSpacesAndNewlines() == text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test(
        "padded(toLength:) is padding(toLength:withPad:startingAt:)",
        arguments: ["", "asr", "sunrise", "midnight", "05:12", "toolongvalue"])
    func padding(_ text: String) {
        for length in [0, 3, 8, 9] {
            #expect(text.padded(toLength: length) == text.padding(toLength: length, withPad: " ", startingAt: 0))
        }
    }

    @Test("the bench timestamp is ISO8601DateFormatter's internet date-time in UTC")
    func timestamp() {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.formatOptions = [.withInternetDateTime]
        for seconds in [0.0, 1_764_438_600, 1_764_438_600.75, 951_782_400, 4_102_444_799] {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(BenchRunner.isoTimestamp(date) == formatter.string(from: date))
        }
    }
}

@Suite("FileKind and JSONNode", .offThePool)
struct FileAndJSONTests {
    @Test("FileKind agrees with FileManager.fileExists(atPath:isDirectory:), following links")
    func fileKind() throws {
        try withTemporaryFolder("proofkit-filekind") { folder in
            let file = folder + "/file.txt"
            #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
            try FileManager.default.createSymbolicLink(atPath: folder + "/to-folder", withDestinationPath: folder)
            try FileManager.default.createSymbolicLink(
                atPath: folder + "/dangling", withDestinationPath: folder + "/none")
            for path in [
                folder, file, folder + "/to-folder", folder + "/dangling", folder + "/missing", "/dev/null",
                "/proc/self/exe",
            ] {
                var isDirectory: ObjCBool = false
                let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
                let expected: FileKind? = exists ? (isDirectory.boolValue ? .folder : .other) : nil
                #expect(FileKind(atPath: path) == expected, "\(path)")
            }
        }
    }

    @Test("JSONNode (ProofkitCore's JSONReader) reads what JSONSerialization reads")
    func jsonNode() throws {
        let text = """
            {"format": "proofkit-models-manifest", "version": 1, "half": 0.5, "big": 12345678901,
             "flag": true, "none": null, "list": [1, "two", [3], {"four": 4}], "nested": {"sha256": "AB"},
             "arabic": "\\u0627\\u0644\\u062d\\u0645\\u062f", "neg": -2e-3}
            """
        let json = try #require(JSONNode(bytes: Array(text.utf8)))
        let reference = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(json["format"]?.string == reference["format"] as? String)
        #expect(json["version"]?.integer == reference["version"] as? Int)
        #expect(json["half"]?.number == reference["half"] as? Double)
        #expect(json["big"]?.integer == reference["big"] as? Int)
        #expect(json["neg"]?.number == reference["neg"] as? Double)
        #expect(json["flag"] == .bool(true))
        #expect(json["none"] == .null)
        #expect(json["list"]?.array?.count == (reference["list"] as? [Any])?.count)
        #expect(json["list"]?.array?[3]["four"]?.integer == 4)
        #expect(json["nested"]?["sha256"]?.string == "AB")
        #expect(json["arabic"]?.string == reference["arabic"] as? String)
        #expect(json["missing"] == nil)
        #expect(json["format"]?["x"] == nil)
        #expect(json["half"]?.integer == nil)
        #expect(JSONNode.number(2).description == "2")
        #expect(JSONNode.number(2.5).description == "2.5")
        for bad in ["", "{", "{\"a\": }", "nope", "{\"a\": 1} x", "{'a': 1}"] {
            #expect(JSONNode(bytes: Array(bad.utf8)) == nil, "\(bad)")
            #expect((try? JSONSerialization.jsonObject(with: Data(bad.utf8))) == nil, "\(bad)")
        }
        // Strict where JSON is: a trailing comma is refused (JSONSerialization lets it pass).
        for trailing in ["[1,]", "{\"a\": 1,}"] {
            #expect(JSONNode(bytes: Array(trailing.utf8)) == nil, "\(trailing)")
        }
        // A repeated key keeps one value, the same as JSONSerialization's.
        let repeated = #"{"a": 1, "a": 2}"#
        let repeatedReference = try #require(
            try JSONSerialization.jsonObject(with: Data(repeated.utf8)) as? [String: Any])
        #expect(JSONNode(bytes: Array(repeated.utf8))?["a"]?.integer == repeatedReference["a"] as? Int)
    }
}

@Suite("ChildProcess and BackgroundWork", .offThePool)
struct ChildProcessTests {
    @Test("a child's exit status, stdout and stderr are captured as Foundation's Process gives them")
    func capture() throws {
        let script = "printf 'out line\\n'; printf 'err line\\n' >&2; exit 3"
        let completed = try ChildProcess.run("/bin/sh", arguments: ["-c", script], stdout: true, stderr: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(completed.termination == .exited(process.terminationStatus))
        #expect(completed.termination == .exited(3))
        #expect(completed.stdout == Array(outData))
        #expect(completed.stderr == Array(errData))
        #expect(String(decoding: completed.stdout, as: UTF8.self) == "out line\n")
    }

    @Test("both pipes are drained together: a child writing 1 MiB to each does not block")
    func largeOutputs() throws {
        let script = "head -c 1048576 /dev/zero >&2; head -c 1048576 /dev/zero; head -c 1000 /dev/zero >&2"
        let completed = try ChildProcess.run("/bin/sh", arguments: ["-c", script], stdout: true, stderr: true)
        #expect(completed.termination == .exited(0))
        #expect(completed.stdout.count == 1_048_576)
        #expect(completed.stderr.count == 1_049_576)
    }

    @Test("a killed child reports its signal; uncaptured streams stay empty")
    func signal() throws {
        let completed = try ChildProcess.run(
            "/bin/sh", arguments: ["-c", "echo hidden; kill -TERM $$"], stdout: false, stderr: false)
        #expect(completed.termination == .signalled(SIGTERM))
        #expect(completed.stdout.isEmpty && completed.stderr.isEmpty)
    }

    @Test("the child gets this process's environment and stdin from /dev/null")
    func environment() throws {
        // An inherited variable, not one set here: setenv while other tests' threads spawn
        // children (posix_spawn reads `environ`) is a data race, once seen as EFAULT in a spawn.
        let path = try #require(ProcessInfo.processInfo.environment["PATH"])
        let completed = try ChildProcess.run(
            "/bin/sh", arguments: ["-c", "printf %s \"$PATH\"; cat; echo ."], stdout: true, stderr: false)
        #expect(String(decoding: completed.stdout, as: UTF8.self) == path + ".\n")
    }

    @Test("a missing executable is a spawn failure with ENOENT, and no descriptor leaks")
    func missing() throws {
        #expect {
            _ = try ChildProcess.run("/nonexistent/espeak-ng", arguments: [], stdout: true, stderr: true)
        } throws: { error in
            (error as? ChildProcess.Failure)?.errno.code == ENOENT
        }
        // Other tests open descriptors in parallel (more than 100 at once with the waiting suites off
        // the pool): a leak of even 1 per attempt (4 for a spawn's two pipes) shows over 1000
        // attempts, above a margin of 400 for the others.
        let before = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        for _ in 0..<1000 {
            _ = try? ChildProcess.run("/nonexistent/espeak-ng", arguments: [], stdout: true, stderr: true)
        }
        _ = try ChildProcess.run("/bin/true", arguments: [], stdout: true, stderr: true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count < before + 400)
    }

    @Test("the measuring child's failure keeps its exit-code mapping and last stderr line")
    func benchChild() {
        #expect {
            _ = try BenchChildProcess.measure(
                executable: "/bin/sh",
                arguments: ["-c", "echo noise >&2; echo 'proofkit bench: no model file x' >&2; exit 66"])
        } throws: { error in
            let error = error as? ProofkitError
            return error?.code == .notFound && error?.message == "child process: no model file x"
        }
        #expect {
            _ = try BenchChildProcess.measure(executable: "/bin/sh", arguments: ["-c", "kill -KILL $$"])
        } throws: { error in
            (error as? ProofkitError)?.message == "the measuring child process was killed by signal 9"
        }
    }

    @Test("BackgroundWork gives its value to every wait, from several threads")
    func backgroundWork() async {
        let work = BackgroundWork { () -> [Int] in
            usleep(20_000)
            return Array(1...5)
        }
        await withTaskGroup(of: [Int].self) { group in
            for _ in 0..<4 { group.addTask { work.wait() } }
            for await value in group { #expect(value == [1, 2, 3, 4, 5]) }
        }
        #expect(work.wait() == [1, 2, 3, 4, 5])
    }
}
