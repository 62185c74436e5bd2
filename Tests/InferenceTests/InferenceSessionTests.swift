import ProofkitCore
import Testing

@testable import Inference

/// Runs the tiny fixture models and checks the numbers against arithmetic done here in Swift.
@Suite("InferenceSession on tiny models", .enabled(if: InferenceFixtures.runtimeAvailable, "set PROOFKIT_ORT_LIBRARY"))
struct InferenceSessionTests {
    @Test("reads input and output names, element types and shapes, with symbolic dimensions")
    func metadata() throws {
        let session = try InferenceSession(contentsOf: InferenceFixtures.model("add_relu"))
        #expect(session.inputs.map(\.name) == ["a", "b"])
        #expect(session.outputs.map(\.name) == ["sum", "relu"])
        #expect(session.inputs[0].elementType == .float32)
        #expect(session.inputs[0].shape == [.dynamic("batch"), .fixed(3)])
        #expect(session.inputs[0].description == "a: float32[batch, 3]")
        #expect(session.inputs[0].accepts(shape: [7, 3]))
        #expect(!session.inputs[0].accepts(shape: [7, 4]))
        #expect(!session.inputs[0].accepts(shape: [3]))

        let types = try InferenceSession(contentsOf: InferenceFixtures.model("small_types"))
        #expect(types.inputs.map(\.elementType) == [.uint8, .int8, .int32, .float64, .bool])
        #expect(types.outputs.map(\.elementType) == [.uint8, .int8, .int32, .float64, .bool, .float32])
        #expect(types.outputs.map(\.name) == ["u8_out", "i8_neg", "i32_double", "f64_square", "flags_not", "mixed"])
    }

    @Test("a two-output model gives a + b and relu(a + b) for several batch sizes")
    func twoOutputs() throws {
        var session = try InferenceSession(contentsOf: InferenceFixtures.model("add_relu"))
        for batch in [1, 2, 5] {
            let a = (0..<(batch * 3)).map { Float($0) * 0.75 - 4 }
            let b = (0..<(batch * 3)).map { Float($0 % 4) - 1.5 }
            let outputs = try session.run([
                "a": try Tensor(shape: [batch, 3], scalars: a),
                "b": try Tensor(shape: [batch, 3], scalars: b),
            ])
            #expect(outputs.names == ["sum", "relu"])
            let sum = try outputs.tensor("sum", as: Float.self)
            let relu = try outputs.tensor("relu", as: Float.self)
            #expect(sum.shape == [batch, 3])
            #expect(sum.scalars == zip(a, b).map { $0 + $1 })
            #expect(relu.scalars == zip(a, b).map { max($0 + $1, 0) })
        }
    }

    @Test("a dense layer with fixed weights matches x * W + bias, then relu")
    func denseLayer() throws {
        // The weights written by make_models.py (row-major [4, 2]) and the bias.
        let weights: [Float] = [0.5, -1.0, 1.5, 2.0, -2.0, 0.25, 1.0, -0.5]
        let bias: [Float] = [0.1, -0.2]
        let x: [Float] = [1, 2, 3, 4, -1, 0.5, 0, 2, 0, 0, 0, 0]
        var session = try InferenceSession(
            contentsOf: InferenceFixtures.model("dense_relu"),
            options: .init(intraOpThreads: 2, graphOptimization: .disabled))
        let y = try session.run(["x": try Tensor(shape: [3, 4], scalars: x)]).tensor("y", as: Float.self)
        #expect(y.shape == [3, 2])
        for row in 0..<3 {
            for column in 0..<2 {
                var value = bias[column]
                for k in 0..<4 { value += x[row * 4 + k] * weights[k * 2 + column] }
                #expect(isClose(y[row, column], max(value, 0)))
            }
        }
    }

    @Test("int64 in, int64 and float32 out")
    func int64Model() throws {
        var session = try InferenceSession(contentsOf: InferenceFixtures.model("int64_affine"))
        let ids: [Int64] = [0, 1, -7, 1 << 40, 123_456_789]
        let outputs = try session.run(["ids": try Tensor(shape: [ids.count], scalars: ids)])
        #expect(try outputs.tensor("scaled", as: Int64.self).scalars == ids.map { $0 * 3 + 1 })
        #expect(try outputs.tensor("half", as: Float.self).scalars == ids.map { Float($0) / 2 })
    }

    @Test("uint8, int8, int32, float64 and bool tensors go in and come out")
    func smallTypes() throws {
        var session = try InferenceSession(contentsOf: InferenceFixtures.model("small_types"))
        let u8: [UInt8] = [0, 200, 255, 7]
        let i8: [Int8] = [-128, 5, 127, -1]
        let i32: [Int32] = [1, -2, 3, 1 << 29]
        let f64: [Double] = [1.5, 2, -3, 0.1]
        let flags = [true, false, true, false]
        var feeds: [String: any TensorInput] = [:]
        feeds["u8"] = try Tensor(shape: [4], scalars: u8)
        feeds["i8"] = try Tensor(shape: [4], scalars: i8)
        feeds["i32"] = try Tensor(shape: [4], scalars: i32)
        feeds["f64"] = try Tensor(shape: [4], scalars: f64)
        feeds["flags"] = try Tensor(shape: [4], scalars: flags)
        let outputs = try session.run(feeds)
        #expect(try outputs.tensor("u8_out", as: UInt8.self).scalars == u8)
        #expect(try outputs.tensor("i8_neg", as: Int8.self).scalars == i8.map { 0 &- $0 })
        #expect(try outputs.tensor("i32_double", as: Int32.self).scalars == i32.map { $0 * 2 })
        #expect(try outputs.tensor("f64_square", as: Double.self).scalars == f64.map { $0 * $0 })
        #expect(try outputs.tensor("flags_not", as: Bool.self).scalars == flags.map { !$0 })
        #expect(try outputs.tensor("mixed", as: Float.self).scalars == zip(u8, i8).map { Float($0) + Float($1) })
    }

    @Test("a model loads from memory as from its file, and outputs can be chosen")
    func fromBytesAndOutputSubset() throws {
        var fromBytes = try InferenceSession(bytes: try InferenceFixtures.bytes("add_relu"))
        #expect(fromBytes.path == nil)
        let a = try Tensor<Float>(shape: [1, 3], scalars: [-1, 0, 2])
        let b = try Tensor<Float>(shape: [1, 3], scalars: [-1, 0.5, 2])
        let only = try fromBytes.run(["a": a, "b": b], outputs: ["relu"])
        #expect(only.names == ["relu"])
        #expect(only["sum"] == nil)
        #expect(try only.tensor("relu", as: Float.self).scalars == [0, 0.5, 4])
        // An AnyTensor input works as well as a typed one; an empty batch gives empty outputs.
        let empty = try fromBytes.run([
            "a": try Tensor<Float>(shape: [0, 3], scalars: []).erased,
            "b": try Tensor<Float>(shape: [0, 3], scalars: []),
        ])
        #expect(empty["sum"]?.shape == [0, 3])
        #expect(empty["sum"]?.count == 0)
        fromBytes.close()
    }

    @Test("sessions made in concurrent tasks run side by side")
    func concurrentSessions() async throws {
        let results = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for start in Int64(0)..<4 {
                group.addTask {
                    var session = try InferenceSession(contentsOf: InferenceFixtures.model("int64_affine"))
                    var last: [Int64] = []
                    for step in Int64(0)..<25 {
                        last = try session.run(["ids": Tensor<Int64>(shape: [2], scalars: [start, step])])
                            .tensor("scaled", as: Int64.self).scalars
                    }
                    return last
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let expected: Set<[Int64]> = [[1, 73], [4, 73], [7, 73], [10, 73]]  // [start * 3 + 1, 24 * 3 + 1]
        #expect(Set(results) == expected)
    }

    private func isClose(_ a: Float, _ b: Float) -> Bool { abs(a - b) <= 1e-5 * max(1, abs(b)) }
}

/// Every kind of failure becomes a `ProofkitError` with the right code, and ORT's code and message.
@Suite("InferenceSession errors", .enabled(if: InferenceFixtures.runtimeAvailable, "set PROOFKIT_ORT_LIBRARY"))
struct InferenceSessionErrorTests {
    @Test("corrupt model bytes are modelInvalid with ORT's message and code")
    func corruptBytes() throws {
        var bytes = try InferenceFixtures.bytes("dense_relu")
        bytes.removeLast(bytes.count / 2)  // a truncated protobuf
        let error = try #require(throws: ProofkitError.self) { _ = try InferenceSession(bytes: bytes) }
        #expect(error.code == .modelInvalid)
        #expect(error.underlying == 7)  // ORT_INVALID_PROTOBUF
        #expect(error.operation == "CreateSessionFromArray")
        #expect(error.message.contains("protobuf parsing failed"))
        #expect(error.message.contains("ORT_INVALID_PROTOBUF"))

        let random = try #require(throws: ProofkitError.self) {
            _ = try InferenceSession(bytes: Array(repeating: 0xA5, count: 300))
        }
        #expect(random.code == .modelInvalid)
        let empty = try #require(throws: ProofkitError.self) { _ = try InferenceSession(bytes: []) }
        #expect(empty.code == .modelInvalid)
    }

    @Test("a missing model file is notFound, naming the file")
    func missingFile() throws {
        let error = try #require(throws: ProofkitError.self) {
            _ = try InferenceSession(contentsOf: "/nonexistent/model.onnx")
        }
        #expect(error.code == .notFound)
        #expect(error.underlying == 3)  // ORT_NO_SUCHFILE
        #expect(error.path == "/nonexistent/model.onnx")
        #expect(error.description.hasPrefix("/nonexistent/model.onnx: "))
    }

    @Test("a wrong input shape is invalidArgument with ORT's explanation")
    func wrongShape() throws {
        var session = try InferenceSession(contentsOf: InferenceFixtures.model("dense_relu"))
        let error = try #require(throws: ProofkitError.self) {
            try session.run(["x": try Tensor<Float>(shape: [1, 5], repeating: 1)])
        }
        #expect(error.code == .invalidArgument)
        #expect(error.underlying == 2)  // ORT_INVALID_ARGUMENT
        #expect(error.operation == "Run")
        #expect(error.message.contains("invalid dimensions for input: x"))
        let rank = try #require(throws: ProofkitError.self) {
            try session.run(["x": try Tensor<Float>(shape: [4], repeating: 1)])
        }
        #expect(rank.code == .invalidArgument)
        // The session still works after a failed run.
        let ok = try session.run(["x": try Tensor<Float>(shape: [1, 4], repeating: 0)])
        #expect(try ok.tensor("y", as: Float.self).scalars == [0.1, 0])
    }

    @Test("mismatched batch sizes fail inside ORT and the error carries its code")
    func incompatibleBroadcast() throws {
        var session = try InferenceSession(contentsOf: InferenceFixtures.model("add_relu"))
        let error = try #require(throws: ProofkitError.self) {
            try session.run([
                "a": try Tensor<Float>(shape: [2, 3], repeating: 1),
                "b": try Tensor<Float>(shape: [3, 3], repeating: 1),
            ])
        }
        #expect(error.underlying != nil)
        #expect(error.operation == "Run")
        #expect(!error.message.isEmpty)
    }

    @Test("missing, unknown and wrongly typed inputs, and unknown outputs, are refused before ORT runs")
    func checkedInputs() throws {
        var session = try InferenceSession(contentsOf: InferenceFixtures.model("add_relu"))
        let a = try Tensor<Float>(shape: [1, 3], repeating: 0)
        let missing = try #require(throws: ProofkitError.self) { try session.run(["a": a]) }
        #expect(missing.code == .invalidArgument)
        #expect(missing.message.contains("b: float32[batch, 3]"))
        let unknown = try #require(throws: ProofkitError.self) { try session.run(["a": a, "b": a, "c": a]) }
        #expect(unknown.message.contains("no input named c"))
        let typed = try #require(throws: ProofkitError.self) {
            try session.run(["a": a, "b": try Tensor<Int64>(shape: [1, 3], repeating: 0)])
        }
        #expect(typed.message.contains("must hold float32 elements, not int64"))
        let output = try #require(throws: ProofkitError.self) { try session.run(["a": a, "b": a], outputs: ["nope"]) }
        #expect(output.message.contains("no output named nope"))
        let outputs = try session.run(["a": a, "b": a])
        let wrongType = try #require(throws: ProofkitError.self) { try outputs.tensor("sum", as: Int64.self) }
        #expect(wrongType.code == .invalidArgument)
    }
}

@Suite("Tensor values")
struct TensorTests {
    @Test("the shape is checked against the number of scalars")
    func shapeChecked() throws {
        #expect(throws: ProofkitError.self) { try Tensor<Float>(shape: [2, 3], scalars: [1, 2, 3]) }
        #expect(throws: ProofkitError.self) { try Tensor<Float>(shape: [-1, 3], scalars: []) }
        #expect(throws: ProofkitError.self) { try Tensor<Int8>(shape: [Int.max, 2], repeating: 0) }
        let t = try Tensor<Int64>(shape: [2, 3], scalars: [0, 1, 2, 3, 4, 5])
        #expect(t[1, 2] == 5)
        #expect(t[0, 1] == 1)
        #expect(t.rank == 2)
        #expect(Tensor<Int64>(scalar: 16_000).shape == [])
        #expect(try Tensor<Float>(shape: [0, 4], scalars: []).scalars.isEmpty)
    }

    @Test("type erasure round-trips and refuses the wrong element type")
    func erasure() throws {
        let t = try Tensor<UInt8>(shape: [3], scalars: [1, 2, 3])
        let any = AnyTensor(t)
        #expect(any.elementType == .uint8)
        #expect(any.description == "uint8[3]")
        #expect(try any.typed(as: UInt8.self) == t)
        #expect(throws: ProofkitError.self) { try any.typed(as: Int8.self) }
        #expect(any == t.erased)
        #expect(any != AnyTensor(try Tensor<Int8>(shape: [3], scalars: [1, 2, 3])))
    }
}
