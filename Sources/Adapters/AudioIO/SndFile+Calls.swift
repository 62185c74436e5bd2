// The one file in AudioIO where libsndfile is called (swift-system's `Syscalls.swift` chokepoint).
// Every function here takes and returns Swift values; no C type leaves this file's callers'
// module, and none appears in AudioIO's public API. libsndfile is not linked: its functions come
// from the table `SndFile.load()` fills on first use, and are called through it.
internal import CProofkitShims
internal import CSndFile
import ProofkitCore
internal import ProofkitSystem

/// Thin, typed wrappers over the libsndfile calls that AudioIO uses.
enum SndFile {
    /// A failed call's error text and libsndfile code.
    struct Failure: Error {
        var text: String
        var code: Int32
    }

    /// What an open gives: the handle, or libsndfile's error text and code.
    ///
    /// Its own enum rather than `Result<SndFileHandle, Failure>`: that generic type (over a
    /// noncopyable payload) has its metadata made at run time on first use, and checking
    /// `Failure: Error` for it scans every protocol conformance in the binary (about 0.2 M
    /// instructions, 2 % of a short `trim`). A plain enum's metadata is built in.
    enum Opened: ~Copyable {
        case success(SndFileHandle)
        case failure(Failure)
    }

    /// What `sf_open` reports about an opened file.
    struct Info {
        var frames: Int64
        var sampleRate: Int
        var channels: Int
        var format: Int32
        var isSeekable: Bool
    }

    /// libsndfile's functions, from `libsndfile.so.1` (which brings its codec libraries), loaded
    /// on the first call and kept for the life of the process (thread-safe).
    /// - Parameter soname: another file to load instead, into a table of its own (tests only).
    /// - Throws: `.runtimeUnavailable` (exit 69) in one line: the file, dlerror's reason and the
    ///   Debian package to install (libsndfile1).
    static func load(soname: String? = nil) throws(ProofkitError) -> proofkit_sndfile_api {
        guard let table = proofkit_library_load(proofkit_sndfile_library(), soname) else {
            throw ProofkitError(.runtimeUnavailable, String(cString: proofkit_library_failure()), operation: "dlopen")
        }
        return table.load(as: proofkit_sndfile_api.self)
    }

    /// The table, for calls on a handle: libsndfile is loaded, since the handle came from it.
    fileprivate static var loaded: proofkit_sndfile_api {
        guard let table = try? load() else { preconditionFailure("libsndfile called before it was loaded") }
        return table
    }

    // MARK: Format constants: sndfile.h's, as Int32 (the type of `SF_INFO.format`).
    static let majorMask = Int32(SF_FORMAT_TYPEMASK)
    static let subtypeMask = Int32(SF_FORMAT_SUBMASK)
    static let formatWAV = Int32(SF_FORMAT_WAV)
    static let formatAIFF = Int32(SF_FORMAT_AIFF)
    static let formatWAVEX = Int32(SF_FORMAT_WAVEX)
    static let formatCAF = Int32(SF_FORMAT_CAF)
    static let subtypePCM16 = Int32(SF_FORMAT_PCM_16)
    static let endianLittle = Int32(SF_ENDIAN_LITTLE)

    /// Opens `path` for reading, letting libsndfile detect the format from the content and, when
    /// the content alone does not tell (an MP3 that starts mid-frame, without an ID3 tag), from
    /// the name's extension. Calls `sf_open`.
    /// - Returns: the handle (with its ``SndFileHandle/info``), or the library's error text and code.
    /// - Throws: `.runtimeUnavailable` when libsndfile cannot be loaded.
    static func openForReading(_ path: String) throws(ProofkitError) -> Opened {
        let sndfile = try load()
        var info = SF_INFO()
        guard let handle = sndfile.sf_open(FilePath.cString(path), Int32(SFM_READ), &info) else {
            return .failure(Failure(text: lastOpenError(), code: sndfile.sf_error(nil)))
        }
        // Normalise integer data to -1...1 as floats (libsndfile's default, made explicit).
        _ = sndfile.sf_command(handle, Int32(SFC_SET_NORM_FLOAT), nil, Int32(SF_TRUE))
        return .success(SndFileHandle(handle, info: Info(info)))
    }

    /// Opens the already-open descriptor `fd` for reading, letting libsndfile detect the format
    /// from the content. `fd` stays open, whether the open succeeds or fails (its owner closes it):
    /// libsndfile reads a copy of it (``openCopy(of:mode:info:)``). Calls `sf_open_fd`.
    /// - Returns: the handle (with its ``SndFileHandle/info``), or the library's error text and code.
    /// - Throws: `.runtimeUnavailable` when libsndfile cannot be loaded.
    static func openForReading(fd: Int32) throws(ProofkitError) -> Opened {
        _ = try load()
        var info = SF_INFO()
        return openCopy(of: fd, mode: Int32(SFM_READ), info: &info)
    }

    /// The file behind a virtual-I/O handle: a descriptor, its real length, and a longer length
    /// reported to libsndfile, with zero bytes served between the two.
    final class VirtualFile {
        let fd: Int32
        let realLength: Int64
        let reportedLength: Int64
        var position: Int64 = 0
        /// Set once `sf_open_virtual` has returned: from then on the real end is a clean end of
        /// file (zeros there would make mpg123 fail and libsndfile drop the last partial read).
        var isOpen = false
        init(fd: Int32, realLength: Int64) {
            self.fd = fd
            self.realLength = realLength
            let (scaled, overflow) = realLength.multipliedReportingOverflow(by: 64)
            self.reportedLength = overflow ? Int64.max / 2 : max(scaled, 1 << 20)
        }

        func seek(_ offset: Int64, _ whence: Int32) -> Int64 {
            let base: Int64 = whence == 0 ? 0 : whence == 1 ? position : reportedLength
            let target = base + offset
            guard target >= 0 else { return -1 }
            position = target
            return position
        }

        func read(_ buffer: UnsafeMutableRawPointer, _ count: Int64) -> Int64 {
            let end = isOpen ? realLength : reportedLength
            guard position < end, count > 0 else { return 0 }
            let wanted = min(count, end - position)
            var got: Int64 = 0
            if position < realLength {
                let count = Int(min(wanted, realLength - position))
                switch POSIX.read(fd, into: UnsafeMutableRawBufferPointer(start: buffer, count: count), at: position) {
                case .success(let n): got = Int64(n)
                case .failure: return -1
                }
            }
            if got < wanted {
                (buffer + Int(got)).initializeMemory(as: UInt8.self, repeating: 0, count: Int(wanted - got))
            }
            position += wanted
            return wanted
        }
    }

    /// Opens an MPEG stream for decoding to its real end. Calls `sf_open_virtual`.
    ///
    /// Why: libsndfile caps every read at `SF_INFO.frames`, and for an MP3 without a Xing/Info
    /// tag that count is mpg123's estimate from the file length and the first frame's bitrate.
    /// A VBR file that starts loud is estimated far too short, and libsndfile would silently
    /// stop decoding there. Here the file is presented 64 times longer than it is while
    /// libsndfile and mpg123 open it (padded with zero bytes, so the ID3v1 probe at the end
    /// reads nothing): the estimate rises above the real audio. Once open, the real end reads
    /// as a clean end of file, where decoding stops. A tagged file keeps its exact count. The
    /// returned handle releases the context (and closes `fd`) after its `sf_close`.
    /// Call it after ``openForReading(fd:)`` succeeded (which loads libsndfile).
    static func openForReadingToEnd(fd: Int32, realLength: Int64) -> Opened {
        let sndfile = loaded
        let context = Unmanaged.passRetained(VirtualFile(fd: fd, realLength: realLength)).toOpaque()
        var io = SF_VIRTUAL_IO(
            get_filelen: { user in
                Unmanaged<VirtualFile>.fromOpaque(user!).takeUnretainedValue().reportedLength
            },
            seek: { offset, whence, user in
                Unmanaged<VirtualFile>.fromOpaque(user!).takeUnretainedValue().seek(offset, whence)
            },
            read: { pointer, count, user in
                Unmanaged<VirtualFile>.fromOpaque(user!).takeUnretainedValue().read(pointer!, count)
            },
            write: { _, _, _ in 0 },
            tell: { user in
                Unmanaged<VirtualFile>.fromOpaque(user!).takeUnretainedValue().position
            })
        var info = SF_INFO()
        guard let handle = sndfile.sf_open_virtual(&io, Int32(SFM_READ), &info, context) else {
            let failure = Failure(text: lastOpenError(), code: sndfile.sf_error(nil))
            releaseVirtual(context)
            return .failure(failure)
        }
        Unmanaged<VirtualFile>.fromOpaque(context).takeUnretainedValue().isOpen = true
        _ = sndfile.sf_command(handle, Int32(SFC_SET_NORM_FLOAT), nil, Int32(SF_TRUE))
        return .success(SndFileHandle(handle, info: Info(info), virtualContext: context))
    }

    /// Releases a virtual-I/O context and closes its descriptor (after `sf_close`).
    static func releaseVirtual(_ context: UnsafeMutableRawPointer) {
        let file = Unmanaged<VirtualFile>.fromOpaque(context).takeRetainedValue()
        POSIX.closeDescriptor(file.fd)
    }

    /// Opens the already-open descriptor `fd` for writing `format` at `sampleRate` with
    /// `channels`. `fd` stays open after `sf_close`, and after a failed open (the caller syncs and
    /// closes it, so that the header that `sf_close` writes is synced too): libsndfile writes
    /// through a copy of it (``openCopy(of:mode:info:)``). Calls `sf_format_check`, `sf_open_fd`.
    /// - Throws: `.runtimeUnavailable` when libsndfile cannot be loaded.
    static func openForWriting(
        fd: Int32, format: Int32, sampleRate: Int, channels: Int
    ) throws(ProofkitError) -> Opened {
        let sndfile = try load()
        var info = SF_INFO()
        info.samplerate = Int32(clamping: sampleRate)
        info.channels = Int32(clamping: channels)
        info.format = format
        guard sndfile.sf_format_check(&info) == Int32(SF_TRUE) else {
            return .failure(Failure(text: "libsndfile cannot write this format, rate and channel count", code: 0))
        }
        return openCopy(of: fd, mode: Int32(SFM_WRITE), info: &info)
    }

    /// `sf_open_fd` on a new close-on-exec copy of `fd` that libsndfile owns (`close_desc` true):
    /// it closes the copy in `sf_close`, or at once when the open fails. `fd` itself is never
    /// closed here.
    ///
    /// Why a copy: libsndfile 1.0.30 to 1.2.x (Debian 12 ships 1.2.0) close the descriptor of a
    /// failed `sf_open_fd` even when `close_desc` is false (libsndfile issues #948 and #949), so
    /// the caller would not know whether it still owns `fd`; closing it again then closes
    /// whatever another thread opened under that number in between (seen in the test suite as a
    /// pipe that failed with EBADF and a file that read short). With a copy given away, every
    /// version behaves the same and the caller's descriptor is untouched.
    ///
    /// A handle opened for reading normalises integer data to -1...1 as floats (libsndfile's
    /// default, made explicit with `SFC_SET_NORM_FLOAT`). Calls `fcntl`, `sf_open_fd`,
    /// `sf_command`.
    /// - Returns: the handle, or the library's error text and code (for a failed copy: the
    ///   errno's text, code 0). (`Opened`, not a `Result`: a generic `Result` of these types has
    ///   its metadata built at run time, a scan of every conformance that costs trim about 2 %.)
    private static func openCopy(of fd: Int32, mode: Int32, info: inout SF_INFO) -> Opened {
        guard let copy = POSIX.duplicate(fd) else {
            return .failure(Failure(text: "cannot copy the descriptor: \(Errno.current)", code: 0))
        }
        guard let handle = loaded.sf_open_fd(copy, mode, &info, Int32(SF_TRUE)) else {
            return .failure(Failure(text: lastOpenError(), code: loaded.sf_error(nil)))
        }
        if mode == Int32(SFM_READ) {
            _ = loaded.sf_command(handle, Int32(SFC_SET_NORM_FLOAT), nil, Int32(SF_TRUE))
        }
        return .success(SndFileHandle(handle, info: Info(info)))
    }

    /// The error text of the last failed open. Calls `sf_strerror(NULL)`.
    private static func lastOpenError() -> String {
        guard let text = loaded.sf_strerror(nil) else { return "libsndfile could not open the file" }
        return String(cString: text)
    }
}

extension SndFile.Info {
    init(_ info: SF_INFO) {
        self.init(
            frames: Int64(info.frames), sampleRate: Int(info.samplerate), channels: Int(info.channels),
            format: info.format, isSeekable: info.seekable != 0)
    }
}

/// An open libsndfile handle (`SNDFILE *`) with one owner: `sf_close` runs exactly once, in
/// ``close()`` / ``closeReleasingDescriptor()`` or when the owner drops it (deinit). A
/// virtual-I/O handle (``SndFile/openForReadingToEnd(fd:realLength:)``) releases its context, and
/// the descriptor the context reads, after that close; a descriptor handed over with
/// ``closesAfterwards(_:)`` is closed last (libsndfile only ever closes its own copy of it, see
/// ``SndFile/openCopy(of:mode:info:)``).
struct SndFileHandle: ~Copyable {
    /// What `sf_open` reported about the file (for a file opened to write: what was asked for).
    let info: SndFile.Info
    private let raw: OpaquePointer
    private let virtualContext: UnsafeMutableRawPointer?
    private var ownedDescriptor: Int32 = -1

    fileprivate init(_ raw: OpaquePointer, info: SndFile.Info, virtualContext: UnsafeMutableRawPointer? = nil) {
        self.raw = raw
        self.info = info
        self.virtualContext = virtualContext
    }

    deinit {
        _ = SndFileHandle.release(raw, virtualContext)
        if ownedDescriptor >= 0 { POSIX.closeDescriptor(ownedDescriptor) }
    }

    /// Closes the handle now (then the descriptor handed over, if any). Calls `sf_close`.
    /// - Returns: 0 on success, else a libsndfile error code.
    @discardableResult
    consuming func close() -> Int32 {
        let code = SndFileHandle.release(raw, virtualContext)
        if ownedDescriptor >= 0 { POSIX.closeDescriptor(ownedDescriptor) }
        discard self
        return code
    }

    /// Closes the handle now and gives the descriptor handed over with ``closesAfterwards(_:)``
    /// back to the caller, open (a writer syncs it after `sf_close` wrote the header).
    /// - Returns: `sf_close`'s code (0 on success) and the descriptor (-1 when none was handed over).
    consuming func closeReleasingDescriptor() -> (code: Int32, descriptor: Int32) {
        let code = SndFileHandle.release(raw, virtualContext)
        let descriptor = ownedDescriptor
        discard self
        return (code, descriptor)
    }

    /// From now on the descriptor `fd` (which the handle reads or writes but was not opened to
    /// close) is closed after the handle.
    mutating func closesAfterwards(_ fd: Int32) {
        ownedDescriptor = fd
    }

    private static func release(_ raw: OpaquePointer, _ context: UnsafeMutableRawPointer?) -> Int32 {
        let code = SndFile.loaded.sf_close(raw)
        if let context { SndFile.releaseVirtual(context) }
        return code
    }

    /// Reads up to `frames` frames of interleaved floats into `buffer` (which must hold
    /// `frames * channels`). Calls `sf_readf_float`.
    /// - Returns: frames read (0 at the end; a short read at the end is not an error).
    func readFloat(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        Int(SndFile.loaded.sf_readf_float(raw, buffer, sf_count_t(frames)))
    }

    /// Reads up to `frames` frames of interleaved 16-bit samples into `buffer` (which must hold
    /// `frames * channels`). For 16-bit PCM files these are the stored samples, unchanged.
    /// Calls `sf_readf_short`.
    /// - Returns: frames read (0 at the end; a short read at the end is not an error).
    func readShort(into buffer: UnsafeMutablePointer<Int16>, frames: Int) -> Int {
        Int(SndFile.loaded.sf_readf_short(raw, buffer, sf_count_t(frames)))
    }

    /// Writes `frames` frames of interleaved 16-bit samples. Calls `sf_writef_short`.
    /// - Returns: frames written (fewer means an error, e.g. a full disk).
    func writeShort(_ buffer: UnsafePointer<Int16>, frames: Int) -> Int {
        Int(SndFile.loaded.sf_writef_short(raw, buffer, sf_count_t(frames)))
    }

    /// Seeks to frame `frame` from the start. Calls `sf_seek`.
    /// - Returns: the new position, or -1 on failure.
    func seek(toFrame frame: Int) -> Int {
        Int(SndFile.loaded.sf_seek(raw, sf_count_t(frame), SEEK_SET))
    }

    /// The handle's current error code and text. Calls `sf_error`, `sf_strerror`.
    func error() -> (String, Int32) {
        let sndfile = SndFile.loaded
        let code = sndfile.sf_error(raw)
        guard let text = sndfile.sf_strerror(raw) else { return ("libsndfile error \(code)", code) }
        return (String(cString: text), code)
    }
}
