public import ProofkitCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes `contents` to `path` atomically: a temporary file in the same folder, `fsync`, then
/// `rename`. On failure no file appears and an existing file at `path` stays as it was.
/// - Throws: `ProofkitError` `.io` (folder missing or unwritable, disk full), naming `path`.
public func writeFileAtomically(_ contents: String, to path: String) throws(ProofkitError) {
    let bytes = Array(contents.utf8)
    let slash = path.lastIndex(of: "/")
    let folder = slash.map { String(path[..<$0]) } ?? "."
    let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
    var template = Array("\(folder.isEmpty ? "/" : folder)/.\(base).tmp-XXXXXX".utf8CString)
    let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard fd >= 0 else {
        throw ProofkitError(.io, "cannot create a file in '\(folder)': \(errnoText())",
                            operation: "mkstemp", underlying: errno, path: path)
    }
    let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    var failure: ProofkitError?
    var offset = 0
    bytes.withUnsafeBytes { buffer in
        while offset < buffer.count {
            let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if n > 0 { offset += n; continue }
            if n < 0 && errno == EINTR { continue }
            failure = ProofkitError(.io, "cannot write: \(errnoText())", operation: "write",
                                    underlying: errno, path: path)
            return
        }
    }
    if failure == nil, fsync(fd) != 0 {
        failure = ProofkitError(.io, "cannot write: \(errnoText())", operation: "fsync",
                                underlying: errno, path: path)
    }
    // Keep the usual permissions of a new file (mkstemp makes 0600).
    let mask = umask(0)
    umask(mask)
    fchmod(fd, 0o666 & ~mask)
    if close(fd) != 0, failure == nil {
        failure = ProofkitError(.io, "cannot write: \(errnoText())", operation: "close",
                                underlying: errno, path: path)
    }
    if failure == nil, rename(temporary, path) != 0 {
        failure = ProofkitError(.io, "cannot replace the file: \(errnoText())", operation: "rename",
                                underlying: errno, path: path)
    }
    if let failure {
        unlink(temporary)
        throw failure
    }
}

func errnoText() -> String {
    guard let text = strerror(errno) else { return "error \(errno)" }
    return String(cString: text)
}
