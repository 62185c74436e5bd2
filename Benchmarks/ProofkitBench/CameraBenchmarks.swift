import Camera
import Foundation
import ImageIO
import Proofkit
import ProofkitCore

/// The two frame paths of a camera at 640x480, side by side on one core:
/// - `camera.yuyv_to_rgb`: YUYV 4:2:2 to RGB in Swift (``YUYV/rgb(_:width:height:bytesPerLine:)``);
/// - `camera.mjpeg_decode`: the peer, the same frame as MJPEG decoded by TurboJPEG (ImageIO), as
///   an MJPEG camera's frames are.
/// The frame is a real 640x480 photo (Tests/TestSupport/Fixtures/images/demo_mat.jpg, or
/// `--camera-frame PATH`), turned into YUYV (limited-range BT.601) before timing.
/// Benchmarks/CAMERA.md has the figures; at 15 fps a frame has 66.7 ms.
func cameraBenchmarks() -> [Benchmark] {
    let arguments = CommandLine.arguments
    var path = "Tests/TestSupport/Fixtures/images/demo_mat.jpg"
    if let index = arguments.firstIndex(of: "--camera-frame"), index + 1 < arguments.count {
        path = arguments[index + 1]
    }
    guard let decoder = try? ImageDecoder(),
        let bytes = FileManager.default.contents(atPath: path).map({ [UInt8]($0) }),
        let decoded = try? decoder.decode(bytes), decoded.image.width % 2 == 0
    else {
        FileHandle.standardError.write(
            Data("proofkit-bench: no camera frame at \(path); camera benchmarks skipped\n".utf8))
        return []
    }
    let image = decoded.image
    let yuyv = makeYUYV(image)
    return [
        Benchmark(name: "camera.yuyv_to_rgb", unit: "frames", iterations: 60) {
            guard let rgb = YUYV.rgb(yuyv, width: image.width, height: image.height) else { return 0 }
            blackHole(rgb.pixels[rgb.pixels.count / 2])
            return 1
        },
        Benchmark(name: "camera.mjpeg_decode", unit: "frames", iterations: 60) {
            guard let rgb = try? decoder.decode(bytes) else { return 0 }
            blackHole(rgb.image.pixels[rgb.image.pixels.count / 2])
            return 1
        },
    ]
}

/// YUYV of an RGB image: limited-range BT.601, each pair's chroma averaged (as the fake camera
/// and webcams make it).
func makeYUYV(_ image: RGBImage) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: image.width * image.height * 2)
    let p = image.pixels
    func clamp(_ v: Int) -> UInt8 { UInt8(max(0, min(255, v))) }
    for pixel in stride(from: 0, to: image.width * image.height, by: 2) {
        let a = pixel * 3
        let b = a + 3
        let (r, g, bl) = (
            (Int(p[a]) + Int(p[b]) + 1) / 2, (Int(p[a + 1]) + Int(p[b + 1]) + 1) / 2,
            (Int(p[a + 2]) + Int(p[b + 2]) + 1) / 2
        )
        out[pixel * 2] = clamp(16 + ((66 * Int(p[a]) + 129 * Int(p[a + 1]) + 25 * Int(p[a + 2]) + 128) >> 8))
        out[pixel * 2 + 1] = clamp(128 + ((-38 * r - 74 * g + 112 * bl + 128) >> 8))
        out[pixel * 2 + 2] = clamp(16 + ((66 * Int(p[b]) + 129 * Int(p[b + 1]) + 25 * Int(p[b + 2]) + 128) >> 8))
        out[pixel * 2 + 3] = clamp(128 + ((112 * r - 94 * g - 18 * bl + 128) >> 8))
    }
    return out
}
