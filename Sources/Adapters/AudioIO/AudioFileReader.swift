public import ProofkitCore
internal import ProofkitSystem

/// Streams decoded audio out of a file, chunk by chunk, as interleaved 32-bit floats.
///
/// Reads everything libsndfile reads (WAV including WAVE_FORMAT_EXTENSIBLE, 24-bit and float,
/// AIFF, CAF, FLAC, Ogg Vorbis, Opus, MP3, ...), at any rate and channel count. The format is
/// detected from the content, never from the extension. AAC (M4A/MP4, ADTS, ADIF) is recognised
/// by its magic bytes and refused with a message that says how to convert it.
///
/// Memory is bounded by the chunks the caller asks for: nothing is read ahead.
///
/// ```swift
/// var reader = try AudioFileReader(path: "adhan.mp3")
/// var buffer = [Float](repeating: 0, count: 4096 * reader.format.channels)
/// while case let frames = try reader.read(into: &buffer, maxFrames: 4096), frames > 0 { ... }
/// reader.close()
/// ```
///
/// Ownership: a unique owner of the libsndfile handle. Closing is `close()` or the end of its
/// lifetime; it is `@unchecked Sendable` because it has one owner and no shared state.
public struct AudioFileReader: ~Copyable, @unchecked Sendable {
    /// The file's format, from its header.
    public let format: AudioFileFormat
    /// The path it was opened with.
    public let path: String
    /// The decoding handle; it also owns the descriptor (closed after `sf_close`).
    private let handle: SndFileHandle
    /// Frames decoded (or skipped) so far.
    public private(set) var position: Int = 0
    /// Whether a failed MPEG read has been decoded again (``recoverMPEGRead(into:got:maxFrames:_:)``).
    private var recoveredMPEGRead = false

    /// The most bytes read from a stream (a FIFO, a pipe through /dev/stdin, a device, a
    /// /proc file of size 0): 128 MiB. A stream is copied into an anonymous temporary file first,
    /// so that decoders that seek (FLAC, MP3, WAV) can read it.
    public static let streamLimitBytes = 128 << 20

    /// Opens `path` for decoding.
    ///
    /// The file is opened once and that descriptor is used throughout (sniffing, decoding), so
    /// a FIFO or /dev/stdin works like a file. The open never blocks; a FIFO without a writer is
    /// given up after 10 s. A stream (anything but a regular file with a size) is copied, at
    /// most ``streamLimitBytes``, into an anonymous temporary file (nothing is left on the
    /// disk).
    /// - Parameter path: the file to read.
    /// - Throws: `ProofkitError` naming `path`: `.notFound` (missing, or a folder),
    ///   `.io` (unreadable, or a FIFO that no writer opens within 10 s), `.decodeFailed` (empty,
    ///   random bytes, truncated, no audio, a stream over 128 MiB),
    ///   `.unsupportedFormat` (AAC/M4A/ADTS, with how to convert it), `.runtimeUnavailable`
    ///   (libsndfile.so.1 cannot be loaded: it is loaded on first use, not linked).
    ///   Calls `open`, `fstat`, `pread` (first 4 KiB, to sniff the format) and `sf_open_fd` (`sf_open` of the same file only when the content alone does not tell the format).
    public init(path: String) throws(ProofkitError) {
        var (fd, status) = try POSIX.openInput(path, what: "audio file")
        // A regular file may be opened by name once more, only as a fallback (below).
        var sameFileByName: POSIX.FileStatus? = status
        if !status.isRegular || status.size == 0 {
            sameFileByName = nil
            let spooled: (fd: Int32, size: Int64)?
            do throws(Errno) {
                spooled = try POSIX.spool(fd, limit: AudioFileReader.streamLimitBytes)
            } catch {
                POSIX.closeDescriptor(fd)
                throw ProofkitError(
                    .io, "cannot read: \(POSIX.describe(error.code))", operation: "read",
                    underlying: error.code, path: path)
            }
            POSIX.closeDescriptor(fd)
            guard let spooled else {
                throw ProofkitError(
                    .decodeFailed, "is a stream over the \(AudioFileReader.streamLimitBytes >> 20) MiB limit",
                    path: path)
            }
            fd = spooled.fd
            status.size = spooled.size
            status.isRegular = true
        }
        do throws(ProofkitError) {
            try self.init(descriptor: fd, size: status.size, path: path, sameFileByName: sameFileByName)
        } catch {
            POSIX.closeDescriptor(fd)
            throw error
        }
    }

    /// Opens the regular file `fd` of `size` bytes (owned from here on: closed with the reader).
    ///
    /// libsndfile reads the descriptor (`sf_open_fd`). Only when that does not recognise the
    /// format, and `path` still names the same file (device and inode of `sameFileByName`), is
    /// `path` opened by name (`sf_open`): libsndfile then also guesses from the extension, which
    /// is how an MP3 that starts mid-frame, without an ID3 tag, opens.
    private init(descriptor fd: Int32, size: Int64, path: String, sameFileByName: POSIX.FileStatus?)
        throws(ProofkitError)
    {
        self.path = path
        if size == 0 {
            throw ProofkitError(.decodeFailed, "is empty (0 bytes), not an audio file", path: path)
        }
        switch POSIX.readPrefix(fd, count: 4096) {
        case .success(let prefix):
            if let name = UnsupportedFormatSniffer.unsupportedFormat(prefix: prefix) {
                throw ProofkitError(
                    .unsupportedFormat,
                    "is \(name), which proofkit cannot decode; convert it first, e.g. 'ffmpeg -i in.m4a out.wav'",
                    path: path)
            }
        case .failure(let failure):
            let code = failure.code
            throw ProofkitError(
                .io, "cannot read: \(POSIX.describe(code))", operation: "read",
                underlying: code, path: path)
        }
        var opened = try POSIX.withStandardErrorSilenced({ () throws(ProofkitError) in
            try SndFile.openForReading(fd: fd)
        })
        var failed = false
        switch opened {
        case .failure: failed = true
        case .success: break
        }
        if failed, let identity = sameFileByName,
            case .success(let now) = POSIX.status(path), now.device == identity.device, now.inode == identity.inode
        {
            opened = try POSIX.withStandardErrorSilenced({ () throws(ProofkitError) in
                try SndFile.openForReading(path)
            })
        }
        switch opened {
        case .success(var handle):
            let info = handle.info
            guard info.sampleRate > 0, info.channels > 0 else {
                // (the handle closes as it goes out of scope)
                throw ProofkitError(
                    .decodeFailed, "has no usable audio (sample rate \(info.sampleRate), \(info.channels) channels)",
                    path: path)
            }
            var format = AudioFileFormat(info)
            if format.container == .mpeg {
                // Reopen so that decoding is not capped at the header's estimate (see
                // SndFile.openForReadingToEnd); the header count is kept for reporting. The
                // virtual file reads its own copy of the descriptor (pread: no shared offset).
                if let copy = POSIX.duplicate(fd) {
                    if case .success(let reopened) = POSIX.withStandardErrorSilenced({
                        SndFile.openForReadingToEnd(fd: copy, realLength: size)
                    }) {
                        format.isSeekable = false
                        handle = reopened  // the plain handle closes here
                    }
                    // (on failure openForReadingToEnd has closed the copy)
                }
                // else: keep the plain handle (e.g. an MP3 that starts mid-frame only opens that
                // way); its decoding may stop at the header's estimate.
            }
            // From here on the reader owns the descriptor: its handle closes it after `sf_close`.
            handle.closesAfterwards(fd)
            self.handle = consume handle
            self.format = format
        case .failure(let failure):
            let (text, code) = (failure.text, failure.code)
            // libsndfile's MPEG probe reports unrecognised bytes as "File does not exist or is not
            // a regular file"; the file does exist (checked above), so say what is meant.
            let detail = text.contains("does not exist") ? "format not recognised" : text.trimmedLine
            throw ProofkitError(
                .decodeFailed, "is not a readable audio file (libsndfile: \(detail))",
                operation: "sf_open_fd", underlying: code, path: path)
        }
    }

    /// Closes the file. Calls `sf_close`.
    public consuming func close() {
        handle.close()
    }

    /// Decodes up to `maxFrames` frames into the start of `buffer` (interleaved).
    ///
    /// - Parameters:
    ///   - buffer: must hold at least `maxFrames * format.channels` samples (traps otherwise).
    ///   - maxFrames: the most frames to decode, at least 1.
    /// - Returns: the frames decoded; 0 at the end of the audio. A short read is not an error.
    /// - Throws: `.decodeFailed` when the data is broken mid-stream.
    ///   Calls `sf_readf_float`.
    public mutating func read(into buffer: inout [Float], maxFrames: Int) throws(ProofkitError) -> Int {
        try readFrames(into: &buffer, maxFrames: maxFrames, operation: "sf_readf_float") {
            $0.readFloat(into: $1, frames: $2)
        }
    }

    /// Reads up to `maxFrames` frames of 16-bit samples into the start of `buffer` (interleaved).
    ///
    /// For 16-bit PCM files (``AudioFileFormat/isLinearPCM16``) these are the stored samples,
    /// unchanged and without a conversion to float: sample `s` here is `s / 32768` from
    /// ``read(into:maxFrames:)-([Float],_)``. Other formats are converted by libsndfile, with its
    /// own scaling and rounding: use the float read for them.
    /// - Parameters:
    ///   - buffer: must hold at least `maxFrames * format.channels` samples (traps otherwise).
    ///   - maxFrames: the most frames to read, at least 1.
    /// - Returns: the frames read; 0 at the end of the audio. A short read is not an error.
    /// - Throws: `.decodeFailed` when the data is broken mid-stream.
    ///   Calls `sf_readf_short`.
    public mutating func read(into buffer: inout [Int16], maxFrames: Int) throws(ProofkitError) -> Int {
        try readFrames(into: &buffer, maxFrames: maxFrames, operation: "sf_readf_short") {
            $0.readShort(into: $1, frames: $2)
        }
    }

    /// The one read path behind both sample types: bounds check, MP3 stderr silencing, the
    /// error at the start versus a short read at the end, and the position count.
    private mutating func readFrames<Sample>(
        into buffer: inout [Sample], maxFrames: Int, operation: String,
        _ call: (borrowing SndFileHandle, UnsafeMutablePointer<Sample>, Int) -> Int
    ) throws(ProofkitError) -> Int {
        precondition(
            maxFrames >= 1 && buffer.count >= maxFrames * format.channels,
            "buffer too small for maxFrames")
        var frames: Int
        if format.container == .mpeg {
            frames = POSIX.withStandardErrorSilenced {
                buffer.withUnsafeMutableBufferPointer { call(handle, $0.baseAddress!, maxFrames) }
            }
            if frames < maxFrames && !recoveredMPEGRead && handle.error().1 != 0 {
                frames = recoverMPEGRead(into: &buffer, got: max(frames, 0), maxFrames: maxFrames, call)
            }
        } else {
            frames = buffer.withUnsafeMutableBufferPointer { call(handle, $0.baseAddress!, maxFrames) }
        }
        if frames <= 0 {
            let (text, code) = handle.error()
            if code != 0 && position == 0 {
                throw ProofkitError(
                    .decodeFailed, "cannot be decoded (libsndfile: \(text.trimmedLine))",
                    operation: operation, underlying: code, path: path)
            }
            return 0
        }
        position += frames
        return frames
    }

    /// Decodes again, after a seek back, the frames of an MPEG read that failed, one MPEG frame's
    /// worth (1152) at a time, until the decoder fails again: only that last piece is lost.
    ///
    /// Why: when mpg123 fails mid-read, libsndfile returns nothing of that read (`sf_readf_*`
    /// gives 0 and sets an error), though mpg123 decoded most of it. That happens at the end of
    /// an MP3 cut mid-frame (a download cut short, `head -c`), because the file is presented
    /// longer than it is (``SndFile/openForReadingToEnd(fd:realLength:)``) or its Xing header
    /// counts more frames than are there; a `trim` reading 65536 frames at a time lost up to
    /// 1.5 s (at 44.1 kHz) of audio there, and a file shorter than one read none at all. Done
    /// once per reader (later reads of a failed decoder return 0, the end).
    /// - Parameter got: the frames the failed read delivered (usually 0).
    /// - Returns: the frames now at the start of `buffer` (at least `got`).
    private mutating func recoverMPEGRead<Sample>(
        into buffer: inout [Sample], got: Int, maxFrames: Int,
        _ call: (borrowing SndFileHandle, UnsafeMutablePointer<Sample>, Int) -> Int
    ) -> Int {
        recoveredMPEGRead = true
        let channels = format.channels
        return POSIX.withStandardErrorSilenced {
            guard handle.seek(toFrame: position + got) == position + got else { return got }
            var total = got
            while total < maxFrames {
                let piece = min(AudioFileReader.mpegFrameSamples, maxFrames - total)
                let n = buffer.withUnsafeMutableBufferPointer {
                    call(handle, $0.baseAddress! + total * channels, piece)
                }
                if n <= 0 { break }
                total += n
            }
            return total
        }
    }

    /// The samples per channel of an MPEG-1 Layer II/III frame: the piece size of
    /// ``recoverMPEGRead(into:got:maxFrames:_:)``.
    static let mpegFrameSamples = 1152

    /// Decodes up to `maxFrames` frames and returns them (interleaved); empty at the end.
    /// - Throws: see ``read(into:maxFrames:)``.
    public mutating func readChunk(maxFrames: Int) throws(ProofkitError) -> [Float] {
        var buffer = [Float](repeating: 0, count: maxFrames * format.channels)
        let frames = try read(into: &buffer, maxFrames: maxFrames)
        buffer.removeLast(buffer.count - frames * format.channels)
        return buffer
    }

    /// Decodes up to `maxFrames` frames (default: to the end) into one clip.
    ///
    /// Memory grows with the clip: pass a limit for untrusted input.
    /// - Throws: see ``read(into:maxFrames:)``.
    public mutating func readClip(maxFrames: Int = Int.max) throws(ProofkitError) -> AudioClip {
        var samples: [Float] = []
        let chunk = 16384
        var buffer = [Float](repeating: 0, count: chunk * format.channels)
        var remaining = maxFrames
        while remaining > 0 {
            let frames = try read(into: &buffer, maxFrames: min(chunk, remaining))
            if frames == 0 { break }
            samples.append(contentsOf: buffer[0..<(frames * format.channels)])
            remaining -= frames
        }
        return AudioClip(samples: samples, channels: format.channels, sampleRate: format.sampleRate)
    }

    /// Skips `frames` frames from the current position: a seek when the file can seek,
    /// otherwise decoding and dropping them in bounded chunks.
    /// - Returns: the frames actually skipped (fewer at the end of the audio).
    /// - Throws: see ``read(into:maxFrames:)``. Calls `sf_seek` or `sf_readf_float`.
    public mutating func skip(frames: Int) throws(ProofkitError) -> Int {
        guard frames > 0 else { return 0 }
        if format.isSeekable, let total = format.headerFrameCount,
            format.container != .mpeg, position + frames <= total
        {
            if handle.seek(toFrame: position + frames) == position + frames {
                position += frames
                return frames
            }
        }
        let chunk = 8192
        var buffer = [Float](repeating: 0, count: chunk * format.channels)
        var skipped = 0
        while skipped < frames {
            let n = try read(into: &buffer, maxFrames: min(chunk, frames - skipped))
            if n == 0 { break }
            skipped += n
        }
        return skipped
    }
}

extension String {
    /// The text on one line, without trailing spaces or newlines.
    var trimmedLine: String {
        var text = self.split(whereSeparator: \.isNewline).joined(separator: " ")
        while text.last == " " { text.removeLast() }
        return text
    }
}
