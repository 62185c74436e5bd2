import COnnxRuntime
import Foundation
import ProofkitCore
import Synchronization
import TestSupport
import Testing

@testable import Inference

/// Every function the C module declares must be called somewhere. The loader function
/// (`proofkit_ort_load`) runs whenever the runtime loads; the `PKOrtApi` slots are listed by
/// reflecting over the C struct (every field not named `reserved_*`), so a slot added to the
/// header without a caller makes this test fail. The slots called are logged (`OrtSlotLog`) in a
/// child process of its own, with the log on from its start, so the runtime's one-time set-up is
/// seen even when another test loaded the runtime first.
@Suite("Declared C functions", .enabled(if: InferenceFixtures.runtimeAvailable, "set PROOFKIT_ORT_LIBRARY"))
struct DeclaredSlotExitTests {
    static let declaredSlots: [String] = Mirror(reflecting: PKOrtApi()).children.compactMap(\.label)
        .filter { !$0.hasPrefix("reserved") }

    @Test("the table declares 39 typed slots, each at a distinct pointer-aligned offset, ending at slot 130")
    func layout() {
        #expect(Self.declaredSlots.count == 39)
        #expect(
            MemoryLayout<PKOrtApi>.offset(of: \.disable_mem_pattern) == 17 * MemoryLayout<UnsafeRawPointer>.size)
        #expect(
            MemoryLayout<PKOrtApi>.offset(of: \.disable_cpu_mem_arena) == 19 * MemoryLayout<UnsafeRawPointer>.size)
        #expect(MemoryLayout<PKOrtApi>.size == 131 * MemoryLayout<UnsafeRawPointer>.size)
        #expect(MemoryLayout<PKOrtApi>.offset(of: \.run) == 9 * MemoryLayout<UnsafeRawPointer>.size)
        #expect(
            MemoryLayout<PKOrtApi>.offset(of: \.set_optimized_model_path) == 11
                * MemoryLayout<UnsafeRawPointer>.size)
        #expect(MemoryLayout<PKOrtApi>.offset(of: \.release_status) == 93 * MemoryLayout<UnsafeRawPointer>.size)
        #expect(
            MemoryLayout<PKOrtApi>.offset(of: \.add_session_config_entry) == 130
                * MemoryLayout<UnsafeRawPointer>.size)
    }

    @Test("a full session life (load from file and bytes, describe, run, fail, close) calls every declared slot")
    func everySlotCalled() async throws {
        let result = try await #require(processExitsWith: .success, observing: [\.standardOutputContent]) {
            OrtSlotLog.isRecording.store(true, ordering: .relaxed)
            try Self.fullSessionLife()
            let called = OrtSlotLog.called.withLock { $0 }
            print("called=" + called.sorted().joined(separator: ","))
        }
        let line = try #require(
            String(decoding: result.standardOutputContent, as: UTF8.self).split(separator: "\n")
                .last { $0.hasPrefix("called=") })
        let called = Set(line.dropFirst("called=".count).split(separator: ",").map(String.init))
        let neverCalled = Set(Self.declaredSlots).subtracting(called)
        #expect(neverCalled.isEmpty, "declared but never called: \(neverCalled.sorted())")
        // The log only names real slots (a misspelt name in the Swift wrapper shows up here).
        #expect(called.isSubset(of: Set(Self.declaredSlots)), "unknown: \(called.subtracting(Self.declaredSlots))")
    }

    /// Why the session life in the child failed (a thrown error ends the child with a failure).
    struct LifeFailure: Error, CustomStringConvertible { let description: String }

    /// Loads from a file and from bytes, describes, runs, fails, saves in ORT format and closes.
    static func fullSessionLife() throws {
        var fromFile = try InferenceSession(contentsOf: InferenceFixtures.model("add_relu"))
        let a = try Tensor<Float>(shape: [1, 3], scalars: [1, 2, 3])
        _ = try fromFile.run(["a": a, "b": a])
        fromFile.close()
        // Without memory patterns and without the CPU arena (what the Whisper encoder uses).
        var lean = InferenceSession.Options()
        lean.memoryPattern = false
        lean.cpuMemoryArena = false
        var leanSession = try InferenceSession(contentsOf: InferenceFixtures.model("add_relu"), options: lean)
        let sum = try leanSession.run(["a": a, "b": a]).tensor("sum", as: Float.self).scalars
        guard sum == [2, 4, 6] else { throw LifeFailure(description: "the lean session's sum is \(sum)") }
        leanSession.close()
        var fromBytes = try InferenceSession(bytes: try InferenceFixtures.bytes("int64_affine"))
        _ = try fromBytes.run(["ids": Tensor<Int64>(shape: [1], scalars: [1])])
        do {
            _ = try InferenceSession(bytes: [0, 1, 2])
            throw LifeFailure(description: "three bytes loaded as a model")
        } catch is ProofkitError {}
        fromBytes.close()
        // Saving the optimised model in ORT format: the file it writes loads as one, and
        // gives the same outputs as the .onnx.
        try withTemporaryFolder { folder in
            var optimizing = try InferenceSession(
                contentsOf: InferenceFixtures.model("add_relu"),
                options: InferenceSession.Options(optimizedModelPath: folder + "/add_relu.ort"))
            let direct = try optimizing.run(["a": a, "b": a])
            optimizing.close()
            let saved = folder + "/add_relu.ort"
            var reloaded = try InferenceSession(
                ortFormatContentsOf: saved, expectedSHA256: try ModelFile.sha256(ofFileAt: saved),
                options: InferenceSession.Options(graphOptimization: .disabled))
            let again = try reloaded.run(["a": a, "b": a])
            reloaded.close()
            guard try direct.tensor("relu", as: Float.self).scalars == again.tensor("relu", as: Float.self).scalars
            else {
                throw LifeFailure(description: "the ORT-format model gives other outputs than the .onnx")
            }
        }
    }
}
