// The one file of ImageIO that calls libturbojpeg (TurboJPEG 2.1 API: no tj3*, no jpeglib.h,
// whose error exit would longjmp through Swift frames).
internal import CTurboJPEG
import ProofkitCore

/// What the JPEG header says, read by `tjDecompressHeader3`.
struct JPEGHeader {
    /// Stored width and height in pixels (before any scaling or EXIF orientation).
    var width: Int
    var height: Int
    /// The colour space of the JPEG data.
    var colorSpace: JPEGColorSpace
}

/// The JPEG colour spaces that TurboJPEG reports (`TJCS_*`).
enum JPEGColorSpace: Sendable {
    case rgb, yCbCr, gray, cmyk, ycck

    /// Whether the decoder must ask for CMYK output and convert to RGB itself (libjpeg cannot
    /// convert CMYK or YCCK to RGB).
    var isCMYK: Bool { self == .cmyk || self == .ycck }

    /// Stable lowercase name (used in ``DecodedImage/colorModel``).
    var name: String {
        switch self {
        case .rgb: return "rgb"
        case .yCbCr: return "ycbcr"
        case .gray: return "gray"
        case .cmyk: return "cmyk"
        case .ycck: return "ycck"
        }
    }
}

/// A DCT scaling factor offered by libjpeg-turbo (num/denom, e.g. 1/4).
struct JPEGScalingFactor: Equatable {
    var numerator: Int
    var denominator: Int

    /// `TJSCALED`: the scaled size of `dimension`, rounded up (the macro, in Swift).
    func scaled(_ dimension: Int) -> Int {
        (dimension * numerator + denominator - 1) / denominator
    }
}

/// The outcome of `tjDecompress2`: interleaved pixels plus any libjpeg warning that did not stop
/// the decode.
struct JPEGPixels {
    var width: Int
    var height: Int
    /// 3 (RGB) or 4 (CMYK) bytes per pixel, rows packed.
    var bytesPerPixel: Int
    var pixels: [UInt8]
    /// libjpeg's warning text, when `tjDecompress2` finished with `TJERR_WARNING`.
    var warning: String?
}

/// Owns one TurboJPEG decompressor handle (`tjhandle`) and destroys it exactly once.
///
/// `@unchecked Sendable`: the handle has a unique owner (this value is `~Copyable`) and TurboJPEG
/// keeps no state shared between handles.
struct TurboJPEGDecompressor: ~Copyable, @unchecked Sendable {
    private let handle: UnsafeMutableRawPointer

    /// Creates a decompressor. Calls `tjInitDecompress`.
    /// - Throws: `.internal` when TurboJPEG cannot allocate a handle.
    init() throws(ProofkitError) {
        guard let handle = tjInitDecompress() else {
            throw ProofkitError(
                .internal, "TurboJPEG could not create a decompressor: \(Self.globalErrorText())",
                operation: "tjInitDecompress")
        }
        self.handle = handle
    }

    deinit {
        tjDestroy(handle)
    }

    /// Releases the handle now. Calls `tjDestroy`.
    consuming func close() {
        tjDestroy(handle)
        discard self
    }

    /// Reads the JPEG header. Calls `tjDecompressHeader3`.
    /// - Throws: `.decodeFailed` when the bytes are not a readable JPEG header.
    func readHeader(_ jpeg: [UInt8]) throws(ProofkitError) -> JPEGHeader {
        var width: Int32 = 0
        var height: Int32 = 0
        var subsampling: Int32 = 0
        var colorSpace: Int32 = 0
        let status = jpeg.withUnsafeBufferPointer { buffer in
            tjDecompressHeader3(
                handle, buffer.baseAddress, UInt(buffer.count), &width, &height, &subsampling,
                &colorSpace)
        }
        if status != 0 {
            throw ProofkitError(
                .decodeFailed, "not a readable JPEG: \(errorText())", operation: "tjDecompressHeader3",
                underlying: tjGetErrorCode(handle))
        }
        let space: JPEGColorSpace
        switch colorSpace {
        case Int32(TJCS_RGB.rawValue): space = .rgb
        case Int32(TJCS_YCbCr.rawValue): space = .yCbCr
        case Int32(TJCS_GRAY.rawValue): space = .gray
        case Int32(TJCS_CMYK.rawValue): space = .cmyk
        case Int32(TJCS_YCCK.rawValue): space = .ycck
        default:
            throw ProofkitError(
                .unsupportedFormat, "JPEG colour space \(colorSpace) is not supported",
                operation: "tjDecompressHeader3")
        }
        guard width > 0, height > 0 else {
            throw ProofkitError(
                .decodeFailed,
                "not a readable JPEG: it has no image header (cut short, or not a JPEG after its first bytes)",
                operation: "tjDecompressHeader3")
        }
        return JPEGHeader(width: Int(width), height: Int(height), colorSpace: space)
    }

    /// The DCT scaling factors this libjpeg-turbo offers. Calls `tjGetScalingFactors`.
    static func scalingFactors() -> [JPEGScalingFactor] {
        var count: Int32 = 0
        guard let factors = tjGetScalingFactors(&count), count > 0 else {
            return [JPEGScalingFactor(numerator: 1, denominator: 1)]
        }
        return (0..<Int(count)).map {
            JPEGScalingFactor(numerator: Int(factors[$0].num), denominator: Int(factors[$0].denom))
        }
    }

    /// Decodes the whole JPEG at `factor`, to RGB (3 bytes per pixel) or, when `cmyk` is set, to
    /// CMYK (4 bytes per pixel, as stored: Adobe files keep their inverted values). Calls
    /// `tjDecompress2` (with accurate default DCT and fancy upsampling, as PIL's decoder uses).
    /// - Throws: `.decodeFailed` with libjpeg's message when TurboJPEG reports a fatal error.
    ///   A warning (e.g. "Premature end of JPEG file") does not throw: it is returned in
    ///   ``JPEGPixels/warning`` for the caller to judge.
    func decompress(
        _ jpeg: [UInt8], header: JPEGHeader, factor: JPEGScalingFactor, cmyk: Bool
    ) throws(ProofkitError) -> JPEGPixels {
        let width = factor.scaled(header.width)
        let height = factor.scaled(header.height)
        let bytesPerPixel = cmyk ? 4 : 3
        var pixels = [UInt8](repeating: 0, count: width * height * bytesPerPixel)
        let format = cmyk ? TJPF_CMYK : TJPF_RGB
        let status = jpeg.withUnsafeBufferPointer { source in
            pixels.withUnsafeMutableBufferPointer { destination in
                tjDecompress2(
                    handle, source.baseAddress, UInt(source.count), destination.baseAddress,
                    Int32(width), Int32(width * bytesPerPixel), Int32(height),
                    Int32(format.rawValue), 0)
            }
        }
        var warning: String?
        if status != 0 {
            let code = tjGetErrorCode(handle)
            if code == Int32(TJERR_WARNING.rawValue) {
                warning = errorText()
            } else {
                throw ProofkitError(
                    .decodeFailed, "JPEG data is broken: \(errorText())", operation: "tjDecompress2",
                    underlying: code)
            }
        }
        return JPEGPixels(
            width: width, height: height, bytesPerPixel: bytesPerPixel, pixels: pixels,
            warning: warning)
    }

    /// The handle's last error or warning text. Calls `tjGetErrorStr2`.
    private func errorText() -> String {
        guard let text = tjGetErrorStr2(handle) else { return "unknown TurboJPEG error" }
        return String(cString: text)
    }

    /// The thread's last TurboJPEG error text, for failures with no handle. Calls `tjGetErrorStr2`.
    private static func globalErrorText() -> String {
        guard let text = tjGetErrorStr2(nil) else { return "unknown TurboJPEG error" }
        return String(cString: text)
    }
}
