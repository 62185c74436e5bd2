#if DEBUG  // the slot log exists in debug builds only
    import COnnxRuntime
    import Testing
    @testable import Inference
    import ProofkitCore
    import Synchronization
    import Foundation
    import TestSupport

    /// Every function the C module declares must be called somewhere. The loader function
    /// (`proofkit_ort_load`) runs whenever the runtime loads; the `PKOrtApi` slots are listed by
    /// reflecting over the C struct (every field not named `reserved_*`), so a slot added to the
    /// header without a caller makes this test fail.
    @Suite("Declared C functions", .enabled(if: InferenceFixtures.runtimeAvailable, "set PROOFKIT_ORT_LIBRARY"))
    struct DeclaredSlotTests {
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
        func everySlotCalled() throws {
            var fromFile = try InferenceSession(contentsOf: InferenceFixtures.model("add_relu"))
            let a = try Tensor<Float>(shape: [1, 3], scalars: [1, 2, 3])
            _ = try fromFile.run(["a": a, "b": a])
            fromFile.close()
            // Without memory patterns and without the CPU arena (what the Whisper encoder uses).
            var lean = InferenceSession.Options()
            lean.memoryPattern = false
            lean.cpuMemoryArena = false
            var leanSession = try InferenceSession(contentsOf: InferenceFixtures.model("add_relu"), options: lean)
            #expect(try leanSession.run(["a": a, "b": a]).tensor("sum", as: Float.self).scalars == [2, 4, 6])
            leanSession.close()
            var fromBytes = try InferenceSession(bytes: try InferenceFixtures.bytes("int64_affine"))
            _ = try fromBytes.run(["ids": Tensor<Int64>(shape: [1], scalars: [1])])
            #expect(throws: ProofkitError.self) { _ = try InferenceSession(bytes: [0, 1, 2]) }
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
                #expect(
                    try direct.tensor("relu", as: Float.self).scalars == again.tensor("relu", as: Float.self).scalars)

                let called = OrtSlotLog.called.withLock { $0 }
                let neverCalled = Set(Self.declaredSlots).subtracting(called)
                #expect(neverCalled.isEmpty, "declared but never called: \(neverCalled.sorted())")
                // The log only names real slots (a misspelt name in the Swift wrapper shows up here).
                #expect(
                    called.isSubset(of: Set(Self.declaredSlots)), "unknown: \(called.subtracting(Self.declaredSlots))")
            }
        }
    }
#endif
