import ProofkitCore
internal import ProofkitSystem

// Reading the lines of `proofkit squat`'s pose JSON Lines input: one fixed buffer, a file read
// exactly as stdin, lines capped at ``PoseLineReader/maximumLineLength`` (so `squat - < /dev/zero`
// ends at once with an error and memory stays bounded whatever the input's length or what
// `st_size` says). Each line is decoded by SquatCounting's `PoseLineDecoder`.

/// Reads lines from a file descriptor through one fixed buffer: a file exactly as stdin, each
/// line handed over as soon as it is complete (a live stream), the last line without a newline
/// too. Memory is the buffer, whatever the input's length.
struct PoseLineReader {
    /// The longest line accepted, in bytes (a pose line is a few hundred; 33 named MediaPipe
    /// landmarks with long numbers stay under 4 KiB). 1 MiB.
    static let maximumLineLength = 1 << 20
    /// Bytes read at once.
    static let chunk = 1 << 16

    /// Calls `body` with each line (without its newline).
    /// - Throws: `ProofkitError` `.decodeFailed` for a line longer than the maximum (naming
    ///   its number), `.io` for a read error; or what `body` throws.
    static func forEachLine(
        fd: Int32, name: String, deadline: Double? = nil, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void
    ) throws {
        do {
            try POSIX.forEachLine(fd, maximumLineLength: maximumLineLength, chunk: chunk, deadline: deadline, body)
        } catch LineReadFailure.read(let errno) {
            throw ProofkitError(.io, "cannot read: \(errno)", operation: "read", underlying: errno.code, path: name)
        } catch LineReadFailure.lineTooLong(let lineNumber) {
            throw ProofkitError(
                .decodeFailed,
                "line \(lineNumber) is longer than \(maximumLineLength / 1024 / 1024) MiB (a pose line is a few hundred bytes)",
                path: name)
        }
    }

    /// Opens `path` for reading (a regular file, a FIFO, `/dev/stdin`, ...), once, as `check` and
    /// `trim` do (``POSIX/openInput(_:what:)``): a FIFO whose writer sends nothing is given up after
    /// 10 s instead of waiting forever.
    /// - Throws: `ProofkitError` `.notFound` (missing, or a folder) or `.io` (cannot open; no writer).
    static func openInput(_ path: String) throws(ProofkitError) -> Int32 {
        try POSIX.openInput(path, what: "pose file").fd
    }
}
