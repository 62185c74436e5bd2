import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// Issue 34: `proofkit mat` on images built to hurt it. Each ends at once with one line and its
// exit code, or with a verdict, and the whole process stays under 128 MiB (measured by GNU
// time's maximum resident set size).

private let models = TestEnvironment.packageRoot.path + "/Models/generated"
private let canRun =
    TestEnvironment.hasProofkitBinary
    && FileManager.default.fileExists(atPath: models + "/efficientnet_lite0_int8.onnx")
private let gnuTime = "/usr/bin/time"

/// `proofkit mat ARGUMENTS` under GNU time: the result, with the peak RSS in KiB taken off stderr.
private func matMeasured(_ arguments: [String]) throws -> (result: ProcessResult, peakKiB: Int, seconds: Double) {
    let started = Date()
    var result = try runProcess(
        gnuTime, ["-f", "peak-kib %M", TestEnvironment.proofkitBinary, "mat"] + arguments,
        environment: ["PROOFKIT_MODELS": "", "PROOFKIT_ORT_LIBRARY": ""])
    let seconds = Date().timeIntervalSince(started)
    var lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let peak = lines.lastIndex { $0.hasPrefix("peak-kib ") }
    let kib = peak.flatMap { Int(lines[$0].dropFirst("peak-kib ".count)) } ?? Int.max
    if let peak { lines.remove(at: peak) }
    // GNU time adds "Command exited with non-zero status N" (or "terminated by signal").
    result.stderr = lines.filter { !$0.hasPrefix("Command ") }.joined(separator: "\n")
    return (result, kib, seconds)
}

private let limitKiB = 128 * 1024

@Suite(
    "proofkit mat on hostile images stays bounded",
    .enabled(if: canRun, "needs the built binary and the models (bash .ci/setup)"),
    .enabled(if: FileManager.default.isExecutableFile(atPath: gnuTime), "needs GNU time at /usr/bin/time"),
    .offThePool)
struct HostileImageEndToEndTests {
    @Test("a JPEG header claiming 1x60000, a real 4x50000 PNG and a real 50000x4 PNG: exit 65 at once, under 128 MiB")
    func stripsRefused() throws {
        try withTemporaryFolder { folder in
            let claim = HostileImages.jpeg(try ImageFixtures.bytes("orientation_1.jpg"), claiming: 1, height: 60_000)
            try Data(claim).write(to: URL(fileURLWithPath: folder + "/claim.jpg"))
            let tall = HostileImages.png(width: 4, height: 50_000) { x, y, c in UInt8((x * 31 + y + c * 70) & 0xFF) }
            try Data(tall).write(to: URL(fileURLWithPath: folder + "/tall.png"))
            let wide = HostileImages.png(width: 50_000, height: 4) { x, y, c in UInt8((x + y * 31 + c * 70) & 0xFF) }
            try Data(wide).write(to: URL(fileURLWithPath: folder + "/wide.png"))
            for name in ["claim.jpg", "tall.png", "wide.png"] {
                let (result, peak, seconds) = try matMeasured([folder + "/" + name])
                #expect(result.status == 65, "\(name): \(result.status) \(result.stderr)")
                #expect(result.stderr.contains("nothing to judge"), "\(name): \(result.stderr)")
                #expect(result.stderr.split(separator: "\n").count == 1, "\(name): \(result.stderr)")
                #expect(peak < limitKiB, "\(name): peak RSS \(peak) KiB")
                #expect(seconds < 10, "\(name): \(seconds) s")
            }
        }
    }

    @Test("a real 10 MP PNG (over the 8 MP decoded) is judged from a shrunk decode, under 128 MiB")
    func largePNGJudged() throws {
        try withTemporaryFolder { folder in
            let png = HostileImages.png(width: 4000, height: 2500) { x, y, c in UInt8((x / 8 + y / 8 + c * 40) & 0xFF) }
            try Data(png).write(to: URL(fileURLWithPath: folder + "/big.png"))
            let (result, peak, _) = try matMeasured(["--json", folder + "/big.png"])
            #expect(result.status == 0, "\(result.status) \(result.stderr)")
            #expect(result.stdout.contains("\"verdict\""), "\(result.stdout)")
            #expect(peak < limitKiB, "peak RSS \(peak) KiB")
        }
    }

    @Test("a folder is 66 and a file over 32 MiB is 65, refused from its size before reading, under 128 MiB")
    func folderAndOversized() throws {
        try withTemporaryFolder { folder in
            let huge = folder + "/huge.jpg"
            try Data([0xFF, 0xD8, 0xFF]).write(to: URL(fileURLWithPath: huge))
            #expect(truncate(huge, 33 << 20) == 0)
            for (path, status, words) in [(folder, 66, "is a folder"), (huge, 65, "over the 32 MiB limit")] {
                let (result, peak, _) = try matMeasured([path])
                #expect(result.status == status && result.stderr.contains(words), "\(path): \(result.stderr)")
                #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
                #expect(peak < limitKiB, "\(path): peak RSS \(peak) KiB")
            }
        }
    }

    @Test("/dev/zero and a FIFO without a writer are refused before reading: exit 74 at once, under 128 MiB")
    func nonRegularRefused() throws {
        try withTemporaryFolder { folder in
            #expect(mkfifo(folder + "/photo.jpg", 0o644) == 0)
            for path in ["/dev/zero", folder + "/photo.jpg"] {
                let (result, peak, seconds) = try matMeasured([path])
                #expect(result.status == 74, "\(path): \(result.status) \(result.stderr)")
                #expect(result.stderr.contains("not a regular file"), "\(path): \(result.stderr)")
                #expect(peak < limitKiB, "\(path): peak RSS \(peak) KiB")
                // Not a hang (a FIFO without a writer would block for ever, /dev/zero read for ever): the
                // bound is loose, because the full suite on 2 cores once took 10.5 s to start the child.
                #expect(seconds < 60, "\(path): \(seconds) s")
            }
        }
    }
}
