import Foundation
import ProofkitCore
import ProofkitSystem
import TestSupport
import Testing

@testable import Inference

@Suite("Finding and loading ONNX Runtime", .offThePool)
struct RuntimeLoadingTests {
    @Test("PROOFKIT_ORT_LIBRARY, when set, is the only candidate")
    func environmentFirst() {
        let candidates = OnnxRuntime.libraryCandidates(
            environment: ["PROOFKIT_ORT_LIBRARY": "/opt/ort/libonnxruntime.so.1.20.1"],
            executablePath: "/anywhere/bin/proofkit")
        #expect(
            candidates == [RuntimeLibraryCandidate(path: "/opt/ort/libonnxruntime.so.1.20.1", source: .environment)])
    }

    @Test("then set-up's copy above the executable (newest version), the installed copy, the system library")
    func searchOrder() throws {
        try withTemporaryFolder { root in
            let deps = root + "/.deps/onnxruntime"
            let installed = root + "/a/b/lib/proofkit"
            for folder in [deps, installed, root + "/a/b/bin"] {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            }
            for name in [
                "libonnxruntime.so.1.9.1", "libonnxruntime.so.1.32.0", "libonnxruntime.so.1.20.0",
                "libonnxruntime.so.1.x",
                "README",
            ] {
                _ = FileManager.default.createFile(atPath: deps + "/" + name, contents: Data())
            }
            _ = FileManager.default.createFile(atPath: installed + "/libonnxruntime.so.1.16.3", contents: Data())
            let candidates = OnnxRuntime.libraryCandidates(environment: [:], executablePath: root + "/a/b/bin/proofkit")
            #expect(candidates.map(\.source) == [.setUpCopy, .installedCopy, .system])
            #expect(
                candidates.map(\.path) == [
                    deps + "/libonnxruntime.so.1.32.0", installed + "/libonnxruntime.so.1.16.3", "libonnxruntime.so.1",
                ])
            // An empty variable counts as unset.
            #expect(
                OnnxRuntime.libraryCandidates(
                    environment: ["PROOFKIT_ORT_LIBRARY": ""], executablePath: root + "/a/b/bin/proofkit") == candidates
            )
            // Without an executable path only the system library is left.
            #expect(OnnxRuntime.libraryCandidates(environment: [:], executablePath: nil).map(\.source) == [.system])
        }
    }

    @Test(
        "a .deps folder that another user made, or a link, is not searched: it could hold a planted library",
        .enabled(if: POSIX.effectiveUser == 0, "needs root, to make a folder of another user's"))
    func plantedDeps() throws {
        try withTemporaryFolder { root in
            let deps = root + "/.deps/onnxruntime"
            try FileManager.default.createDirectory(atPath: deps, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: root + "/bin", withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: deps + "/libonnxruntime.so.1.32.0", contents: Data())
            func sources() -> [RuntimeLibraryCandidate.Source] {
                OnnxRuntime.libraryCandidates(environment: [:], executablePath: root + "/bin/proofkit").map(\.source)
            }
            #expect(sources() == [.setUpCopy, .system])
            for folder in [root + "/.deps", deps] {
                try FileManager.default.setAttributes([.ownerAccountID: 65534], ofItemAtPath: folder)
                #expect(sources() == [.system], "\(folder) owned by nobody")
                try FileManager.default.setAttributes([.ownerAccountID: 0], ofItemAtPath: folder)
            }
            try FileManager.default.moveItem(atPath: root + "/.deps", toPath: root + "/elsewhere")
            try FileManager.default.createSymbolicLink(
                atPath: root + "/.deps", withDestinationPath: root + "/elsewhere")
            #expect(sources() == [.system])
        }
    }

    @Test("when nothing usable is found, the error lists each path tried with its reason, and the fix")
    func unavailableMessage() throws {
        try withTemporaryFolder { root in
            let notALibrary = root + "/libonnxruntime.so.1.32.0"
            _ = FileManager.default.createFile(atPath: notALibrary, contents: Data("not an ELF file".utf8))
            let candidates = [
                RuntimeLibraryCandidate(path: "/nonexistent/libonnxruntime.so.1.32.0", source: .setUpCopy),
                RuntimeLibraryCandidate(path: notALibrary, source: .installedCopy),
                RuntimeLibraryCandidate(path: "libc.so.6", source: .system),  // loads, but is not ORT
            ]
            let result = OrtRuntime.firstUsableLibrary(in: candidates)
            guard case .failure(let error) = result else {
                Issue.record("loading succeeded from \(candidates)")
                return
            }
            #expect(error.code == .runtimeUnavailable)
            #expect(error.message.contains("/nonexistent/libonnxruntime.so.1.32.0 (set-up's copy): "))
            #expect(error.message.contains("\(notALibrary) (installed copy): "))
            #expect(error.message.contains("libc.so.6 (system library search): not ONNX Runtime"))
            #expect(error.message.contains("bash .ci/setup"))
            #expect(error.message.contains("PROOFKIT_ORT_LIBRARY"))
            #expect(error.message.contains("1.15 or newer"))
            #expect(!error.description.contains("\n"))
        }
    }

    @Test(
        "a too-old ONNX Runtime (a stand-in library that offers C API 14 only) is refused with its version",
        .enabled(if: TestEnvironment.hasTool("clang")))
    func tooOld() throws {
        try withTemporaryFolder { root in
            // The two-slot entry structure of a 1.14 runtime: GetApi(n) is NULL above 14.
            let source = """
                #include <stddef.h>
                #include <stdint.h>
                static const char *version(void) { return "1.14.1"; }
                static int table[1];
                static const void *get_api(uint32_t v) { return v <= 14 ? (const void *)table : NULL; }
                struct base { const void *(*get_api)(uint32_t); const char *(*version)(void); };
                static const struct base the_base = { get_api, version };
                const struct base *OrtGetApiBase(void) { return &the_base; }
                """
            try source.write(toFile: root + "/old.c", atomically: true, encoding: .utf8)
            let library = root + "/libonnxruntime.so.1.14.1"
            let compile = try runProcess("/usr/bin/env", ["clang", "-shared", "-fPIC", "-o", library, root + "/old.c"])
            try #require(compile.status == 0, "\(compile.stderr)")
            guard
                case .failure(let error) = OrtRuntime.firstUsableLibrary(
                    in: [RuntimeLibraryCandidate(path: library, source: .environment)])
            else {
                Issue.record("a 1.14 runtime was accepted")
                return
            }
            #expect(error.code == .runtimeUnavailable)
            #expect(error.message.contains("\(library) (from PROOFKIT_ORT_LIBRARY): ONNX Runtime 1.14.1 is too old"))
            #expect(error.message.contains("ONNX Runtime 1.15 or newer (C API 15) was not found"))
        }
    }

    @Test(
        "a failed candidate falls through to the next usable one",
        .enabled(if: InferenceFixtures.runtimeAvailable, "set PROOFKIT_ORT_LIBRARY"))
    func fallsThrough() throws {
        let real = try OnnxRuntime.load()
        let result = OrtRuntime.firstUsableLibrary(in: [
            RuntimeLibraryCandidate(path: "/nonexistent/libonnxruntime.so", source: .setUpCopy),
            RuntimeLibraryCandidate(path: real.libraryPath, source: .system),
        ])
        let library = try result.get()
        #expect(library.version == real.version)
        #expect(library.candidate.path == real.libraryPath)
    }

    @Test(
        "the loaded runtime reports its version and C API version",
        .enabled(if: InferenceFixtures.runtimeAvailable, "set PROOFKIT_ORT_LIBRARY"))
    func info() throws {
        let info = try OnnxRuntime.load()
        #expect(info.apiVersion == 15)
        #expect(OnnxRuntime.pinnedAPIVersion == 15)
        let parts = info.version.split(separator: ".").compactMap { Int($0) }
        #expect(parts.count == 3 && parts[0] == 1 && parts[1] >= 15)
        // The set-up copy is named after its version.
        if info.libraryPath.contains(".deps/onnxruntime/") {
            #expect(info.libraryPath.hasSuffix("libonnxruntime.so.\(info.version)"))
        }
    }
}
