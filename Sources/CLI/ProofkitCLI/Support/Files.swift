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
