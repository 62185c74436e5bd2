internal import CProofkitShims
#if canImport(Glibc)
    import Glibc
#endif

/// The control socket of an alarm service: a Unix stream socket in the store's folder, mode
/// 0600, one request line and one reply line per connection. Peers must be the same user or root
/// (SO_PEERCRED). There is no network socket.
///
/// Requests: `ping`, `reload` (re-read the store), `stop` (silence the ring now sounding),
/// `hold CHAIN` (a live proof is running: stop the ring, hold off the chain's backups until the
/// connection closes). Replies start with `ok` or `error`.
public enum AlarmControl {
    /// Sends `request` to the service of the store at `socketPath` and returns its reply line.
    /// - Throws: ``AlarmFailure`` `.noService` when no service listens there.
    public static func send(_ request: String, socketPath: String) throws -> String {
        let fd = try connect(socketPath)
        defer { close(fd) }
        try writeLine(fd, request)
        return readLine(fd) ?? "error no reply"
    }

    /// Sends `hold CHAIN` and keeps the connection open: the hold lasts until the returned
    /// descriptor is closed (by `close` or by the process ending).
    public static func hold(chain: String, socketPath: String) throws -> Int32 {
        let fd = try connect(socketPath)
        try writeLine(fd, "hold \(chain)")
        guard let reply = readLine(fd), reply.hasPrefix("ok") else {
            close(fd)
            throw AlarmFailure(.noService, "the alarm service refused the hold")
        }
        return fd
    }

    static func connect(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw AlarmFailure(.noService, "cannot create a socket: \(String(cString: strerror(errno)))") }
        var address = unixAddress(path)
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard status == 0 else {
            close(fd)
            throw AlarmFailure(.noService, "no alarm service is running on this store (\(path): \(String(cString: strerror(errno)))); start it with 'proofkit alarm run'")
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    static func unixAddress(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        precondition(bytes.count < MemoryLayout.size(ofValue: address.sun_path), "socket path too long")
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
            raw[bytes.count] = 0
        }
        return address
    }

    static func writeLine(_ fd: Int32, _ line: String) throws {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if n > 0 { offset += n; continue }
            if n < 0 && errno == EINTR { continue }
            throw AlarmFailure(.noService, "the alarm service closed the connection")
        }
    }

    /// Reads one line (up to 4 KiB), `nil` at end of file or on error.
    static func readLine(_ fd: Int32) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while bytes.count < 4096 {
            let n = read(fd, &byte, 1)
            if n == 1 {
                if byte == 0x0A { return String(decoding: bytes, as: UTF8.self) }
                bytes.append(byte)
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether the peer of a connected socket may control the service: the same user or root.
    static func peerAllowed(_ fd: Int32) -> Bool {
        var uid: UInt32 = 0
        var pid: Int32 = 0
        guard proofkit_peer_uid(fd, &uid, &pid) == 0 else { return false }
        return uid == getuid() || uid == 0
    }
}
