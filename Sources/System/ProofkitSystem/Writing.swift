// Writing whole buffers and small path questions, built on POSIX+Calls.swift's wrappers (no libc
// here): short writes and EINTR retried until everything is taken.

extension POSIX {
    /// Writes all of `bytes`, retrying on EINTR and short writes. Calls `write`.
    /// - Returns: `nil`, or the errno (`EIO` when `write` took nothing).
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Errno? {
        var written = 0
        return writeAll(fd, bytes, written: &written)
    }

    /// Writes all of `bytes` like ``writeAll(_:_:)-(_,UnsafeRawBufferPointer)``, counting in
    /// `written` what was taken: on a non-blocking descriptor `EAGAIN` (full) ends it early.
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, written: inout Int) -> Errno? {
        transferAll(bytes, done: &written) { write(fd, $0) }
    }

    /// Hands `transfer` what is left of `bytes` until it has taken all of them (`done` counts what
    /// it took): the loop of every "write all" here (`write`, `pwrite`, `send`).
    /// - Returns: `nil`, or the errno of a failed `transfer` (`EIO` when it took nothing).
    package static func transferAll(
        _ bytes: UnsafeRawBufferPointer, done: inout Int,
        _ transfer: (_ rest: UnsafeRawBufferPointer) -> Result<Int, Errno>
    ) -> Errno? {
        done = 0
        while done < bytes.count {
            switch transfer(UnsafeRawBufferPointer(rebasing: bytes[done...])) {
            case .success(let n) where n > 0: done += n
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
        return bytes.withUnsafeBytes { raw in
            transferAll(raw, done: &done) { write(fd, $0, at: offset + Int64(raw.count - $0.count)) }
        }
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

    /// The folder (`.` when there is none, empty for the root) and the last component of `path`.
    package static func split(_ path: String) -> (folder: String, base: String) {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[..<$0]) } ?? "."
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        return (folder, base)
    }
}
