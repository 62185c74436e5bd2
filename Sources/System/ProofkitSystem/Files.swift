// Files as proofkit reads and writes them, in ProofkitError terms: inputs opened once and read
// with a cap that holds while reading, outputs replaced atomically (issue 15's rules). The C
// calls themselves are in POSIX+Calls.swift.
package import ProofkitCore

// MARK: Reading input

extension POSIX {
    /// Opens `path` for reading once (``openForReading(_:)``: a FIFO without a writer is given up
    /// after 10 s), in ProofkitError terms.
    /// - Parameter what: what the file is, for messages ("audio file", "state file").
    /// - Returns: the descriptor (the caller closes it) and its `fstat`.
    /// - Throws: `.notFound` (missing, or a folder), `.io` (cannot open, e.g. `EACCES`; no writer
    ///   on a FIFO).
    package static func openInput(_ path: String, what: String) throws(ProofkitError) -> (fd: Int32, status: FileStatus)
    {
        do throws(ReadFailure) {
            return try openForReading(path)
        } catch {
            throw inputError(error, path: path, what: what, limit: 0)
        }
    }

    /// The ProofkitError for a failed read of `path` (exit codes: `.notFound` 66, `.io` 74,
    /// `.decodeFailed` 65). A missing file or a folder is `.notFound`; any other open failure
    /// (`EACCES`...) or a file that is not regular is `.io` with its errno; a file over `limit`
    /// bytes is `.decodeFailed`, with its size when `fstat` gave it.
    package static func inputError(_ failure: ReadFailure, path: String, what: String, limit: Int) -> ProofkitError {
        switch failure {
        case .open(let errno) where errno.isNotFound:
            return ProofkitError(.notFound, "no such file", operation: "open", underlying: errno.code, path: path)
        case .open(let errno):
            return ProofkitError(
                .io, "cannot open the \(what): \(errno)", operation: "open", underlying: errno.code, path: path)
        case .folder:
            return ProofkitError(.notFound, "is a folder, not \(article(what))", path: path)
        case .notRegular(let kind):
            return ProofkitError(.io, "is \(kind), not a regular file", path: path)
        case .noWriter:
            return ProofkitError(
                .io, "no writer sent anything to this FIFO within \(streamWaitMilliseconds / 1000) s",
                operation: "poll", path: path)
        case .overLimit(let size):
            let actual = size.map { "is \($0) bytes, " } ?? "is "
            return ProofkitError(
                .decodeFailed, "\(actual)over the \(sizeText(limit)) limit for \(article(what))", path: path)
        case .failed(let operation, let errno):
            return ProofkitError(
                .io, "cannot read the \(what): \(errno)", operation: operation, underlying: errno.code,
                path: path)
        }
    }

    /// Whether each of `path`'s last `components` folders (`base/.deps/onnxruntime` with 2: both
    /// `.deps` and `.deps/onnxruntime`) is a real folder, not a symbolic link, owned by this user
    /// or by root: a folder that another user made (in a shared folder such as /tmp, say) could
    /// hold a planted library or model, so a search for proofkit's own files skips it.
    /// - Parameters:
    ///   - path: the folder searched.
    ///   - components: how many of its last path components were added to a trusted base.
    package static func isOwnFolder(_ path: String, components: Int) -> Bool {
        var folder = path
        for _ in 0..<max(1, components) {
            guard case .success(let info) = linkStatus(folder), info.isDirectory,
                info.owner == effectiveUser || info.owner == 0
            else { return false }
            folder = split(folder).folder
        }
        return true
    }

    /// "a state file", "an audio file".
    package static func article(_ what: String) -> String {
        (what.first.map { "aeiou".contains($0) } ?? false ? "an " : "a ") + what
    }

    /// "4 MiB", "512 KiB", "100-byte".
    package static func sizeText(_ bytes: Int) -> String {
        if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10 && bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes)-byte"
    }
}

/// Reading a whole small input file (JSON, text) with a size cap that holds while reading.
package enum BoundedFile {
    /// Reads the file at `path` whole (``POSIX/readWhole(_:limit:)``), refusing more than `limit`
    /// bytes while reading, so that endless or size-0 files (/dev/zero, /proc/self/pagemap)
    /// cannot grow memory.
    /// - Parameters:
    ///   - limit: the most bytes accepted.
    ///   - what: what the file is, for messages, e.g. "state file".
    /// - Throws: `.notFound` (missing, or a folder: exit 66), `.decodeFailed` (over `limit`: 65),
    ///   `.io` (unreadable, e.g. `EACCES` or /proc/self/mem: 74).
    package static func read(_ path: String, limit: Int, what: String) throws(ProofkitError) -> [UInt8] {
        do throws(ReadFailure) {
            return try POSIX.readWhole(path, limit: limit)
        } catch {
            throw POSIX.inputError(error, path: path, what: what, limit: limit)
        }
    }

    /// Reads the open descriptor `fd` (for example 0, standard input) to its end, refusing more
    /// than `limit` bytes while reading.
    /// - Parameter name: what to call it in messages (a path, or "stdin").
    /// - Throws: `.decodeFailed` (over `limit`), `.io` (a failed read).
    package static func read(descriptor fd: Int32, name: String, limit: Int, what: String) throws(ProofkitError)
        -> [UInt8]
    {
        do throws(ReadFailure) {
            return try POSIX.readWhole(descriptor: fd, limit: limit)
        } catch {
            throw POSIX.inputError(error, path: name, what: what, limit: limit)
        }
    }
}

// MARK: Replacing an output (one path for every file proofkit writes)

/// What an output path held before it was replaced: kept on the new file.
package struct ReplacedFile: Sendable {
    package var mode: UInt32
    package var owner: UInt32
    package var group: UInt32
}

extension POSIX {
    /// How old a temporary of our own naming (`.NAME.tmp-XXXXXX`) must be before a later write of
    /// the same output removes it, in seconds: 5 minutes (a running writer keeps its temporary
    /// for a few seconds at most; one left by `kill -9` is older).
    package static let staleTemporaryAge: Int = 300

    /// Checks that `path` may be replaced: it is absent, or a regular file that is writable
    /// (its mode has a write bit, and this process may write it).
    /// - Returns: the existing file's mode and owner, or `nil` when there is none.
    /// - Throws: `.io` naming `path` for a device node, FIFO, socket or folder ("not a regular
    ///   file"), a read-only file, or a path that cannot be looked at.
    package static func checkReplaceable(_ path: String) throws(ProofkitError) -> ReplacedFile? {
        let info: FileStatus
        switch status(path) {
        case .success(let value): info = value
        case .failure(let failure) where failure == .noSuchFile: return nil
        case .failure(let failure):
            throw ProofkitError(
                .io, "cannot write the output: \(failure)", operation: "stat", underlying: failure.code, path: path)
        }
        guard info.isRegular else {
            throw ProofkitError(.io, "is not a regular file (it is \(info.kind)); refusing to replace it", path: path)
        }
        if info.mode & 0o222 == 0 || !isWritable(path) {
            throw ProofkitError(
                .io, "is read-only (mode \(String(info.mode, radix: 8))); refusing to replace it (chmod u+w it first)",
                operation: "access", path: path)
        }
        return ReplacedFile(mode: info.mode, owner: info.owner, group: info.group)
    }

    /// Removes temporaries of our own naming for `path` (`.NAME.tmp-` and six characters, in the
    /// same folder) that are regular files owned by this user and older than
    /// ``staleTemporaryAge``: what a writer killed with SIGKILL leaves behind. Errors are ignored.
    package static func removeStaleTemporaries(beside path: String, now: Int = POSIX.now) {
        let (folder, base) = split(path)
        // The name's bytes as the folder holds them (a name that is not UTF-8 included).
        let prefix = FilePath.cString(".\(base).tmp-").dropLast().map { UInt8(bitPattern: $0) }
        for name in folderEntries(folder.isEmpty ? "/" : folder, prefix: prefix, length: prefix.count + 6) {
            let candidate = "\(folder)/" + FilePath.string(fromBytes: name)
            guard case .success(let info) = linkStatus(candidate), info.isRegular, info.owner == effectiveUser,
                now - info.modified > staleTemporaryAge
            else { continue }
            remove(candidate)
        }
    }

    /// Starts replacing `path`: checks it (``checkReplaceable(_:)``), removes stale temporaries,
    /// and creates the temporary beside it with the existing file's mode (and, when running as
    /// root, its owner and group), or the usual mode of a new file (0666 less the umask).
    /// - Returns: the temporary's descriptor and path, and what `path` held.
    /// - Throws: `.io` naming `path`.
    package static func beginReplacement(of path: String) throws(ProofkitError)
        -> (fd: Int32, temporary: String, existing: ReplacedFile?)
    {
        let existing = try checkReplaceable(path)
        removeStaleTemporaries(beside: path)
        let made: (fd: Int32, path: String)
        switch makeTemporary(beside: path) {
        case .success(let value): made = value
        case .failure(let failure):
            throw ProofkitError(
                .io, "cannot create the output: \(failure)", operation: "mkstemp", underlying: failure.code,
                path: path)
        }
        if let existing {
            // chown clears set-id bits, so the mode comes after it.
            if effectiveUser == 0 { setOwner(descriptor: made.fd, existing.owner, existing.group) }
            setMode(descriptor: made.fd, existing.mode)
        } else {
            setMode(descriptor: made.fd, 0o666 & ~creationMask)
        }
        return (made.fd, made.path, existing)
    }

    /// Renames `temporary` onto `path`, after checking again, through a descriptor of what is at
    /// `path` now (`O_PATH`, so nothing is opened for reading or writing), that it is absent or a
    /// regular file: something swapped in meanwhile is not replaced.
    /// - Throws: `.io` naming `path`; the temporary is left for the caller to remove.
    package static func finishReplacement(temporary: String, onto path: String) throws(ProofkitError) {
        switch openPath(path) {
        case .success(let fd):
            let regular = (try? status(descriptor: fd).get())?.isRegular ?? false
            closeDescriptor(fd)
            guard regular else {
                throw ProofkitError(.io, "is not a regular file any more; refusing to replace it", path: path)
            }
        case .failure(let failure) where failure == .noSuchFile:
            break
        case .failure(let failure):
            throw ProofkitError(
                .io, "cannot replace the output: \(failure)", operation: "open", underlying: failure.code,
                path: path)
        }
        if let code = moveAtomically(temporary, onto: path) {
            throw ProofkitError(
                .io, "cannot replace the output: \(describe(code))", operation: "rename", underlying: code,
                path: path)
        }
    }
}

/// Writing a whole small file (JSON, SVG, a state file, a cache record) atomically.
package enum AtomicFile {
    /// Writes `bytes` to `path` atomically: a temporary beside it (`.NAME.tmp-XXXXXX`), `fsync`,
    /// then `rename`. An existing file keeps its mode (and, as root, its owner); a device node,
    /// FIFO, folder or read-only file at `path` is refused and left alone. On any failure no
    /// file appears and an existing one stays as it was.
    /// - Throws: `ProofkitError` `.io` naming `path` (not a regular file, read-only, folder missing
    ///   or unwritable, disk full).
    package static func write(_ bytes: [UInt8], to path: String) throws(ProofkitError) {
        let (fd, temporary, _) = try POSIX.beginReplacement(of: path)
        var failure: ProofkitError?
        if let errno = POSIX.writeAll(fd, bytes) {
            failure = ProofkitError(
                .io, "cannot write: \(errno)", operation: "write", underlying: errno.code, path: path)
        } else if case .failure(let errno) = POSIX.sync(fd) {
            failure = ProofkitError(
                .io, "cannot write: \(errno)", operation: "fsync", underlying: errno.code, path: path)
        }
        if case .failure(let errno) = POSIX.close(fd), failure == nil {
            failure = ProofkitError(
                .io, "cannot write: \(errno)", operation: "close", underlying: errno.code, path: path)
        }
        if failure == nil {
            do throws(ProofkitError) { try POSIX.finishReplacement(temporary: temporary, onto: path) } catch {
                failure = error
            }
        }
        if let failure {
            POSIX.remove(temporary)
            throw failure
        }
    }
}

/// Short-lived files that a pipeline needs on disk (for example an embedded sound to decode).
package enum ScratchFile {
    /// Writes `bytes` to a new hidden file in the folder of `path` (`.NAME.tmp-XXXXXX`, mode 0600).
    /// - Returns: the new file's path; remove it with ``remove(_:)``.
    /// - Throws: `.io` naming `path` when the folder is missing, unwritable or full.
    package static func write(_ bytes: [UInt8], beside path: String) throws(ProofkitError) -> String {
        let made: (fd: Int32, path: String)
        switch POSIX.makeTemporary(beside: path) {
        case .success(let value): made = value
        case .failure(let errno):
            throw ProofkitError(
                .io, "cannot create a file: \(errno)", operation: "mkstemp", underlying: errno.code, path: path)
        }
        if let errno = POSIX.writeAll(made.fd, bytes) {
            POSIX.closeDescriptor(made.fd)
            POSIX.remove(made.path)
            throw ProofkitError(.io, "cannot write: \(errno)", operation: "write", underlying: errno.code, path: path)
        }
        POSIX.closeDescriptor(made.fd)
        return made.path
    }

    /// Removes a file made by ``write(_:beside:)``, ignoring errors.
    package static func remove(_ path: String) {
        POSIX.remove(path)
    }
}

extension POSIX {
    /// Creates the folder `path` and the folders above it that are missing, each with `mode`
    /// (less the umask); folders that exist are left as they are.
    /// - Returns: `nil`, or the folder that could not be made and why.
    package static func makeFolders(_ path: String, mode: UInt32) -> (folder: String, errno: Errno)? {
        var built = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            built += "/" + part
            if case .failure(let errno) = makeFolder(built, mode: mode), errno != .exists { return (built, errno) }
        }
        return nil
    }

    /// The running executable (`/proc/self/exe`), or `argv[0]` when that cannot be read.
    package static func executablePath() -> String? {
        linkTarget("/proc/self/exe").map(FilePath.string(fromBytes:)) ?? arguments().first
    }
}

/// A temporary folder of this user's (mode 0700), for work that needs files on disk; removed with
/// what is in it by ``remove()``.
package struct TemporaryFolder: Sendable {
    /// The folder.
    package let path: String

    /// Creates `$TMPDIR/PREFIX-XXXXXX` (or in /tmp).
    /// - Throws: `.io` when it cannot be created.
    package init(prefix: String) throws(ProofkitError) {
        let base = POSIX.environmentValue("TMPDIR").flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        switch POSIX.makeTemporaryFolder(template: "\(base)/\(prefix)-XXXXXX") {
        case .success(let path): self.path = path
        case .failure(let errno):
            throw ProofkitError(
                .io, "cannot create a temporary folder: \(errno)", operation: "mkdtemp", underlying: errno.code)
        }
    }

    /// Writes `bytes` as the file `name` in the folder (a scratch copy: no `fsync`).
    /// - Returns: the file's path.
    /// - Throws: `.io` naming the file when it cannot be written.
    package func write(_ bytes: [UInt8], named name: String) throws(ProofkitError) -> String {
        let file = path + "/" + name
        guard case .success(let fd) = POSIX.open(file, [.writeOnly, .create, .noFollow], mode: 0o600) else {
            throw ProofkitError(.io, "cannot create the file", path: file)
        }
        defer { POSIX.closeDescriptor(fd) }
        if let errno = POSIX.writeAll(fd, bytes) {
            throw ProofkitError(.io, "cannot write: \(errno)", underlying: errno.code, path: file)
        }
        return file
    }

    /// Removes the files in the folder, then the folder (a link is removed, never followed; a
    /// folder inside it is left, and so is the folder then).
    package func remove() {
        for name in POSIX.folderEntries(path) {
            POSIX.remove(path + "/" + FilePath.string(fromBytes: name))
        }
        POSIX.removeFolder(path)
    }
}

// MARK: Owned descriptors

/// A descriptor with one owner, closed when the last reference goes (`deinit`). A thread that
/// captures it keeps it open, so it never writes to a number that was closed and reused.
package final class OwnedDescriptor: Sendable {
    /// The descriptor; valid while this object lives.
    package let raw: Int32

    /// Takes ownership of `raw` (closed on `deinit`; -1 for none).
    package init(_ raw: Int32) { self.raw = raw }

    deinit { if raw >= 0 { POSIX.closeDescriptor(raw) } }
}
