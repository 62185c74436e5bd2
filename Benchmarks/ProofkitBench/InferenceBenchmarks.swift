import Foundation
import Inference
import Proofkit

/// Holds a session (`~Copyable`) for the benchmark bodies, which are closures. The session is
/// made on the first call (a warm-up run), so a `--filter`ed run loads only its own model.
private final class SessionBox {
    let path: String
    let threads: Int
    var session: InferenceSession?
    init(path: String, threads: Int) {
        self.path = path
        self.threads = threads
    }

    func run(_ feeds: [String: any TensorInput]) throws -> InferenceOutputs {
        if session == nil {
            session = try InferenceSession(contentsOf: path, options: InferenceSession.Options(intraOpThreads: threads))
        }
        return try session!.run(feeds, outputs: ["logits"])
    }
}

/// EfficientNet-Lite0 (int8 and fp32) through proofkit's ONNX Runtime wrapper, at 1 and 2
/// intra-op threads (spinning off), one 224x224 image per run, fetching `logits` as the Python
/// peer does. These are the suite's own inference figures: `Benchmarks/run_all.py` sets them
/// beside `proofkit bench`'s (which must agree within noise) and Python onnxruntime's.
///
/// The input is a fixed smooth pattern in -1...1 (speed does not depend on the values).
/// Threads come from `--threads 1,2` (default 1,2). Skipped with a note when ONNX Runtime or the
/// models are missing.
func inferenceBenchmarks() -> [Benchmark] {
    let arguments = CommandLine.arguments
    var threads = [1, 2]
    if let index = arguments.firstIndex(of: "--threads"), index + 1 < arguments.count {
        threads = arguments[index + 1].split(separator: ",").compactMap { Int($0) }.filter { $0 >= 1 }
    }
    let folder =
        ModelStore(environment: ProcessInfo.processInfo.environment).folders.first
        ?? ModelStore.relativeFolder
    var input = [Float](repeating: 0, count: 3 * 224 * 224)
    for index in input.indices {
        input[index] = Float(sin(Double(index % 997) * 0.013) * cos(Double(index / 224) * 0.05))
    }
    guard let tensor = try? Tensor(shape: [1, 3, 224, 224], scalars: input) else { return [] }
    var benchmarks: [Benchmark] = []
    guard OnnxRuntime.isAvailable else {
        skipNote("inference benchmarks skipped: ONNX Runtime is not available")
        return []
    }
    let feeds: [String: any TensorInput] = ["input": tensor.erased]
    for (name, file) in [("int8", "efficientnet_lite0_int8.onnx"), ("fp32", "efficientnet_lite0_fp32.onnx")] {
        let path = folder + "/" + file
        guard FileManager.default.fileExists(atPath: path) else {
            skipNote("inference.lite0.\(name) skipped: no \(path)")
            continue
        }
        for count in threads {
            let box = SessionBox(path: path, threads: count)
            benchmarks.append(
                Benchmark(name: "inference.lite0.\(name).t\(count)", unit: "images", warmup: 10, iterations: 100) {
                    blackHole(try! box.run(feeds))
                    return 1
                })
        }
    }
    return benchmarks
}

/// One line on stderr.
private func skipNote(_ text: String) {
    FileHandle.standardError.write(Data("proofkit-bench: \(text)\n".utf8))
}
