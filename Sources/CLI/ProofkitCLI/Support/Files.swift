import Proofkit
public import ProofkitCore
internal import ProofkitSystem

/// Writes `contents` to `path` atomically (ProofkitSystem's ``AtomicFile/write(_:to:)``: a temporary
/// in the same folder, `fsync`, then `rename`; an existing file keeps its mode and owner, and a
/// device node, FIFO or read-only file is refused). On failure no file appears and an existing
/// file at `path` stays as it was.
/// - Throws: `ProofkitError` `.io` (folder missing or unwritable, disk full, not a regular
///   file, read-only), naming `path`.
public func writeFileAtomically(_ contents: String, to path: String) throws(ProofkitError) {
    try AtomicFile.write(Array(contents.utf8), to: path)
}

/// `path` made absolute against the current folder (as booked alarms keep their sounds).
/// - Throws: `ProofkitError` `.io` when the current folder cannot be read (it was removed).
func absolutePath(_ path: String) throws(ProofkitError) -> String {
    if path.hasPrefix("/") { return path }
    guard let current = POSIX.currentFolder() else {
        throw ProofkitError(.io, "the current folder cannot be read (was it removed?)", path: path)
    }
    return (current == "/" ? "" : current) + "/" + path
}

/// Creates the folder `path` and the folders above it that are missing (mode 0755 less the umask).
/// - Parameter what: what the folder is, for the message.
/// - Throws: `ProofkitError` `.io` naming the folder that could not be made.
func makeFolders(_ path: String, what: String) throws(ProofkitError) {
    if let (folder, errno) = POSIX.makeFolders(path, mode: 0o755) {
        throw ProofkitError(.io, "cannot create \(what): \(errno)", underlying: errno.code, path: folder)
    }
}
