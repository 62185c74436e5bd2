import Testing
@testable import Inference
import ProofkitCore

@Test func smoke() throws {
    let info = try OnnxRuntime.load()
    print(info)
    var session = try InferenceSession(contentsOf: InferenceFixtures.model("dense_relu"))
    print(session.inputs, session.outputs)
    let out = try session.run(["x": try Tensor<Float>(shape: [1, 4], scalars: [1, 2, 3, 4])])
    print(out)
    do { _ = try session.run(["x": try Tensor<Float>(shape: [1, 5], scalars: [1, 2, 3, 4, 5])]) } catch { print("ERR", error, error.code, error.underlying as Any, error.operation as Any) }
    do { _ = try InferenceSession(bytes: [1, 2, 3, 4]) } catch { print("ERR", error, error.code, error.underlying as Any) }
    do { _ = try InferenceSession(contentsOf: "/nonexistent.onnx") } catch { print("ERR", error, error.code, error.underlying as Any) }
    var s2 = try InferenceSession(contentsOf: InferenceFixtures.model("add_relu"))
    do { _ = try s2.run(["a": try Tensor<Float>(shape: [1, 3], scalars: [1, 2, 3]), "b": try Tensor<Float>(shape: [2, 3], repeating: 1)]) } catch { print("ERR", error, error.code, error.underlying as Any) }
}
