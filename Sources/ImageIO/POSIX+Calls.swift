// The one place ImageIO calls the C library for files: a photo is read whole, bounded, with
// plain POSIX calls (no Foundation file APIs: they cost start-up time and copies).

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif
import ProofkitCore

enum PhotoFile {
    /// Reads the whole regular file at `path`, refusing folders and files over `limit` bytes.
    /// At most `limit + 1` bytes are ever held, even if the file grows while it is read.
    /// Calls `open`, `fstat`, `read`, `close`.
    static func readWhole(_ path: String, limit: Int) throws(ProofkitError) -> [UInt8] {
        let fd = open(FilePath.cString(path), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR {
                throw ProofkitError(.notFound, "no such file", path: path)
            }
            throw ProofkitError(.io, "cannot open the file for reading: \(describe(code))", path: path)
        }
        defer { _ = close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw ProofkitError(.io, "cannot read the file's size: \(describe(errno))", path: path)
        }
        if info.st_mode & S_IFMT == S_IFDIR {
            throw ProofkitError(.io, "is a folder, not an image file", path: path)
        }
        let size = Int(info.st_size)
        if size > limit {
            throw ProofkitError(.io, "the file is \(size) bytes, over the \(limit)-byte limit for a photo", path: path)
        }
        // One byte of room past the size fstat gave, to notice a file that grew meanwhile.
        let capacity = min(size, limit) + 1
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            var filled = 0
            while filled < capacity {
                let n = read(fd, buffer.baseAddress! + filled, capacity - filled)
                if n > 0 {
                    filled += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    if n < 0 { failure = errno }
                    break
                }
            }
            count = filled
        }
        if failure != 0 {
            throw ProofkitError(.io, "cannot read the file: \(describe(failure))", path: path)
        }
        if bytes.count > limit {
            throw ProofkitError(.io, "the file is over the \(limit)-byte limit", path: path)
        }
        return bytes
    }

    private static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }
}
