// Unix stream sockets for the alarm service, built on POSIX+Calls.swift's wrappers (no libc
// here): each step's failure names its call.

/// A failed system call and its errno, for steps that make several calls.
package struct SystemCallFailure: Error, Sendable, CustomStringConvertible {
    /// The C function, e.g. `"connect"`.
    package var operation: String
    package var errno: Errno
    package var description: String { errno.description }
}

/// Unix stream sockets (close-on-exec; no network sockets).
package enum UnixSocket {
    private static func makeSocket() throws(SystemCallFailure) -> Int32 {
        switch POSIX.makeUnixSocket() {
        case .success(let fd): return fd
        case .failure(let errno): throw SystemCallFailure(operation: "socket", errno: errno)
        }
    }

    /// Runs `body` with a path to `path` that fits a socket address: `path` itself, or for a path
    /// over ``POSIX/unixPathLimit`` bytes, `/proc/self/fd/N/NAME` through a descriptor of its folder
    /// (Linux resolves it to the same place), so a store in a deep folder still has its socket.
    /// Calls `open`, `close`.
    static func withReachablePath<R>(
        _ path: String, _ body: (String) -> Result<R, Errno>
    ) -> Result<R, Errno> {
        guard path.utf8.count > POSIX.unixPathLimit, let slash = path.lastIndex(of: "/") else { return body(path) }
        let folder = slash == path.startIndex ? "/" : String(path[..<slash])
        let folderFD: Int32
        switch POSIX.open(folder, [.readOnly, .directory]) {
        case .success(let fd): folderFD = fd
        case .failure(let errno): return .failure(errno)
        }
        defer { POSIX.closeDescriptor(folderFD) }
        return body("/proc/self/fd/\(folderFD)/\(path[path.index(after: slash)...])")
    }

    /// A listening socket at `path`, mode 0600 (created under umask 0177, then `chmod`), after
    /// removing whatever socket was left there. A path too long for a socket address is reached
    /// through its folder (``withReachablePath(_:_:)``). Calls `unlink`, `socket`, `bind`,
    /// `chmod`, `listen`.
    package static func listen(at path: String, backlog: Int32 = 16) throws(SystemCallFailure) -> Int32 {
        POSIX.remove(path)
        let fd = try makeSocket()
        let previousMask = POSIX.setCreationMask(0o177)
        let bound = withReachablePath(path) { POSIX.bind(fd, toUnixPath: $0) }
        POSIX.setCreationMask(previousMask)
        let steps: [(String, () -> Result<Void, Errno>)] = [
            ("bind", { bound }), ("chmod", { POSIX.setMode(path, 0o600) }),
            ("listen", { POSIX.listen(fd, backlog: backlog) }),
        ]
        for (operation, step) in steps {
            if case .failure(let errno) = step() {
                POSIX.closeDescriptor(fd)
                throw SystemCallFailure(operation: operation, errno: errno)
            }
        }
        return fd
    }

    /// A socket connected to the listener at `path`, with a receive timeout of
    /// `receiveTimeoutSeconds`. Calls `socket`, `connect`, `setsockopt`.
    package static func connect(to path: String, receiveTimeoutSeconds: Int) throws(SystemCallFailure) -> Int32 {
        let fd = try makeSocket()
        let connected = withReachablePath(path) { POSIX.connect(fd, toUnixPath: $0) }
        if case .failure(let errno) = connected {
            POSIX.closeDescriptor(fd)
            throw SystemCallFailure(operation: "connect", errno: errno)
        }
        setReceiveTimeout(fd, seconds: receiveTimeoutSeconds)
        return fd
    }

    /// The next connection on `listener` (close-on-exec), or `nil`. Calls `accept`, `fcntl`.
    package static func accept(_ listener: Int32) -> Int32? {
        guard case .success(let fd) = POSIX.accept(listener) else { return nil }
        POSIX.setCloseOnExec(fd)
        return fd
    }

    /// Makes reads on `fd` give up after `seconds`. Calls `setsockopt(SO_RCVTIMEO)`.
    package static func setReceiveTimeout(_ fd: Int32, seconds: Int) {
        POSIX.setReceiveTimeout(fd, seconds: seconds)
    }

    /// Sends all of `bytes` (`MSG_NOSIGNAL`: a closed peer is `EPIPE`, not SIGPIPE). Calls `send`.
    package static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Errno? {
        var sent = 0
        return bytes.withUnsafeBytes { raw in POSIX.transferAll(raw, done: &sent) { POSIX.send(fd, $0) } }
    }

    /// One line from `fd` (without its newline; at most `limit` bytes), `nil` at the end or on an
    /// error (a receive timeout) before anything came. Reads a byte at a time, so nothing past the
    /// line is consumed. Calls `read`.
    package static func readLine(_ fd: Int32, limit: Int = 4096) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while bytes.count < limit {
            guard case .success(1) = withUnsafeMutableBytes(of: &byte, { POSIX.read(fd, into: $0) }) else {
                return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
            }
            if byte == 0x0A { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether the connection `fd` is still open: `false` once the peer closed it (a read gives the
    /// end, or fails). Consumes one byte when the peer sent something. Calls `read`.
    package static func peerStillOpen(_ fd: Int32) -> Bool {
        var byte: UInt8 = 0
        if case .success(let n) = withUnsafeMutableBytes(of: &byte, { POSIX.read(fd, into: $0) }), n > 0 { return true }
        return false
    }

    /// The user id of the process at the other end of the connected socket `fd` (`SO_PEERCRED`).
    /// Calls `proofkit_peer_uid`.
    package static func peerUser(_ fd: Int32) -> UInt32? {
        POSIX.peerUser(fd)
    }
}
