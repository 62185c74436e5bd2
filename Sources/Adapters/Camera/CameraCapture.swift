public import ProofkitCore
internal import ProofkitSystem

/// One frame as the camera gave it, copied out of the driver's buffer (frames stay in memory).
public struct CameraFrame: Sendable {
    /// The frame's bytes: a JPEG (MJPEG) or packed YUYV rows of `bytesPerLine` bytes.
    public var bytes: [UInt8]
    public var format: CameraPixelFormat
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// Bytes from one YUYV row to the next (at least `width * 2`).
    public var bytesPerLine: Int
    /// The driver's frame counter (frames it dropped leave gaps).
    public var sequence: UInt32
    /// When it was taken off the driver: monotonic seconds (`CLOCK_MONOTONIC`).
    public var time: Double

    public init(
        bytes: [UInt8], format: CameraPixelFormat, width: Int, height: Int, bytesPerLine: Int, sequence: UInt32,
        time: Double
    ) {
        self.bytes = bytes
        self.format = format
        self.width = width
        self.height = height
        self.bytesPerLine = bytesPerLine
        self.sequence = sequence
        self.time = time
    }
}

/// The video devices of this machine.
public enum VideoDevices {
    /// The nodes probed: `/dev/video0` ... `/dev/video63` (udev names every V4L2 node so).
    static let candidates = (0..<64).map { "/dev/video\($0)" }

    /// Every video capture device, with its formats and sizes. Nodes that are not capture devices
    /// (a webcam's metadata node) and nodes that cannot be opened now (busy, no permission) are
    /// left out; nothing is streamed.
    public static func list() -> [CameraDescription] {
        candidates.compactMap { path in
            guard case .success(let status) = POSIX.status(path), status.type == 0o020000 else { return nil }
            return try? describe(path)
        }
    }

    /// The first video capture device: the default of `--camera`.
    /// - Throws: `.notFound` when there is none.
    public static func first() throws(ProofkitError) -> CameraDescription {
        guard let first = list().first else {
            throw ProofkitError(.notFound, "no camera found (no video capture device in /dev/video*)")
        }
        return first
    }

    /// What the device at `path` is and offers. Opens it, asks, closes it; streams nothing.
    /// - Throws: `.notFound` (no such node), `.notACamera` (not a character device, or not a
    ///   video capture device), `.cameraBusy`, `.cameraUnplugged`, `.deviceUnavailable` (no permission).
    public static func describe(_ path: String) throws(ProofkitError) -> CameraDescription {
        let device = try CameraDevice(path: path)
        defer { POSIX.closeDescriptor(device.fd) }
        return try device.describe()
    }
}

/// An open video capture node: the checks every use makes, and the error of each errno.
struct CameraDevice {
    let path: String
    let fd: Int32
    let capability: V4L2.Capability

    /// Opens `path` (read-write, non-blocking, close-on-exec) and checks it captures video.
    init(path: String) throws(ProofkitError) {
        self.path = path
        switch POSIX.status(path) {
        case .failure(let errno): throw Self.error(errno, "open", path: path)
        case .success(let status) where status.type != 0o020000:
            throw ProofkitError(
                .notACamera, "is \(status.kind), not a camera (a video device node such as /dev/video0)", path: path)
        case .success: break
        }
        let fd: Int32
        switch POSIX.open(path, [.readWrite, .nonBlocking]) {
        case .success(let opened): fd = opened
        case .failure(let errno): throw Self.error(errno, "open", path: path)
        }
        switch V4L2.queryCapability(fd) {
        case .failure(let errno):
            POSIX.closeDescriptor(fd)
            if errno == .notATerminal || errno == .invalid {
                throw ProofkitError(
                    .notACamera, "is not a video device (VIDIOC_QUERYCAP: \(errno))", operation: "VIDIOC_QUERYCAP",
                    underlying: errno.code, path: path)
            }
            throw Self.error(errno, "VIDIOC_QUERYCAP", path: path)
        case .success(let capability) where !capability.capturesVideo || !capability.streams:
            POSIX.closeDescriptor(fd)
            throw ProofkitError(
                .notACamera,
                "is not a video capture device (\(capability.card), \(capability.driver): a metadata or output node)",
                path: path)
        case .success(let capability):
            self.fd = fd
            self.capability = capability
        }
    }

    /// The error of a failed call on the camera: one line that says what to do.
    static func error(_ errno: Errno, _ operation: String, path: String) -> ProofkitError {
        let (code, message): (ProofkitError.Code, String) =
            switch errno {
            case .noSuchFile: (.notFound, "no such camera (\(errno))")
            case .deviceBusy: (.cameraBusy, "camera busy: another program is using it (close it and try again)")
            case .noDevice, .noSuchDevice: (.cameraUnplugged, "camera unplugged (\(operation): \(errno))")
            case .permissionDenied, .notPermitted:
                (.deviceUnavailable, "cannot open the camera: \(errno) (add yourself to the video group)")
            default: (.io, "camera error in \(operation): \(errno)")
            }
        return ProofkitError(code, message, operation: operation, underlying: errno.code, path: path)
    }

    /// Every format with its sizes and frame rates.
    func describe() throws(ProofkitError) -> CameraDescription {
        var formats: [CameraFormatDescription] = []
        for index in UInt32(0)..<64 {
            guard let format = try Self.check(V4L2.format(fd, at: index), "VIDIOC_ENUM_FMT", path) else { break }
            var sizes: [CameraFrameSize] = []
            for sizeIndex in UInt32(0)..<256 {
                let size = try Self.check(
                    V4L2.frameSize(fd, fourcc: format.fourcc, at: sizeIndex), "VIDIOC_ENUM_FRAMESIZES", path)
                guard let size else { break }
                switch size {
                case .discrete(let width, let height):
                    sizes.append(
                        CameraFrameSize(
                            width: Int(width), height: Int(height),
                            framesPerSecond: try rates(format.fourcc, width, height)))
                case .range(let minimum, let maximum, _):
                    // A range: the target size when it lies inside, else the nearest corner.
                    let width = min(max(UInt32(CameraMode.targetSize.width), minimum.0), maximum.0)
                    let height = min(max(UInt32(CameraMode.targetSize.height), minimum.1), maximum.1)
                    sizes.append(
                        CameraFrameSize(
                            width: Int(width), height: Int(height),
                            framesPerSecond: try rates(format.fourcc, width, height)))
                }
                if case .range = size { break }
            }
            formats.append(
                CameraFormatDescription(
                    fourcc: CameraFormatDescription.text(format.fourcc), description: format.description, sizes: sizes))
        }
        return CameraDescription(
            path: path, card: capability.card, driver: capability.driver, bus: capability.bus, formats: formats)
    }

    /// The frame rates offered at one size, fastest first.
    private func rates(_ fourcc: UInt32, _ width: UInt32, _ height: UInt32) throws(ProofkitError) -> [Double] {
        var rates: [Double] = []
        for index in UInt32(0)..<64 {
            let interval = V4L2.frameInterval(fd, fourcc: fourcc, width: width, height: height, at: index)
            // A driver without frame intervals answers ENOTTY: no rates known.
            if case .failure(let errno) = interval, errno == .notATerminal { break }
            guard let interval = try Self.check(interval, "VIDIOC_ENUM_FRAMEINTERVALS", path) else { break }
            if interval.numerator > 0 { rates.append(Double(interval.denominator) / Double(interval.numerator)) }
        }
        return rates.sorted(by: >)
    }

    /// The value of a V4L2 call, or its error.
    static func check<T>(_ result: Result<T, Errno>, _ operation: String, _ path: String) throws(ProofkitError) -> T {
        switch result {
        case .success(let value): return value
        case .failure(let errno): throw error(errno, operation, path: path)
        }
    }
}

/// A camera streaming frames through mapped buffers (V4L2 `MMAP` I/O), opened on one mode.
///
/// Frames are copied out of the driver's buffers into memory and given back at once; nothing is
/// written anywhere. Use it from one thread at a time (a live proof's capture loop): it is a class
/// so that the buffers are unmapped and the device closed exactly once, in ``close()`` or `deinit`.
public final class CameraCapture: @unchecked Sendable {
    /// The device node.
    public let path: String
    /// What the device is and offers.
    public let camera: CameraDescription
    /// The mode chosen (``CameraMode/choose(from:preferring:)``) and set.
    public let mode: CameraMode
    /// How long the camera may give no frame before ``nextFrame(waitingUpTo:)`` throws `.cameraStalled`.
    public let stallSeconds: Double
    private let fd: Int32
    private let bytesPerLine: Int
    private var buffers: [UnsafeRawBufferPointer] = []
    private var lastFrameTime: Double
    private var closed = false

    /// The number of driver buffers asked for: one being filled, one being read, two spare.
    static let bufferCount: UInt32 = 4

    /// Opens the camera at `path`, chooses its mode, maps its buffers and starts streaming.
    /// - Parameters:
    ///   - path: the device node, e.g. "/dev/video0".
    ///   - preferring: a format to use whenever the camera offers it (default: the rule of
    ///     ``CameraMode/choose(from:preferring:)``).
    ///   - stallSeconds: how long without a frame is a stalled camera (default 5 s).
    /// - Throws: `.notFound`, `.notACamera`, `.cameraBusy` (open in another program),
    ///   `.cameraUnplugged`, `.cameraFormat` (neither MJPEG nor YUYV offered), `.deviceUnavailable`
    ///   (no permission), `.io` (another failed call).
    public init(path: String, preferring: CameraPixelFormat? = nil, stallSeconds: Double = 5) throws(ProofkitError) {
        let device = try CameraDevice(path: path)
        do throws(ProofkitError) {
            let camera = try device.describe()
            guard let mode = CameraMode.choose(from: camera.formats, preferring: preferring) else {
                let offered = camera.formats.map(\.fourcc).joined(separator: ", ")
                throw ProofkitError(
                    .cameraFormat,
                    "the camera offers no format proofkit decodes (it takes MJPEG and YUYV; offered: \(offered.isEmpty ? "none" : offered))",
                    path: path)
            }
            let set = try CameraDevice.check(
                V4L2.setFormat(
                    device.fd, fourcc: mode.format.fourcc, width: UInt32(mode.width), height: UInt32(mode.height)),
                "VIDIOC_S_FMT", path)
            guard let format = CameraPixelFormat(fourcc: set.fourcc), set.width > 0, set.height > 0 else {
                throw ProofkitError(
                    .cameraFormat,
                    "the camera set \(CameraFormatDescription.text(set.fourcc)) when asked for \(mode.format), which proofkit does not decode",
                    path: path)
            }
            var rate = mode.framesPerSecond
            if case .success(let interval) = V4L2.setFrameInterval(
                device.fd, numerator: 1000, denominator: UInt32(mode.framesPerSecond * 1000)), interval.numerator > 0
            {
                rate = Double(interval.denominator) / Double(interval.numerator)
            }
            self.path = path
            self.camera = camera
            self.mode = CameraMode(
                format: format, width: Int(set.width), height: Int(set.height), framesPerSecond: rate)
            self.bytesPerLine = max(Int(set.bytesPerLine), Int(set.width) * 2)
            self.stallSeconds = stallSeconds
            self.fd = device.fd
            self.lastFrameTime = POSIX.monotonicSeconds()
        } catch {
            POSIX.closeDescriptor(device.fd)
            throw error
        }
        try start()
    }

    /// Maps the buffers, queues them and turns the stream on.
    private func start() throws(ProofkitError) {
        do throws(ProofkitError) {
            let count = try CameraDevice.check(
                V4L2.requestBuffers(fd, count: Self.bufferCount), "VIDIOC_REQBUFS", path)
            guard count > 0 else { throw ProofkitError(.io, "the camera gave no capture buffers", path: path) }
            for index in 0..<count {
                buffers.append(try CameraDevice.check(V4L2.mapBuffer(fd, index: index), "mmap", path))
                try CameraDevice.check(V4L2.queue(fd, index: index), "VIDIOC_QBUF", path)
            }
            try CameraDevice.check(V4L2.stream(fd, on: true), "VIDIOC_STREAMON", path)
            lastFrameTime = POSIX.monotonicSeconds()
        } catch {
            close()
            throw error
        }
    }

    /// The newest frame, waiting up to `seconds` for one; older frames already waiting are dropped
    /// (a live proof judges what is in front of the camera now).
    /// - Returns: the frame, or nil when none came in `seconds` (call again; a cancelled proof stops).
    /// - Throws: `.cameraStalled` when no frame came for ``stallSeconds``; `.cameraUnplugged`
    ///   (`ENODEV`); `.io` for another failure.
    public func nextFrame(waitingUpTo seconds: Double) throws(ProofkitError) -> CameraFrame? {
        precondition(!closed, "nextFrame after close")
        let now = POSIX.monotonicSeconds()
        let left = lastFrameTime + stallSeconds - now
        if left <= 0 { throw stalled() }
        let wait = Int32((min(seconds, left) * 1000).rounded(.up))
        let ready: [Bool]
        do {
            ready = try POSIX.waitReadable([fd], milliseconds: max(0, wait))
        } catch {
            throw CameraDevice.error(error, "poll", path: path)
        }
        guard ready[0] else {
            if POSIX.monotonicSeconds() - lastFrameTime >= stallSeconds { throw stalled() }
            return nil
        }
        var newest: V4L2.FilledBuffer?
        while let filled = try CameraDevice.check(V4L2.dequeue(fd), "VIDIOC_DQBUF", path) {
            if let older = newest { try CameraDevice.check(V4L2.queue(fd, index: older.index), "VIDIOC_QBUF", path) }
            newest = filled
        }
        guard let newest, Int(newest.index) < buffers.count else { return nil }
        let buffer = buffers[Int(newest.index)]
        let used = min(Int(newest.bytesUsed), buffer.count)
        let bytes = Array(buffer[..<used])
        try CameraDevice.check(V4L2.queue(fd, index: newest.index), "VIDIOC_QBUF", path)
        let time = POSIX.monotonicSeconds()
        if newest.damaged || used == 0 { return nil }
        lastFrameTime = time
        return CameraFrame(
            bytes: bytes, format: mode.format, width: mode.width, height: mode.height, bytesPerLine: bytesPerLine,
            sequence: newest.sequence, time: time)
    }

    private func stalled() -> ProofkitError {
        let seconds = stallSeconds == stallSeconds.rounded() ? String(Int(stallSeconds)) : "\(stallSeconds)"
        return ProofkitError(.cameraStalled, "the camera gave no frame for \(seconds) s", path: path)
    }

    /// Stops the stream, unmaps the buffers and closes the device (once; later calls do nothing).
    public func close() {
        guard !closed else { return }
        closed = true
        _ = V4L2.stream(fd, on: false)
        for buffer in buffers { POSIX.unmap(buffer) }
        buffers = []
        _ = V4L2.requestBuffers(fd, count: 0)
        POSIX.closeDescriptor(fd)
    }

    deinit { close() }
}
