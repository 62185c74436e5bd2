import Foundation
import ProofkitCore
import ProofkitSystem
import TestSupport
import Testing

@testable import Inference

/// The runtime is loaded once per process, so these run in a fresh process of their own (exit
/// tests). Every suite with exit tests is named `...ExitTests`: `.ci/test-loop` runs them in a
/// `swift test` step of their own (see there why).
@Suite("Finding and loading ONNX Runtime, in a fresh process")
struct RuntimeLoadingExitTests {
    @Test("PROOFKIT_ORT_LIBRARY pointing nowhere makes the runtime unavailable, naming the path (in a fresh process)")
    func environmentPointingNowhere() async throws {
        let result = try await #require(processExitsWith: .success, observing: [\.standardOutputContent]) {
            setenv("PROOFKIT_ORT_LIBRARY", "/nonexistent/libonnxruntime.so.1.32.0", 1)
            #expect(!OnnxRuntime.isAvailable)
            do {
                _ = try InferenceSession(contentsOf: "any.onnx")
                exit(2)
            } catch let error as ProofkitError {
                print(error.description)
                exit(error.code == .runtimeUnavailable ? 0 : 3)
            } catch {
                exit(4)
            }
        }
        let output = String(decoding: result.standardOutputContent, as: UTF8.self)
        #expect(output.contains("Tried: /nonexistent/libonnxruntime.so.1.32.0 (from PROOFKIT_ORT_LIBRARY): "))
        #expect(output.contains("No such file"))
        #expect(output.contains("bash .ci/setup"))
    }

    @Test(
        "a library given to load(libraryPath:) is the one used, whatever the environment; another file afterwards is refused (in a fresh process)",
        .enabled(if: InferenceFixtures.runtimeAvailable, "set PROOFKIT_ORT_LIBRARY"))
    func explicitLibrary() async throws {
        let result = try await #require(processExitsWith: .success, observing: [\.standardOutputContent]) {
            // The library this machine has (set-up's copy, or the one the environment names) ...
            let environment = ProcessInfo.processInfo.environment
            let found = OnnxRuntime.libraryCandidates(
                environment: environment, executablePath: POSIX.executablePath()
            ).first { $0.source != .system }
            guard let library = found?.path else { exit(5) }
            // ... given explicitly while the environment points nowhere: only the explicit path is read.
            setenv("PROOFKIT_ORT_LIBRARY", "/nonexistent/libonnxruntime.so.1.32.0", 1)
            do {
                let info = try OnnxRuntime.load(libraryPath: library)
                guard info.libraryPath == library, try OnnxRuntime.load().libraryPath == library else { exit(6) }
                let session = try InferenceSession(contentsOf: InferenceFixtures.model("add_relu"))
                guard !session.inputs.isEmpty else { exit(7) }
                _ = try OnnxRuntime.load(libraryPath: library)  // the same file again: confirmed
            } catch {
                print(error)
                exit(8)
            }
            do {
                _ = try OnnxRuntime.load(libraryPath: "/other/libonnxruntime.so.1")
                exit(9)
            } catch let error as ProofkitError {
                print(error.description)
                exit(error.code == .invalidArgument ? 0 : 10)
            } catch {
                exit(11)
            }
        }
        let output = String(decoding: result.standardOutputContent, as: UTF8.self)
        #expect(output.contains("ONNX Runtime is already loaded from "), "\(output)")
        #expect(output.contains("not /other/libonnxruntime.so.1"), "\(output)")
    }
}
