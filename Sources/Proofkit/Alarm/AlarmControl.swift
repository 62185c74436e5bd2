internal import ProofkitSystem

/// The control socket of an alarm service: a Unix stream socket in the store's folder, mode
/// 0600, one request line and one reply line per connection. Peers must be the same user or root
/// (SO_PEERCRED). There is no network socket.
///
/// Requests: `ping`, `reload` (re-read the store), `stop` (silence the ring now sounding),
/// `hold CHAIN` (a live proof is running: stop the ring, hold off the chain's backups until the
/// connection closes), `end CHAIN proof|escape TIME [DETAIL]` (a typed proof or escape of a due
/// chain that the store could not take, on a full disk: the service ends the chain now and saves
/// it once it can). Replies start with `ok` or `error`; `ping`'s says `unsaved N since TIME
/// REASON` while the service cannot save.
public enum AlarmControl {
    /// Sends `request` to the service of the store at `socketPath` and returns its reply line.
    /// - Throws: ``ProofkitError`` `.serviceNotRunning` when no service listens there.
    public static func send(_ request: String, socketPath: String) throws(ProofkitError) -> String {
        let fd = try connect(socketPath)
        defer { POSIX.closeDescriptor(fd) }
        try writeLine(fd, request)
        return readLine(fd) ?? "error no reply"
    }

    /// Sends `hold CHAIN` and keeps the connection open: the hold lasts until the returned
    /// descriptor is closed (by `close` or by the process ending).
    public static func hold(chain: String, socketPath: String) throws(ProofkitError) -> Int32 {
        let fd = try connect(socketPath)
        try writeLine(fd, "hold \(chain)")
        guard let reply = readLine(fd), reply.hasPrefix("ok") else {
            POSIX.closeDescriptor(fd)
            throw ProofkitError(.serviceNotRunning, "the alarm service refused the hold")
        }
        return fd
    }

    static func connect(_ path: String) throws(ProofkitError) -> Int32 {
        do throws(SystemCallFailure) {
            return try UnixSocket.connect(to: path, receiveTimeoutSeconds: 10)
        } catch  where error.operation == "socket" {
            throw ProofkitError(.serviceNotRunning, "cannot create a socket: \(error)")
        } catch {
            throw ProofkitError(
                .serviceNotRunning,
                "no alarm service is running on this store (\(path): \(error)); start it with 'proofkit alarm run'")
        }
    }

    static func writeLine(_ fd: Int32, _ line: String) throws(ProofkitError) {
        if UnixSocket.sendAll(fd, Array((line + "\n").utf8)) != nil {
            throw ProofkitError(.serviceNotRunning, "the alarm service closed the connection")
        }
    }

    /// Reads one line (up to 4 KiB), `nil` at end of file or on error.
    static func readLine(_ fd: Int32) -> String? {
        UnixSocket.readLine(fd)
    }

    /// Whether the peer of a connected socket may control the service: the same user or root.
    static func peerAllowed(_ fd: Int32) -> Bool {
        guard let uid = UnixSocket.peerUser(fd) else { return false }
        return uid == POSIX.realUser || uid == 0
    }
}
