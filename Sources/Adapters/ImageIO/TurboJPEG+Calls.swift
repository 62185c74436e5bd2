// The one file of ImageIO that calls libturbojpeg (TurboJPEG 2.1 API: no tj3*, no jpeglib.h,
// whose error exit would longjmp through Swift frames). libturbojpeg is not linked: its functions
// come from the table `loadTurboJPEG()` fills on first use, and are called through it.
internal import CProofkitShims
internal import CTurboJPEG
import ProofkitCore

/// libturbojpeg's functions, from `libturbojpeg.so.0`, loaded on the first call and kept for the
/// life of the process (thread-safe).
/// - Parameter soname: another file to load instead, into a table of its own (tests only).
/// - Throws: `.runtimeUnavailable` (exit 69) in one line: the file, dlerror's reason and the
///   Debian package to install (libturbojpeg0).
func loadTurboJPEG(soname: String? = nil) throws(ProofkitError) -> proofkit_turbojpeg_api {
    guard let table = proofkit_library_load(proofkit_turbojpeg_library(), soname) else {
        throw ProofkitError(.runtimeUnavailable, String(cString: proofkit_library_failure()), operation: "dlopen")
    }
    return table.load(as: proofkit_turbojpeg_api.self)
}

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
    /// The library the handle came from (loaded, so every call on the handle goes through it).
    private let turbo: proofkit_turbojpeg_api

    /// Creates a decompressor. Calls `tjInitDecompress`.
    /// - Throws: `.runtimeUnavailable` when libturbojpeg cannot be loaded; `.internal` when
    ///   TurboJPEG cannot allocate a handle.
    init() throws(ProofkitError) {
        let turbo = try loadTurboJPEG()
        guard let handle = turbo.tjInitDecompress() else {
            throw ProofkitError(
                .internal, "TurboJPEG could not create a decompressor: \(Self.errorText(turbo, nil))",
                operation: "tjInitDecompress")
        }
        self.handle = handle
        self.turbo = turbo
    }

    deinit {
        _ = turbo.tjDestroy(handle)
    }

    /// Releases the handle now. Calls `tjDestroy`.
    consuming func close() {
        _ = turbo.tjDestroy(handle)
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
            turbo.tjDecompressHeader3(
                handle, buffer.baseAddress, UInt(buffer.count), &width, &height, &subsampling,
                &colorSpace)
        }
        if status != 0 {
            throw ProofkitError(
                .decodeFailed, "not a readable JPEG: \(errorText())", operation: "tjDecompressHeader3",
                underlying: turbo.tjGetErrorCode(handle))
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
    func scalingFactors() -> [JPEGScalingFactor] {
        var count: Int32 = 0
        guard let factors = turbo.tjGetScalingFactors(&count), count > 0 else {
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
                turbo.tjDecompress2(
                    handle, source.baseAddress, UInt(source.count), destination.baseAddress,
                    Int32(width), Int32(width * bytesPerPixel), Int32(height),
                    Int32(format.rawValue), 0)
            }
        }
        var warning: String?
        if status != 0 {
            let code = turbo.tjGetErrorCode(handle)
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
    private func errorText() -> String { Self.errorText(turbo, handle) }

    /// The last error or warning text of `handle`, or the thread's last TurboJPEG error text when
    /// `handle` is nil (failures with no handle). Calls `tjGetErrorStr2`.
    private static func errorText(_ turbo: proofkit_turbojpeg_api, _ handle: UnsafeMutableRawPointer?) -> String {
        guard let text = turbo.tjGetErrorStr2(handle) else { return "unknown TurboJPEG error" }
        return String(cString: text)
    }
}
