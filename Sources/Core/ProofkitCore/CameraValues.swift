// The values of a camera (V4L2 video capture device), shared by the Camera adapter that reads
// them from the kernel and the facade and command that show them, and the rule that picks the
// mode a live proof runs at (pure).

/// A pixel format proofkit decodes: MJPEG (each frame a JPEG, decoded by TurboJPEG) or YUYV
/// (4:2:2 luma and chroma, converted to RGB in Swift). Nearly every UVC webcam offers both.
public enum CameraPixelFormat: String, Sendable, Equatable, CaseIterable, CustomStringConvertible {
    case mjpeg = "MJPG"
    case yuyv = "YUYV"

    /// The V4L2 four-character code, e.g. `MJPG` as `'M' | 'J' << 8 | 'P' << 16 | 'G' << 24`.
    public var fourcc: UInt32 { CameraFormatDescription.fourcc(rawValue) }

    /// The format of a four-character code, or nil for one proofkit does not decode.
    public init?(fourcc: UInt32) {
        guard let format = Self.allCases.first(where: { $0.fourcc == fourcc }) else { return nil }
        self = format
    }

    public var description: String { rawValue }
}

/// A frame size a camera offers in one format, with the frame rates it offers at that size.
public struct CameraFrameSize: Sendable, Equatable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// The frame rates offered (frames per second), fastest first; empty when the driver does not say.
    public var framesPerSecond: [Double]

    public init(width: Int, height: Int, framesPerSecond: [Double]) {
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
    }
}

/// One pixel format a camera offers (`VIDIOC_ENUM_FMT`) and its sizes (`VIDIOC_ENUM_FRAMESIZES`).
public struct CameraFormatDescription: Sendable, Equatable {
    /// The four-character code as text, e.g. "MJPG", "YUYV", "H264".
    public var fourcc: String
    /// The driver's description, e.g. "Motion-JPEG".
    public var description: String
    /// The sizes offered, as the driver lists them.
    public var sizes: [CameraFrameSize]

    public init(fourcc: String, description: String, sizes: [CameraFrameSize]) {
        self.fourcc = fourcc
        self.description = description
        self.sizes = sizes
    }

    /// The format proofkit decodes, or nil (H.264, a Bayer format...).
    public var pixelFormat: CameraPixelFormat? { CameraPixelFormat(rawValue: fourcc) }

    /// The V4L2 code of four ASCII characters (spaces pad a shorter text).
    public static func fourcc(_ text: String) -> UInt32 {
        let bytes = Array(text.utf8.prefix(4)) + Array(repeating: UInt8(ascii: " "), count: max(0, 4 - text.utf8.count))
        return bytes.enumerated().reduce(0) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
    }

    /// The text of a code (characters that are not printable ASCII become "?").
    public static func text(_ fourcc: UInt32) -> String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: fourcc >> (8 * $0)) }
        return String(decoding: bytes.map { (0x20..<0x7F).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }
}

/// A video device: what `VIDIOC_QUERYCAP` and the format enumeration say.
public struct CameraDescription: Sendable, Equatable {
    /// The device node, e.g. "/dev/video0".
    public var path: String
    /// The device's name, e.g. "HD Pro Webcam C920".
    public var card: String
    /// The kernel driver, e.g. "uvcvideo".
    public var driver: String
    /// Where it is plugged, e.g. "usb-0000:00:14.0-1".
    public var bus: String
    /// The formats offered, in the driver's order.
    public var formats: [CameraFormatDescription]

    public init(path: String, card: String, driver: String, bus: String, formats: [CameraFormatDescription]) {
        self.path = path
        self.card = card
        self.driver = driver
        self.bus = bus
        self.formats = formats
    }
}

/// The format, size and frame rate a capture runs at.
public struct CameraMode: Sendable, Equatable, CustomStringConvertible {
    public var format: CameraPixelFormat
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// Frames per second asked of the driver (0 when it did not say).
    public var framesPerSecond: Double

    public init(format: CameraPixelFormat, width: Int, height: Int, framesPerSecond: Double) {
        self.format = format
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
    }

    /// "YUYV 640x480 at 15 fps".
    public var description: String {
        let rate = framesPerSecond == framesPerSecond.rounded() ? String(Int(framesPerSecond)) : "\(framesPerSecond)"
        return "\(format) \(width)x\(height) at \(rate) fps"
    }

    /// The size proofkit aims for: 640x480, enough for the mat judge (224-pixel crops) and the pose
    /// models (256-pixel input), and cheap to convert.
    public static let targetSize = (width: 640, height: 480)
    /// The slowest frame rate proofkit accepts when a faster one is not needed: 15 fps.
    public static let minimumFramesPerSecond = 15.0

    /// The mode proofkit chooses among what a camera offers (pure; the rule of `camera list`):
    /// of the sizes of MJPEG and YUYV offered at 15 fps or more (any size if none is), the one
    /// nearest 640x480 in pixel count (ties: the smaller); at that size YUYV before MJPEG (no
    /// compression artefacts, and converting it takes 0.85x the time TurboJPEG takes to decode the
    /// same frame as MJPEG, Benchmarks/CAMERA.md) when both reach 15 fps; and the slowest frame
    /// rate of 15 fps or more (the fastest offered when none is): less work per second for the
    /// proofs, which need no more.
    /// - Parameters:
    ///   - formats: what the camera offers (its formats, each with its sizes and rates).
    ///   - preferring: a format to take whenever it is offered.
    /// - Returns: the mode, or nil when neither MJPEG nor YUYV is offered.
    public static func choose(
        from formats: [CameraFormatDescription], preferring: CameraPixelFormat? = nil
    ) -> CameraMode? {
        var candidates: [(mode: CameraMode, fast: Bool)] = []
        for format in formats {
            guard let pixelFormat = format.pixelFormat else { continue }
            if let preferring, pixelFormat != preferring, formats.contains(where: { $0.pixelFormat == preferring }) {
                continue
            }
            for size in format.sizes {
                let fast = size.framesPerSecond.filter { $0 >= minimumFramesPerSecond - 0.01 }
                let rate = fast.min() ?? size.framesPerSecond.max() ?? minimumFramesPerSecond
                let mode = CameraMode(
                    format: pixelFormat, width: size.width, height: size.height, framesPerSecond: rate)
                candidates.append((mode, !fast.isEmpty || size.framesPerSecond.isEmpty))
            }
        }
        let pool = candidates.contains { $0.fast } ? candidates.filter(\.fast) : candidates
        func distance(_ mode: CameraMode) -> Double {
            let target = Double(targetSize.width * targetSize.height)
            let ratio = Double(max(1, mode.width * mode.height)) / target
            return abs(ratio > 1 ? ratio : 1 / ratio)
        }
        return pool.min { a, b in
            let (da, db) = (distance(a.mode), distance(b.mode))
            if da != db { return da < db }
            if a.mode.width * a.mode.height != b.mode.width * b.mode.height {
                return a.mode.width * a.mode.height < b.mode.width * b.mode.height
            }
            return a.mode.format == .yuyv && b.mode.format != .yuyv
        }?.mode
    }
}
