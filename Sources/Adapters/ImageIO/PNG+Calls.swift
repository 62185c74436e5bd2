// The one file of ImageIO that calls libpng, through its simplified API (`png_image`): the
// classic API reports errors with setjmp/longjmp, which Swift cannot survive. libpng is not
// linked: its functions come from the table `PNGReader.load()` fills on first use.
internal import CPNG
internal import CProofkitShims
import ProofkitCore

/// What a PNG decodes to before ImageIO makes it RGB: 8-bit sRGB pixels, 3 (RGB) or 4 (RGBA)
/// bytes each.
struct PNGPixels {
    var width: Int
    var height: Int
    var bytesPerPixel: Int
    var pixels: [UInt8]
    /// Bits per channel in the file (1, 2, 4, 8 or 16), colour type as libpng reports it.
    var fileBitDepth: Int
    var fileIsColor: Bool
    var fileHasAlpha: Bool
    var fileIsPalette: Bool
}

/// What a PNG's IHDR chunk says, read without libpng (so a size can be refused before libpng
/// is even loaded).
struct PNGHeader: Equatable {
    /// Stored width and height in pixels.
    var width: Int
    var height: Int
    /// Adam7-interlaced (its rows come in seven passes, so it cannot be shrunk row by row).
    var interlaced: Bool
    /// Bits per sample (1, 2, 4, 8 or 16).
    var bitDepth: Int
    /// The PNG colour type: 0 gray, 2 RGB, 3 palette, 4 gray and alpha, 6 RGB and alpha.
    var colorType: Int

    /// The colour model as ``DecodedImage/colorModel`` names it (`"rgb+alpha"`, `"palette"`...).
    var colorModel: String {
        switch colorType {
        case 2: "rgb"
        case 3: "palette"
        case 4: "gray+alpha"
        case 6: "rgb+alpha"
        default: "gray"
        }
    }

    /// The IHDR chunk, which must come first after the signature (bytes 8-32).
    /// - Returns: the header, or `nil` when the bytes do not start with one (libpng then says why).
    static func read(_ png: [UInt8]) -> PNGHeader? {
        guard png.count >= 33, Array(png[12..<16]) == Array("IHDR".utf8) else { return nil }
        func word(_ at: Int) -> Int { png[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        return PNGHeader(
            width: word(16), height: word(20), interlaced: png[28] != 0, bitDepth: Int(png[24]), colorType: Int(png[25])
        )
    }
}

enum PNGReader {
    /// libpng's functions, from `libpng16.so.16`, loaded on the first call and kept for the life
    /// of the process (thread-safe).
    /// - Parameter soname: another file to load instead, into a table of its own (tests only).
    /// - Throws: `.runtimeUnavailable` (exit 69) in one line: the file, dlerror's reason and the
    ///   Debian package to install (libpng16-16).
    static func load(soname: String? = nil) throws(ProofkitError) -> proofkit_png_api {
        guard let table = proofkit_library_load(proofkit_png_library(), soname) else {
            throw ProofkitError(.runtimeUnavailable, String(cString: proofkit_library_failure()), operation: "dlopen")
        }
        return table.load(as: proofkit_png_api.self)
    }

    /// Decodes a whole PNG held in memory to 8-bit sRGB RGB (or RGBA when the file has alpha, so
    /// the caller can drop alpha the way PIL's `convert("RGB")` does).
    ///
    /// 16-bit files are scaled to 8 bits; with no gAMA/sRGB chunk their samples are taken as
    /// sRGB-encoded (`PNG_IMAGE_FLAG_16BIT_sRGB`), as every other reader does, rather than linear.
    /// Palette and grayscale files are expanded.
    ///
    /// - Parameters:
    ///   - png: the whole file.
    ///   - maximumPixelCount: the size refused before any pixel buffer is allocated.
    /// - Throws: `.decodeFailed` (libpng's message) for a broken or truncated file,
    ///   `.invalidArgument`-free: `.unsupportedFormat` when the header's size is over
    ///   `maximumPixelCount`; `.runtimeUnavailable` when libpng cannot be loaded.
    ///
    /// Calls `png_image_begin_read_from_memory`, `png_image_finish_read` and `png_image_free`.
    static func decode(_ png: [UInt8], maximumPixelCount: Int) throws(ProofkitError) -> PNGPixels {
        let libpng = try load()
        let result: Result<PNGPixels, ProofkitError> = png.withUnsafeBufferPointer { buffer in
            var image = png_image()
            image.version = UInt32(PNG_IMAGE_VERSION)
            defer { libpng.png_image_free(&image) }
            guard libpng.png_image_begin_read_from_memory(&image, buffer.baseAddress, buffer.count) != 0 else {
                return .failure(
                    ProofkitError(
                        .decodeFailed, "not a readable PNG: \(message(of: &image))",
                        operation: "png_image_begin_read_from_memory"))
            }
            let width = Int(image.width)
            let height = Int(image.height)
            guard width > 0, height > 0 else {
                return .failure(
                    ProofkitError(
                        .decodeFailed, "PNG header gives an empty size \(width)x\(height)",
                        operation: "png_image_begin_read_from_memory"))
            }
            if width * height > maximumPixelCount {
                return .failure(
                    ImageDecoder.tooLarge(width: width, height: height, limit: maximumPixelCount))
            }
            let fileFormat = image.format
            let hasAlpha = fileFormat & UInt32(PNG_FORMAT_FLAG_ALPHA) != 0
            let bytesPerPixel = hasAlpha ? 4 : 3
            image.format = UInt32(PNG_FORMAT_FLAG_COLOR) | (hasAlpha ? UInt32(PNG_FORMAT_FLAG_ALPHA) : 0)
            image.flags |= UInt32(PNG_IMAGE_FLAG_16BIT_sRGB)
            // PNG_IMAGE_SIZE is a function-like macro: for 8-bit output it is
            // height * width * channels bytes with rows packed (row_stride 0 below).
            var pixels = [UInt8](repeating: 0, count: width * height * bytesPerPixel)
            let finished = pixels.withUnsafeMutableBytes { destination in
                libpng.png_image_finish_read(&image, nil, destination.baseAddress, 0, nil)
            }
            guard finished != 0 else {
                return .failure(
                    ProofkitError(
                        .decodeFailed, "PNG data is broken: \(message(of: &image))",
                        operation: "png_image_finish_read"))
            }
            return .success(
                PNGPixels(
                    width: width, height: height, bytesPerPixel: bytesPerPixel, pixels: pixels,
                    fileBitDepth: fileFormat & UInt32(PNG_FORMAT_FLAG_LINEAR) != 0 ? 16 : 8,
                    fileIsColor: fileFormat & UInt32(PNG_FORMAT_FLAG_COLOR) != 0,
                    fileHasAlpha: hasAlpha,
                    fileIsPalette: fileFormat & UInt32(PNG_FORMAT_FLAG_COLORMAP) != 0))
        }
        return try result.get()
    }

    /// Decodes a non-interlaced PNG to 8-bit RGB shrunk `factor` times in each direction (a box
    /// filter), one row at a time, so memory is one row of the file plus the output. For images
    /// too large to hold whole; see `proofkit_png_read_shrunk` (CPNG.h) for the conversions.
    /// - Parameters:
    ///   - png: the whole file.
    ///   - header: its header (``PNGHeader/read(_:)``), not interlaced.
    ///   - factor: the shrink factor, at least 1.
    /// - Throws: `.decodeFailed` with libpng's reason for a broken or truncated file;
    ///   `.runtimeUnavailable` when libpng cannot be loaded.
    /// Calls `proofkit_png_read_shrunk` (libpng's classic reading API, from C).
    static func decodeShrunk(_ png: [UInt8], header: PNGHeader, factor: Int) throws(ProofkitError) -> RGBImage {
        var libpng = try load()
        let width = (header.width + factor - 1) / factor
        let height = (header.height + factor - 1) / factor
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        var message = [CChar](repeating: 0, count: 200)
        let done = png.withUnsafeBufferPointer { source in
            pixels.withUnsafeMutableBufferPointer { destination in
                message.withUnsafeMutableBufferPointer { text in
                    proofkit_png_read_shrunk(
                        &libpng, source.baseAddress, source.count, UInt32(factor), destination.baseAddress, width,
                        height, text.baseAddress, text.count)
                }
            }
        }
        guard done != 0 else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw ProofkitError(.decodeFailed, "PNG data is broken: \(reason)", operation: "png_read_row")
        }
        return RGBImage(width: width, height: height, pixels: pixels)
    }

    /// libpng's error or warning text for `image` (its `char[64]` `message`, read by a shim).
    private static func message(of image: inout png_image) -> String {
        let text = withUnsafePointer(to: &image) { proofkit_png_image_message($0) }
        guard let text else { return "unknown libpng error" }
        let string = String(cString: text)
        return string.isEmpty ? "unknown libpng error" : string
    }
}
