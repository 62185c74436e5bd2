public import ProofkitCore
internal import ProofkitSystem

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A decoded photo, upright, with what the decoder learned on the way.
public struct DecodedImage: Sendable, Equatable {
    /// The upright 8-bit RGB pixels (EXIF orientation applied, alpha dropped, CMYK converted).
    public var image: RGBImage
    /// The file's format, detected from its content.
    public var format: ImageFormat
    /// Width stored in the file, in pixels, before scaling and orientation.
    public var storedWidth: Int
    /// Height stored in the file, in pixels, before DCT scaling and orientation.
    public var storedHeight: Int
    /// The EXIF orientation that was applied (`.up` when the file has none).
    public var orientation: ExifOrientation
    /// Numerator of the scale the image was decoded at (1/1 = full size): a JPEG's DCT scale, or
    /// 1/N for a PNG over ``ImageDecoder/Configuration/maximumDecodedPixelCount`` shrunk N times.
    public var scaleNumerator: Int
    /// Denominator of the DCT scale (e.g. 4 for a quarter-size decode).
    public var scaleDenominator: Int
    /// The colour model in the file: `"gray"`, `"rgb"`, `"ycbcr"`, `"cmyk"`, `"ycck"`,
    /// `"palette"`, with `"+alpha"` when a PNG has an alpha channel.
    public var colorModel: String
    /// Bits per channel in the file (8 for JPEG; 8 or 16 for PNG, with palette and low-depth
    /// grayscale reported as 8).
    public var bitDepth: Int
    /// Non-fatal decoder warnings (e.g. libjpeg's "Corrupt JPEG data: 3 extraneous bytes before
    /// marker 0xd9"), one sentence each.
    public var warnings: [String]

    /// This image with its pixels turned upright by its ``orientation`` (they are as stored).
    consuming func upright() -> DecodedImage {
        image = ImageDecoder.orient(image, orientation)
        return self
    }
}

/// Decodes JPEG (libturbojpeg) and PNG (libpng) photos into upright ``RGBImage``s.
///
/// - The format comes from the file's first bytes, never its name.
/// - The EXIF orientation (all eight values) is applied, from the JPEG APP1 "Exif" segment or a
///   PNG `eXIf` chunk.
/// - Grayscale is expanded to RGB; CMYK and YCCK JPEGs are converted to RGB (Adobe files, whose
///   samples are stored inverted, are recognised by their APP14 marker); 16-bit PNGs are
///   scaled to 8 bits; alpha is dropped (as PIL's `convert("RGB")` does).
/// - A pixel limit, checked on the header's size before anything is allocated, refuses
///   decompression bombs.
/// - With ``Configuration/minimumShorterSide`` set, JPEGs are decoded at a reduced size through
///   libjpeg-turbo's DCT scaling: the smallest offered factor (1/8, 1/4, 3/8, ...) whose result
///   still has a shorter side of at least that many pixels. This is several times faster than
///   a full decode for phone photos that will be shrunk anyway.
///
/// A value type holding only configuration: safe to share between threads. Each decode creates
/// and releases its own TurboJPEG handle. Decoding blocks; run it off the cooperative pool when
/// that matters.
public struct ImageDecoder: Sendable {
    /// Decoder limits and options.
    ///
    /// Together they bound memory for any file: at most ``maximumFileSize`` bytes are read (only
    /// from a regular file), sizes and shapes nothing can judge are refused from the header
    /// before anything is decoded, and what is decoded is scaled to at most
    /// ``maximumDecodedPixelCount`` pixels. With the defaults `proofkit mat` stays under 128 MiB
    /// on any file.
    public struct Configuration: Sendable, Equatable {
        /// The largest stored image accepted, in pixels (width x height from the header).
        /// Default 50 000 000 (50 MP: larger than any phone photo).
        public var maximumPixelCount: Int
        /// The largest file accepted, in bytes. Default 32 MiB (a 50 MP phone JPEG is about
        /// 25 MB).
        public var maximumFileSize: Int
        /// When set, JPEGs are DCT-scaled down as far as possible while the shorter side stays at
        /// least this many pixels. `nil` (the default) decodes at full size, up to
        /// ``maximumDecodedPixelCount``.
        public var minimumShorterSide: Int?
        /// The most pixels decoded: a larger JPEG is DCT-scaled down (the largest factor that
        /// fits), a larger PNG shrunk by a whole factor with a box filter while it is read row by
        /// row. Default 8 000 000 (8 MP, 24 MB of RGB).
        public var maximumDecodedPixelCount: Int
        /// The shortest side accepted, in pixels: a smaller image holds nothing to judge.
        /// Default 16.
        public var minimumAcceptedSide: Int
        /// The longest side accepted, as a multiple of the shorter side: a thinner strip holds
        /// nothing to judge (a phone's widest panorama is about 1:9). Default 16.
        public var maximumAspectRatio: Int
        /// The most memory a JPEG decoded in several scans (progressive) may need for its DCT
        /// coefficients, which libjpeg holds for the whole image, in bytes. Default 48 MiB
        /// (a 16 MP progressive 4:2:0 JPEG).
        public var maximumCoefficientBytes: Int

        /// Creates a configuration.
        /// - Parameters:
        ///   - maximumPixelCount: pixel limit, default 50 MP; must be positive.
        ///   - maximumFileSize: byte limit, default 32 MiB; must be positive.
        ///   - minimumShorterSide: reduced-size JPEG decoding target in pixels, default `nil`
        ///     (full size); must be positive when set.
        ///   - maximumDecodedPixelCount: decoded pixel limit, default 8 MP; must be positive.
        ///   - minimumAcceptedSide: the shortest side accepted, default 16 pixels; must be positive.
        ///   - maximumAspectRatio: the longest side accepted over the shorter, default 16; at least 1.
        ///   - maximumCoefficientBytes: the DCT coefficient limit of multi-scan JPEGs, default 48 MiB.
        public init(
            maximumPixelCount: Int = 50_000_000, maximumFileSize: Int = 32 << 20,
            minimumShorterSide: Int? = nil, maximumDecodedPixelCount: Int = 8_000_000, minimumAcceptedSide: Int = 16,
            maximumAspectRatio: Int = 16, maximumCoefficientBytes: Int = 48 << 20
        ) {
            self.maximumPixelCount = maximumPixelCount
            self.maximumFileSize = maximumFileSize
            self.minimumShorterSide = minimumShorterSide
            self.maximumDecodedPixelCount = maximumDecodedPixelCount
            self.minimumAcceptedSide = minimumAcceptedSide
            self.maximumAspectRatio = maximumAspectRatio
            self.maximumCoefficientBytes = maximumCoefficientBytes
        }
    }

    /// The decoder's limits and options.
    public var configuration: Configuration

    /// Creates a decoder.
    /// - Parameter configuration: limits and options (default: 50 MP, 256 MiB, full size).
    /// - Throws: `.invalidArgument` when a limit is not positive.
    public init(configuration: Configuration = Configuration()) throws(ProofkitError) {
        guard configuration.maximumPixelCount > 0, configuration.maximumFileSize > 0,
            configuration.maximumDecodedPixelCount > 0, configuration.minimumAcceptedSide > 0,
            configuration.maximumAspectRatio >= 1, configuration.maximumCoefficientBytes > 0
        else {
            throw ProofkitError(.invalidArgument, "image decoder limits must be positive")
        }
        if let side = configuration.minimumShorterSide, side <= 0 {
            throw ProofkitError(.invalidArgument, "minimum shorter side must be positive, not \(side)")
        }
        self.configuration = configuration
    }

    /// Reads and decodes an image file.
    /// - Parameter path: the file to read.
    /// - Returns: the upright image and what was learned decoding it.
    /// - Throws: `.notFound` (no such file, or a folder), `.io` (not a regular file, unreadable),
    ///   `.decodeFailed` (over the size limit, empty, not an image, truncated or broken),
    ///   `.unsupportedFormat` (a size or shape refused from the header, see ``Configuration``, or
    ///   a JPEG colour space TurboJPEG does not handle). The error
    ///   names `path`, except `.runtimeUnavailable` (see ``decode(_:)``), which is not about it.
    public func decode(contentsOf path: String) throws(ProofkitError) -> DecodedImage {
        var bytes = try readFile(path)
        do {
            let stored = try decodeStored(bytes)
            bytes = []  // the file is no longer needed: not held while the pixels are turned
            return stored.upright()
        } catch {
            throw error.code == .runtimeUnavailable ? error : error.at(path: path)
        }
    }

    /// Decodes an image held in memory.
    /// - Parameter bytes: the whole file.
    /// - Returns: the upright image and what was learned decoding it.
    /// - Throws: `.decodeFailed` (empty, not an image, truncated or broken),
    ///   `.unsupportedFormat` (a size or shape refused from the header, see ``Configuration``, or
    ///   an unsupported JPEG colour space),
    ///   `.runtimeUnavailable` when the decoder's library (libturbojpeg.so.0 for JPEG,
    ///   libpng16.so.16 for PNG) cannot be loaded: each is loaded on first use, not linked.
    public func decode(_ bytes: [UInt8]) throws(ProofkitError) -> DecodedImage {
        let stored = try decodeStored(bytes)
        return stored.upright()
    }

    /// Decodes without turning upright yet (``DecodedImage/image`` is as stored), so that a caller
    /// can drop the file's bytes first.
    private func decodeStored(_ bytes: [UInt8]) throws(ProofkitError) -> DecodedImage {
        guard !bytes.isEmpty else {
            throw ProofkitError(.decodeFailed, "the file is empty (0 bytes), not an image")
        }
        switch ImageFormat.detect(bytes) {
        case .jpeg: return try decodeJPEG(bytes)
        case .png: return try decodePNG(bytes)
        case nil:
            throw ProofkitError(
                .decodeFailed, "not a JPEG or PNG image (the first bytes match neither format)")
        }
    }

    // MARK: JPEG

    private func decodeJPEG(_ bytes: [UInt8]) throws(ProofkitError) -> DecodedImage {
        let decompressor = try TurboJPEGDecompressor()
        let header = try decompressor.readHeader(bytes)
        try checkSize(width: header.width, height: header.height)
        let markers = ImageMetadata.jpegMarkers(bytes)
        let coefficientBytes = Double(header.width * header.height) * markers.coefficientBytesPerPixel
        if markers.isMultiScan && coefficientBytes > Double(configuration.maximumCoefficientBytes) {
            throw ProofkitError(
                .unsupportedFormat,
                "the JPEG is progressive (decoded in several scans) at \(header.width)x\(header.height): "
                    + "decoding it would hold \(Int(coefficientBytes) >> 20) MiB, over the "
                    + "\(configuration.maximumCoefficientBytes >> 20) MiB limit; save it as a baseline JPEG or smaller")
        }
        let available = decompressor.scalingFactors()
        var factor = Self.scalingFactor(
            width: header.width, height: header.height,
            minimumShorterSide: configuration.minimumShorterSide, available: available)
        if factor.scaled(header.width) * factor.scaled(header.height) > configuration.maximumDecodedPixelCount {
            guard
                let fitting = Self.largestFactor(
                    width: header.width, height: header.height, pixels: configuration.maximumDecodedPixelCount,
                    available: available)
            else {
                throw Self.tooLarge(
                    width: header.width, height: header.height, limit: configuration.maximumPixelCount)
            }
            factor = fitting
        }
        let decoded = try decompressor.decompress(
            bytes, header: header, factor: factor, cmyk: header.colorSpace.isCMYK)
        decompressor.close()

        var warnings: [String] = []
        if let warning = decoded.warning {
            // libjpeg reports a file cut short as a warning and fills the rest with grey. A
            // half-grey photo must not be judged, so truncation is refused; other warnings
            // (stray bytes before a marker, common in real phone photos) are kept as warnings.
            if warning.lowercased().contains("premature end")
                || warning.lowercased().contains("end of file")
            {
                throw ProofkitError(
                    .decodeFailed, "the JPEG is truncated (\(warning))", operation: "tjDecompress2")
            }
            warnings.append(warning)
        }
        let rgb: [UInt8]
        if header.colorSpace.isCMYK {
            rgb = Self.rgbFromCMYK(decoded.pixels, inverted: markers.hasAdobeMarker)
        } else {
            rgb = decoded.pixels
        }
        return DecodedImage(
            image: RGBImage(width: decoded.width, height: decoded.height, pixels: rgb), format: .jpeg,
            storedWidth: header.width, storedHeight: header.height,
            orientation: markers.orientation, scaleNumerator: factor.numerator,
            scaleDenominator: factor.denominator, colorModel: header.colorSpace.name, bitDepth: 8,
            warnings: warnings)
    }

    /// The smallest factor whose scaled shorter side is still at least `minimumShorterSide`
    /// (1/1 when no target is set or when no factor below 1 keeps it). Factors above 1 are
    /// never used.
    static func scalingFactor(
        width: Int, height: Int, minimumShorterSide: Int?, available: [JPEGScalingFactor]
    ) -> JPEGScalingFactor {
        let full = JPEGScalingFactor(numerator: 1, denominator: 1)
        guard let target = minimumShorterSide else { return full }
        var best = full
        for factor in available where factor.numerator <= factor.denominator {
            let shorter = min(factor.scaled(width), factor.scaled(height))
            guard shorter >= target else { continue }
            // Smaller factor: compare num/denom without floating point.
            if factor.numerator * best.denominator < best.numerator * factor.denominator {
                best = factor
            }
        }
        return best
    }

    /// The largest factor of at most 1/1 whose scaled image has at most `pixels` pixels, or `nil`
    /// when even the smallest is larger.
    static func largestFactor(
        width: Int, height: Int, pixels: Int, available: [JPEGScalingFactor]
    ) -> JPEGScalingFactor? {
        var best: JPEGScalingFactor?
        for factor in available where factor.numerator <= factor.denominator {
            guard factor.scaled(width) * factor.scaled(height) <= pixels else { continue }
            if let current = best, factor.numerator * current.denominator <= current.numerator * factor.denominator {
                continue
            }
            best = factor
        }
        return best
    }

    /// Refuses, from the header's size and before anything is decoded, what nothing can judge or
    /// what would take too much memory: over ``Configuration/maximumPixelCount``, a side under
    /// ``Configuration/minimumAcceptedSide``, or longer than ``Configuration/maximumAspectRatio``
    /// times the shorter side.
    /// - Throws: `.unsupportedFormat` (exit 65), saying which.
    private func checkSize(width: Int, height: Int) throws(ProofkitError) {
        if width * height > configuration.maximumPixelCount {
            throw Self.tooLarge(width: width, height: height, limit: configuration.maximumPixelCount)
        }
        let shorter = min(width, height)
        let longer = max(width, height)
        if shorter < configuration.minimumAcceptedSide {
            throw ProofkitError(
                .unsupportedFormat,
                "the image is \(width)x\(height) pixels: a side under \(configuration.minimumAcceptedSide) "
                    + "pixels holds nothing to judge")
        }
        if longer > shorter * configuration.maximumAspectRatio {
            throw ProofkitError(
                .unsupportedFormat,
                "the image is \(width)x\(height) pixels, a strip more than \(configuration.maximumAspectRatio) "
                    + "times longer than wide: nothing to judge in it")
        }
    }

    /// Converts CMYK (4 bytes per pixel) to RGB with PIL's formula
    /// `R = (255 - C) * (255 - K) / 255` (rounded), after un-inverting Adobe-style samples.
    static func rgbFromCMYK(_ cmyk: [UInt8], inverted: Bool) -> [UInt8] {
        let count = cmyk.count / 4
        var rgb = [UInt8](repeating: 0, count: count * 3)
        // MULDIV255(a, b) = round(a * b / 255), exact for 8-bit inputs.
        @inline(__always) func mul255(_ a: Int, _ b: Int) -> Int {
            let t = a * b + 128
            return ((t >> 8) + t) >> 8
        }
        cmyk.withUnsafeBufferPointer { source in
            rgb.withUnsafeMutableBufferPointer { destination in
                for pixel in 0..<count {
                    var c = Int(source[pixel * 4])
                    var m = Int(source[pixel * 4 + 1])
                    var y = Int(source[pixel * 4 + 2])
                    var k = Int(source[pixel * 4 + 3])
                    if inverted {
                        c = 255 - c
                        m = 255 - m
                        y = 255 - y
                        k = 255 - k
                    }
                    let white = 255 - k
                    destination[pixel * 3] = UInt8(clamping: white - mul255(c, white))
                    destination[pixel * 3 + 1] = UInt8(clamping: white - mul255(m, white))
                    destination[pixel * 3 + 2] = UInt8(clamping: white - mul255(y, white))
                }
            }
        }
        return rgb
    }

    // MARK: PNG

    private func decodePNG(_ bytes: [UInt8]) throws(ProofkitError) -> DecodedImage {
        let orientation = ImageMetadata.pngOrientation(bytes)
        guard let header = PNGHeader.read(bytes), header.width * header.height > configuration.maximumDecodedPixelCount
        else {
            // Small enough to decode whole (or no readable header, which libpng explains).
            return try decodeWholePNG(bytes, orientation: orientation)
        }
        try checkSize(width: header.width, height: header.height)
        if header.interlaced {
            throw ProofkitError(
                .unsupportedFormat,
                "the PNG is interlaced at \(header.width)x\(header.height), over the "
                    + "\(Self.megapixels(configuration.maximumDecodedPixelCount)) MP that are decoded whole: "
                    + "save it without interlacing, or smaller")
        }
        var factor = 2
        while ((header.width + factor - 1) / factor) * ((header.height + factor - 1) / factor)
            > configuration.maximumDecodedPixelCount
        {
            factor += 1
        }
        let image = try PNGReader.decodeShrunk(bytes, header: header, factor: factor)
        return DecodedImage(
            image: image, format: .png, storedWidth: header.width, storedHeight: header.height,
            orientation: orientation, scaleNumerator: 1, scaleDenominator: factor,
            colorModel: header.colorModel, bitDepth: header.bitDepth == 16 ? 16 : 8, warnings: [])
    }

    /// The PNG decoded whole through libpng's simplified API (within the decoded pixel limit).
    private func decodeWholePNG(_ bytes: [UInt8], orientation: ExifOrientation) throws(ProofkitError) -> DecodedImage {
        let decoded = try PNGReader.decode(
            bytes, maximumPixelCount: min(configuration.maximumPixelCount, configuration.maximumDecodedPixelCount))
        try checkSize(width: decoded.width, height: decoded.height)
        let rgb: [UInt8]
        if decoded.bytesPerPixel == 4 {
            rgb = Self.dropAlpha(decoded.pixels)
        } else {
            rgb = decoded.pixels
        }
        var model = decoded.fileIsPalette ? "palette" : (decoded.fileIsColor ? "rgb" : "gray")
        if decoded.fileHasAlpha { model += "+alpha" }
        return DecodedImage(
            image: RGBImage(width: decoded.width, height: decoded.height, pixels: rgb), format: .png,
            storedWidth: decoded.width, storedHeight: decoded.height, orientation: orientation, scaleNumerator: 1,
            scaleDenominator: 1, colorModel: model, bitDepth: decoded.fileBitDepth, warnings: [])
    }

    static func dropAlpha(_ rgba: [UInt8]) -> [UInt8] {
        let count = rgba.count / 4
        var rgb = [UInt8](repeating: 0, count: count * 3)
        rgba.withUnsafeBufferPointer { source in
            rgb.withUnsafeMutableBufferPointer { destination in
                for pixel in 0..<count {
                    destination[pixel * 3] = source[pixel * 4]
                    destination[pixel * 3 + 1] = source[pixel * 4 + 1]
                    destination[pixel * 3 + 2] = source[pixel * 4 + 2]
                }
            }
        }
        return rgb
    }

    // MARK: Orientation

    /// Turns `image` upright according to its EXIF orientation.
    /// - Parameters:
    ///   - image: the pixels as stored.
    ///   - orientation: the EXIF orientation tag's meaning.
    /// - Returns: the upright image (the same value for `.up`; width and height swapped for
    ///   orientations 5 to 8).
    public static func orient(_ image: RGBImage, _ orientation: ExifOrientation) -> RGBImage {
        if orientation == .up { return image }
        let width = image.width
        let height = image.height
        let outWidth = orientation.swapsAxes ? height : width
        let outHeight = orientation.swapsAxes ? width : height
        var out = [UInt8](repeating: 0, count: image.pixels.count)
        // For each output pixel (ox, oy), the stored pixel it comes from is
        // base + ox * stepX + oy * stepY (in pixels), with per-orientation base and steps.
        let (startX, startY, xOfOx, yOfOx, xOfOy, yOfOy): (Int, Int, Int, Int, Int, Int)
        switch orientation {
        case .up: (startX, startY, xOfOx, yOfOx, xOfOy, yOfOy) = (0, 0, 1, 0, 0, 1)
        case .mirrored: (startX, startY, xOfOx, yOfOx, xOfOy, yOfOy) = (width - 1, 0, -1, 0, 0, 1)
        case .rotated180:
            (startX, startY, xOfOx, yOfOx, xOfOy, yOfOy) = (width - 1, height - 1, -1, 0, 0, -1)
        case .mirroredVertically:
            (startX, startY, xOfOx, yOfOx, xOfOy, yOfOy) = (0, height - 1, 1, 0, 0, -1)
        case .transposed: (startX, startY, xOfOx, yOfOx, xOfOy, yOfOy) = (0, 0, 0, 1, 1, 0)
        case .rotated90Clockwise:
            (startX, startY, xOfOx, yOfOx, xOfOy, yOfOy) = (0, height - 1, 0, -1, 1, 0)
        case .transversed:
            (startX, startY, xOfOx, yOfOx, xOfOy, yOfOy) = (width - 1, height - 1, 0, -1, -1, 0)
        case .rotated90CounterClockwise:
            (startX, startY, xOfOx, yOfOx, xOfOy, yOfOy) = (width - 1, 0, 0, 1, -1, 0)
        }
        let stepOx = (yOfOx * width + xOfOx) * 3
        let stepOy = (yOfOy * width + xOfOy) * 3
        image.pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { destination in
                var target = 0
                var rowStart = (startY * width + startX) * 3
                for _ in 0..<outHeight {
                    var from = rowStart
                    for _ in 0..<outWidth {
                        destination[target] = source[from]
                        destination[target + 1] = source[from + 1]
                        destination[target + 2] = source[from + 2]
                        target += 3
                        from += stepOx
                    }
                    rowStart += stepOy
                }
            }
        }
        return RGBImage(width: outWidth, height: outHeight, pixels: out)
    }

    // MARK: Files and errors

    /// The whole photo file, capped at the configuration's `maximumFileSize` (``POSIX/readWhole(_:limit:regularOnly:)``:
    /// opened once; a FIFO, a device or a socket is refused before anything is read, and a
    /// regular file whose size says 0, such as /proc's, is not read).
    /// - Throws: as every input of proofkit (``POSIX/inputError(_:path:what:limit:)``): `.notFound`
    ///   (66: missing, or a folder), `.io` (74: not a regular file, unreadable with its errno),
    ///   `.decodeFailed` (65: over the limit).
    private func readFile(_ path: String) throws(ProofkitError) -> [UInt8] {
        let limit = configuration.maximumFileSize
        do throws(ReadFailure) {
            return try POSIX.readWhole(path, limit: limit, regularOnly: true)
        } catch {
            throw POSIX.inputError(error, path: path, what: "photo", limit: limit)
        }
    }

    static func tooLarge(width: Int, height: Int, limit: Int) -> ProofkitError {
        let megapixels = Double(width * height) / 1e6
        let limitMegapixels = Double(limit) / 1e6
        return ProofkitError(
            .unsupportedFormat,
            "the image header claims \(width)x\(height) pixels (\(formatMegapixels(megapixels)) MP), "
                + "over the \(formatMegapixels(limitMegapixels)) MP limit: refused as a possible "
                + "decompression bomb")
    }

    /// "8" for 8 000 000 pixels, "12.5" for 12 500 000.
    static func megapixels(_ pixels: Int) -> String { formatMegapixels(Double(pixels) / 1e6) }

    private static func formatMegapixels(_ value: Double) -> String {
        let tenths = (value * 10).rounded() / 10
        return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
    }
}
