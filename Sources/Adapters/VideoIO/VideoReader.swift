public import ProofkitCore
internal import ProofkitSystem

/// One decoded frame of a video.
public struct VideoFrame: Sendable, Equatable {
    /// The frame, upright (the stream's rotation applied), in 8-bit RGB, at most
    /// ``VideoReader/Configuration/longestSide`` pixels on its longer side.
    public var image: RGBImage
    /// Its presentation time, in seconds from the stream's first frame (0 for the first); each
    /// frame's time is greater than the one before.
    public var time: Double
    /// Its position among the frames given, from 0.
    public var index: Int
}

/// Why a video's frames ended before the end of the file.
public struct VideoStop: Sendable, Equatable, CustomStringConvertible {
    /// The frames given before the stop.
    public var framesRead: Int
    /// The last good frame's time, in seconds (`nil` when no frame decoded).
    public var lastTime: Double?
    /// FFmpeg's reason, or proofkit's ("the file ends at 2.1 s of its 4.0 s").
    public var reason: String

    /// "stopped after frame 61 (2.000 s): <reason>".
    public var description: String {
        guard let lastTime else { return "stopped before the first frame: \(reason)" }
        let time = (lastTime * 1000).rounded() / 1000
        return "stopped after frame \(framesRead) (\(time) s): \(reason)"
    }
}

/// Reads a video file frame by frame through FFmpeg's libraries (libavformat, libavcodec,
/// libswscale, libavutil), each loaded on first use, not linked.
///
/// ```swift
/// let video = try VideoReader(path: "squats.mp4")
/// while let frame = try video.next() { use(frame.image, at: frame.time) }
/// if let stop = video.stop { print(stop) }   // a truncated or damaged file
/// ```
///
/// Memory is bounded whatever the file says: a stream over ``Configuration/maximumPixels`` or
/// with an extreme aspect ratio is refused before decoding, each frame is scaled while it is
/// converted to RGB so that its longer side is at most ``Configuration/longestSide``, and one
/// frame is held at a time. Only a local file is read: no network or other protocol, and no
/// playlist or list container that would open other files.
///
/// Not thread-safe: use one reader per thread. `@unchecked Sendable`: FFmpeg's state is owned here.
public final class VideoReader: @unchecked Sendable {
    /// Limits on what is decoded.
    public struct Configuration: Sendable, Equatable {
        /// The largest stored frame decoded, in pixels (default 8192 x 4320, 8K): larger is refused
        /// (`.unsupportedFormat`, exit 65) before any frame is decoded.
        public var maximumPixels: Int
        /// The largest ratio of the longer side to the shorter (default 8): more is refused.
        public var maximumAspectRatio: Int
        /// The longer side of the frames given, at most, in pixels (default 1280): larger frames
        /// are scaled down (area averaging) while they are converted to RGB.
        public var longestSide: Int

        /// Creates limits (pixels; the defaults as documented on each property).
        public init(maximumPixels: Int = 8192 * 4320, maximumAspectRatio: Int = 8, longestSide: Int = 1280) {
            self.maximumPixels = maximumPixels
            self.maximumAspectRatio = maximumAspectRatio
            self.longestSide = longestSide
        }
    }

    /// The file, as given.
    public let path: String
    /// The stream's stored frame width and height, in pixels (before rotation and scaling).
    public let storedWidth: Int
    public let storedHeight: Int
    /// The video codec's FFmpeg name ("h264", "mpeg4", "vp9"...).
    public let codec: String
    /// The average frame rate, in frames per second, when the container gives one.
    public let frameRate: Double?
    /// The stream's duration, in seconds, when the container gives one.
    public let duration: Double?
    /// Clockwise degrees applied to turn each frame upright (0, 90, 180 or 270).
    public let rotation: Int
    /// Why the frames ended early, once ``next()`` has returned `nil` (`nil`: the file was read
    /// to its end).
    public private(set) var stop: VideoStop?

    private let configuration: Configuration
    private let video: FFmpegVideo
    private var scaled: [UInt8] = []
    private var index = 0
    private var lastTime: Double?
    private var ended = false
    /// The descriptor FFmpeg reads through (`/proc/self/fd/N`), open for the reader's life.
    private let descriptor: Int32

    /// Opens a video file and its decoder.
    /// - Parameters:
    ///   - path: a regular file (MP4, MOV, MKV, WebM, AVI, MPEG, FLV, Ogg...; by content).
    ///   - configuration: the size limits.
    /// - Throws: `ProofkitError` naming `path`: `.notFound` (66: missing or a folder), `.io` (74:
    ///   unreadable, not a regular file), `.decodeFailed` (65: empty, not a video, no video
    ///   stream, its header cut off), `.unsupportedFormat` (65: over the size or aspect limits),
    ///   `.runtimeUnavailable` (69: a library of FFmpeg is not installed; the message names its
    ///   Debian package).
    public init(path: String, configuration: Configuration = Configuration()) throws(ProofkitError) {
        self.path = path
        self.configuration = configuration
        let (fd, status) = try POSIX.openInput(path, what: "video")
        descriptor = fd
        do throws(ProofkitError) {
            guard status.isRegular else {
                throw ProofkitError(.io, "is not a regular file: a video is read from a file")
            }
            guard status.size > 0 else { throw ProofkitError(.decodeFailed, "is empty (0 bytes), not a video") }
            video = try FFmpegVideo(url: "file:/proc/self/fd/\(fd)", maximumPixels: configuration.maximumPixels)
            let facts = video.facts
            let longer = max(facts.width, facts.height)
            let shorter = min(facts.width, facts.height)
            guard longer <= shorter * configuration.maximumAspectRatio else {
                throw ProofkitError(
                    .unsupportedFormat,
                    "its frames are \(facts.width)x\(facts.height), more than \(configuration.maximumAspectRatio):1")
            }
            storedWidth = facts.width
            storedHeight = facts.height
            codec = facts.codec
            frameRate = facts.frameRate
            duration = facts.duration
            rotation = facts.rotation
        } catch {
            POSIX.closeDescriptor(fd)
            throw error.code == .runtimeUnavailable ? error : error.at(path: path)
        }
    }

    deinit { POSIX.closeDescriptor(descriptor) }

    /// The size of the frames given, in pixels (upright, after scaling).
    public var frameSize: (width: Int, height: Int) {
        let size = Self.scaledSize(width: storedWidth, height: storedHeight, longestSide: configuration.longestSide)
        return rotation % 180 == 0 ? size : (size.height, size.width)
    }

    /// `width` x `height` scaled so that the longer side is at most `longestSide` (never up).
    static func scaledSize(width: Int, height: Int, longestSide: Int) -> (width: Int, height: Int) {
        let longer = max(width, height)
        guard longer > longestSide else { return (width, height) }
        let factor = Double(longestSide) / Double(longer)
        return (max(1, Int((Double(width) * factor).rounded())), max(1, Int((Double(height) * factor).rounded())))
    }

    /// The next frame, or `nil` when there are no more (then ``stop`` says whether the file
    /// ended early). A frame whose time does not follow the one before (a damaged or edited
    /// timestamp) is skipped; a frame without a timestamp is placed one frame period after the
    /// one before.
    /// - Throws: nothing for a damaged file (the frames before the damage are given, then `nil`,
    ///   and ``stop`` says where); `.unsupportedFormat` when a frame changes size to one over the
    ///   limits.
    public func next() throws(ProofkitError) -> VideoFrame? {
        while !ended {
            let longestSide = configuration.longestSide
            let decoded: (time: Double?, width: Int, height: Int)?
            do throws(FFmpegVideo.ReadStop) {
                decoded = try video.nextFrame(
                    output: { Self.scaledSize(width: $0, height: $1, longestSide: longestSide) }, into: &scaled)
            } catch {
                finish(stop: "cannot \(error.operation == "read" ? "read" : "decode") further: \(error.reason)")
                return nil
            }
            guard let decoded else {
                finish(stop: video.pendingStop.map { "cannot read further: \($0.reason)" } ?? endCheck())
                return nil
            }
            let period = 1 / (frameRate ?? 30)
            let time = decoded.time ?? ((lastTime ?? -period) + period)
            if let lastTime, time <= lastTime { continue }
            let size = Self.scaledSize(width: decoded.width, height: decoded.height, longestSide: longestSide)
            let image = RGBImage.rotated(
                RGBImage(width: size.width, height: size.height, pixels: scaled), clockwise: rotation)
            lastTime = time
            defer { index += 1 }
            return VideoFrame(image: image, time: time, index: index)
        }
        return nil
    }

    private func finish(stop reason: String?) {
        ended = true
        if let reason { stop = VideoStop(framesRead: index, lastTime: lastTime, reason: reason) }
    }

    /// At the end of the stream: whether the frames fell short of what the container promised
    /// (a file cut off mid-stream still ends cleanly for the demuxer).
    private func endCheck() -> String? {
        guard let duration, duration > 0 else { return nil }
        let period = 1 / (frameRate ?? 30)
        let reached = (lastTime ?? -period) + period
        guard reached < duration - 2 * period else { return nil }
        func seconds(_ value: Double) -> String { "\((value * 100).rounded() / 100) s" }
        return "the file ends at \(seconds(reached)) of its \(seconds(duration)) (cut short?)"
    }
}

extension RGBImage {
    /// `image` turned `clockwise` degrees (0, 90, 180 or 270; anything else leaves it as is).
    static func rotated(_ image: RGBImage, clockwise: Int) -> RGBImage {
        let (width, height) = (image.width, image.height)
        switch clockwise {
        case 90, 180, 270:
            var pixels = [UInt8](repeating: 0, count: image.pixels.count)
            let turned = clockwise == 180 ? (width, height) : (height, width)
            image.pixels.withUnsafeBufferPointer { source in
                pixels.withUnsafeMutableBufferPointer { target in
                    for y in 0..<height {
                        for x in 0..<width {
                            let (tx, ty): (Int, Int)
                            switch clockwise {
                            case 90: (tx, ty) = (height - 1 - y, x)
                            case 180: (tx, ty) = (width - 1 - x, height - 1 - y)
                            default: (tx, ty) = (y, width - 1 - x)
                            }
                            let from = (y * width + x) * 3
                            let to = (ty * turned.0 + tx) * 3
                            target[to] = source[from]
                            target[to + 1] = source[from + 1]
                            target[to + 2] = source[from + 2]
                        }
                    }
                }
            }
            return RGBImage(width: turned.0, height: turned.1, pixels: pixels)
        default:
            return image
        }
    }
}
