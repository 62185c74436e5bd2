import Foundation
import TestSupport
import Testing

/// The four C libraries that only some commands need are loaded on first use, not linked: the
/// binary has no DT_NEEDED entry for them, and a command maps only the ones it uses.
@Suite(
    "proofkit loads its C libraries on first use, end to end",
    .enabled(if: TestEnvironment.hasProofkitBinary, "run swift build first"), .offThePool)
struct LazyLibrariesEndToEndTests {
    static let libraries = [
        "libasound.so.2", "libsndfile.so.1", "libturbojpeg.so.0", "libpng16.so.16", "libsqlite3.so.0",
        "libavutil.so.57", "libavcodec.so.59", "libavformat.so.59", "libswscale.so.6",
    ]

    @Test(
        "the binary needs none of libasound, libsndfile, libturbojpeg, libpng, libsqlite3, FFmpeg's, nor the Swift runtime's (readelf -d)",
        .enabled(if: TestEnvironment.hasTool("readelf"), "readelf (binutils) is not installed"))
    func noDynamicDependency() throws {
        // The shipped binary: the tests are built on its compile and run it (.ci/build-release).
        for binary in [TestEnvironment.proofkitBinary] {
            let result = try runProcess("/usr/bin/env", ["readelf", "-d", binary])
            #expect(result.status == 0, "\(result.stderr)")
            let needed = result.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
            #expect(!needed.isEmpty, "readelf listed no NEEDED entries for \(binary)")  // the check itself works
            for library in Self.libraries {
                #expect(!needed.contains { $0.contains("[\(library)]") }, "\(binary) still needs \(library)")
            }
            // The static Swift runtime, Foundation and libstdc++: it runs without the toolchain.
            for library in [
                "libswiftCore.so", "libFoundation", "lib_FoundationICU.so", "libdispatch.so", "libstdc++.so",
            ] {
                #expect(!needed.contains { $0.contains("[\(library)") }, "\(binary) still needs \(library)")
            }
        }
    }

    /// The libraries (of the four) that the dynamic loader mapped while `proofkit arguments` ran,
    /// from glibc's own trace (`LD_DEBUG=files`), written to a file: AudioIO points stderr at
    /// /dev/null while libsndfile opens a file, which is when libsndfile is loaded.
    func librariesMapped(_ arguments: [String], in folder: String) throws -> Set<String> {
        let prefix = folder + "/ld-debug-\(arguments[0])"
        let result = try TestEnvironment.runProofkit(
            arguments, environment: ["LD_DEBUG": "files", "LD_DEBUG_OUTPUT": prefix])
        #expect(result.status == 0, "\(arguments): \(result.stderr.suffix(500))")
        let traces = try FileManager.default.contentsOfDirectory(atPath: folder)
            .filter { (folder + "/" + $0).hasPrefix(prefix + ".") }
        #expect(traces.count == 1, "\(arguments): no LD_DEBUG trace")
        let trace = try traces.map { try String(contentsOfFile: folder + "/" + $0, encoding: .utf8) }.joined()
        return Set(Self.libraries.filter { trace.contains("file=\($0) ") })
    }

    @Test("--version maps none of them; trim maps libsndfile alone; voice --list-devices libasound alone")
    func mappedOnUse() throws {
        try withTemporaryFolder { folder in
            #expect(try librariesMapped(["--version"], in: folder).isEmpty)
            let trimmed = try librariesMapped(
                ["trim", TestEnvironment.fixture("speech_en_ljspeech_16k.wav"), "-o", folder + "/out.caf"], in: folder)
            #expect(trimmed == ["libsndfile.so.1"])
            #expect(try librariesMapped(["voice", "--list-devices"], in: folder) == ["libasound.so.2"])
            // alarm: install writes no store and maps nothing; status reads the SQLite store and checks the sounds (a folder each, as
            // the trace files are named after the first argument).
            for sub in ["install", "status"] {
                try FileManager.default.createDirectory(atPath: folder + "/" + sub, withIntermediateDirectories: true)
            }
            #expect(
                try librariesMapped(
                    ["alarm", "install", "--print", "--store", folder + "/store"], in: folder + "/install"
                )
                .isEmpty)
            // status only reads an existing store (it creates none): book one first, in a run of its own.
            let booked = try TestEnvironment.runProofkit(
                [
                    "alarm", "add", "--at", "+1h", "--sound", TestEnvironment.fixture("speech_en_ljspeech_16k.wav"),
                    "--store",
                    folder + "/store",
                ])
            #expect(booked.status == 0, "\(booked.stderr)")
            #expect(
                try librariesMapped(["alarm", "status", "--store", folder + "/store"], in: folder + "/status") == [
                    "libsqlite3.so.0", "libsndfile.so.1",  // the store, and each booked chain's sound checked
                ])
        }
    }
}
