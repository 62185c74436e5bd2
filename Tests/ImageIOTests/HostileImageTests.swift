import Foundation
import ProofkitCore
import TestSupport
import Testing

@testable import ImageIO

#if canImport(Glibc)
    import Glibc
#endif

// Issue 34: sizes and shapes nothing can judge are refused from the header, before anything is
// decoded; what is decoded stays within the decoded pixel limit; only regular files are read.

@Suite("ImageDecoder: hostile sizes, shapes and files")
struct HostileImageTests {
    @Test(
        "a JPEG header claiming 1x60000 or 60000x1, and a real 4x50000 or 50000x4 PNG, are refused before decoding",
        arguments: [(1, 60_000), (60_000, 1)])
    func thinStripsRefused(width: Int, height: Int) throws {
        let jpeg = HostileImages.jpeg(try ImageFixtures.bytes("orientation_1.jpg"), claiming: width, height: height)
        #expect(jpeg.count < 1000)
        let jpegError = proofkitError { _ = try ImageDecoder().decode(jpeg) }
        #expect(jpegError?.code == .unsupportedFormat)
        #expect(jpegError?.message.contains("\(width)x\(height)") == true, "\(String(describing: jpegError))")
        let png = HostileImages.png(width: width == 1 ? 4 : 50_000, height: width == 1 ? 50_000 : 4) { x, y, _ in
            UInt8((x + y) & 0xFF)
        }
        let pngError = proofkitError { _ = try ImageDecoder().decode(png) }
        #expect(pngError?.code == .unsupportedFormat)
        #expect(pngError?.message.contains("nothing to judge") == true, "\(String(describing: pngError))")
    }

    @Test("an aspect ratio over 16 is refused and one of 16 is decoded; a side under 16 pixels is refused")
    func aspectAndSide() throws {
        let strip = HostileImages.png(width: 17 * 20, height: 20) { _, _, _ in 90 }
        let error = proofkitError { _ = try ImageDecoder().decode(strip) }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains("more than 16 times longer") == true, "\(String(describing: error))")
        let panorama = try ImageDecoder().decode(HostileImages.png(width: 16 * 20, height: 20) { _, _, _ in 90 })
        #expect(panorama.image.width == 320 && panorama.image.height == 20)
        let tiny = proofkitError {
            _ = try ImageDecoder().decode(HostileImages.png(width: 15, height: 40) { _, _, _ in 9 })
        }
        #expect(tiny?.code == .unsupportedFormat)
    }

    @Test("a PNG over the decoded pixel limit is shrunk row by row: each pixel is its block's rounded mean")
    func shrunkPNG() throws {
        // 601 x 401 RGB, limit 40 000 pixels: factor 2 gives 301 x 201 = 60 501 (over), factor 3
        // gives 201 x 134 = 26 934: the smallest factor that fits, with partial blocks at the edges.
        let width = 601
        let height = 401
        func value(_ x: Int, _ y: Int, _ c: Int) -> UInt8 { UInt8((x * 7 + y * 13 + c * 50) % 251) }
        let png = HostileImages.png(width: width, height: height, sample: value)
        let decoder = try ImageDecoder(configuration: .init(maximumDecodedPixelCount: 40_000))
        let decoded = try decoder.decode(png)
        let factor = 3
        #expect(decoded.scaleNumerator == 1 && decoded.scaleDenominator == factor)
        #expect(decoded.storedWidth == width && decoded.storedHeight == height)
        let outWidth = (width + factor - 1) / factor
        let outHeight = (height + factor - 1) / factor
        #expect(decoded.image.width == outWidth && decoded.image.height == outHeight)
        var worst = 0
        for oy in 0..<outHeight {
            for ox in 0..<outWidth {
                for c in 0..<3 {
                    var sum = 0
                    var count = 0
                    for y in (oy * factor)..<min(height, oy * factor + factor) {
                        for x in (ox * factor)..<min(width, ox * factor + factor) {
                            sum += Int(value(x, y, c))
                            count += 1
                        }
                    }
                    let expected = (sum + count / 2) / count
                    let got = Int(decoded.image.pixels[(oy * outWidth + ox) * 3 + c])
                    worst = max(worst, abs(expected - got))
                }
            }
        }
        #expect(worst == 0)
        #expect(decoded.colorModel == "rgb")
    }

    @Test("a gray PNG over the limit is shrunk to gray RGB; a truncated one is refused, not half-decoded")
    func shrunkGrayAndTruncated() throws {
        let png = HostileImages.png(width: 400, height: 300, channels: 1) { x, _, _ in UInt8(x % 256) }
        let decoder = try ImageDecoder(configuration: .init(maximumDecodedPixelCount: 40_000))
        let decoded = try decoder.decode(png)
        #expect(decoded.image.width == 200 && decoded.image.height == 150)
        #expect(decoded.colorModel == "gray")
        // Blocks 0,1,0,1 (mean 0.5, rounds to 1) and 2,3,2,3 (2.5, rounds to 3).
        #expect(Array(decoded.image.pixels.prefix(6)) == [1, 1, 1, 3, 3, 3])
        let truncated = proofkitError { _ = try decoder.decode(Array(png.prefix(png.count / 2))) }
        #expect(truncated?.code == .decodeFailed)
    }

    @Test("an interlaced PNG over the decoded pixel limit is refused from its header")
    func interlacedLarge() throws {
        let png = HostileImages.png(width: 400, height: 300, interlaced: true) { _, _, _ in 0 }
        let decoder = try ImageDecoder(configuration: .init(maximumDecodedPixelCount: 40_000))
        let error = proofkitError { _ = try decoder.decode(png) }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains("interlaced") == true)
    }

    @Test("a JPEG over the decoded pixel limit is DCT-scaled to fit, even when the full size is asked for")
    func jpegScaledToFit() throws {
        let decoder = try ImageDecoder(configuration: .init(maximumDecodedPixelCount: 100_000))
        let decoded = try decoder.decode(contentsOf: ImageFixtures.path("large.jpg"))  // 640 x 400
        // 640 x 400 = 256 000 pixels: 5/8 gives 400 x 250 = 100 000, the largest factor that fits.
        #expect(decoded.image.width * decoded.image.height <= 100_000)
        #expect(decoded.scaleNumerator == 5 && decoded.scaleDenominator == 8)
    }

    @Test("a progressive JPEG whose DCT coefficients would pass the limit is refused from its header")
    func progressiveLimit() throws {
        // progressive.jpg is 56 x 40: 2 240 pixels of 4:2:0 colour, 6 720 bytes of coefficients.
        let decoder = try ImageDecoder(configuration: .init(maximumCoefficientBytes: 4096))
        let error = proofkitError { _ = try decoder.decode(contentsOf: ImageFixtures.path("progressive.jpg")) }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains("progressive") == true)
        let baseline = try decoder.decode(contentsOf: ImageFixtures.path("gray.jpg"))
        #expect(baseline.image.width == 56)
    }

    @Test("a FIFO, a device and a size-0 /proc file are refused before anything is read", .timeLimit(.minutes(1)))
    func nonRegularFiles() throws {
        let folder = try ImageFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("photo.jpg").path
        #expect(mkfifo(fifo, 0o644) == 0)
        let started = Date()
        let fifoError = proofkitError { _ = try ImageDecoder().decode(contentsOf: fifo) }
        #expect(Date().timeIntervalSince(started) < 2, "a FIFO without a writer must not be waited for")
        #expect(fifoError?.code == .io)
        #expect(fifoError?.message.contains("a FIFO, not a regular file") == true, "\(String(describing: fifoError))")
        let device = proofkitError { _ = try ImageDecoder().decode(contentsOf: "/dev/zero") }
        #expect(device?.code == .io)
        #expect(device?.message.contains("a character device") == true)
        let proc = proofkitError { _ = try ImageDecoder().decode(contentsOf: "/proc/self/pagemap") }
        #expect(proc?.code == .decodeFailed)
    }
}
