public import ProofkitCore
// The one file in AudioIO where the C library (POSIX file calls) is used: checking an input
// before libsndfile sees it, and creating, syncing and renaming temporary outputs. (The
// sync_file_range shim from CProofkitShims is called here too: it is a POSIX file call.)
import Synchronization
internal import CProofkitShims
#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// Thin, typed wrappers over the POSIX calls that AudioIO uses.
enum POSIX {
    /// A failed call's errno.
    struct Errno: Error { var code: Int32 }

    /// What `stat` says about a path.
    struct FileStatus: Equatable {
        var isDirectory: Bool
        var isRegular: Bool
        var size: Int64
        var device: UInt64
        var inode: UInt64
    }

    /// `stat(path)`, or the errno. Calls `stat`.
    static func status(_ path: String) -> Result<FileStatus, Errno> {
        var info = stat()
        guard stat(FilePath.cString(path), &info) == 0 else { return .failure(Errno(code: errno)) }
        let type = info.st_mode & S_IFMT
        return .success(
            FileStatus(
                isDirectory: type == S_IFDIR, isRegular: type == S_IFREG, size: Int64(info.st_size),
                device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
    }

    /// Creates a new, empty temporary file next to `path` (same folder, so that a rename onto
    /// `path` is atomic), named `.NAME.tmp-XXXXXX`. Calls `mkstemp`.
    /// - Returns: the descriptor (mode 0600) and the temporary's path, or the errno.
    static func makeTemporary(beside path: String) -> Result<(fd: Int32, path: String), Errno> {
        let (folder, base) = split(path)
        var template = FilePath.cString("\(folder)/.\(base).tmp-XXXXXX")
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return .failure(Errno(code: errno)) }
        let temporary = FilePath.string(fromBytes: template.dropLast().map { UInt8(bitPattern: $0) })
        return .success((fd, temporary))
    }

    /// The folder (`.` when there is none, `/` for the root) and the last component of `path`.
    static func split(_ path: String) -> (folder: String, base: String) {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[..<$0]) } ?? "."
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        return (folder.isEmpty ? "" : folder, base)
    }

    /// Renames `from` onto `to` atomically. Calls `rename`.
    static func moveAtomically(_ from: String, onto to: String) -> Int32? {
        rename(FilePath.cString(from), FilePath.cString(to)) == 0 ? nil : errno
    }

    /// Flushes the data of `fd` (and the metadata needed to read it back: size, block map) to
    /// the disk, retrying on EINTR. Calls `fdatasync`.
    /// - Returns: `nil`, or the errno.
    static func syncData(_ fd: Int32) -> Int32? {
        while true {
            if fdatasync(fd) == 0 { return nil }
            if errno != EINTR { return errno }
        }
    }

    /// Starts writing the dirty pages of `fd` to the disk without waiting (Linux
    /// `sync_file_range(SYNC_FILE_RANGE_WRITE)`; nothing elsewhere). Errors are ignored: a later
    /// ``syncData(_:)`` reports them. Calls `proofkit_posix_start_writeback`.
    static func startWriteback(_ fd: Int32) {
        _ = proofkit_posix_start_writeback(fd)
    }

    /// Removes `path`, ignoring errors. Calls `unlink`.
    static func remove(_ path: String) {
        _ = unlink(FilePath.cString(path))
    }

    /// The first `count` bytes of the open file `fd` (fewer if it is shorter), read at offset 0
    /// without moving its position. Calls `pread`.
    static func readPrefix(_ fd: Int32, count: Int) -> Result<[UInt8], Errno> {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = bytes.withUnsafeMutableBytes { readBytes(fd, $0.baseAddress! + filled, count - filled, at: Int64(filled)) }
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

    /// A new descriptor for the same open file. Calls `fcntl(F_DUPFD_CLOEXEC)`.
    static func duplicate(_ fd: Int32) -> Int32? {
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        return copy >= 0 ? copy : nil
    }

    /// Reads up to `count` bytes at `offset`, retrying on EINTR. Calls `pread`.
    /// - Returns: bytes read, 0 at the end, -1 on error.
    static func readBytes(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, at offset: Int64) -> Int64 {
        while true {
            let n = pread(fd, buffer, count, off_t(offset))
            if n < 0 && errno == EINTR { continue }
            return Int64(n)
        }
    }

    /// Closes a descriptor that libsndfile did not take over. Calls `close`.
    static func closeDescriptor(_ fd: Int32) {
        _ = close(fd)
    }

    /// The text of an errno value. Calls `strerror`.
    static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    /// Runs `body` with file descriptor 2 pointed at /dev/null, then restores it.
    ///
    /// libmpg123 (inside libsndfile) prints warnings such as "Cannot read next header" straight
    /// to stderr, which would break proofkit's one-line diagnostics. Other threads' stderr is
    /// also dropped for the duration, so keep `body` short. Overlapping calls from several
    /// threads are counted under a lock: stderr comes back when the last one ends.
    /// Calls `dup`, `open`, `dup2`, `close`.
    /// - Throws: what `body` throws (stderr is restored first).
    static func withStandardErrorSilenced<T: ~Copyable, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        silencing.withLock { state in
            if state.depth == 0 {
                let saved = dup(2)
                let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
                if saved >= 0 && null >= 0 { _ = dup2(null, 2) }
                if null >= 0 { _ = close(null) }
                state.saved = saved
            }
            state.depth += 1
        }
        defer {
            silencing.withLock { state in
                state.depth -= 1
                if state.depth == 0 && state.saved >= 0 {
                    _ = dup2(state.saved, 2)
                    _ = close(state.saved)
                    state.saved = -1
                }
            }
        }
        return try body()
    }

    private static let silencing = Mutex(SilencingState())

    struct SilencingState {
        var depth = 0
        var saved: Int32 = -1
    }

    static let noSuchFile = ENOENT
    static let notADirectory = ENOTDIR
}

/// File identity checks for outputs.
public enum AudioFileIdentity {
    /// Whether both paths exist and name the same file (same device and inode), also through
    /// hard or symbolic links and different spellings of the path. Calls `stat`.
    public static func sameFile(_ a: String, _ b: String) -> Bool {
        guard case .success(let first) = POSIX.status(a), case .success(let second) = POSIX.status(b)
        else { return false }
        return first.device == second.device && first.inode == second.inode
    }
}

/// Short-lived files that a pipeline needs on disk (for example an embedded sound to decode).
public enum ScratchFile {
    /// Writes `bytes` to a new hidden file in the folder of `path` (`.NAME.tmp-XXXXXX`).
    /// - Returns: the new file's path; remove it with ``remove(_:)``.
    /// - Throws: `.io` naming `path` when the folder is missing, unwritable or full.
    ///   Calls `mkstemp`, `write`, `close`.
    public static func write(_ bytes: [UInt8], beside path: String) throws(ProofkitError) -> String {
        let made: (fd: Int32, path: String)
        switch POSIX.makeTemporary(beside: path) {
        case .success(let value): made = value
        case .failure(let failure):
            throw ProofkitError(.io, "cannot create a file: \(POSIX.describe(failure.code))",
                                operation: "mkstemp", underlying: failure.code, path: path)
        }
        if let code = POSIX.writeAll(made.fd, bytes) {
            POSIX.closeDescriptor(made.fd)
            POSIX.remove(made.path)
            throw ProofkitError(.io, "cannot write: \(POSIX.describe(code))", operation: "write",
                                underlying: code, path: path)
        }
        POSIX.closeDescriptor(made.fd)
        return made.path
    }

    /// Removes a file made by ``write(_:beside:)``, ignoring errors. Calls `unlink`.
    public static func remove(_ path: String) {
        POSIX.remove(path)
    }
}

extension POSIX {
    /// Writes all of `bytes`, retrying on EINTR and short writes. Calls `write`.
    /// - Returns: `nil`, or the errno.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
        var offset = 0
        return bytes.withUnsafeBytes { buffer -> Int32? in
            while offset < buffer.count {
                let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    return n < 0 ? errno : EIO
                }
            }
            return nil
        }
    }
}

// MARK: Replacing an output (one path for every file proofkit writes)

/// What an output path held before it was replaced: kept on the new file.
struct ReplacedFile {
    var mode: UInt32
    var owner: UInt32
    var group: UInt32
}

extension POSIX {
    /// How old a temporary of our own naming (`.NAME.tmp-XXXXXX`) must be before a later write of
    /// the same output removes it, in seconds: 5 minutes (a running writer keeps its temporary
    /// for a few seconds at most; one left by `kill -9` is older).
    static let staleTemporaryAge: Int = 300

    /// Checks that `path` may be replaced: it is absent, or a regular file that is writable
    /// (its mode has a write bit, and this process may write it).
    /// - Returns: the existing file's mode and owner, or `nil` when there is none.
    /// - Throws: `.io` naming `path` for a device node, FIFO, socket or folder ("not a regular
    ///   file"), a read-only file, or a path that cannot be looked at. Calls `stat`, `access`.
    static func checkReplaceable(_ path: String) throws(ProofkitError) -> ReplacedFile? {
        var info = stat()
        guard stat(FilePath.cString(path), &info) == 0 else {
            let code = errno
            if code == ENOENT { return nil }
            throw ProofkitError(.io, "cannot write the output: \(describe(code))", operation: "stat",
                                underlying: code, path: path)
        }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG else {
            let kind = type == S_IFDIR ? "a folder" : type == S_IFCHR ? "a character device"
                : type == S_IFBLK ? "a block device" : type == S_IFIFO ? "a FIFO" : type == S_IFSOCK ? "a socket" : "special"
            throw ProofkitError(.io, "is not a regular file (it is \(kind)); refusing to replace it", path: path)
        }
        let mode = UInt32(info.st_mode & 0o7777)
        if mode & 0o222 == 0 || access(FilePath.cString(path), W_OK) != 0 {
            throw ProofkitError(.io, "is read-only (mode \(String(mode, radix: 8))); refusing to replace it (chmod u+w it first)",
                                operation: "access", path: path)
        }
        return ReplacedFile(mode: mode, owner: UInt32(info.st_uid), group: UInt32(info.st_gid))
    }

    /// Removes temporaries of our own naming for `path` (`.NAME.tmp-` and six characters, in the
    /// same folder) that are regular files owned by this user and older than
    /// ``staleTemporaryAge``: what a writer killed with SIGKILL leaves behind. Errors are ignored.
    /// Calls `opendir`, `readdir`, `lstat`, `unlink`, `closedir`.
    static func removeStaleTemporaries(beside path: String, now: Int = Int(time(nil))) {
        let (folder, base) = split(path)
        let prefix = Array(".\(base).tmp-".utf8)
        let directoryPath = folder.isEmpty ? "/" : folder
        guard let directory = opendir(FilePath.cString(directoryPath)) else { return }
        defer { closedir(directory) }
        var stale: [String] = []
        while let entry = readdir(directory) {
            let name: [UInt8] = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                Array(raw.prefix { $0 != 0 })
            }
            guard name.count == prefix.count + 6, name.starts(with: prefix) else { continue }
            stale.append("\(folder)/" + FilePath.string(fromBytes: name))
        }
        for candidate in stale {
            var info = stat()
            guard lstat(FilePath.cString(candidate), &info) == 0, info.st_mode & S_IFMT == S_IFREG,
                info.st_uid == geteuid(), now - Int(info.st_mtim.tv_sec) > staleTemporaryAge
            else { continue }
            _ = unlink(FilePath.cString(candidate))
        }
    }

    /// Starts replacing `path`: checks it (``checkReplaceable(_:)``), removes stale temporaries,
    /// and creates the temporary beside it with the existing file's mode (and, when running as
    /// root, its owner and group), or the usual mode of a new file (0666 less the umask).
    /// - Returns: the temporary's descriptor and path, and what `path` held.
    /// - Throws: `.io` naming `path`. Calls `mkstemp`, `fchown`, `fchmod`.
    static func beginReplacement(of path: String) throws(ProofkitError)
        -> (fd: Int32, temporary: String, existing: ReplacedFile?)
    {
        let existing = try checkReplaceable(path)
        removeStaleTemporaries(beside: path)
        let made: (fd: Int32, path: String)
        switch makeTemporary(beside: path) {
        case .success(let value): made = value
        case .failure(let failure):
            throw ProofkitError(.io, "cannot create the output: \(describe(failure.code))",
                                operation: "mkstemp", underlying: failure.code, path: path)
        }
        if let existing {
            // chown clears set-id bits, so the mode comes after it.
            if geteuid() == 0 { _ = fchown(made.fd, existing.owner, existing.group) }
            _ = fchmod(made.fd, mode_t(existing.mode))
        } else {
            let mask = umask(0)
            umask(mask)
            _ = fchmod(made.fd, 0o666 & ~mask)
        }
        return (made.fd, made.path, existing)
    }

    /// Renames `temporary` onto `path`, after checking again, through a descriptor of what is at
    /// `path` now (`O_PATH`, so nothing is opened for reading or writing), that it is absent or a
    /// regular file: something swapped in meanwhile is not replaced.
    /// - Throws: `.io` naming `path`; the temporary is left for the caller to remove.
    ///   Calls `open(O_PATH)`, `fstat`, `close`, `rename`.
    static func finishReplacement(temporary: String, onto path: String) throws(ProofkitError) {
        let fd = proofkit_posix_open_path(FilePath.cString(path))
        if fd >= 0 {
            var info = stat()
            let ok = fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
            _ = close(fd)
            guard ok else {
                throw ProofkitError(.io, "is not a regular file any more; refusing to replace it", path: path)
            }
        } else if errno != ENOENT {
            let code = errno
            throw ProofkitError(.io, "cannot replace the output: \(describe(code))", operation: "open",
                                underlying: code, path: path)
        }
        if let code = moveAtomically(temporary, onto: path) {
            throw ProofkitError(.io, "cannot replace the output: \(describe(code))",
                                operation: "rename", underlying: code, path: path)
        }
    }
}

/// Writing a whole small file (JSON, SVG, a state file) atomically.
public enum AtomicFile {
    /// Writes `bytes` to `path` atomically: a temporary beside it (`.NAME.tmp-XXXXXX`), `fsync`,
    /// then `rename`. An existing file keeps its mode (and, as root, its owner); a device node,
    /// FIFO, folder or read-only file at `path` is refused and left alone. On any failure no
    /// file appears and an existing one stays as it was.
    /// - Throws: `ProofkitError` `.io` naming `path` (not a regular file, read-only, folder missing
    ///   or unwritable, disk full). Calls `stat`, `mkstemp`, `write`, `fsync`, `rename`.
    public static func write(_ bytes: [UInt8], to path: String) throws(ProofkitError) {
        let (fd, temporary, _) = try POSIX.beginReplacement(of: path)
        var failure: ProofkitError?
        if let code = POSIX.writeAll(fd, bytes) {
            failure = ProofkitError(.io, "cannot write: \(POSIX.describe(code))", operation: "write", underlying: code, path: path)
        } else if fsync(fd) != 0 {
            let code = errno
            failure = ProofkitError(.io, "cannot write: \(POSIX.describe(code))", operation: "fsync", underlying: code, path: path)
        }
        if close(fd) != 0, failure == nil {
            let code = errno
            failure = ProofkitError(.io, "cannot write: \(POSIX.describe(code))", operation: "close", underlying: code, path: path)
        }
        if failure == nil {
            do throws(ProofkitError) { try POSIX.finishReplacement(temporary: temporary, onto: path) } catch { failure = error }
        }
        if let failure {
            POSIX.remove(temporary)
            throw failure
        }
    }
}

// MARK: Reading input: opened once, streams waited for a bounded time, sizes capped while reading

extension POSIX {
    /// How long opening a FIFO waits for a writer to send data before giving up, in
    /// milliseconds: 10 s.
    static let streamWaitMilliseconds: Int32 = 10_000

    /// Opens `path` for reading, once. The open itself never blocks (`O_NONBLOCK`, so a FIFO
    /// without a writer cannot hang it); for a FIFO or other stream it then waits up to
    /// ``streamWaitMilliseconds`` for the first data (`poll`), and clears `O_NONBLOCK`.
    /// - Parameter what: what the file is, for messages ("audio file", "state file").
    /// - Returns: the descriptor (the caller closes it) and its `fstat`.
    /// - Throws: `.notFound` (missing, or a folder), `.io` (cannot open, no writer on a FIFO).
    ///   Calls `open`, `fstat`, `poll`, `fcntl`.
    static func openInput(_ path: String, what: String) throws(ProofkitError) -> (fd: Int32, status: FileStatus) {
        let fd = open(FilePath.cString(path), O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR {
                throw ProofkitError(.notFound, "no such file", operation: "open", underlying: code, path: path)
            }
            if code == EISDIR {
                throw ProofkitError(.notFound, "is a folder, not \(article(what))", path: path)
            }
            throw ProofkitError(.io, "cannot open the \(what): \(describe(code))", operation: "open", underlying: code, path: path)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            _ = close(fd)
            throw ProofkitError(.io, "cannot read the \(what): \(describe(code))", operation: "fstat", underlying: code, path: path)
        }
        let type = info.st_mode & S_IFMT
        let status = FileStatus(
            isDirectory: type == S_IFDIR, isRegular: type == S_IFREG, size: Int64(info.st_size),
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        if status.isDirectory {
            _ = close(fd)
            throw ProofkitError(.notFound, "is a folder, not \(article(what))", path: path)
        }
        if type == S_IFIFO || type == S_IFSOCK {
            var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            var ready: Int32
            repeat { ready = poll(&waiting, 1, streamWaitMilliseconds) } while ready < 0 && errno == EINTR
            if ready == 0 {
                _ = close(fd)
                throw ProofkitError(.io, "no writer sent anything to this FIFO within \(streamWaitMilliseconds / 1000) s",
                                    operation: "poll", path: path)
            }
        }
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
        return (fd, status)
    }

    /// "a state file", "an audio file".
    static func article(_ what: String) -> String {
        (what.first.map { "aeiou".contains($0) } ?? false ? "an " : "a ") + what
    }

    /// Reads `fd` to its end, refusing more than `limit` bytes: at most `limit` + 64 KiB bytes
    /// are ever held, whatever `fstat` says (files in /proc report size 0; FIFOs and devices
    /// none). Reads are whole 64 KiB chunks (some /proc files refuse odd sizes).
    /// - Returns: the bytes, or `nil` past the limit.
    /// - Throws: the errno of a failed `read`. Calls `read`.
    static func readCapped(_ fd: Int32, limit: Int) throws(Errno) -> [UInt8]? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while bytes.count <= limit {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n > 0 {
                bytes.append(contentsOf: chunk[0..<n])
            } else if n == 0 {
                return bytes
            } else if errno != EINTR {
                throw Errno(code: errno)
            }
        }
        return nil
    }

    /// Copies the stream `fd` into a new anonymous file (`O_TMPFILE` in `$TMPDIR`, else /tmp's, else
    /// `memfd_create`), refusing more than `limit` bytes, so that decoders that seek can read it.
    /// Nothing is left on the disk, even after SIGKILL. Calls `open`, `read`, `write`, `lseek`.
    /// - Returns: the new descriptor at offset 0 and its size, or `nil` past the limit.
    static func spool(_ fd: Int32, limit: Int) throws(Errno) -> (fd: Int32, size: Int64)? {
        let folder = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let copy = proofkit_posix_open_anonymous(folder)
        guard copy >= 0 else { throw Errno(code: errno) }
        var total = 0
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR { continue }
                let code = errno
                _ = close(copy)
                throw Errno(code: code)
            }
            total += n
            if total > limit {
                _ = close(copy)
                return nil
            }
            if let code = writeAll(copy, Array(chunk[0..<n])) {
                _ = close(copy)
                throw Errno(code: code)
            }
        }
        _ = lseek(copy, 0, SEEK_SET)
        return (copy, Int64(total))
    }
}

/// Reading a whole small input file (JSON, text) with a size cap that holds while reading.
public enum BoundedFile {
    /// Reads the file at `path` whole, opened once (``POSIX/openInput(_:what:)``: a FIFO without
    /// a writer is given up after 10 s), refusing more than `limit` bytes while reading, so that
    /// endless or size-0 files (/dev/zero, /proc/self/pagemap) cannot grow memory.
    /// - Parameters:
    ///   - limit: the most bytes accepted.
    ///   - what: what the file is, for messages, e.g. "state file".
    /// - Throws: `.notFound` (missing, or a folder: exit 66), `.decodeFailed` (over `limit`: 65),
    ///   `.io` (unreadable, e.g. /proc/self/mem: 74). Calls `open`, `fstat`, `read`, `close`.
    public static func read(_ path: String, limit: Int, what: String) throws(ProofkitError) -> [UInt8] {
        let (fd, _) = try POSIX.openInput(path, what: what)
        defer { POSIX.closeDescriptor(fd) }
        return try read(descriptor: fd, name: path, limit: limit, what: what)
    }

    /// Reads the open descriptor `fd` (for example 0, standard input) to its end, refusing more
    /// than `limit` bytes while reading.
    /// - Parameter name: what to call it in messages (a path, or "stdin").
    /// - Throws: `.decodeFailed` (over `limit`), `.io` (a failed read). Calls `read`.
    public static func read(descriptor fd: Int32, name: String, limit: Int, what: String) throws(ProofkitError) -> [UInt8] {
        let result: [UInt8]?
        do throws(POSIX.Errno) {
            result = try POSIX.readCapped(fd, limit: limit)
        } catch {
            throw ProofkitError(.io, "cannot read the \(what): \(POSIX.describe(error.code))", operation: "read",
                                underlying: error.code, path: name)
        }
        guard let bytes = result else {
            throw ProofkitError(.decodeFailed, "is over the \(sizeText(limit)) limit for \(POSIX.article(what))", path: name)
        }
        return bytes
    }

    /// "4 MiB", "512 KiB", "100 bytes".
    static func sizeText(_ bytes: Int) -> String {
        if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10 && bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes)-byte"
    }
}
