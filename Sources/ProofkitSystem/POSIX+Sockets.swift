// Unix sockets, Linux timers, events and inotify: the alarm service's system calls.
// Part of ProofkitSystem's chokepoint (see POSIX+Calls.swift): every call goes through
// ``valueOrErrno(retryOnInterrupt:_:)`` and fails with an ``Errno``.
internal import CProofkitShims
internal import ProofkitCore

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

// MARK: Unix sockets, Linux timers and events (the alarm service)

/// A failed system call and its errno, for steps that make several calls.
package struct SystemCallFailure: Error, Sendable, CustomStringConvertible {
    /// The C function, e.g. `"connect"`.
    package var operation: String
    package var errno: Errno
    package var description: String { errno.description }
}

/// Unix stream sockets (close-on-exec; no network sockets).
package enum UnixSocket {
    private static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = FilePath.cString(path).dropLast().map { UInt8(bitPattern: $0) }
        precondition(bytes.count < MemoryLayout.size(ofValue: address.sun_path), "socket path too long")
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
            raw[bytes.count] = 0
        }
        return address
    }

    private static func makeSocket() throws(SystemCallFailure) -> Int32 {
        let made = valueOrErrno { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        switch made {
        case .success(let fd): return fd
        case .failure(let errno): throw SystemCallFailure(operation: "socket", errno: errno)
        }
    }

    /// A listening socket at `path`, mode 0600 (created under umask 0177, then `chmod`), after
    /// removing whatever socket was left there. Calls `unlink`, `socket`, `bind`, `chmod`, `listen`.
    package static func listen(at path: String, backlog: Int32 = 16) throws(SystemCallFailure) -> Int32 {
        POSIX.remove(path)
        let fd = try makeSocket()
        var socketAddress = address(path)
        let previousMask = umask(0o177)
        let bound = nothingOrErrno {
            withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
        umask(previousMask)
        let steps: [(String, () -> Result<Void, Errno>)] = [
            ("bind", { bound }), ("chmod", { POSIX.setMode(path, 0o600) }),
            ("listen", { nothingOrErrno { Glibc.listen(fd, backlog) } }),
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
        var socketAddress = address(path)
        let connected = nothingOrErrno {
            withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
        if case .failure(let errno) = connected {
            POSIX.closeDescriptor(fd)
            throw SystemCallFailure(operation: "connect", errno: errno)
        }
        setReceiveTimeout(fd, seconds: receiveTimeoutSeconds)
        return fd
    }

    /// The next connection on `listener` (close-on-exec), or `nil`. Calls `accept`, `fcntl`.
    package static func accept(_ listener: Int32) -> Int32? {
        guard case .success(let fd) = valueOrErrno({ Glibc.accept(listener, nil, nil) }) else { return nil }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return fd
    }

    /// Makes reads on `fd` give up after `seconds`. Calls `setsockopt(SO_RCVTIMEO)`.
    package static func setReceiveTimeout(_ fd: Int32, seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends all of `bytes` (`MSG_NOSIGNAL`: a closed peer is `EPIPE`, not SIGPIPE). Calls `send`.
    package static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Errno? {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                valueOrErrno { send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL)) }
            }
            switch sent {
            case .success(let n) where n > 0: offset += n
            case .success: return .ioError
            case .failure(let errno): return errno
            }
        }
        return nil
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
        var uid: UInt32 = 0
        var pid: Int32 = 0
        return proofkit_peer_uid(fd, &uid, &pid) == 0 ? uid : nil
    }
}

/// The alarm service's wake-ups: a wall-clock timerfd that a clock change cancels, an eventfd
/// another thread signals, and inotify on a folder.
package enum WakeUp {
    /// A timerfd on CLOCK_REALTIME (close-on-exec, non-blocking). Calls `proofkit_alarm_timer_create`.
    package static func makeTimer() -> Result<Int32, Errno> {
        let fd = proofkit_alarm_timer_create()
        return fd >= 0 ? .success(fd) : .failure(Errno(code: -fd))
    }

    /// Arms `timer` to fire once at `secondsSince1970` (wall clock), cancelled by a clock change.
    /// Calls `proofkit_alarm_timer_set`.
    package static func arm(_ timer: Int32, at secondsSince1970: Double) {
        let whole = secondsSince1970.rounded(.down)
        _ = proofkit_alarm_timer_set(timer, Int64(whole), Int64((secondsSince1970 - whole) * 1e9))
    }

    /// Reads `timer`: whether someone set the clock (`ECANCELED`) since it was armed.
    /// Calls `proofkit_alarm_timer_read`.
    package static func clockWasSet(_ timer: Int32) -> Bool {
        proofkit_alarm_timer_read(timer) == -ECANCELED
    }

    /// An eventfd (close-on-exec, non-blocking). Calls `proofkit_event_create`.
    package static func makeEvent() -> Result<Int32, Errno> {
        let fd = proofkit_event_create()
        return fd >= 0 ? .success(fd) : .failure(Errno(code: -fd))
    }

    /// Wakes whoever polls `event`. Calls `write`.
    package static func signal(_ event: Int32) {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { POSIX.writeAll(event, $0) }
    }

    /// Clears `event`'s counter. Calls `read`.
    package static func drain(_ event: Int32) {
        var counter: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &counter) { POSIX.read(event, into: $0) }
    }

    /// An inotify descriptor (close-on-exec, non-blocking) watching `folder` for files created,
    /// moved in, written or deleted; `nil` when inotify is unavailable.
    /// Calls `inotify_init1`, `inotify_add_watch`.
    package static func watchFolder(_ folder: String) -> Int32? {
        let fd = inotify_init1(Int32(IN_CLOEXEC) | Int32(IN_NONBLOCK))
        guard fd >= 0 else { return nil }
        _ = inotify_add_watch(
            fd, FilePath.cString(folder), UInt32(IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE))
        return fd
    }

    /// The raw events waiting on an inotify descriptor (up to 4 KiB; empty when none).
    /// Calls `read`.
    package static func pendingEvents(_ watch: Int32) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        guard case .success(let n) = buffer.withUnsafeMutableBytes({ POSIX.read(watch, into: $0) }) else { return [] }
        return Array(buffer[0..<n])
    }

    /// Gives SIGTERM, SIGINT and SIGHUP their default action and unblocks them (a parent may have
    /// passed on either), so that they end the process. Calls `signal`, `pthread_sigmask`.
    package static func restoreTerminationSignals() {
        var stopping = sigset_t()
        sigemptyset(&stopping)
        for number in [SIGTERM, SIGINT, SIGHUP] {
            Glibc.signal(number, SIG_DFL)
            sigaddset(&stopping, number)
        }
        pthread_sigmask(SIG_UNBLOCK, &stopping, nil)
    }
}
