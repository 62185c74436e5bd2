public import Camera
internal import ImageIO
public import ProofkitCore
internal import ProofkitSystem

/// The cameras of this machine (V4L2 video capture devices).
public enum Cameras {
    /// Every video capture device with its formats and sizes (a webcam's metadata node, and a
    /// device that cannot be opened now, are left out). Nothing is streamed.
    public static func list() -> [CameraDescription] { VideoDevices.list() }

    /// The first video capture device: the default of `--camera`.
    /// - Throws: `.notFound` when there is none.
    public static func first() throws(ProofkitError) -> CameraDescription { try VideoDevices.first() }

    /// What the device at `path` is and offers.
    /// - Throws: `.notFound`, `.notACamera`, `.cameraBusy`, `.cameraUnplugged`, `.deviceUnavailable`.
    public static func describe(_ path: String) throws(ProofkitError) -> CameraDescription {
        try VideoDevices.describe(path)
    }
}

/// One camera frame, decoded to an upright RGB image.
public struct CameraImage: Sendable {
    /// The pixels.
    public var image: RGBImage
    /// When the frame was taken off the driver: monotonic seconds.
    public var time: Double
    /// The driver's frame counter.
    public var sequence: UInt32
    /// The frame as the camera sent it (a JPEG, or YUYV rows).
    public var frame: CameraFrame
}

/// Frames from a camera, decoded to RGB: MJPEG by TurboJPEG (ImageIO), YUYV in Swift.
///
/// Privacy: frames stay in memory and are dropped once judged. Nothing is written unless a
/// `recording` folder is given (`--record DIR`): then each frame handed out is written there,
/// atomically, as `frame-NNNNNN.jpg` (MJPEG, as sent) or `frame-NNNNNN.ppm` (YUYV, converted).
///
/// Use it from one thread at a time (a live proof's loop); ``close()`` (or `deinit`) stops the camera.
public final class CameraFrameSource: @unchecked Sendable {
    /// The capture (device, mode).
    let capture: CameraCapture
    /// The folder frames are recorded into, or nil (the default: nothing is written).
    public let recording: String?
    /// Frames the decoder could not read (a damaged JPEG): skipped.
    public private(set) var undecodableFrames = 0
    /// Frames handed out.
    public private(set) var frameCount = 0
    /// Frames dropped undecoded because they came before a caller's `notBefore`.
    public private(set) var droppedFrames = 0
    private let decoder: ImageDecoder

    /// Opens a camera and starts streaming.
    /// - Parameters:
    ///   - device: the device node; nil (the default) for the first video capture device.
    ///   - preferring: a format to take when offered (default: the rule of ``CameraMode/choose(from:preferring:)``).
    ///   - stallSeconds: how long without a frame is a stalled camera (default 5 s).
    ///   - recording: a folder to write each frame into (default nil: nothing written).
    /// - Throws: `.notFound` (no camera, or none at `device`), `.notACamera`, `.cameraBusy`,
    ///   `.cameraUnplugged`, `.cameraFormat`, `.deviceUnavailable` (permission), `.io`;
    ///   `.notFound` when `recording` is not a folder.
    public init(
        device: String? = nil, preferring: CameraPixelFormat? = nil, stallSeconds: Double = 5,
        recording: String? = nil
    ) throws(ProofkitError) {
        if let recording, FileKind(atPath: recording) != .folder {
            throw ProofkitError(.notFound, "is not a folder to record frames into", path: recording)
        }
        // (a typed throw: `??` with a throwing right side would throw `any Error`)
        let path: String
        if let device { path = device } else { path = try VideoDevices.first().path }
        self.capture = try CameraCapture(path: path, preferring: preferring, stallSeconds: stallSeconds)
        self.recording = recording
        var limits = ImageDecoder.Configuration()
        limits.minimumShorterSide = nil
        self.decoder = try ImageDecoder(configuration: limits)
    }

    /// The device node.
    public var path: String { capture.path }
    /// What the device is and offers.
    public var camera: CameraDescription { capture.camera }
    /// The mode in use.
    public var mode: CameraMode { capture.mode }

    /// The newest frame as the camera sent it (a JPEG, or YUYV rows), not decoded, waiting up to
    /// `seconds` (default 0.2 s) for one. A frame taken before `notBefore` (monotonic seconds) is
    /// dropped without being decoded or recorded: a live proof that judges a few frames a second
    /// pays nothing for the others.
    /// - Returns: the frame, or nil when none came in time, it was damaged or it came too early.
    /// - Throws: `.cameraStalled` (no frame for the stall time), `.cameraUnplugged`, `.io`;
    ///   when recording, `.io` naming the file that could not be written.
    public func nextFrame(waitingUpTo seconds: Double = 0.2, notBefore: Double = -.infinity)
        throws(ProofkitError) -> CameraFrame?
    {
        guard let frame = try capture.nextFrame(waitingUpTo: seconds) else { return nil }
        if frame.time < notBefore {
            droppedFrames += 1
            return nil
        }
        frameCount += 1
        if let recording { try record(frame, into: recording) }
        return frame
    }

    /// The newest frame, decoded, waiting up to `seconds` (default 0.2 s) for one.
    /// - Returns: the image, or nil when no frame came in time or the frame was damaged.
    /// - Throws: as ``nextFrame(waitingUpTo:notBefore:)``.
    public func nextImage(waitingUpTo seconds: Double = 0.2) throws(ProofkitError) -> CameraImage? {
        guard let frame = try nextFrame(waitingUpTo: seconds) else { return nil }
        return image(of: frame)
    }

    /// A frame handed out by ``nextFrame(waitingUpTo:notBefore:)``, decoded; nil (and counted)
    /// when it cannot be read.
    public func image(of frame: CameraFrame) -> CameraImage? {
        guard let image = rgb(frame) else { return nil }
        return CameraImage(image: image, time: frame.time, sequence: frame.sequence, frame: frame)
    }

    /// A frame's pixels: YUYV converted, MJPEG decoded; nil (and counted) when it cannot be read.
    public func rgb(_ frame: CameraFrame) -> RGBImage? {
        switch frame.format {
        case .yuyv:
            if let image = YUYV.rgb(
                frame.bytes, width: frame.width, height: frame.height, bytesPerLine: frame.bytesPerLine)
            {
                return image
            }
        case .mjpeg:
            if let decoded = try? decoder.decode(frame.bytes) { return decoded.image }
        }
        undecodableFrames += 1
        return nil
    }

    /// Writes one frame into the recording folder: a JPEG as sent, YUYV as a binary PPM.
    private func record(_ frame: CameraFrame, into folder: String) throws(ProofkitError) {
        let number = String(frameCount)
        let name = "frame-" + String(repeating: "0", count: max(0, 6 - number.count)) + number
        switch frame.format {
        case .mjpeg: try AtomicFile.write(frame.bytes, to: "\(folder)/\(name).jpg")
        case .yuyv:
            guard let image = rgb(frame) else { return }
            let header = Array("P6\n\(image.width) \(image.height)\n255\n".utf8)
            try AtomicFile.write(header + image.pixels, to: "\(folder)/\(name).ppm")
        }
    }

    /// Stops the camera (once).
    public func close() { capture.close() }
}
