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
        guard stat(path, &info) == 0 else { return .failure(Errno(code: errno)) }
        let type = info.st_mode & S_IFMT
        return .success(
            FileStatus(
                isDirectory: type == S_IFDIR, isRegular: type == S_IFREG, size: Int64(info.st_size),
                device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
    }

    /// The first `count` bytes of the file (fewer if it is shorter), or the errno.
    /// Calls `open`, `read`, `close`.
    static func readPrefix(_ path: String, count: Int) -> Result<[UInt8], Errno> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(Errno(code: errno)) }
        defer { _ = close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, count - filled) }
            if n > 0 {
                filled += n
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 {
                return .failure(Errno(code: errno))
            } else {
                break
            }
        }
        return .success(Array(bytes[0..<filled]))
    }

    /// Creates a new, empty temporary file next to `path` (same folder, so that a rename onto
    /// `path` is atomic). Calls `mkstemp`.
    /// - Returns: the descriptor and the temporary's path, or the errno.
    static func makeTemporary(beside path: String) -> Result<(fd: Int32, path: String), Errno> {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[..<$0]) } ?? "."
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var template = Array("\(folder.isEmpty ? "" : folder)/.\(base).tmp-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return .failure(Errno(code: errno)) }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        // Give the output the usual permissions of a new file (mkstemp makes 0600).
        let mask = umask(0)
        umask(mask)
        _ = fchmod(fd, 0o666 & ~mask)
        return .success((fd, temporary))
    }

    /// Renames `from` onto `to` atomically. Calls `rename`.
    static func moveAtomically(_ from: String, onto to: String) -> Int32? {
        rename(from, to) == 0 ? nil : errno
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
        _ = unlink(path)
    }

    /// Opens `path` read-only. Calls `open`.
    static func openForReading(_ path: String) -> Int32? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        return fd >= 0 ? fd : nil
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
    static func withStandardErrorSilenced<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
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
