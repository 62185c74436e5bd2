// The Camera adapter's one file of V4L2 calls: each request proofkit sends to a video device, typed
// from <linux/videodev2.h> (CV4L2) and sent through ProofkitSystem's chokepoint (`POSIX.control`,
// `POSIX.mapDevice`, `POSIX.waitReadable`). No logic beyond filling the struct and reading it back.
internal import CV4L2
internal import ProofkitSystem

/// The V4L2 requests proofkit makes, one thin wrapper each (the corresponding ioctl is named).
enum V4L2 {
    /// What `VIDIOC_QUERYCAP` says about a device.
    struct Capability {
        var driver: String
        var card: String
        var bus: String
        /// The capabilities of this node (`device_caps` when the driver sets `V4L2_CAP_DEVICE_CAPS`).
        var capabilities: UInt32

        /// Whether the node captures video (`V4L2_CAP_VIDEO_CAPTURE`), not metadata or output.
        var capturesVideo: Bool { capabilities & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 }
        /// Whether the node streams through mapped buffers (`V4L2_CAP_STREAMING`).
        var streams: Bool { capabilities & UInt32(V4L2_CAP_STREAMING) != 0 }
    }

    /// The text of a fixed-size, NUL-padded `__u8` array of a V4L2 struct.
    private static func text<T>(_ field: T) -> String {
        withUnsafeBytes(of: field) { bytes in
            let used = bytes.firstIndex(of: 0) ?? bytes.count
            return String(decoding: bytes[..<used], as: UTF8.self)
        }
    }

    private static let capture = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    private static let mmapMemory = V4L2_MEMORY_MMAP.rawValue

    /// `VIDIOC_QUERYCAP`.
    static func queryCapability(_ fd: Int32) -> Result<Capability, Errno> {
        var value = v4l2_capability()
        return POSIX.control(fd, cv4l2_VIDIOC_QUERYCAP(), &value).map { _ in
            let deviceCaps = value.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0
            return Capability(
                driver: text(value.driver), card: text(value.card), bus: text(value.bus_info),
                capabilities: deviceCaps ? value.device_caps : value.capabilities)
        }
    }

    /// `VIDIOC_ENUM_FMT` at `index`: the format's four-character code and description, or nil
    /// past the last (`EINVAL`).
    static func format(_ fd: Int32, at index: UInt32) -> Result<(fourcc: UInt32, description: String)?, Errno> {
        var value = v4l2_fmtdesc()
        value.index = index
        value.type = capture
        switch POSIX.control(fd, cv4l2_VIDIOC_ENUM_FMT(), &value) {
        case .success: return .success((value.pixelformat, text(value.description)))
        case .failure(let errno) where errno == .invalid: return .success(nil)
        case .failure(let errno): return .failure(errno)
        }
    }

    /// A frame size of `VIDIOC_ENUM_FRAMESIZES`.
    enum FrameSize {
        case discrete(width: UInt32, height: UInt32)
        /// A range (stepwise or continuous): any size from the minimum to the maximum by the steps.
        case range(minimum: (UInt32, UInt32), maximum: (UInt32, UInt32), step: (UInt32, UInt32))
    }

    /// `VIDIOC_ENUM_FRAMESIZES` of `fourcc` at `index`, or nil past the last (`EINVAL`).
    static func frameSize(_ fd: Int32, fourcc: UInt32, at index: UInt32) -> Result<FrameSize?, Errno> {
        var value = v4l2_frmsizeenum()
        value.index = index
        value.pixel_format = fourcc
        switch POSIX.control(fd, cv4l2_VIDIOC_ENUM_FRAMESIZES(), &value) {
        case .success:
            if value.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
                return .success(.discrete(width: value.discrete.width, height: value.discrete.height))
            }
            let s = value.stepwise
            return .success(
                .range(
                    minimum: (s.min_width, s.min_height), maximum: (s.max_width, s.max_height),
                    step: (s.step_width, s.step_height)))
        case .failure(let errno) where errno == .invalid: return .success(nil)
        case .failure(let errno): return .failure(errno)
        }
    }

    /// `VIDIOC_ENUM_FRAMEINTERVALS` of `fourcc` at a size, index `index`: the frame interval as a
    /// fraction of a second (the fastest of a range), or nil past the last (`EINVAL`).
    static func frameInterval(_ fd: Int32, fourcc: UInt32, width: UInt32, height: UInt32, at index: UInt32)
        -> Result<(numerator: UInt32, denominator: UInt32)?, Errno>
    {
        var value = v4l2_frmivalenum()
        value.index = index
        value.pixel_format = fourcc
        value.width = width
        value.height = height
        switch POSIX.control(fd, cv4l2_VIDIOC_ENUM_FRAMEINTERVALS(), &value) {
        case .success:
            let fraction = value.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue ? value.discrete : value.stepwise.min
            return .success((fraction.numerator, fraction.denominator))
        case .failure(let errno) where errno == .invalid: return .success(nil)
        case .failure(let errno): return .failure(errno)
        }
    }

    /// The format in use after `VIDIOC_S_FMT` (the driver may change what was asked).
    struct PixelFormat {
        var fourcc: UInt32
        var width: UInt32
        var height: UInt32
        var bytesPerLine: UInt32
        var imageSize: UInt32
    }

    /// `VIDIOC_S_FMT`: asks for `fourcc` at a size, progressive; gives what the driver chose.
    static func setFormat(_ fd: Int32, fourcc: UInt32, width: UInt32, height: UInt32) -> Result<PixelFormat, Errno> {
        var value = v4l2_format()
        value.type = capture
        value.fmt.pix.pixelformat = fourcc
        value.fmt.pix.width = width
        value.fmt.pix.height = height
        value.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        return POSIX.control(fd, cv4l2_VIDIOC_S_FMT(), &value).map { _ in
            let pix = value.fmt.pix
            return PixelFormat(
                fourcc: pix.pixelformat, width: pix.width, height: pix.height, bytesPerLine: pix.bytesperline,
                imageSize: pix.sizeimage)
        }
    }

    /// `VIDIOC_S_PARM`: asks for a frame interval of `numerator`/`denominator` s; gives the one set.
    static func setFrameInterval(_ fd: Int32, numerator: UInt32, denominator: UInt32)
        -> Result<(numerator: UInt32, denominator: UInt32), Errno>
    {
        var value = v4l2_streamparm()
        value.type = capture
        value.parm.capture.timeperframe = v4l2_fract(numerator: numerator, denominator: denominator)
        return POSIX.control(fd, cv4l2_VIDIOC_S_PARM(), &value).map { _ in
            let set = value.parm.capture.timeperframe
            return (set.numerator, set.denominator)
        }
    }

    /// `VIDIOC_REQBUFS` of `count` mapped buffers (0 frees them); gives how many the driver made.
    static func requestBuffers(_ fd: Int32, count: UInt32) -> Result<UInt32, Errno> {
        var value = v4l2_requestbuffers()
        value.count = count
        value.type = capture
        value.memory = mmapMemory
        return POSIX.control(fd, cv4l2_VIDIOC_REQBUFS(), &value).map { _ in value.count }
    }

    /// `VIDIOC_QUERYBUF` of buffer `index`, then `mmap` of it.
    static func mapBuffer(_ fd: Int32, index: UInt32) -> Result<UnsafeRawBufferPointer, Errno> {
        var value = v4l2_buffer()
        value.index = index
        value.type = capture
        value.memory = mmapMemory
        switch POSIX.control(fd, cv4l2_VIDIOC_QUERYBUF(), &value) {
        case .success: return POSIX.mapDevice(fd, size: Int(value.length), offset: Int64(value.m.offset))
        case .failure(let errno): return .failure(errno)
        }
    }

    /// `VIDIOC_QBUF`: gives buffer `index` to the driver to fill.
    static func queue(_ fd: Int32, index: UInt32) -> Result<Void, Errno> {
        var value = v4l2_buffer()
        value.index = index
        value.type = capture
        value.memory = mmapMemory
        return POSIX.control(fd, cv4l2_VIDIOC_QBUF(), &value).map { _ in () }
    }

    /// A filled buffer that `VIDIOC_DQBUF` handed back.
    struct FilledBuffer {
        var index: UInt32
        var bytesUsed: UInt32
        var sequence: UInt32
        /// The driver's error flag (`V4L2_BUF_FLAG_ERROR`): the frame may be damaged.
        var damaged: Bool
    }

    /// `VIDIOC_DQBUF`: the next filled buffer, or nil when none is ready yet (`EAGAIN`).
    static func dequeue(_ fd: Int32) -> Result<FilledBuffer?, Errno> {
        var value = v4l2_buffer()
        value.type = capture
        value.memory = mmapMemory
        switch POSIX.control(fd, cv4l2_VIDIOC_DQBUF(), &value) {
        case .success:
            return .success(
                FilledBuffer(
                    index: value.index, bytesUsed: value.bytesused, sequence: value.sequence,
                    damaged: value.flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0))
        case .failure(let errno) where errno == .wouldBlock: return .success(nil)
        case .failure(let errno): return .failure(errno)
        }
    }

    /// `VIDIOC_STREAMON` (`on`) or `VIDIOC_STREAMOFF`.
    static func stream(_ fd: Int32, on: Bool) -> Result<Void, Errno> {
        var type = Int32(capture)
        let request = on ? cv4l2_VIDIOC_STREAMON() : cv4l2_VIDIOC_STREAMOFF()
        return POSIX.control(fd, request, &type).map { _ in () }
    }
}
