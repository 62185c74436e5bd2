import Foundation

/// Helpers for audio tests: running external tools (sox, ffmpeg, ffprobe, lame, the built
/// `proofkit`) through the one runner (`runProcess`), and independent readers (sox, ffmpeg) of
/// decoded samples.
public enum AudioTestTools {
    /// Runs `executable` (a path, or a name looked up on PATH) with `arguments`, reading both
    /// pipes to the end before waiting, so that a chatty child can never deadlock.
    public static func run(
        _ executable: String, _ arguments: [String], currentDirectory: String? = nil
    ) throws -> ProcessResult {
        // A name goes through /usr/bin/env, which looks it up on PATH.
        let (path, words) =
            executable.contains("/") ? (executable, arguments) : ("/usr/bin/env", [executable] + arguments)
        return try runProcess(path, words, currentDirectory: currentDirectory)
    }

    /// Runs a tool and throws when it fails (for generating test inputs).
    @discardableResult
    public static func require(_ executable: String, _ arguments: [String]) throws -> ProcessResult {
        let outcome = try run(executable, arguments)
        guard outcome.status == 0 else {
            throw ToolFailure(
                description:
                    "\(executable) \(arguments.joined(separator: " ")) exited \(outcome.status): \(outcome.stderr)")
        }
        return outcome
    }

    /// A failed helper tool.
    public struct ToolFailure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Whether a file exists at `path`.
    public static func exists(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: path)
    }

    /// The names in a folder (including hidden temporaries), sorted.
    public static func contents(of folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    /// Interleaved samples of `path` decoded by sox (an independent reader), as 32-bit floats.
    public static func soxSamples(_ path: String) throws -> [Float] {
        let scratch = try TestFolder.make("sox-read")
        defer { remove(scratch) }
        let raw = scratch + "/out.f32"
        try require("sox", [path, "-t", "f32", "-e", "floating-point", "-b", "32", "-L", raw])
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// Interleaved samples of `path` decoded by ffmpeg (an independent decoder), as 32-bit floats.
    public static func ffmpegSamples(_ path: String) throws -> [Float] {
        let scratch = try TestFolder.make("ffmpeg-read")
        defer { remove(scratch) }
        let raw = scratch + "/out.f32"
        try require("ffmpeg", ["-v", "error", "-i", path, "-f", "f32le", "-c:a", "pcm_f32le", raw])
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// Interleaved 16-bit samples of a 16-bit file decoded by sox.
    public static func soxInt16(_ path: String) throws -> [Int16] {
        let scratch = try TestFolder.make("sox-read")
        defer { remove(scratch) }
        let raw = scratch + "/out.s16"
        try require("sox", [path, "-t", "s16", "-L", raw])
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// What ffprobe says about the first audio stream: codec_name, sample_rate, channels,
    /// duration (and format_name of the container).
    public static func ffprobe(_ path: String) throws -> [String: String] {
        let outcome = try require(
            "ffprobe",
            [
                "-v", "error", "-select_streams", "a:0", "-show_entries",
                "stream=codec_name,sample_rate,channels,duration:format=format_name", "-of",
                "default=noprint_wrappers=1", path,
            ])
        var result: [String: String] = [:]
        for line in outcome.stdout.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { result[parts[0]] = parts[1] }
        }
        return result
    }

    /// Writes `samples` (mono or interleaved, -1...1) to a 32-bit float raw file and converts
    /// it with sox to `path` using `soxOutputOptions` (e.g. `["-b", "16"]`).
    public static func writeWithSox(
        _ samples: [Float], channels: Int, sampleRate: Int, to path: String,
        soxOutputOptions: [String] = ["-b", "16"]
    ) throws {
        let raw = path + ".in.f32"
        defer { try? FileManager.default.removeItem(atPath: raw) }
        let data = samples.withUnsafeBufferPointer { Data(buffer: $0) }
        try data.write(to: URL(fileURLWithPath: raw))
        try require(
            "sox",
            [
                "-t", "f32", "-e", "floating-point", "-b", "32", "-L", "-r", String(sampleRate), "-c",
                String(channels), raw,
            ] + soxOutputOptions + [path])
    }

    /// The built `proofkit` binary: ``TestEnvironment/proofkitBinary``.
    public static var proofkitBinary: String { TestEnvironment.proofkitBinary }

    /// Mounts a tmpfs of `kilobytes` at `folder` (needs root and CAP_SYS_ADMIN).
    /// - Returns: whether it is mounted.
    public static func mountTmpfs(at folder: String, kilobytes: Int, readOnly: Bool = false) -> Bool {
        let options = "size=\(kilobytes)k" + (readOnly ? ",ro" : "")
        guard let outcome = try? run("mount", ["-t", "tmpfs", "-o", options, "tmpfs", folder]) else {
            return false
        }
        return outcome.status == 0
    }

    /// Unmounts what ``mountTmpfs(at:kilobytes:readOnly:)`` mounted.
    public static func unmount(_ folder: String) {
        _ = try? run("umount", [folder])
    }
}
