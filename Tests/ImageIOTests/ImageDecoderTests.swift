import Foundation
import ProofkitCore
import TestSupport
import Testing

@testable import ImageIO

/// Expected pixels of a fixture (Pillow's decode, committed as NAME.rgb).
func expectedImage(_ name: String) throws -> RGBImage {
    let all = try ImageFixtures.expected()
    let decode = try #require(all["decode"] as? [String: Any])
    let entry = try #require(decode[name] as? [String: Any], "no expected entry for \(name)")
    let width = try #require(entry["width"] as? Int)
    let height = try #require(entry["height"] as? Int)
    return RGBImage(width: width, height: height, pixels: try ImageFixtures.bytes(name + ".rgb"))
}

/// Largest and mean absolute difference between two images of the same size.
func difference(_ a: RGBImage, _ b: RGBImage) -> (maximum: Int, mean: Double) {
    guard a.pixels.count == b.pixels.count else { return (Int.max, .infinity) }
    var maximum = 0
    var total = 0
    for index in 0..<a.pixels.count {
        let d = abs(Int(a.pixels[index]) - Int(b.pixels[index]))
        maximum = max(maximum, d)
        total += d
    }
    return (maximum, Double(total) / Double(max(a.pixels.count, 1)))
}

private func pixel(_ image: RGBImage, _ x: Int, _ y: Int) -> [Int] {
    let base = (y * image.width + x) * 3
    return (0..<3).map { Int(image.pixels[base + $0]) }
}

private func decode(_ name: String, minimumShorterSide: Int? = nil) throws -> DecodedImage {
    let decoder = try ImageDecoder(configuration: .init(minimumShorterSide: minimumShorterSide))
    return try decoder.decode(contentsOf: ImageFixtures.path(name))
}

/// The error `body` throws, which must be a ProofkitError.
func proofkitError(_ body: () throws -> Void) -> ProofkitError? {
    do {
        try body()
        Issue.record("expected an error")
        return nil
    } catch let error as ProofkitError {
        return error
    } catch {
        Issue.record("unexpected error type: \(error)")
        return nil
    }
}

@Suite("ImageDecoder: formats and colour models against Pillow's decode")
struct ImageDecoderFormatTests {
    @Test(
        "JPEG and PNG fixtures decode to Pillow's pixels",
        arguments: [
            ("gray.jpg", "gray", "gray", 1), ("progressive.jpg", "progressive", "ycbcr", 1),
            ("cmyk.jpg", "cmyk", "cmyk", 2), ("rgb8.png", "rgb8", "rgb", 0), ("rgb16.png", "rgb16", "rgb", 1),
            ("gray16.png", "gray16", "gray", 1), ("palette.png", "palette", "palette", 0),
            ("rgba.png", "rgba", "rgb+alpha", 0),
        ])
    func matchesPillow(file: String, name: String, model: String, tolerance: Int) throws {
        let decoded = try decode(file)
        let expected = try expectedImage(name)
        #expect(decoded.image.width == expected.width)
        #expect(decoded.image.height == expected.height)
        #expect(decoded.colorModel == model)
        let diff = difference(decoded.image, expected)
        #expect(diff.maximum <= tolerance, "\(file): max difference \(diff.maximum), mean \(diff.mean)")
    }

    @Test("16-bit PNGs report 16 bits and scale to 8 bits")
    func sixteenBit() throws {
        #expect(try decode("rgb16.png").bitDepth == 16)
        #expect(try decode("gray16.png").bitDepth == 16)
        #expect(try decode("rgb8.png").bitDepth == 8)
    }

    @Test("CMYK JPEG is recognised as Adobe-inverted and converted like Pillow does")
    func cmyk() throws {
        let bytes = try ImageFixtures.bytes("cmyk.jpg")
        #expect(ImageMetadata.jpegMarkers(bytes).hasAdobeMarker)
        let decoded = try ImageDecoder().decode(bytes)
        #expect(decoded.colorModel == "cmyk")
        // Pillow's cmyk2rgb on known values, plain and Adobe-inverted.
        #expect(ImageDecoder.rgbFromCMYK([0, 0, 0, 0], inverted: false) == [255, 255, 255])
        #expect(ImageDecoder.rgbFromCMYK([255, 0, 0, 0], inverted: false) == [0, 255, 255])
        #expect(ImageDecoder.rgbFromCMYK([0, 0, 0, 255], inverted: false) == [0, 0, 0])
        #expect(ImageDecoder.rgbFromCMYK([100, 50, 0, 40], inverted: false) == [131, 173, 215])
        #expect(ImageDecoder.rgbFromCMYK([155, 205, 255, 215], inverted: true) == [131, 173, 215])
    }

    @Test("the format comes from the content, not the name")
    func formatByContent() throws {
        let folder = try ImageFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let lying = folder.appendingPathComponent("photo.jpg")
        try Data(try ImageFixtures.bytes("rgb8.png")).write(to: lying)
        let decoded = try ImageDecoder().decode(contentsOf: lying.path)
        #expect(decoded.format == .png)
        #expect(decoded.image == (try expectedImage("rgb8")))
        #expect(ImageFormat.detect([0xFF, 0xD8, 0xFF, 0xE0]) == .jpeg)
        #expect(ImageFormat.detect([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) == .png)
        #expect(ImageFormat.detect([0x47, 0x49, 0x46, 0x38]) == nil)
    }
}

@Suite("ImageDecoder: EXIF orientation")
struct ImageDecoderOrientationTests {
    @Test("all eight EXIF orientations come out upright, like Pillow's exif_transpose", arguments: 1...8)
    func orientation(value: Int) throws {
        let decoded = try decode("orientation_\(value).jpg")
        #expect(decoded.orientation.rawValue == value)
        let image = decoded.image
        // The upright pattern is 48x32 with quadrants red, green / blue, yellow: checked from the
        // EXIF specification alone, then against Pillow's pixels.
        #expect(image.width == 48 && image.height == 32)
        let quadrants = [[220, 30, 30], [30, 200, 40], [40, 50, 210], [230, 220, 40]]
        let centres = [(12, 8), (36, 8), (12, 24), (36, 24)]
        for (colour, centre) in zip(quadrants, centres) {
            let found = pixel(image, centre.0, centre.1)
            #expect(
                zip(found, colour).allSatisfy { abs($0 - $1) <= 6 },
                "orientation \(value) at \(centre): \(found)")
        }
        let diff = difference(image, try expectedImage("orientation_\(value)"))
        #expect(diff.maximum <= 1, "orientation \(value): max difference \(diff.maximum)")
    }

    @Test("a PNG eXIf chunk (big-endian TIFF) is honoured")
    func pngExif() throws {
        let decoded = try decode("orientation_6_exif.png")
        #expect(decoded.orientation == .rotated90Clockwise)
        #expect(decoded.image == (try expectedImage("orientation_6_exif")))
    }

    @Test("little-endian and big-endian TIFF orientation tags are read; junk is ignored")
    func tiffParsing() {
        let little: [UInt8] = [
            0x49, 0x49, 0x2A, 0, 8, 0, 0, 0, 2, 0,
            0x1A, 0x01, 5, 0, 1, 0, 0, 0, 0, 0, 0, 0,
            0x12, 0x01, 3, 0, 1, 0, 0, 0, 8, 0, 0, 0,
        ]
        #expect(ImageMetadata.tiffOrientation(little[...]) == .rotated90CounterClockwise)
        let big: [UInt8] = [0x4D, 0x4D, 0, 0x2A, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 3, 0, 0]
        #expect(ImageMetadata.tiffOrientation(big[...]) == .rotated180)
        var outOfRange = big
        outOfRange[19] = 9
        #expect(ImageMetadata.tiffOrientation(outOfRange[...]) == nil)
        #expect(ImageMetadata.tiffOrientation(big.prefix(12)) == nil)
        #expect(ImageMetadata.tiffOrientation([0x4D, 0x4D, 0, 0x2A, 0xFF, 0xFF, 0xFF, 0xF0][...]) == nil)
        // A JPEG whose APP1 segment length runs past the end stops quietly.
        #expect(ImageMetadata.jpegMarkers([0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF, 0x45]) == JPEGMarkers())
    }

    @Test("orient turns a 3x2 image the eight EXIF ways")
    func orientSmall() {
        // Stored pixels numbered 0...5 in the red channel: row 0 = 0 1 2, row 1 = 3 4 5.
        let stored = RGBImage(width: 3, height: 2, pixels: (0..<6).flatMap { [UInt8($0), 0, 0] })
        let expected: [ExifOrientation: (Int, [UInt8])] = [
            .up: (3, [0, 1, 2, 3, 4, 5]), .mirrored: (3, [2, 1, 0, 5, 4, 3]),
            .rotated180: (3, [5, 4, 3, 2, 1, 0]), .mirroredVertically: (3, [3, 4, 5, 0, 1, 2]),
            .transposed: (2, [0, 3, 1, 4, 2, 5]), .rotated90Clockwise: (2, [3, 0, 4, 1, 5, 2]),
            .transversed: (2, [5, 2, 4, 1, 3, 0]), .rotated90CounterClockwise: (2, [2, 5, 1, 4, 0, 3]),
        ]
        for orientation in ExifOrientation.allCases {
            let turned = ImageDecoder.orient(stored, orientation)
            guard let (width, reds) = expected[orientation] else { continue }
            #expect(turned.width == width, "\(orientation)")
            let found = stride(from: 0, to: turned.pixels.count, by: 3).map { turned.pixels[$0] }
            #expect(found == reds, "\(orientation)")
        }
    }
}

@Suite("ImageDecoder: DCT-scaled decoding")
struct ImageDecoderScalingTests {
    @Test("a reduced-size decode matches Pillow's draft-mode decode at 1/2")
    func matchesDraft() throws {
        let decoded = try decode("large.jpg", minimumShorterSide: 200)
        #expect(decoded.scaleNumerator == 1 && decoded.scaleDenominator == 2)
        #expect(decoded.storedWidth == 640 && decoded.storedHeight == 400)
        let expected = try expectedImage("large_half")
        #expect(decoded.image.width == expected.width && decoded.image.height == expected.height)
        let diff = difference(decoded.image, expected)
        #expect(diff.maximum <= 1, "max difference \(diff.maximum)")
    }

    @Test("the smallest factor keeping the shorter side is chosen")
    func factorChoice() throws {
        let factors = try TurboJPEGDecompressor().scalingFactors()
        #expect(factors.contains(JPEGScalingFactor(numerator: 1, denominator: 8)))
        func pick(_ w: Int, _ h: Int, _ side: Int?) -> JPEGScalingFactor {
            ImageDecoder.scalingFactor(width: w, height: h, minimumShorterSide: side, available: factors)
        }
        #expect(pick(1600, 1200, 256) == JPEGScalingFactor(numerator: 1, denominator: 4))  // 300 rows
        #expect(pick(4032, 3024, 256) == JPEGScalingFactor(numerator: 1, denominator: 8))  // 378 rows
        #expect(pick(1024, 768, 256) == JPEGScalingFactor(numerator: 3, denominator: 8))  // 288 rows
        #expect(pick(300, 200, 256) == JPEGScalingFactor(numerator: 1, denominator: 1))  // never upscale
        #expect(pick(1600, 1200, nil) == JPEGScalingFactor(numerator: 1, denominator: 1))
        #expect(JPEGScalingFactor(numerator: 3, denominator: 8).scaled(1001) == 376)  // TJSCALED rounds up
    }

    @Test("the full-size decode is used when no minimum is set")
    func fullSize() throws {
        let decoded = try decode("large.jpg")
        #expect(decoded.image.width == 640 && decoded.image.height == 400)
        #expect(decoded.scaleNumerator == 1 && decoded.scaleDenominator == 1)
    }
}

@Suite("ImageDecoder: bad input is refused with a clear message")
struct ImageDecoderBadInputTests {
    @Test("a PNG header claiming 30000x30000 is refused before allocating")
    func pngBomb() {
        let error = proofkitError { _ = try decode("bomb_30000.png") }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains("30000x30000") == true)
        #expect(error?.message.contains("50 MP limit") == true)
        #expect(error?.path == ImageFixtures.path("bomb_30000.png"))
    }

    @Test("a JPEG header claiming 30000x30000 is refused before decoding")
    func jpegBomb() {
        let error = proofkitError { _ = try decode("bomb_30000.jpg", minimumShorterSide: 256) }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains("30000x30000") == true)
    }

    @Test("the pixel limit is configurable")
    func customLimit() throws {
        let decoder = try ImageDecoder(configuration: .init(maximumPixelCount: 1000))
        let error = proofkitError { _ = try decoder.decode(contentsOf: ImageFixtures.path("rgb8.png")) }
        #expect(error?.code == .unsupportedFormat)
        let invalid = proofkitError { _ = try ImageDecoder(configuration: .init(maximumPixelCount: 0)) }
        #expect(invalid?.code == .invalidArgument)
    }

    @Test("a truncated JPEG is refused as truncated")
    func truncated() {
        let error = proofkitError { _ = try decode("truncated.jpg") }
        #expect(error?.code == .decodeFailed)
        #expect(error?.message.contains("truncated") == true, "\(String(describing: error))")
    }

    @Test("a truncated PNG is refused")
    func truncatedPNG() throws {
        let bytes = try ImageFixtures.bytes("rgb8.png")
        let error = proofkitError { _ = try ImageDecoder().decode(Array(bytes.prefix(bytes.count / 2))) }
        #expect(error?.code == .decodeFailed)
    }

    @Test("random bytes, and random bytes behind a JPEG or PNG signature, are refused")
    func randomBytes() {
        var generator = SplitMix64(seed: 7)
        let noise = (0..<4096).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let plain = proofkitError { _ = try ImageDecoder().decode(noise) }
        #expect(plain?.code == .decodeFailed)
        #expect(plain?.message.contains("not a JPEG or PNG") == true)
        let fakeJPEG = proofkitError { _ = try ImageDecoder().decode([0xFF, 0xD8, 0xFF] + noise) }
        #expect(fakeJPEG?.code == .decodeFailed)
        let fakePNG = proofkitError {
            _ = try ImageDecoder().decode([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + noise)
        }
        #expect(fakePNG?.code == .decodeFailed)
    }

    @Test("0 bytes is empty; a missing file and a folder are not found; a file over the limit is bad data")
    func emptyMissingFolder() throws {
        let folder = try ImageFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let empty = folder.appendingPathComponent("empty.jpg")
        try Data().write(to: empty)
        let emptyError = proofkitError { _ = try ImageDecoder().decode(contentsOf: empty.path) }
        #expect(emptyError?.code == .decodeFailed)
        #expect(emptyError?.description == "\(empty.path): the file is empty (0 bytes), not an image")
        let missing = folder.appendingPathComponent("missing.jpg").path
        let missingError = proofkitError { _ = try ImageDecoder().decode(contentsOf: missing) }
        #expect(missingError?.code == .notFound)
        #expect(missingError?.path == missing)
        // A folder is missing input and a file over the size limit is bad data, as for every
        // input of proofkit (exit codes 66 and 65).
        #expect(proofkitError { _ = try ImageDecoder().decode(contentsOf: folder.path) }?.code == .notFound)
        let large = folder.appendingPathComponent("large.jpg")
        try Data([0xFF, 0xD8, 0xFF] + [UInt8](repeating: 0, count: 2_000)).write(to: large)
        let decoder = try ImageDecoder(configuration: .init(maximumFileSize: 1_000))
        let largeError = proofkitError { _ = try decoder.decode(contentsOf: large.path) }
        #expect(largeError?.code == .decodeFailed)
        #expect(largeError?.description == "\(large.path): is 2003 bytes, over the 1000-byte limit for a photo")
    }
}

@Suite("ImageDecoder against Pillow, live")
struct ImageDecoderLivePillowTests {
    @Test(
        "fixtures re-made now by Pillow decode to Pillow's pixels",
        .enabled(if: ImageFixtures.hasPythonWithPillow, "needs .deps/venv with Pillow (or PROOFKIT_PYTHON)"))
    func regenerated() throws {
        let folder = try #require(ImageFixtures.regenerated, "the fixture script failed")
        let data = try Data(contentsOf: folder.appendingPathComponent("expected.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let decode = try #require(json["decode"] as? [String: Any])
        #expect(decode.count >= 16)
        for (name, value) in decode {
            let entry = try #require(value as? [String: Any])
            let file = try #require(entry["file"] as? String)
            let side = entry["minimum_shorter_side"] as? Int
            let decoder = try ImageDecoder(configuration: .init(minimumShorterSide: side))
            let decoded = try decoder.decode(contentsOf: folder.appendingPathComponent(file).path)
            let expected = RGBImage(
                width: try #require(entry["width"] as? Int), height: try #require(entry["height"] as? Int),
                pixels: [UInt8](try Data(contentsOf: folder.appendingPathComponent(name + ".rgb"))))
            let diff = difference(decoded.image, expected)
            #expect(diff.maximum <= 2, "\(name): max difference \(diff.maximum), mean \(diff.mean)")
        }
    }
}
