// Reading input, built on POSIX+Calls.swift's wrappers (no libc here): files opened once, streams
// waited for a bounded time, sizes capped while reading; prefixes, spooling into an anonymous
// file, and whole files mapped or held open.
extension POSIX {
    /// The first `count` bytes of the open file `fd` (fewer if it is shorter), read at offset 0
    /// without moving its position. Calls `pread`.
    package static func readPrefix(_ fd: Int32, count: Int) -> Result<[UInt8], Errno> {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let result = bytes.withUnsafeMutableBytes {
                read(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...]), at: Int64(filled))
            }
            switch result {
            case .success(let n) where n > 0: filled += n
            case .success: return .success(Array(bytes[0..<filled]))
            case .failure(let failure): return .failure(failure)
            }
        }
        return .success(bytes)
    }

    /// Reads `fd` to its end, refusing more than `limit` bytes while reading: at most about
    /// `limit` + 64 KiB are ever held, whatever `fstat` says (/proc files report size 0; FIFOs and
    /// devices none). `sizeHint` (the size `fstat` gave, or 0) only sizes the first buffer, so a
    /// regular file is read in place with no extra copy. Reads are whole 64 KiB chunks (some /proc
    /// files refuse odd sizes).
    /// - Returns: the bytes, or `nil` past the limit.
    /// - Throws: the errno of a failed `read`. Calls `read`.
    package static func readCapped(_ fd: Int32, limit: Int, sizeHint: Int = 0) throws(Errno) -> [UInt8]? {
        let chunk = 1 << 16
        let most = (limit / chunk + 2) * chunk  // room for `limit` + 1 bytes in whole chunks
        var capacity = min(most, (max(0, min(sizeHint, limit)) / chunk + 2) * chunk)
        var bytes: [UInt8] = []
        while true {
            var failure: Errno?
            var ended = false
            let previous = bytes
            bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                let base = UnsafeMutableRawPointer(buffer.baseAddress!)
                previous.withUnsafeBytes { old in
                    if let start = old.baseAddress, old.count > 0 { base.copyMemory(from: start, byteCount: old.count) }
                }
                var filled = previous.count
                while filled + chunk <= capacity && filled <= limit {
                    switch read(fd, into: UnsafeMutableRawBufferPointer(start: base + filled, count: chunk)) {
                    case .success(let n) where n > 0: filled += n
                    case .success: ended = true
                    case .failure(let error): failure = error
                    }
                    if ended || failure != nil { break }
                }
                count = filled
            }
            if let failure { throw failure }
            if bytes.count > limit { return nil }
            if ended { return bytes }
            capacity = min(most, capacity * 2)
        }
    }
}

/// Why a file could not be read whole (``POSIX/readWhole(_:limit:)``).
package enum ReadFailure: Error, Sendable {
    /// `open` failed: ``Errno/isNotFound`` for a missing path; `EACCES`, `ELOOP`... otherwise.
    case open(Errno)
    /// The path is a folder.
    case folder
    /// A FIFO or socket sent nothing within ``POSIX/streamWaitMilliseconds``.
    case noWriter
    /// Not a regular file (`kind`: "a FIFO", "a character device"...), for a reader that asked
    /// for regular files only: refused before anything is read or waited for.
    case notRegular(kind: String)
    /// Over the limit: `size` is what `fstat` said for a regular file (known before reading), else
    /// `nil` (noticed while reading).
    case overLimit(size: Int64?)
    /// A call after `open` failed.
    case failed(operation: String, Errno)
}

extension POSIX {
    /// How long opening a FIFO waits for a writer to send data before giving up, in
    /// milliseconds: 10 s.
    package static let streamWaitMilliseconds: Int32 = 10_000

    /// Opens `path` for reading, once. The open itself never blocks (`O_NONBLOCK`, so a FIFO
    /// without a writer cannot hang it); for a FIFO or socket it then waits up to
    /// ``streamWaitMilliseconds`` for the first data, and clears `O_NONBLOCK`.
    /// - Parameter regularOnly: refuse anything but a regular file (a FIFO, a device) at once,
    ///   with `.notRegular`, before any wait or read (default `false`).
    /// - Returns: the descriptor (the caller closes it) and its `fstat`.
    /// - Throws: ``ReadFailure`` (`.open`, `.folder`, `.notRegular`, `.noWriter`, `.failed("fstat")`).
    ///   Calls `open`, `fstat`, `poll`, `fcntl`.
    package static func openForReading(
        _ path: String, regularOnly: Bool = false
    ) throws(ReadFailure) -> (fd: Int32, status: FileStatus) {
        let fd: Int32
        switch open(path, .nonBlocking) {
        case .success(let value): fd = value
        case .failure(let failure) where failure == .isADirectory: throw .folder
        case .failure(let failure): throw .open(failure)
        }
        let info: FileStatus
        switch status(descriptor: fd) {
        case .success(let value): info = value
        case .failure(let failure):
            closeDescriptor(fd)
            throw .failed(operation: "fstat", failure)
        }
        if info.isDirectory {
            closeDescriptor(fd)
            throw .folder
        }
        if regularOnly && !info.isRegular {
            closeDescriptor(fd)
            throw .notRegular(kind: info.kind)
        }
        if info.isStream {
            let ready = try? waitReadable([fd], milliseconds: streamWaitMilliseconds)
            if ready?.first != true {
                closeDescriptor(fd)
                throw .noWriter
            }
        }
        // O_NONBLOCK means nothing for a regular file (its reads never wait on a writer), so
        // only other files pay for the two fcntl calls that clear it.
        if !info.isRegular { setNonBlocking(fd, false) }
        return (fd, info)
    }

    /// The whole file at `path`, opened once (``openForReading(_:)``), refusing more than `limit`
    /// bytes while reading (an endless or size-0 file, /dev/zero or /proc/self/pagemap, cannot
    /// grow memory); a regular file whose `fstat` size is already over is refused unread.
    /// - Parameter regularOnly: refuse anything but a regular file at once (``openForReading(_:regularOnly:)``),
    ///   and read nothing from a regular file whose size is 0 (/proc and /sys files say 0 and
    ///   may still be endless): it is returned empty (default `false`).
    /// - Throws: ``ReadFailure``. Calls `open`, `fstat`, `read`, `close`.
    package static func readWhole(_ path: String, limit: Int, regularOnly: Bool = false) throws(ReadFailure) -> [UInt8]
    {
        let (fd, info) = try openForReading(path, regularOnly: regularOnly)
        defer { closeDescriptor(fd) }
        if info.isRegular && info.size > Int64(limit) { throw .overLimit(size: info.size) }
        if regularOnly && info.size == 0 { return [] }
        return try readWhole(descriptor: fd, limit: limit, sizeHint: info.isRegular ? Int(info.size) : 0)
    }

    /// The open descriptor `fd` (for example 0, standard input) read to its end, refusing more
    /// than `limit` bytes while reading.
    /// - Throws: ``ReadFailure`` `.overLimit(nil)`, `.failed("read")`. Calls `read`.
    package static func readWhole(descriptor fd: Int32, limit: Int, sizeHint: Int = 0) throws(ReadFailure) -> [UInt8] {
        let result: [UInt8]?
        do throws(Errno) {
            result = try readCapped(fd, limit: limit, sizeHint: sizeHint)
        } catch {
            throw .failed(operation: "read", error)
        }
        guard let result else { throw .overLimit(size: nil) }
        return result
    }

    /// The file at `path` mapped read-only (see ``MappedFile``); the descriptor is closed at once.
    /// - Throws: ``ReadFailure`` (`.open`, `.folder`, `.failed("mmap")`). Calls `open`, `fstat`,
    ///   `mmap`, `close`.
    package static func map(_ path: String) throws(ReadFailure) -> MappedFile {
        let (fd, info) = try openForReading(path)
        defer { closeDescriptor(fd) }
        switch MappedFile.map(fd, size: Int(info.size)) {
        case .success(let mapped): return mapped
        case .failure(let failure): throw .failed(operation: "mmap", failure)
        }
    }

    /// Copies the stream `fd` into a new anonymous file (``openAnonymous()``), refusing more than
    /// `limit` bytes, so that decoders that seek can read it. Calls `read`, `write`, `lseek`.
    /// - Returns: the new descriptor at offset 0 and its size, or `nil` past the limit.
    package static func spool(_ fd: Int32, limit: Int) throws(Errno) -> (fd: Int32, size: Int64)? {
        let copy = try openAnonymous().get()
        var total = 0
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n: Int
            switch chunk.withUnsafeMutableBytes({ read(fd, into: $0) }) {
            case .success(let value): n = value
            case .failure(let failure):
                closeDescriptor(copy)
                throw failure
            }
            if n == 0 { break }
            total += n
            if total > limit {
                closeDescriptor(copy)
                return nil
            }
            if let failure = chunk.withUnsafeBytes({ writeAll(copy, UnsafeRawBufferPointer(rebasing: $0[0..<n])) }) {
                closeDescriptor(copy)
                throw failure
            }
        }
        if case .failure(let failure) = seek(copy, to: 0) {
            closeDescriptor(copy)
            throw failure
        }
        return (copy, Int64(total))
    }
}

// MARK: Whole files mapped or held open

/// A whole file mapped read-only into memory (`mmap`, `MAP_PRIVATE`), unmapped when the last
/// reference goes. Its pages are the page cache's: nothing is copied, and pages nobody reads are
/// never loaded. Immutable, so `Sendable`; the mapping must not be written.
package final class MappedFile: @unchecked Sendable {
    /// The mapped bytes (empty for an empty file).
    package let bytes: UnsafeRawBufferPointer

    private init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    deinit { POSIX.unmap(bytes) }

    /// Drops this process's view of the pages read so far (`madvise(MADV_DONTNEED)`): they leave
    /// its resident set but stay in the page cache; a later read maps them again from there.
    package func releaseResidentPages() {
        POSIX.dropResidentPages(bytes)
    }

    /// Maps the open file `fd` of `size` bytes (the descriptor may be closed afterwards).
    /// Calls `mmap`.
    package static func map(_ fd: Int32, size: Int) -> Result<MappedFile, Errno> {
        guard size > 0 else { return .success(MappedFile(bytes: UnsafeRawBufferPointer(start: nil, count: 0))) }
        return POSIX.mapReadOnly(fd, size: size).map { MappedFile(bytes: $0) }
    }
}

/// A file held open read-only (closed when the last reference goes), so that a later reader can
/// open the very file that was checked, through ``procPath``, even if its path is replaced meanwhile.
package final class OpenFile: @unchecked Sendable {
    /// The descriptor.
    package let fd: Int32
    /// The size `fstat` gave at open time, in bytes.
    package let size: Int

    private init(fd: Int32, size: Int) {
        self.fd = fd
        self.size = size
    }

    deinit { POSIX.closeDescriptor(fd) }

    /// `/proc/self/fd/N`: the path under which this process opens the same file again (Linux).
    package var procPath: String { "/proc/self/fd/\(fd)" }

    /// Opens `path` read-only, once (``POSIX/openForReading(_:)``: a folder or a stream without a
    /// writer is refused).
    /// - Throws: ``ReadFailure``. Calls `open`, `fstat`.
    package static func openReadOnly(_ path: String) throws(ReadFailure) -> OpenFile {
        let (fd, info) = try POSIX.openForReading(path)
        return OpenFile(fd: fd, size: Int(info.size))
    }
}

// MARK: Reading lines

/// Why ``POSIX/forEachLine(_:maximumLineLength:chunk:_:)`` stopped early.
package enum LineReadFailure: Error {
    /// `read` failed.
    case read(Errno)
    /// A line (counted from 1) grew past the cap before its newline came.
    case lineTooLong(lineNumber: Int)
    /// The deadline passed before the stream ended (nothing more came in time).
    case timedOut
}

extension POSIX {
    /// Reads `fd` to its end and calls `body` with each line, without its `\n` (a last line without
    /// one counts; empty lines are passed too). Memory stays bounded: one buffer of
    /// `maximumLineLength + chunk` bytes, allocated once. Blocks (call it off the cooperative
    /// pool); does not close `fd`; retries `EINTR`.
    /// - Parameters:
    ///   - maximumLineLength: the longest line accepted, in bytes.
    ///   - skipsLongLines: what a longer line does: `false` (the default) stops the reading with
    ///     `.lineTooLong`; `true` drops that line and reads on (the writer is still drained, so a
    ///     child process that prints it does not block on a full pipe).
    ///   - chunk: bytes asked of each `read`. Default 64 KiB.
    ///   - deadline: a ``monotonicSeconds()`` instant by which the stream must end, or `nil` (the
    ///     default) to wait as long as it takes.
    ///   - body: called with each line's bytes, valid only during the call.
    /// - Throws: ``LineReadFailure`` `.read` when `read` fails, `.lineTooLong` when a line passes
    ///   the cap (unless `skipsLongLines`), `.timedOut` at the deadline; what `body` throws, as it is. (Not generic over the
    ///   body's error: an unspecialised generic call per line cost squat's reading about 250
    ///   instructions a line; the closure call that remains costs about 180 of a line's 13,000.)
    package static func forEachLine(
        _ fd: Int32, maximumLineLength: Int, skipsLongLines: Bool = false, chunk: Int = 1 << 16,
        deadline: Double? = nil, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void
    ) throws {
        let capacity = maximumLineLength + chunk
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        var filled = 0
        var lineNumber = 0
        var skipping = false  // inside a line over the cap, dropped up to its newline
        func emit(_ start: Int, _ count: Int) throws {
            try body(UnsafeBufferPointer(start: buffer + start, count: count))
        }
        while true {
            if let deadline {
                let remaining = deadline - monotonicSeconds()
                let ready =
                    remaining > 0
                    ? (try? waitReadable([fd], milliseconds: Int32(min(remaining * 1000, 86_400_000)).advanced(by: 1)))?
                        .first ?? true : false
                if !ready { throw LineReadFailure.timedOut }
            }
            let n: Int
            switch read(fd, into: UnsafeMutableRawBufferPointer(start: buffer + filled, count: capacity - filled)) {
            case .success(let count): n = count
            case .failure(let errno): throw LineReadFailure.read(errno)
            }
            if n == 0 { break }
            let scanFrom = filled
            filled += n
            var start = 0
            var cursor = scanFrom
            while cursor < filled,
                let offset = firstOffset(
                    of: 0x0A, in: UnsafeRawBufferPointer(start: buffer + cursor, count: filled - cursor))
            {
                let newline = cursor + offset
                lineNumber += 1
                if skipping {
                    skipping = false
                } else {
                    try emit(start, newline - start)
                }
                start = newline + 1
                cursor = start
            }
            if filled - start > maximumLineLength {
                guard skipsLongLines else { throw LineReadFailure.lineTooLong(lineNumber: lineNumber + 1) }
                skipping = true
                start = filled
            }
            if start > 0 {
                if filled > start {
                    UnsafeMutableRawPointer(buffer).copyMemory(from: buffer + start, byteCount: filled - start)
                }
                filled -= start
            }
        }
        if filled > 0 && !skipping { try emit(0, filled) }
    }
}
