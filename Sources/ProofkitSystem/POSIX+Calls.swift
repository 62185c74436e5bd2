// ProofkitSystem, the one place in proofkit where the C library's system calls are made (after
// swift-system's `Syscalls.swift`). This file: Errno, the valueOrErrno funnel, files and
// descriptors; POSIX+Processes.swift: child processes and threads; POSIX+Sockets.swift: the alarm
// service's Unix sockets, timers and events (split by topic to keep each file small).
// Every call that sets errno goes through ``valueOrErrno(retryOnInterrupt:_:)``; every failure is
// an ``Errno``. Paths are ``FilePath`` strings (bytes that are not UTF-8 survive).
internal import CProofkitShims
internal import ProofkitCore
import Synchronization

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// A failed system call's errno.
package struct Errno: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The errno value, e.g. `ENOENT`.
    package var code: Int32

    package init(code: Int32) { self.code = code }

    /// The calling thread's `errno` now.
    package static var current: Errno { Errno(code: errno) }

    /// `strerror`'s text, e.g. "No such file or directory".
    package var description: String { POSIX.describe(code) }

    /// Nothing at the path: `ENOENT`, or a component that is not a folder (`ENOTDIR`).
    package var isNotFound: Bool { code == ENOENT || code == ENOTDIR }

    package static let noSuchFile = Errno(code: ENOENT)
    package static let notADirectory = Errno(code: ENOTDIR)
    package static let isADirectory = Errno(code: EISDIR)
    package static let timedOut = Errno(code: ETIMEDOUT)
    package static let ioError = Errno(code: EIO)
    package static let interrupted = Errno(code: EINTR)
    package static let wouldBlock = Errno(code: EAGAIN)
    package static let brokenPipe = Errno(code: EPIPE)
    package static let streamPipe = Errno(code: ESTRPIPE)
    package static let canceled = Errno(code: ECANCELED)
    package static let exists = Errno(code: EEXIST)
}

/// Runs `call` (a C call returning -1 and setting `errno` on failure) and gives its value or the
/// errno; with `retryOnInterrupt` (default true) an `EINTR` runs it again.
@inline(__always)
package func valueOrErrno<I: FixedWidthInteger>(retryOnInterrupt: Bool = true, _ call: () -> I) -> Result<I, Errno> {
    while true {
        let value = call()
        if value != -1 { return .success(value) }
        let code = errno
        if retryOnInterrupt && code == EINTR { continue }
        return .failure(Errno(code: code))
    }
}

/// ``valueOrErrno(retryOnInterrupt:_:)`` for a call whose value is not needed.
@inline(__always)
package func nothingOrErrno<I: FixedWidthInteger>(retryOnInterrupt: Bool = true, _ call: () -> I) -> Result<Void, Errno>
{
    valueOrErrno(retryOnInterrupt: retryOnInterrupt, call).map { _ in () }
}

/// Typed wrappers over the POSIX calls proofkit makes. Descriptors are opened close-on-exec.
package enum POSIX {
    /// What `stat` says about a file.
    ///
    /// Only plain values (no `String`), so that `Result<FileStatus, Errno>` is a trivial type:
    /// copying or dropping one needs no type metadata at run time (instantiating the metadata of
    /// a generic type with an `Error` parameter costs a scan of every protocol conformance in the
    /// binary, about 0.2 M instructions, a few per cent of a short `trim`).
    package struct FileStatus: Equatable, Sendable {
        package var isDirectory: Bool
        package var isRegular: Bool
        /// A FIFO or a socket: a stream that may have no writer yet.
        package var isStream: Bool
        package var size: Int64
        package var device: UInt64
        package var inode: UInt64
        /// The permission bits (`st_mode & 07777`).
        package var mode: UInt32
        package var owner: UInt32
        package var group: UInt32
        /// Seconds since 1970 of the last change of contents.
        package var modified: Int
        /// The file type bits (`st_mode & S_IFMT`).
        package var type: UInt32

        /// "a folder", "a FIFO"...: what a file that is not regular is, for messages.
        package var kind: String {
            switch mode_t(type) {
            case S_IFREG: "a regular file"
            case S_IFDIR: "a folder"
            case S_IFCHR: "a character device"
            case S_IFBLK: "a block device"
            case S_IFIFO: "a FIFO"
            case S_IFSOCK: "a socket"
            default: "special"
            }
        }
    }

    private static func fileStatus(_ info: stat) -> FileStatus {
        let type = info.st_mode & S_IFMT
        return FileStatus(
            isDirectory: type == S_IFDIR, isRegular: type == S_IFREG, isStream: type == S_IFIFO || type == S_IFSOCK,
            size: Int64(info.st_size), device: UInt64(info.st_dev), inode: UInt64(info.st_ino),
            mode: UInt32(info.st_mode & 0o7777), owner: UInt32(info.st_uid), group: UInt32(info.st_gid),
            modified: Int(info.st_mtim.tv_sec), type: UInt32(type))
    }

    /// `stat(path)` (following symbolic links), or the errno. Calls `stat`.
    package static func status(_ path: String) -> Result<FileStatus, Errno> {
        var info = stat()
        return nothingOrErrno { stat(FilePath.cString(path), &info) }.map { fileStatus(info) }
    }

    /// `lstat(path)` (the link itself), or the errno. Calls `lstat`.
    package static func linkStatus(_ path: String) -> Result<FileStatus, Errno> {
        var info = stat()
        return nothingOrErrno { lstat(FilePath.cString(path), &info) }.map { fileStatus(info) }
    }

    /// `fstat(fd)`, or the errno. Calls `fstat`.
    package static func status(descriptor fd: Int32) -> Result<FileStatus, Errno> {
        var info = stat()
        return nothingOrErrno { fstat(fd, &info) }.map { fileStatus(info) }
    }

    /// Whether both paths exist and name the same file (same device and inode), also through
    /// hard or symbolic links and different spellings of the path. Calls `stat`.
    package static func sameFile(_ a: String, _ b: String) -> Bool {
        guard case .success(let first) = status(a), case .success(let second) = status(b) else { return false }
        return first.device == second.device && first.inode == second.inode
    }

    /// Whether this process may write `path` (`access(W_OK)`). Calls `access`.
    package static func isWritable(_ path: String) -> Bool {
        if case .success = checkWritable(path) { return true }
        return false
    }

    /// Nothing when this process may write `path`, else why not (`EACCES`, `EROFS`...).
    /// Calls `access`.
    package static func checkWritable(_ path: String) -> Result<Void, Errno> {
        nothingOrErrno { access(FilePath.cString(path), W_OK) }
    }

    /// The effective user id. Calls `geteuid`.
    package static var effectiveUser: UInt32 { UInt32(geteuid()) }

    /// The real user id. Calls `getuid`.
    package static var realUser: UInt32 { UInt32(getuid()) }

    /// This process's id. Calls `getpid`.
    package static var processID: Int32 { getpid() }

    /// Seconds since 1970 now. Calls `time`.
    package static var now: Int { Int(time(nil)) }

    // MARK: Descriptors

    /// The flags of ``open(_:_:mode:)``.
    package struct OpenFlags: OptionSet, Sendable {
        package var rawValue: Int32
        package init(rawValue: Int32) { self.rawValue = rawValue }
        package static let readOnly = OpenFlags([])
        package static let writeOnly = OpenFlags(rawValue: O_WRONLY)
        package static let readWrite = OpenFlags(rawValue: O_RDWR)
        package static let create = OpenFlags(rawValue: O_CREAT)
        package static let truncate = OpenFlags(rawValue: O_TRUNC)
        package static let noFollow = OpenFlags(rawValue: O_NOFOLLOW)
        package static let nonBlocking = OpenFlags(rawValue: O_NONBLOCK)
    }

    /// Opens `path` with `flags` and `O_CLOEXEC` (always), creating it with `mode` (less the
    /// umask) when `.create` is given. Retries on EINTR. Calls `open`.
    package static func open(_ path: String, _ flags: OpenFlags, mode: UInt32 = 0o666) -> Result<Int32, Errno> {
        let name = FilePath.cString(path)
        return valueOrErrno { Glibc.open(name, flags.rawValue | O_CLOEXEC, mode_t(mode)) }
    }

    /// Closes a descriptor (errors other than a failed flush are meaningless after `close`).
    /// Calls `close`.
    @discardableResult
    package static func close(_ fd: Int32) -> Result<Void, Errno> {
        nothingOrErrno(retryOnInterrupt: false) { Glibc.close(fd) }
    }

    /// Closes a descriptor this process owns, ignoring errors. Calls `close`.
    ///
    /// In debug builds (tests) a close that fails with EBADF traps: the number was not open, so
    /// it was closed already (a double close, or a close after handing the descriptor away).
    /// That is a bug even when it happens to be harmless: had another thread opened a file, pipe
    /// or socket under that number in between, this close would have closed that one instead.
    package static func closeDescriptor(_ fd: Int32) {
        let closed = Glibc.close(fd)
        assert(closed == 0 || errno != EBADF, "close(\(fd)): not an open descriptor (closed twice?)")
    }

    /// A new close-on-exec descriptor for the same open file. Calls `fcntl(F_DUPFD_CLOEXEC)`.
    package static func duplicate(_ fd: Int32) -> Int32? {
        try? valueOrErrno { fcntl(fd, F_DUPFD_CLOEXEC, 0) }.get()
    }

    /// Sets or clears `O_NONBLOCK` on `fd`. Calls `fcntl`.
    package static func setNonBlocking(_ fd: Int32, _ on: Bool) {
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK) }
    }

    /// Reads up to `buffer.count` bytes, retrying on EINTR: 0 at the end. Calls `read`.
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, Errno> {
        valueOrErrno { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// Reads up to `count` bytes at `offset`, retrying on EINTR. Calls `pread`.
    /// - Returns: bytes read, 0 at the end, -1 on error (`errno` set).
    package static func readBytes(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, at offset: Int64)
        -> Int64
    {
        switch valueOrErrno({ pread(fd, buffer, count, off_t(offset)) }) {
        case .success(let n): return Int64(n)
        case .failure(let failure):
            errno = failure.code
            return -1
        }
    }

    /// The first `count` bytes of the open file `fd` (fewer if it is shorter), read at offset 0
    /// without moving its position. Calls `pread`.
    package static func readPrefix(_ fd: Int32, count: Int) -> Result<[UInt8], Errno> {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = bytes.withUnsafeMutableBytes {
                readBytes(fd, $0.baseAddress! + filled, count - filled, at: Int64(filled))
            }
            if n > 0 {
                filled += Int(n)
            } else if n < 0 {
                return .failure(Errno(code: errno))
            } else {
                break
            }
        }
        return .success(Array(bytes[0..<filled]))
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
            var failure: Int32 = 0
            var ended = false
            let previous = bytes
            bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                let base = UnsafeMutableRawPointer(buffer.baseAddress!)
                previous.withUnsafeBytes { old in
                    if let start = old.baseAddress, old.count > 0 { base.copyMemory(from: start, byteCount: old.count) }
                }
                var filled = previous.count
                while filled + chunk <= capacity && filled <= limit {
                    let n = Glibc.read(fd, base + filled, chunk)
                    if n > 0 {
                        filled += n
                    } else if n == 0 {
                        ended = true
                        break
                    } else if errno != EINTR {
                        failure = errno
                        break
                    }
                }
                count = filled
            }
            if failure != 0 { throw Errno(code: failure) }
            if bytes.count > limit { return nil }
            if ended { return bytes }
            capacity = min(most, capacity * 2)
        }
    }

    /// Writes all of `bytes`, retrying on EINTR and short writes. Calls `write`.
    /// - Returns: `nil`, or the errno (`EIO` when `write` took nothing).
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Errno? {
        var written = 0
        return writeAll(fd, bytes, written: &written)
    }

    /// Writes all of `bytes` like ``writeAll(_:_:)-(_,UnsafeRawBufferPointer)``, counting in
    /// `written` what was taken: on a non-blocking descriptor `EAGAIN` (full) ends it early.
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, written: inout Int) -> Errno? {
        written = 0
        while written < bytes.count {
            switch valueOrErrno({ Glibc.write(fd, bytes.baseAddress! + written, bytes.count - written) }) {
            case .success(let n) where n > 0: written += n
            case .success: return .ioError
            case .failure(let failure): return failure
            }
        }
        return nil
    }

    /// ``writeAll(_:_:)-(_,UnsafeRawBufferPointer)`` for an array.
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Errno? {
        bytes.withUnsafeBytes { writeAll(fd, $0) }
    }

    /// Writes `bytes` at `offset` (not moving the position), all of them. Calls `pwrite`.
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int64) -> Errno? {
        var done = 0
        while done < bytes.count {
            let result = bytes.withUnsafeBytes { raw in
                valueOrErrno { pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(offset) + off_t(done)) }
            }
            switch result {
            case .success(let n) where n > 0: done += n
            case .success: return .ioError
            case .failure(let failure): return failure
            }
        }
        return nil
    }

    /// Cuts the open file `fd` to `size` bytes. Calls `ftruncate`.
    package static func truncate(_ fd: Int32, to size: Int64) -> Result<Void, Errno> {
        nothingOrErrno { ftruncate(fd, off_t(size)) }
    }

    /// Moves `fd`'s position to `offset` from the start. Calls `lseek`.
    package static func seek(_ fd: Int32, to offset: Int64) -> Result<Void, Errno> {
        valueOrErrno { lseek(fd, off_t(offset), SEEK_SET) }.map { _ in () }
    }

    /// Takes `flock(LOCK_EX)` on `fd`, waiting when `wait`, else failing with `EWOULDBLOCK`.
    /// Calls `flock`.
    package static func lockExclusive(_ fd: Int32, wait: Bool) -> Result<Void, Errno> {
        nothingOrErrno { flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) }
    }

    /// Flushes the data of `fd` (and the metadata needed to read it back) to the disk, retrying
    /// on EINTR. Calls `fdatasync`.
    package static func syncData(_ fd: Int32) -> Int32? {
        if case .failure(let failure) = nothingOrErrno({ fdatasync(fd) }) { return failure.code }
        return nil
    }

    /// Flushes `fd`'s data and metadata to the disk. Calls `fsync`.
    package static func sync(_ fd: Int32) -> Result<Void, Errno> {
        nothingOrErrno { fsync(fd) }
    }

    /// Starts writing the dirty pages of `fd` to the disk without waiting (Linux
    /// `sync_file_range(SYNC_FILE_RANGE_WRITE)`); errors are left for a later ``syncData(_:)``.
    /// Calls `proofkit_posix_start_writeback`.
    package static func startWriteback(_ fd: Int32) {
        _ = proofkit_posix_start_writeback(fd)
    }

    /// Sets `path`'s permission bits. Calls `chmod`.
    package static func setMode(_ path: String, _ mode: UInt32) -> Result<Void, Errno> {
        nothingOrErrno { chmod(FilePath.cString(path), mode_t(mode)) }
    }

    /// Creates the folder `path` with `mode` (less the umask). Calls `mkdir`.
    package static func makeFolder(_ path: String, mode: UInt32) -> Result<Void, Errno> {
        nothingOrErrno { mkdir(FilePath.cString(path), mode_t(mode)) }
    }

    /// Removes `path`, ignoring errors. Calls `unlink`.
    package static func remove(_ path: String) {
        _ = unlink(FilePath.cString(path))
    }

    /// Renames `from` onto `to` atomically. Calls `rename`.
    /// - Returns: `nil`, or the errno.
    package static func moveAtomically(_ from: String, onto to: String) -> Int32? {
        rename(FilePath.cString(from), FilePath.cString(to)) == 0 ? nil : errno
    }

    /// The text of an errno value. Calls `strerror`.
    package static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    /// The folder (`.` when there is none, empty for the root) and the last component of `path`.
    package static func split(_ path: String) -> (folder: String, base: String) {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[..<$0]) } ?? "."
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        return (folder, base)
    }

    /// Creates a new, empty temporary file next to `path` (same folder, so that a rename onto
    /// `path` is atomic), named `.NAME.tmp-XXXXXX`, mode 0600, close-on-exec. Calls `mkostemp` (through `proofkit_posix_make_temporary`).
    /// - Returns: the descriptor and the temporary's path, or the errno.
    package static func makeTemporary(beside path: String) -> Result<(fd: Int32, path: String), Errno> {
        let (folder, base) = split(path)
        var template = FilePath.cString("\(folder)/.\(base).tmp-XXXXXX")
        let made = valueOrErrno {
            template.withUnsafeMutableBufferPointer { proofkit_posix_make_temporary($0.baseAddress!) }
        }
        return made.map { fd in (fd, FilePath.string(fromBytes: template.dropLast().map { UInt8(bitPattern: $0) })) }
    }

    /// The names in the folder `path` that are `length` bytes long and start with `prefix`, as
    /// bytes; empty when the folder cannot be read. Names are compared where `readdir` left them,
    /// so the other entries of a large folder cost no allocation. Calls `opendir`, `readdir`,
    /// `closedir`.
    package static func folderEntries(_ path: String, prefix: [UInt8], length: Int) -> [[UInt8]] {
        guard length >= prefix.count, let directory = opendir(FilePath.cString(path)) else { return [] }
        defer { closedir(directory) }
        var names: [[UInt8]] = []
        while let entry = readdir(directory) {
            withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                guard raw.count > length, raw[length] == 0,
                    prefix.withUnsafeBytes({ memcmp(raw.baseAddress!, $0.baseAddress!, prefix.count) == 0 }),
                    !raw[0..<length].contains(0)
                else { return }
                names.append(Array(raw[0..<length]))
            }
        }
        return names
    }

    /// The process's file-creation mask, read without changing it. Calls `umask` twice.
    package static var creationMask: UInt32 {
        let mask = umask(0)
        umask(mask)
        return UInt32(mask)
    }

    /// Sets the permission bits of the open file `fd`. Calls `fchmod`.
    @discardableResult
    package static func setMode(descriptor fd: Int32, _ mode: UInt32) -> Result<Void, Errno> {
        nothingOrErrno { fchmod(fd, mode_t(mode)) }
    }

    /// Sets the owner and group of the open file `fd`. Calls `fchown`.
    @discardableResult
    package static func setOwner(descriptor fd: Int32, _ owner: UInt32, _ group: UInt32) -> Result<Void, Errno> {
        nothingOrErrno { fchown(fd, owner, group) }
    }

    /// A descriptor that names what is at `path` now without opening it for reading or writing
    /// (`O_PATH`, so a FIFO or device is not touched). Calls `proofkit_posix_open_path`.
    package static func openPath(_ path: String) -> Result<Int32, Errno> {
        valueOrErrno { proofkit_posix_open_path(FilePath.cString(path)) }
    }

    /// The process environment (`environ`), names and values as ``FilePath`` strings: bytes
    /// that are not UTF-8 (a folder named in Latin-1 in `PROOFKIT_MODELS`) are kept as escapes
    /// that ``FilePath/cString(_:)`` turns back into the same bytes for `open`, where Foundation's
    /// `ProcessInfo.environment` replaces them with U+FFFD. An entry without `=` is skipped; of a
    /// name given twice, the first wins (as `getenv` finds it). Reads `environ`; call it while no
    /// other thread calls `setenv`.
    package static func environment() -> [String: String] {
        var result: [String: String] = [:]
        guard var pointer = Optional(environ) else { return result }
        while let entry = pointer.pointee {
            let length = strlen(entry)
            let bytes = UnsafeRawBufferPointer(start: entry, count: length)
            if let equals = bytes.firstIndex(of: 0x3D) {
                let name = FilePath.string(fromBytes: Array(bytes[..<equals]))
                if result[name] == nil {
                    result[name] = FilePath.string(fromBytes: Array(bytes[(equals + 1)...]))
                }
            }
            pointer += 1
        }
        return result
    }

    /// A new anonymous file for reading and writing: `O_TMPFILE` in `$TMPDIR` (else /tmp), else
    /// `memfd_create`; nothing is left on the disk, even after SIGKILL.
    /// Calls `getenv`, `proofkit_posix_open_anonymous`.
    package static func openAnonymous() -> Result<Int32, Errno> {
        let folder = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return valueOrErrno { proofkit_posix_open_anonymous(folder) }
    }

    /// Waits up to `milliseconds` (-1: for ever) until one of `descriptors` is readable.
    /// - Returns: for each descriptor whether it has something (data, end of file or an error).
    /// - Throws: the errno of `poll` (EINTR is retried only when `retryOnInterrupt`). Calls `poll`.
    package static func waitReadable(_ descriptors: [Int32], milliseconds: Int32, retryOnInterrupt: Bool = true)
        throws(Errno) -> [Bool]
    {
        var entries = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        _ = try valueOrErrno(retryOnInterrupt: retryOnInterrupt) { poll(&entries, nfds_t(entries.count), milliseconds) }
            .get()
        return entries.map { $0.revents != 0 }
    }

    /// Runs `body` with file descriptor 2 pointed at /dev/null, then restores it (libmpg123 inside
    /// libsndfile prints warnings straight to stderr, which would break one-line diagnostics).
    /// Other threads' stderr is dropped too for the duration, so keep `body` short; overlapping
    /// calls are counted under a lock and stderr comes back when the last one ends.
    /// - Throws: what `body` throws (stderr is restored first). Calls `dup`, `open`, `dup2`, `close`.
    ///
    /// Inlinable, so that each caller gets a copy specialised to its result type: a generic call
    /// across modules would instantiate the metadata of `T` at run time (for a `Result<_, E>`, a
    /// scan of every protocol conformance in the binary to find `E: Error`).
    @inlinable
    package static func withStandardErrorSilenced<T: ~Copyable, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        beginStandardErrorSilence()
        defer { endStandardErrorSilence() }
        return try body()
    }

    /// The first half of ``withStandardErrorSilenced(_:)``: points descriptor 2 at /dev/null
    /// (unless an overlapping call already has). Calls `fcntl(F_DUPFD_CLOEXEC)`, `open`, `dup2`,
    /// `close`.
    package static func beginStandardErrorSilence() {
        silencing.withLock { state in
            if state.depth == 0 {
                let saved = fcntl(2, F_DUPFD_CLOEXEC, 0)
                let null = Glibc.open("/dev/null", O_WRONLY | O_CLOEXEC)
                if saved >= 0 && null >= 0 { _ = dup2(null, 2) }
                if null >= 0 { _ = Glibc.close(null) }
                state.saved = saved
            }
            state.depth += 1
        }
    }

    /// The second half of ``withStandardErrorSilenced(_:)``: restores descriptor 2 when the last
    /// overlapping call ends. Calls `dup2`, `close`.
    package static func endStandardErrorSilence() {
        silencing.withLock { state in
            state.depth -= 1
            if state.depth == 0 && state.saved >= 0 {
                _ = dup2(state.saved, 2)
                _ = Glibc.close(state.saved)
                state.saved = -1
            }
        }
    }

    private static let silencing = Mutex(SilencingState())

    private struct SilencingState {
        var depth = 0
        var saved: Int32 = -1
    }

    /// Sleeps for `microseconds`. Calls `usleep`.
    package static func sleep(microseconds: UInt32) {
        _ = usleep(microseconds)
    }

    /// Sleeps for `seconds` (nothing when <= 0), resuming after a signal for the time left.
    /// Calls `nanosleep`.
    package static func sleep(seconds: Double) {
        guard seconds > 0 else { return }
        let whole = seconds.rounded(.down)
        var request = timespec(tv_sec: Int(whole), tv_nsec: Int((seconds - whole) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    /// Seconds on the monotonic clock (`CLOCK_MONOTONIC`), for pacing. Calls `clock_gettime`.
    package static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}

// MARK: Mapping a file

/// A whole file mapped read-only into memory (`mmap`, `MAP_PRIVATE`), unmapped when the last
/// reference goes. Its pages are the page cache's: nothing is copied, and pages nobody reads are
/// never loaded. Immutable, so `Sendable`; the mapping must not be written.
package final class MappedFile: @unchecked Sendable {
    /// The mapped bytes (empty for an empty file).
    package let bytes: UnsafeRawBufferPointer

    private init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    deinit {
        if let base = bytes.baseAddress, bytes.count > 0 {
            munmap(UnsafeMutableRawPointer(mutating: base), bytes.count)
        }
    }

    /// Drops this process's view of the pages read so far (`madvise(MADV_DONTNEED)`): they leave
    /// its resident set but stay in the page cache; a later read maps them again from there.
    package func releaseResidentPages() {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: base), bytes.count, MADV_DONTNEED)
    }

    /// Maps the open file `fd` of `size` bytes (the descriptor may be closed afterwards).
    /// Calls `mmap`.
    package static func map(_ fd: Int32, size: Int) -> Result<MappedFile, Errno> {
        guard size > 0 else { return .success(MappedFile(bytes: UnsafeRawBufferPointer(start: nil, count: 0))) }
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else {
            return .failure(.current)
        }
        return .success(MappedFile(bytes: UnsafeRawBufferPointer(start: base, count: size)))
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

/// The C heap of this process.
package enum ProcessHeap {
    /// Gives the C heap's free memory back to the system (`malloc_trim(0)`, glibc). ONNX Runtime
    /// without its arena frees a run's working memory with `free`, but glibc keeps freed blocks of
    /// up to 32 MB in its heaps for reuse (its mmap threshold grows with the blocks it has freed),
    /// so the process would keep the largest run's working memory for good. About a millisecond.
    package static func returnFreedMemory() {
        proofkit_heap_trim()
    }
}

// MARK: Reading input: opened once, streams waited for a bounded time, sizes capped while reading

/// Why a file could not be read whole (``POSIX/readWhole(_:limit:)``).
package enum ReadFailure: Error, Sendable {
    /// `open` failed: ``Errno/isNotFound`` for a missing path; `EACCES`, `ELOOP`... otherwise.
    case open(Errno)
    /// The path is a folder.
    case folder
    /// A FIFO or socket sent nothing within ``POSIX/streamWaitMilliseconds``.
    case noWriter
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
    /// - Returns: the descriptor (the caller closes it) and its `fstat`.
    /// - Throws: ``ReadFailure`` (`.open`, `.folder`, `.noWriter`, `.failed("fstat")`).
    ///   Calls `open`, `fstat`, `poll`, `fcntl`.
    package static func openForReading(_ path: String) throws(ReadFailure) -> (fd: Int32, status: FileStatus) {
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
    /// - Throws: ``ReadFailure``. Calls `open`, `fstat`, `read`, `close`.
    package static func readWhole(_ path: String, limit: Int) throws(ReadFailure) -> [UInt8] {
        let (fd, info) = try openForReading(path)
        defer { closeDescriptor(fd) }
        if info.isRegular && info.size > Int64(limit) { throw .overLimit(size: info.size) }
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
