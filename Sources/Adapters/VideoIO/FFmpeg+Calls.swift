// The one file of VideoIO that calls FFmpeg's libraries (libavformat, libavcodec, libavutil,
// libswscale 5.1). None is linked: their functions come from the tables loaded on first use
// (`FFmpeg.load()`), and are called through them.
internal import CAVCodec
internal import CAVFormat
internal import CAVUtil
internal import CProofkitShims
internal import CSwScale
import ProofkitCore

/// FFmpeg's four libraries, loaded together on first use and kept for the life of the process.
struct FFmpeg: @unchecked Sendable {
    let format: proofkit_avformat_api
    let codec: proofkit_avcodec_api
    let util: proofkit_avutil_api
    let scale: proofkit_swscale_api

    /// One library's table.
    /// - Throws: `.runtimeUnavailable` (exit 69) in one line: the file, dlerror's reason and the
    ///   Debian package to install.
    static func table<Table>(_ library: UnsafeMutablePointer<proofkit_library>, soname: String?, as: Table.Type)
        throws(ProofkitError) -> Table
    {
        guard let table = proofkit_library_load(library, soname) else {
            throw ProofkitError(.runtimeUnavailable, String(cString: proofkit_library_failure()), operation: "dlopen")
        }
        return table.load(as: Table.self)
    }

    /// The four tables (libavutil first, then libavcodec, libavformat, libswscale); FFmpeg's own
    /// log is silenced (proofkit says what went wrong in one line of its own).
    /// - Throws: `.runtimeUnavailable` (exit 69) naming the first library that cannot be loaded
    ///   and its Debian package (libavutil57, libavcodec59, libavformat59, libswscale6).
    static func load() throws(ProofkitError) -> FFmpeg {
        let util = try table(proofkit_avutil_library(), soname: nil, as: proofkit_avutil_api.self)
        let codec = try table(proofkit_avcodec_library(), soname: nil, as: proofkit_avcodec_api.self)
        let format = try table(proofkit_avformat_library(), soname: nil, as: proofkit_avformat_api.self)
        let scale = try table(proofkit_swscale_library(), soname: nil, as: proofkit_swscale_api.self)
        util.av_log_set_level(AV_LOG_QUIET)
        return FFmpeg(format: format, codec: codec, util: util, scale: scale)
    }

    /// Loads one library: "avformat", "avcodec", "avutil" or "swscale"; from `soname` instead of
    /// its own file when given (tests: a missing or wrong file must give the right message).
    static func load(_ library: String, soname: String?) throws(ProofkitError) {
        switch library {
        case "avformat": _ = try table(proofkit_avformat_library(), soname: soname, as: proofkit_avformat_api.self)
        case "avcodec": _ = try table(proofkit_avcodec_library(), soname: soname, as: proofkit_avcodec_api.self)
        case "avutil": _ = try table(proofkit_avutil_library(), soname: soname, as: proofkit_avutil_api.self)
        default: _ = try table(proofkit_swscale_library(), soname: soname, as: proofkit_swscale_api.self)
        }
    }

    /// FFmpeg's text for an error code (`av_strerror`).
    func describe(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        _ = util.av_strerror(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The containers a video is read from (libavformat's demuxer names). Anything else, playlists
/// and concat lists in particular (they open other files or URLs), is refused.
let allowedContainers =
    "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm,avi,flv,mpeg,mpegts,ogg,asf,h264,hevc,m4v,mjpeg,rawvideo,yuv4mpegpipe,gif"

/// Owns one open video: the demuxer, the decoder, the scaler and the frame and packet they share.
/// `@unchecked Sendable`: the pointers are owned here and used by one caller at a time.
final class FFmpegVideo: @unchecked Sendable {
    private let ffmpeg: FFmpeg
    private var formatContext: UnsafeMutablePointer<AVFormatContext>?
    private var codecContext: UnsafeMutablePointer<AVCodecContext>?
    private var scaler: OpaquePointer?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var streamIndex: Int32
    private var timeBase: Double
    private var startTimestamp: Int64
    /// The stream's facts, read when it was opened.
    private(set) var facts: VideoFacts
    private var draining = false
    private var finished = false

    /// What the container and the codec say about the stream.
    struct VideoFacts {
        var width: Int
        var height: Int
        var codec: String
        var frameRate: Double?
        var duration: Double?
        var frameCount: Int?
        /// Clockwise degrees to turn each frame upright (0, 90, 180 or 270), from the stream's
        /// display matrix.
        var rotation: Int
    }

    /// Opens the file at `url` (a `file:` URL of an open descriptor), finds its best video stream
    /// and opens its decoder.
    /// - Throws: `.decodeFailed` (not a video FFmpeg reads, no video stream, no decoder),
    ///   `.unsupportedFormat` (a frame over `maximumPixels`), `.runtimeUnavailable`.
    init(url: String, maximumPixels: Int) throws(ProofkitError) {
        let ffmpeg = try FFmpeg.load()
        self.ffmpeg = ffmpeg
        var options: OpaquePointer? = nil
        _ = ffmpeg.util.av_dict_set(&options, "protocol_whitelist", "file", 0)
        _ = ffmpeg.util.av_dict_set(&options, "format_whitelist", allowedContainers, 0)
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        let opened = ffmpeg.format.avformat_open_input(&context, url, nil, &options)
        ffmpeg.util.av_dict_free(&options)
        guard opened == 0, let context else {
            throw ProofkitError(
                .decodeFailed, "not a photo or a video that proofkit reads (\(ffmpeg.describe(opened)))",
                operation: "avformat_open_input", underlying: opened)
        }
        // Every property set: from here on, deinit frees what was made when a step throws.
        formatContext = context
        streamIndex = -1
        timeBase = 0
        startTimestamp = 0
        facts = VideoFacts(width: 0, height: 0, codec: "", frameRate: nil, duration: nil, frameCount: nil, rotation: 0)
        let found = ffmpeg.format.avformat_find_stream_info(context, nil)
        guard found >= 0 else {
            throw ProofkitError(
                .decodeFailed, "not a readable video (\(ffmpeg.describe(found)))",
                operation: "avformat_find_stream_info", underlying: found)
        }
        let best = ffmpeg.format.av_find_best_stream(context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard best >= 0, let stream = context.pointee.streams[Int(best)] else {
            throw ProofkitError(
                .decodeFailed, "has no video stream (\(ffmpeg.describe(best)))", operation: "av_find_best_stream",
                underlying: best)
        }
        let parameters = stream.pointee.codecpar.pointee
        let width = Int(parameters.width)
        let height = Int(parameters.height)
        guard width > 0, height > 0 else {
            throw ProofkitError(.decodeFailed, "its video stream has no frame size")
        }
        guard width * height <= maximumPixels else {
            throw ProofkitError(
                .unsupportedFormat,
                "its frames are \(width)x\(height), over the \(maximumPixels / 1_000_000) MP limit for a video")
        }
        guard let decoder = ffmpeg.codec.avcodec_find_decoder(parameters.codec_id) else {
            throw ProofkitError(
                .decodeFailed, "no decoder for its video codec (FFmpeg codec id \(parameters.codec_id))")
        }
        guard let codecContext = ffmpeg.codec.avcodec_alloc_context3(decoder) else {
            throw ProofkitError(.internal, "FFmpeg could not allocate a decoder", operation: "avcodec_alloc_context3")
        }
        self.codecContext = codecContext
        let copied = ffmpeg.codec.avcodec_parameters_to_context(codecContext, stream.pointee.codecpar)
        guard copied >= 0 else {
            throw ProofkitError(
                .decodeFailed, "cannot set up its decoder (\(ffmpeg.describe(copied)))",
                operation: "avcodec_parameters_to_context", underlying: copied)
        }
        // One thread: a frame out for each packet in, without frame threading's delay; and no
        // frame larger than the limit is ever allocated (FFmpeg checks each frame's size).
        codecContext.pointee.thread_count = 1
        codecContext.pointee.max_pixels = Int64(maximumPixels)
        let openedCodec = ffmpeg.codec.avcodec_open2(codecContext, decoder, nil)
        guard openedCodec >= 0 else {
            throw ProofkitError(
                .decodeFailed, "cannot open its decoder (\(ffmpeg.describe(openedCodec)))", operation: "avcodec_open2",
                underlying: openedCodec)
        }
        guard let frame = ffmpeg.util.av_frame_alloc(), let packet = ffmpeg.codec.av_packet_alloc() else {
            throw ProofkitError(.internal, "FFmpeg could not allocate a frame", operation: "av_frame_alloc")
        }
        self.frame = frame
        self.packet = packet
        streamIndex = best
        let base = stream.pointee.time_base
        timeBase = base.den != 0 ? Double(base.num) / Double(base.den) : 0
        startTimestamp = stream.pointee.start_time == proofkit_av_nopts_value ? 0 : stream.pointee.start_time
        let rate = stream.pointee.avg_frame_rate
        let duration: Double? =
            stream.pointee.duration > 0 && stream.pointee.duration != proofkit_av_nopts_value
            ? Double(stream.pointee.duration) * timeBase
            : (context.pointee.duration > 0 ? Double(context.pointee.duration) / Double(AV_TIME_BASE) : nil)
        var rotation = 0
        if let matrix = ffmpeg.format.av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, nil) {
            let angle = matrix.withMemoryRebound(to: Int32.self, capacity: 9) {
                ffmpeg.util.av_display_rotation_get($0)
            }
            // av_display_rotation_get gives the counter-clockwise angle of the stored picture.
            if angle.isFinite { rotation = ((-Int(angle.rounded()) % 360) + 360) % 360 / 90 * 90 }
        }
        let codecName = decoder.pointee.name.map { String(cString: $0) } ?? "unknown"
        facts = VideoFacts(
            width: width, height: height, codec: codecName,
            frameRate: rate.num > 0 && rate.den > 0 ? Double(rate.num) / Double(rate.den) : nil, duration: duration,
            frameCount: stream.pointee.nb_frames > 0 ? Int(stream.pointee.nb_frames) : nil, rotation: rotation)
    }

    deinit {
        if scaler != nil { ffmpeg.scale.sws_freeContext(scaler) }
        if frame != nil { ffmpeg.util.av_frame_free(&frame) }
        if packet != nil { ffmpeg.codec.av_packet_free(&packet) }
        if codecContext != nil { ffmpeg.codec.avcodec_free_context(&codecContext) }
        if formatContext != nil { ffmpeg.format.avformat_close_input(&formatContext) }
    }

    /// Why reading stopped before the end of the file: FFmpeg's reason.
    struct ReadStop: Error {
        var operation: String
        var reason: String
    }

    /// The next decoded frame, converted to 8-bit RGB into `pixels`, or `nil` at the end of the
    /// stream (after the decoder has given what it still held).
    /// - Parameters:
    ///   - output: the size to convert a frame of the given stored width and height to, in pixels.
    ///   - pixels: the RGB buffer, resized to `output`'s width x height x 3 when it differs.
    /// - Returns: the frame's presentation time in seconds from the stream's start (`nil` when
    ///   the frame has none), and its stored size; `nil` at the end.
    /// - Throws: `ReadStop` when the file cannot be read or decoded further.
    func nextFrame(
        output: (Int, Int) -> (width: Int, height: Int), into pixels: inout [UInt8]
    ) throws(ReadStop) -> (time: Double?, width: Int, height: Int)? {
        guard let frame, let packet, let codecContext, let formatContext else { return nil }
        while !finished {
            let received = ffmpeg.codec.avcodec_receive_frame(codecContext, frame)
            if received == 0 {
                defer { ffmpeg.util.av_frame_unref(frame) }
                let width = Int(frame.pointee.width)
                let height = Int(frame.pointee.height)
                let size = output(width, height)
                try scale(frame, width: width, height: height, to: size, into: &pixels)
                let stamp = frame.pointee.best_effort_timestamp
                let time = stamp == proofkit_av_nopts_value ? nil : Double(stamp - startTimestamp) * timeBase
                return (time, width, height)
            }
            if received == proofkit_averror_eof {
                finished = true
                return nil
            }
            guard received == proofkit_averror_again else {
                finished = true
                throw ReadStop(operation: "decode", reason: ffmpeg.describe(received))
            }
            if draining {
                finished = true
                return nil
            }
            // The decoder wants more: the next packet of the stream (others are skipped).
            let read = ffmpeg.format.av_read_frame(formatContext, packet)
            if read < 0 {
                draining = true
                _ = ffmpeg.codec.avcodec_send_packet(codecContext, nil)  // flush what it holds
                if read != proofkit_averror_eof {
                    // Give what the decoder holds first; the stop is reported once it is empty.
                    pendingStop = ReadStop(operation: "read", reason: ffmpeg.describe(read))
                }
                continue
            }
            defer { ffmpeg.codec.av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            let sent = ffmpeg.codec.avcodec_send_packet(codecContext, packet)
            if sent < 0 && sent != proofkit_averror_again {
                draining = true
                _ = ffmpeg.codec.avcodec_send_packet(codecContext, nil)
                pendingStop = ReadStop(operation: "decode", reason: ffmpeg.describe(sent))
            }
        }
        return nil
    }

    /// A read or decode failure met while frames were still held by the decoder (reported by the
    /// caller once they are out).
    var pendingStop: ReadStop?

    private func scale(
        _ frame: UnsafeMutablePointer<AVFrame>, width: Int, height: Int, to size: (width: Int, height: Int),
        into pixels: inout [UInt8]
    ) throws(ReadStop) {
        let format = AVPixelFormat(rawValue: frame.pointee.format)
        let flags = size.width < width ? SWS_AREA : SWS_BILINEAR
        guard
            let context = ffmpeg.scale.sws_getCachedContext(
                scaler, Int32(width), Int32(height), format, Int32(size.width), Int32(size.height), AV_PIX_FMT_RGB24,
                flags, nil, nil, nil)
        else {
            throw ReadStop(operation: "sws_getCachedContext", reason: "cannot convert its pixel format to RGB")
        }
        scaler = context
        let count = size.width * size.height * 3
        if pixels.count != count { pixels = [UInt8](repeating: 0, count: count) }
        var sourceStrides = frame.pointee.linesize
        var sourcePlanes = frame.pointee.data
        let rows = withUnsafePointer(to: &sourcePlanes) { planes in
            withUnsafePointer(to: &sourceStrides) { strides in
                planes.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { planes in
                    strides.withMemoryRebound(to: Int32.self, capacity: 8) { strides in
                        pixels.withUnsafeMutableBufferPointer { output in
                            var destination: [UnsafeMutablePointer<UInt8>?] = [output.baseAddress, nil, nil, nil]
                            var destinationStrides: [Int32] = [Int32(size.width * 3), 0, 0, 0]
                            return ffmpeg.scale.sws_scale(
                                context, planes, strides, 0, Int32(height), &destination, &destinationStrides)
                        }
                    }
                }
            }
        }
        guard rows == Int32(size.height) else {
            throw ReadStop(operation: "sws_scale", reason: "the conversion to RGB gave \(rows) of \(size.height) rows")
        }
    }
}
