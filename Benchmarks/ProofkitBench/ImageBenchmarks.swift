import Foundation
import ImageIO
import ImageProof
import Proofkit
import ProofkitCore

/// Photo decode + preprocess benchmarks, on the JPEG given by `--image PATH` (or
/// `$PROOFKIT_BENCH_IMAGE`); skipped with a note on stderr when there is none.
/// `Benchmarks/image_preprocess_bench.py` makes a 2 MP phone-like JPEG, runs these and Pillow's
/// pipeline side by side, and reports the ratios.
///
/// - `image.decode_preprocess.fast`: DCT-scaled decode (shorter side >= 256), bicubic resize to
///   256, brightness, centre crop 224, `(x - 127) / 128` NCHW: what `proofkit mat` does.
/// - `image.decode_preprocess.full`: the same from a full-size decode (the reference pipeline).
/// - `image.decode.fast` / `image.decode.full`: decoding alone.
/// - `image.preprocess`: resize + brightness + tensor from an already decoded full-size image.
func imageBenchmarks() -> [Benchmark] {
    let arguments = CommandLine.arguments
    var path = ProcessInfo.processInfo.environment["PROOFKIT_BENCH_IMAGE"]
    if let index = arguments.firstIndex(of: "--image"), index + 1 < arguments.count { path = arguments[index + 1] }
    guard let path, let fast = try? ImageDecoder(configuration: .init(minimumShorterSide: 256)),
        let full = try? ImageDecoder(), let decoded = try? full.decode(contentsOf: path),
        let bytes = FileManager.default.contents(atPath: path).map({ [UInt8]($0) }),
        let small = try? fast.decode(contentsOf: path)
    else {
        FileHandle.standardError.write(Data("proofkit-bench: no --image JPEG given; image benchmarks skipped\n".utf8))
        return []
    }
    func preprocess(_ image: RGBImage) -> Double {
        let photo = PreparedPhoto(image)
        let tensor = photo.tensor()
        blackHole(tensor.values[tensor.values.count / 2])
        return photo.brightness
    }
    return [
        Benchmark(name: "image.decode_preprocess.fast", unit: "images", iterations: 30) {
            guard let image = try? fast.decode(contentsOf: path) else { return 0 }
            blackHole(preprocess(image.image))
            return 1
        },
        Benchmark(name: "image.decode_preprocess.full", unit: "images", iterations: 30) {
            guard let image = try? full.decode(contentsOf: path) else { return 0 }
            blackHole(preprocess(image.image))
            return 1
        },
        Benchmark(name: "image.decode.fast", unit: "images", iterations: 30) {
            guard let image = try? fast.decode(contentsOf: path) else { return 0 }
            blackHole(image.image.pixels.count)
            return 1
        },
        Benchmark(name: "image.decode.fast.memory", unit: "images", iterations: 30) {
            guard let image = try? fast.decode(bytes) else { return 0 }
            blackHole(image.image.pixels.count)
            return 1
        },
        Benchmark(name: "image.decode.full", unit: "images", iterations: 30) {
            guard let image = try? full.decode(contentsOf: path) else { return 0 }
            blackHole(image.image.pixels.count)
            return 1
        },
        Benchmark(name: "image.preprocess.fast", unit: "images", iterations: 30) {
            blackHole(preprocess(small.image))
            return 1
        },
        Benchmark(name: "image.preprocess", unit: "images", iterations: 30) {
            blackHole(preprocess(decoded.image))
            return 1
        },
    ]
}
