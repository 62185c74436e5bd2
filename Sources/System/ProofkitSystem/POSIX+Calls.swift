// ProofkitSystem's one file that imports Glibc (after swift-system's `Syscalls.swift`): Errno, the
// valueOrErrno funnel, and one thin typed wrapper per system call, with no logic beyond the call.
// What is built on them (capped reads, atomic files, processes, sockets) is in the other files,
// by role. Every failure is an ``Errno``; paths are ``FilePath`` strings (non-UTF-8 bytes survive).
internal import CProofkitShims
internal import ProofkitCore
import Synchronization

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// A failed system call's errno.
package struct Errno: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The errno value, e.g. `ENOENT`.
    package var code: Int32

    package init(code: Int32) { self.code = code }

    /// The calling thread's `errno` now.
    package static var current: Errno { Errno(code: errno) }

    /// `strerror`'s text, e.g. "No such file or directory".
    package var description: String { POSIX.describe(code) }

    /// Nothing at the path: `ENOENT`, or a component that is not a folder (`ENOTDIR`).
    package var isNotFound: Bool { code == ENOENT || code == ENOTDIR }

    package static let noSuchFile = Errno(code: ENOENT)
    package static let isADirectory = Errno(code: EISDIR)
    package static let timedOut = Errno(code: ETIMEDOUT)
    package static let ioError = Errno(code: EIO)
    package static let wouldBlock = Errno(code: EAGAIN)
    package static let brokenPipe = Errno(code: EPIPE)
    package static let canceled = Errno(code: ECANCELED)
    package static let exists = Errno(code: EEXIST)
    package static let permissionDenied = Errno(code: EACCES)
    package static let notPermitted = Errno(code: EPERM)
    package static let readOnlyFileSystem = Errno(code: EROFS)
    package static let deviceBusy = Errno(code: EBUSY)
    package static let noDevice = Errno(code: ENODEV)
    package static let noSuchDevice = Errno(code: ENXIO)
    package static let notATerminal = Errno(code: ENOTTY)
    package static let invalid = Errno(code: EINVAL)
    package static let nameTooLong = Errno(code: ENAMETOOLONG)
}

/// Runs `call` (a C call returning -1 and setting `errno` on failure) and gives its value or the
/// errno; with `retryOnInterrupt` (default true) an `EINTR` runs it again.
@inline(__always)
package func valueOrErrno<I: FixedWidthInteger>(retryOnInterrupt: Bool = true, _ call: () -> I) -> Result<I, Errno> {
    while true {
        let value = call()
        if value != -1 { return .success(value) }
        let code = errno
        if retryOnInterrupt && code == EINTR { continue }
        return .failure(Errno(code: code))
    }
}

/// ``valueOrErrno(retryOnInterrupt:_:)`` for a call whose value is not needed.
@inline(__always)
package func nothingOrErrno<I: FixedWidthInteger>(retryOnInterrupt: Bool = true, _ call: () -> I) -> Result<Void, Errno>
{
    valueOrErrno(retryOnInterrupt: retryOnInterrupt, call).map { _ in () }
}

/// Typed wrappers over the POSIX calls proofkit makes. Descriptors are opened close-on-exec.
package enum POSIX {
    /// What `stat` says about a file: plain values only, so `Result<FileStatus, Errno>` needs no
    /// type metadata at run time (its instantiation scans every conformance: 0.2 M instructions).
    package struct FileStatus: Equatable, Sendable {
        package var isDirectory: Bool
        package var isRegular: Bool
        /// A FIFO or a socket: a stream that may have no writer yet.
        package var isStream: Bool
        package var size: Int64
        package var device: UInt64
        package var inode: UInt64
        /// The permission bits (`st_mode & 07777`).
        package var mode: UInt32
        package var owner: UInt32
        package var group: UInt32
        /// Seconds since 1970 of the last change of contents.
        package var modified: Int
        /// The file type bits (`st_mode & S_IFMT`).
        package var type: UInt32
    }

    private static func fileStatus(_ info: stat) -> FileStatus {
        let type = info.st_mode & S_IFMT
        return FileStatus(
            isDirectory: type == S_IFDIR, isRegular: type == S_IFREG, isStream: type == S_IFIFO || type == S_IFSOCK,
            size: Int64(info.st_size), device: UInt64(info.st_dev), inode: UInt64(info.st_ino),
            mode: UInt32(info.st_mode & 0o7777), owner: UInt32(info.st_uid), group: UInt32(info.st_gid),
            modified: Int(info.st_mtim.tv_sec), type: UInt32(type))
    }

    /// `stat(path)` (following symbolic links), or the errno. Calls `stat`.
    package static func status(_ path: String) -> Result<FileStatus, Errno> {
        var info = stat()
        return nothingOrErrno { stat(FilePath.cString(path), &info) }.map { fileStatus(info) }
    }

    /// The bytes free to an unprivileged user on the file system of `path`. Calls `statvfs`.
    package static func freeBytes(_ path: String) -> Result<Int64, Errno> {
        var info = statvfs()
        return nothingOrErrno { statvfs(FilePath.cString(path), &info) }.map {
            Int64(info.f_bavail) * Int64(info.f_frsize)
        }
    }

    /// `lstat(path)` (the link itself), or the errno. Calls `lstat`.
    package static func linkStatus(_ path: String) -> Result<FileStatus, Errno> {
        var info = stat()
        return nothingOrErrno { lstat(FilePath.cString(path), &info) }.map { fileStatus(info) }
    }

    /// `fstat(fd)`, or the errno. Calls `fstat`.
    package static func status(descriptor fd: Int32) -> Result<FileStatus, Errno> {
        var info = stat()
        return nothingOrErrno { fstat(fd, &info) }.map { fileStatus(info) }
    }

    /// Nothing when this process may write `path`, else why not (`EACCES`, `EROFS`...).
    /// Calls `access`.
    package static func checkWritable(_ path: String) -> Result<Void, Errno> {
        nothingOrErrno { access(FilePath.cString(path), W_OK) }
    }

    /// Whether `path` is a file this process may run (`access(X_OK)`, and not a folder). Calls
    /// `access`, `stat`.
    package static func isExecutableFile(_ path: String) -> Bool {
        guard access(FilePath.cString(path), X_OK) == 0, case .success(let info) = status(path) else { return false }
        return !info.isDirectory
    }

    /// The effective user id. Calls `geteuid`.
    package static var effectiveUser: UInt32 { UInt32(geteuid()) }

    /// The real user id. Calls `getuid`.
    package static var realUser: UInt32 { UInt32(getuid()) }

    /// This process's id. Calls `getpid`.
    package static var processID: Int32 { getpid() }

    /// Seconds since 1970 now. Calls `time`.
    package static var now: Int { Int(time(nil)) }

    // MARK: Descriptors

    /// The flags of ``open(_:_:mode:)``.
    package struct OpenFlags: OptionSet, Sendable {
        package var rawValue: Int32
        package init(rawValue: Int32) { self.rawValue = rawValue }
        package static let readOnly = OpenFlags([])
        package static let writeOnly = OpenFlags(rawValue: O_WRONLY)
        package static let readWrite = OpenFlags(rawValue: O_RDWR)
        package static let create = OpenFlags(rawValue: O_CREAT)
        package static let truncate = OpenFlags(rawValue: O_TRUNC)
        package static let noFollow = OpenFlags(rawValue: O_NOFOLLOW)
        package static let nonBlocking = OpenFlags(rawValue: O_NONBLOCK)
        /// Fails with ENOTDIR unless the path is a folder.
        package static let directory = OpenFlags(rawValue: O_DIRECTORY)
    }

    /// Opens `path` with `flags` and `O_CLOEXEC` (always), creating it with `mode` (less the
    /// umask) when `.create` is given. Retries on EINTR. Calls `open`.
    package static func open(_ path: String, _ flags: OpenFlags, mode: UInt32 = 0o666) -> Result<Int32, Errno> {
        let name = FilePath.cString(path)
        return valueOrErrno { Glibc.open(name, flags.rawValue | O_CLOEXEC, mode_t(mode)) }
    }

    /// Closes a descriptor (errors other than a failed flush are meaningless after `close`).
    /// Calls `close`.
    @discardableResult
    package static func close(_ fd: Int32) -> Result<Void, Errno> {
        nothingOrErrno(retryOnInterrupt: false) { Glibc.close(fd) }
    }

    /// Closes a descriptor this process owns, ignoring errors. Calls `close`, `write`.
    ///
    /// A close that fails with EBADF is a bug (a double close, or one after handing the descriptor
    /// away: had another thread opened a file under that number meanwhile, it would close that).
    /// A debug build traps; a release build, which the tests run, says so in one line on stderr.
    package static func closeDescriptor(_ fd: Int32) {
        guard Glibc.close(fd) != 0, errno == EBADF else { return }
        assertionFailure("close(\(fd)): not an open descriptor (closed twice?)")
        let line = Array("proofkit: bug: close(\(fd)) of a descriptor that is not open (closed twice?)\n".utf8)
        _ = line.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }

    /// A new close-on-exec descriptor for the same open file. Calls `fcntl(F_DUPFD_CLOEXEC)`.
    package static func duplicate(_ fd: Int32) -> Int32? {
        try? valueOrErrno { fcntl(fd, F_DUPFD_CLOEXEC, 0) }.get()
    }

    /// Sets or clears `O_NONBLOCK` on `fd`. Calls `fcntl`.
    package static func setNonBlocking(_ fd: Int32, _ on: Bool) {
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK) }
    }

    /// Reads up to `buffer.count` bytes, retrying on EINTR: 0 at the end. Calls `read`.
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, Errno> {
        valueOrErrno { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// Reads up to `buffer.count` bytes at `offset` without moving the position, retrying on
    /// EINTR: 0 at the end. Calls `pread`.
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64)
        -> Result<Int, Errno>
    {
        valueOrErrno { pread(fd, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// Writes up to `buffer.count` bytes (one `write`; see ``writeAll(_:_:)-(_,UnsafeRawBufferPointer)``
    /// for all of them), retrying on EINTR. Calls `write`.
    package static func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Result<Int, Errno> {
        valueOrErrno { Glibc.write(fd, buffer.baseAddress, buffer.count) }
    }

    /// Writes up to `buffer.count` bytes at `offset` without moving the position, retrying on
    /// EINTR. Calls `pwrite`.
    package static func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int64) -> Result<Int, Errno> {
        valueOrErrno { pwrite(fd, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// The offset of the first `byte` in `buffer`, or `nil`. Calls `memchr` (vectorised by the C
    /// library: a line reader's newline search over megabytes of input).
    package static func firstOffset(of byte: UInt8, in buffer: UnsafeRawBufferPointer) -> Int? {
        guard let base = buffer.baseAddress, let found = memchr(base, Int32(byte), buffer.count) else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    /// Whether `fd` is a terminal. Calls `isatty`.
    package static func isTerminal(_ fd: Int32) -> Bool {
        isatty(fd) == 1
    }

    /// Cuts the open file `fd` to `size` bytes. Calls `ftruncate`.
    package static func truncate(_ fd: Int32, to size: Int64) -> Result<Void, Errno> {
        nothingOrErrno { ftruncate(fd, off_t(size)) }
    }

    /// Moves `fd`'s position to `offset` from the start. Calls `lseek`.
    package static func seek(_ fd: Int32, to offset: Int64) -> Result<Void, Errno> {
        valueOrErrno { lseek(fd, off_t(offset), SEEK_SET) }.map { _ in () }
    }

    /// Takes `flock(LOCK_EX)` on `fd`, waiting when `wait`, else failing with `EWOULDBLOCK`.
    /// Calls `flock`.
    package static func lockExclusive(_ fd: Int32, wait: Bool) -> Result<Void, Errno> {
        nothingOrErrno { flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) }
    }

    /// Flushes `fd`'s data (and the metadata to read it back) to the disk. Calls `fdatasync`.
    package static func syncData(_ fd: Int32) -> Result<Void, Errno> {
        nothingOrErrno { fdatasync(fd) }
    }

    /// Flushes `fd`'s data and metadata to the disk. Calls `fsync`.
    package static func sync(_ fd: Int32) -> Result<Void, Errno> {
        nothingOrErrno { fsync(fd) }
    }

    /// Starts writing the dirty pages of `fd` to the disk without waiting (Linux
    /// `sync_file_range(SYNC_FILE_RANGE_WRITE)`); errors are left for a later ``syncData(_:)``.
    /// Calls `proofkit_posix_start_writeback`.
    package static func startWriteback(_ fd: Int32) {
        _ = proofkit_posix_start_writeback(fd)
    }

    /// The target of the link `path` (up to 4095 bytes); `nil` when it is no link or unreadable.
    /// Calls `readlink`.
    package static func linkTarget(_ path: String) -> [UInt8]? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink(FilePath.cString(path), &buffer, buffer.count - 1)
        return count > 0 ? buffer.prefix(count).map { UInt8(bitPattern: $0) } : nil
    }

    /// Sets `path`'s permission bits. Calls `chmod`.
    package static func setMode(_ path: String, _ mode: UInt32) -> Result<Void, Errno> {
        nothingOrErrno { chmod(FilePath.cString(path), mode_t(mode)) }
    }

    /// Creates the folder `path` with `mode` (less the umask). Calls `mkdir`.
    package static func makeFolder(_ path: String, mode: UInt32) -> Result<Void, Errno> {
        nothingOrErrno { mkdir(FilePath.cString(path), mode_t(mode)) }
    }

    /// The current working folder, or `nil` when it cannot be read (removed). Calls `getcwd`.
    package static func currentFolder() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return FilePath.string(fromBytes: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) })
    }

    /// Creates a new folder (mode 0700) from `template`, whose last six characters are `XXXXXX`.
    /// Calls `mkdtemp`.
    package static func makeTemporaryFolder(template: String) -> Result<String, Errno> {
        var bytes = FilePath.cString(template)
        guard bytes.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            return .failure(Errno.current)
        }
        return .success(FilePath.string(fromBytes: bytes.dropLast().map { UInt8(bitPattern: $0) }))
    }

    /// Removes the empty folder `path`, ignoring errors. Calls `rmdir`.
    package static func removeFolder(_ path: String) {
        _ = rmdir(FilePath.cString(path))
    }

    /// Removes `path`, ignoring errors. Calls `unlink`.
    package static func remove(_ path: String) {
        _ = unlink(FilePath.cString(path))
    }

    /// Renames `from` onto `to` atomically. Calls `rename`.
    /// - Returns: `nil`, or the errno.
    package static func moveAtomically(_ from: String, onto to: String) -> Int32? {
        rename(FilePath.cString(from), FilePath.cString(to)) == 0 ? nil : errno
    }

    /// The text of an errno value. Calls `strerror`.
    package static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    /// Creates a new, empty temporary file next to `path` (same folder, so that a rename onto
    /// `path` is atomic), named `.NAME.tmp-XXXXXX`, mode 0600, close-on-exec. Calls `mkostemp`.
    /// - Returns: the descriptor and the temporary's path, or the errno.
    package static func makeTemporary(beside path: String) -> Result<(fd: Int32, path: String), Errno> {
        let (folder, base) = split(path)
        var template = FilePath.cString("\(folder)/.\(base).tmp-XXXXXX")
        let made = valueOrErrno {
            template.withUnsafeMutableBufferPointer { proofkit_posix_make_temporary($0.baseAddress!) }
        }
        return made.map { fd in (fd, FilePath.string(fromBytes: template.dropLast().map { UInt8(bitPattern: $0) })) }
    }

    /// Every name in the folder at `path` (not `.` and `..`; nothing when it cannot be read).
    /// Calls `opendir`, `readdir`, `closedir`.
    package static func folderEntries(_ path: String) -> [[UInt8]] {
        guard let directory = opendir(FilePath.cString(path)) else { return [] }
        defer { closedir(directory) }
        var names: [[UInt8]] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if name != [0x2E] && name != [0x2E, 0x2E] { names.append(name) }
        }
        return names
    }

    /// The names (bytes) in the folder `path` that are `length` bytes long and start with
    /// `prefix`; empty when it cannot be read. Compared in place: other names cost no allocation.
    /// Calls `opendir`, `readdir`, `closedir`.
    package static func folderEntries(_ path: String, prefix: [UInt8], length: Int) -> [[UInt8]] {
        guard length >= prefix.count, let directory = opendir(FilePath.cString(path)) else { return [] }
        defer { closedir(directory) }
        var names: [[UInt8]] = []
        while let entry = readdir(directory) {
            withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                guard raw.count > length, raw[length] == 0,
                    prefix.withUnsafeBytes({ memcmp(raw.baseAddress!, $0.baseAddress!, prefix.count) == 0 }),
                    !raw[0..<length].contains(0)
                else { return }
                names.append(Array(raw[0..<length]))
            }
        }
        return names
    }

    /// The process's file-creation mask, read without changing it. Calls `umask` twice.
    package static var creationMask: UInt32 {
        let mask = umask(0)
        umask(mask)
        return UInt32(mask)
    }

    /// Sets the permission bits of the open file `fd`. Calls `fchmod`.
    @discardableResult
    package static func setMode(descriptor fd: Int32, _ mode: UInt32) -> Result<Void, Errno> {
        nothingOrErrno { fchmod(fd, mode_t(mode)) }
    }

    /// Sets the owner and group of the open file `fd`. Calls `fchown`.
    @discardableResult
    package static func setOwner(descriptor fd: Int32, _ owner: UInt32, _ group: UInt32) -> Result<Void, Errno> {
        nothingOrErrno { fchown(fd, owner, group) }
    }

    /// A descriptor that names what is at `path` now without opening it for reading or writing
    /// (`O_PATH`, so a FIFO or device is not touched). Calls `proofkit_posix_open_path`.
    package static func openPath(_ path: String) -> Result<Int32, Errno> {
        valueOrErrno { proofkit_posix_open_path(FilePath.cString(path)) }
    }

    /// This process's arguments as ``FilePath`` strings (a non-UTF-8 argument keeps its bytes,
    /// where `CommandLine.arguments` gives U+FFFD). Reads `argv` with `strlen`.
    package static func arguments() -> [String] {
        (0..<Int(CommandLine.argc)).map { index in
            guard let pointer = CommandLine.unsafeArgv[index] else { return "" }
            return pathString(pointer)
        }
    }

    /// The process environment (`environ`), names and values as ``FilePath`` strings: non-UTF-8
    /// bytes (a Latin-1 folder in `PROOFKIT_MODELS`) survive for `open`, where Foundation's
    /// `ProcessInfo.environment` gives U+FFFD. An entry without `=` is skipped; of a name given
    /// twice the first wins (as `getenv`). Reads `environ`; no other thread may call `setenv`.
    package static func environment() -> [String: String] {
        var result: [String: String] = [:]
        guard var pointer = Optional(environ) else { return result }
        while let entry = pointer.pointee {
            let length = strlen(entry)
            let bytes = UnsafeRawBufferPointer(start: entry, count: length)
            if let equals = bytes.firstIndex(of: 0x3D) {
                let name = FilePath.string(fromBytes: Array(bytes[..<equals]))
                if result[name] == nil {
                    result[name] = FilePath.string(fromBytes: Array(bytes[(equals + 1)...]))
                }
            }
            pointer += 1
        }
        return result
    }

    /// The effective user's home folder from the user database, or `nil` when the user has no
    /// entry or it names no absolute folder. Calls `geteuid`, `getpwuid_r`.
    package static func homeFolderOfEffectiveUser() -> String? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getpwuid_r(geteuid(), &entry, &buffer, buffer.count, &found) == 0, found != nil,
            let folder = entry.pw_dir
        else { return nil }
        let home = pathString(folder)
        return home.hasPrefix("/") ? home : nil
    }

    /// A C string as a ``FilePath`` string (its bytes kept). Calls `strlen`.
    private static func pathString(_ text: UnsafePointer<CChar>) -> String {
        FilePath.string(fromBytes: Array(UnsafeRawBufferPointer(start: text, count: strlen(text))))
    }

    /// A new anonymous file for reading and writing: `O_TMPFILE` in `$TMPDIR` (else /tmp), else
    /// `memfd_create`; nothing is left on the disk, even after SIGKILL.
    /// Calls `getenv`, `proofkit_posix_open_anonymous`.
    package static func openAnonymous() -> Result<Int32, Errno> {
        let folder = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return valueOrErrno { proofkit_posix_open_anonymous(folder) }
    }

    /// Waits up to `milliseconds` (-1: for ever) until one of `descriptors` is readable.
    /// - Returns: for each descriptor whether it has something (data, end of file or an error).
    /// - Throws: the errno of `poll` (EINTR is retried only when `retryOnInterrupt`). Calls `poll`.
    package static func waitReadable(_ descriptors: [Int32], milliseconds: Int32, retryOnInterrupt: Bool = true)
        throws(Errno) -> [Bool]
    {
        var entries = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        _ = try valueOrErrno(retryOnInterrupt: retryOnInterrupt) { poll(&entries, nfds_t(entries.count), milliseconds) }
            .get()
        return entries.map { $0.revents != 0 }
    }

    /// Sends the device request `request` to `fd`, with `argument` the one struct the driver reads
    /// and/or fills (a V4L2 `VIDIOC_*`). Retries on EINTR. Calls `ioctl` (a variadic C function,
    /// through `proofkit_posix_ioctl`).
    package static func control(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer)
        -> Result<Int32, Errno>
    {
        valueOrErrno { proofkit_posix_ioctl(fd, request, argument) }
    }

    /// Points `target` at the open file of `fd` (closing what `target` was), retrying on EINTR.
    /// Calls `dup2`.
    @discardableResult
    package static func duplicate(_ fd: Int32, onto target: Int32) -> Result<Void, Errno> {
        nothingOrErrno { dup2(fd, target) }
    }

    /// Sets the process's file-creation mask to `mask` and gives the previous one. Calls `umask`.
    @discardableResult
    package static func setCreationMask(_ mask: UInt32) -> UInt32 {
        UInt32(umask(mode_t(mask)))
    }

    // MARK: The process

    /// The value of the environment variable `name`, or `nil`. Calls `getenv`.
    package static func environmentValue(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Sets the environment variable `name` to `value` (replacing it). Call it while the process
    /// has one thread: other threads' `getenv` would race it. Calls `setenv`.
    package static func setEnvironmentValue(_ name: String, _ value: String) {
        _ = setenv(name, value, 1)
    }

    /// Flushes the C library's output streams, then ends the process with `status` at once
    /// (`_exit`): no `atexit` handlers or static destructors run. Calls `fflush`, `_exit`.
    package static func exitImmediately(_ status: Int32) -> Never {
        fflush(nil)
        _exit(status)
    }

    /// Online logical cores now. Calls `sysconf(_SC_NPROCESSORS_ONLN)`.
    package static var onlineCores: Int { Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// The kernel's `uname`: machine architecture (`x86_64`) and kernel release. Calls `uname`.
    package static func systemName() -> (machine: String, release: String) {
        var name = utsname()
        uname(&name)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
        }
        return (field(name.machine), field(name.release))
    }

    // MARK: Memory

    /// Maps `size` bytes of the open file `fd` read-only and private (the descriptor may be closed
    /// afterwards). Calls `mmap`.
    package static func mapReadOnly(_ fd: Int32, size: Int) -> Result<UnsafeRawBufferPointer, Errno> {
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else {
            return .failure(.current)
        }
        return .success(UnsafeRawBufferPointer(start: base, count: size))
    }

    /// Maps `size` bytes at `offset` of the device `fd`, shared with the driver, readable and
    /// writable (a V4L2 capture buffer, which the driver fills). Calls `mmap`.
    package static func mapDevice(_ fd: Int32, size: Int, offset: Int64) -> Result<UnsafeRawBufferPointer, Errno> {
        guard let base = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(offset)), base != MAP_FAILED
        else { return .failure(.current) }
        return .success(UnsafeRawBufferPointer(start: base, count: size))
    }

    /// Unmaps what ``mapReadOnly(_:size:)`` mapped. Calls `munmap`.
    package static func unmap(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        munmap(UnsafeMutableRawPointer(mutating: base), bytes.count)
    }

    /// Drops this process's view of the mapped pages `bytes` (`madvise(MADV_DONTNEED)`).
    /// Calls `madvise`.
    package static func dropResidentPages(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: base), bytes.count, MADV_DONTNEED)
    }

    /// Gives the C heap's free memory back to the system. Calls `malloc_trim(0)`.
    package static func trimHeap() {
        proofkit_heap_trim()
    }

    // MARK: Processes and signals

    /// A signal number.
    package struct Signal: Equatable, Sendable {
        package var rawValue: Int32
        package init(rawValue: Int32) { self.rawValue = rawValue }
        package static let interrupt = Signal(rawValue: SIGINT)
        package static let terminate = Signal(rawValue: SIGTERM)
        package static let hangUp = Signal(rawValue: SIGHUP)
        package static let brokenPipe = Signal(rawValue: SIGPIPE)
        package static let kill = Signal(rawValue: SIGKILL)
    }

    /// Gives `signal` its default action, or ignores it. Calls `signal`.
    package static func setIgnored(_ signal: Signal, _ ignored: Bool) {
        _ = Glibc.signal(signal.rawValue, ignored ? SIG_IGN : SIG_DFL)
    }

    /// Sends `signal` to the process `pid`. Calls `kill`.
    package static func send(_ signal: Signal, to pid: Int32) {
        _ = Glibc.kill(pid, signal.rawValue)
    }

    /// Gives SIGTERM, SIGINT and SIGHUP their default action and unblocks them on this thread.
    /// Calls `signal`, `pthread_sigmask`.
    package static func restoreTerminationSignals() {
        var stopping = sigset_t()
        sigemptyset(&stopping)
        for number in [SIGTERM, SIGINT, SIGHUP] {
            Glibc.signal(number, SIG_DFL)
            sigaddset(&stopping, number)
        }
        pthread_sigmask(SIG_UNBLOCK, &stopping, nil)
    }

    /// While `child` is not 0, SIGTERM, SIGINT and SIGHUP sent to this process are passed on to
    /// `child` first, then end this process; 0 stops that. Calls `proofkit_forward_termination_signals`.
    package static func forwardTerminationSignals(to child: Int32) {
        proofkit_forward_termination_signals(child)
    }

    /// Asks the kernel to send `signal` to this process when its parent ends (`PR_SET_PDEATHSIG`).
    /// - Returns: `false` when the parent is already gone. Calls `proofkit_set_parent_death_signal`.
    package static func setParentDeathSignal(_ signal: Signal) -> Bool {
        proofkit_set_parent_death_signal(signal.rawValue) != -1
    }

    /// Starts `executable` with `arguments` (`argv[0]` included), this process's environment and
    /// folder, and `streams` as its stdin, stdout and stderr (no other descriptor).
    /// - Returns: the process id, or `posix_spawn`'s error. Calls `posix_spawn`.
    package static func spawn(
        _ executable: String, arguments: [String], streams: [ChildProcess.Stream], resetsSignals: Bool
    ) -> Result<Int32, Errno> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, stream) in zip(Int32(0)..., streams) {
            switch stream {
            case .inherit: break
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .descriptor(let fd): posix_spawn_file_actions_adddup2(&actions, fd, target)
            }
        }
        // Not a descriptor without close-on-exec either (a library's device, another thread's
        // plain pipe): glibc 2.34 and later.
        _ = proofkit_spawn_close_from(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        if resetsSignals {
            var all = sigset_t()
            var none = sigset_t()
            sigfillset(&all)
            sigemptyset(&none)
            posix_spawnattr_setsigdefault(&attributes, &all)
            posix_spawnattr_setsigmask(&attributes, &none)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        }
        let executableBytes = FilePath.cString(executable)
        var cArguments =
            arguments.map { FilePath.cString($0) }.map { bytes in
                bytes.withUnsafeBufferPointer { strdup($0.baseAddress!) }
            } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executableBytes, &actions, &attributes, &cArguments, environ)
        return status == 0 ? .success(pid) : .failure(Errno(code: status))
    }

    /// Waits for the child `pid` to end, retrying on EINTR.
    /// - Returns: its raw wait status. Calls `waitpid`.
    package static func waitForChild(_ pid: Int32) -> Result<Int32, Errno> {
        var status: Int32 = 0
        return valueOrErrno { waitpid(pid, &status, 0) }.map { _ in status }
    }

    /// A close-on-exec pipe: (read end, write end). Calls `proofkit_make_pipe`.
    package static func makePipe() -> Result<(read: Int32, write: Int32), Errno> {
        var ends: [Int32] = [-1, -1]
        if case .failure(let failure) = nothingOrErrno({ proofkit_make_pipe(&ends) }) { return .failure(failure) }
        return .success((ends[0], ends[1]))
    }

    /// Sets `FD_CLOEXEC` on `fd`. Calls `fcntl`.
    package static func setCloseOnExec(_ fd: Int32) {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }

    // MARK: Unix sockets

    /// A new Unix stream socket, close-on-exec. Calls `socket`.
    package static func makeUnixSocket() -> Result<Int32, Errno> {
        valueOrErrno { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
    }

    /// The largest Unix socket path in bytes (`sun_path` less its NUL): 107 on Linux.
    package static var unixPathLimit: Int { MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1 }

    /// Runs `body` with the `sockaddr_un` of `path`, or fails with ENAMETOOLONG for a path over
    /// ``unixPathLimit`` bytes (see ``UnixSocket`` for how longer paths are reached).
    private static func withUnixAddress(
        _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result<Void, Errno>
    ) -> Result<Void, Errno> {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = FilePath.cString(path).dropLast().map { UInt8(bitPattern: $0) }
        guard bytes.count <= unixPathLimit else { return .failure(.nameTooLong) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// Binds the socket `fd` to the Unix path `path` (ENAMETOOLONG for a path over
    /// ``unixPathLimit`` bytes). Calls `bind`.
    package static func bind(_ fd: Int32, toUnixPath path: String) -> Result<Void, Errno> {
        withUnixAddress(path) { address, length in nothingOrErrno { Glibc.bind(fd, address, length) } }
    }

    /// Connects the socket `fd` to the listener at the Unix path `path` (ENAMETOOLONG for a path
    /// over ``unixPathLimit`` bytes). Calls `connect`.
    package static func connect(_ fd: Int32, toUnixPath path: String) -> Result<Void, Errno> {
        withUnixAddress(path) { address, length in nothingOrErrno { Glibc.connect(fd, address, length) } }
    }

    /// Marks the socket `fd` as listening. Calls `listen`.
    package static func listen(_ fd: Int32, backlog: Int32) -> Result<Void, Errno> {
        nothingOrErrno { Glibc.listen(fd, backlog) }
    }

    /// The next connection on `listener`, retrying on EINTR. Calls `accept`.
    package static func accept(_ listener: Int32) -> Result<Int32, Errno> {
        valueOrErrno { Glibc.accept(listener, nil, nil) }
    }

    /// Makes reads on the socket `fd` give up after `seconds`. Calls `setsockopt(SO_RCVTIMEO)`.
    package static func setReceiveTimeout(_ fd: Int32, seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends up to `buffer.count` bytes on the socket `fd` (`MSG_NOSIGNAL`: a closed peer is
    /// `EPIPE`, not SIGPIPE), retrying on EINTR. Calls `send`.
    package static func send(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Result<Int, Errno> {
        valueOrErrno { Glibc.send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL)) }
    }

    /// The user id of the process at the other end of the connected socket `fd` (`SO_PEERCRED`).
    /// Calls `proofkit_peer_uid`.
    package static func peerUser(_ fd: Int32) -> UInt32? {
        var uid: UInt32 = 0
        var pid: Int32 = 0
        return proofkit_peer_uid(fd, &uid, &pid) == 0 ? uid : nil
    }

    // MARK: Timers, events, inotify

    /// A timerfd on CLOCK_REALTIME (close-on-exec, non-blocking). Calls `proofkit_alarm_timer_create`.
    package static func makeWallClockTimer() -> Result<Int32, Errno> {
        let fd = proofkit_alarm_timer_create()
        return fd >= 0 ? .success(fd) : .failure(Errno(code: -fd))
    }

    /// Arms `timer` to fire once at `seconds` + `nanoseconds` since 1970, cancelled by a clock
    /// change. Calls `proofkit_alarm_timer_set`.
    package static func armWallClockTimer(_ timer: Int32, seconds: Int64, nanoseconds: Int64) {
        _ = proofkit_alarm_timer_set(timer, seconds, nanoseconds)
    }

    /// Reads `timer`: `nil`, or the errno (`ECANCELED`: someone set the clock since it was armed).
    /// Calls `proofkit_alarm_timer_read`.
    package static func readWallClockTimer(_ timer: Int32) -> Errno? {
        let result = proofkit_alarm_timer_read(timer)
        return result < 0 ? Errno(code: -result) : nil
    }

    /// Blocks SIGTERM, SIGINT and SIGHUP (in this thread and the threads it starts later) and
    /// returns a signalfd that reads them (close-on-exec, non-blocking).
    /// Calls `proofkit_termination_signals_create`.
    package static func makeTerminationSignals() -> Result<Int32, Errno> {
        let fd = proofkit_termination_signals_create()
        return fd >= 0 ? .success(fd) : .failure(Errno(code: -fd))
    }

    /// The signal waiting on a descriptor of ``makeTerminationSignals()``, or `nil`.
    /// Calls `proofkit_termination_signal_read`.
    package static func readTerminationSignal(_ fd: Int32) -> Int32? {
        let number = proofkit_termination_signal_read(fd)
        return number > 0 ? number : nil
    }

    /// An eventfd (close-on-exec, non-blocking). Calls `proofkit_event_create`.
    package static func makeEvent() -> Result<Int32, Errno> {
        let fd = proofkit_event_create()
        return fd >= 0 ? .success(fd) : .failure(Errno(code: -fd))
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

    // MARK: Time

    /// Sleeps for `microseconds`. Calls `usleep`.
    package static func sleep(microseconds: UInt32) {
        _ = usleep(microseconds)
    }

    /// Sleeps for `seconds` (nothing when <= 0), resuming after a signal for the time left.
    /// Calls `nanosleep`.
    package static func sleep(seconds: Double) {
        guard seconds > 0 else { return }
        let whole = seconds.rounded(.down)
        var request = timespec(tv_sec: Int(whole), tv_nsec: Int((seconds - whole) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    /// Seconds on the monotonic clock (`CLOCK_MONOTONIC`), for pacing. Calls `clock_gettime`.
    package static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}

// MARK: Threads

/// Runs `body` on a new detached POSIX thread, never on Swift's pool (one thread per core), which
/// blocking reads and writes (ALSA, a child's pipes) must not hold (after swift-subprocess). The
/// thread releases the closure once. Traps when no thread can be made. Calls `pthread_create`.
package func runOnDedicatedThread(_ body: @escaping @Sendable () -> Void) {
    final class Box: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(
        &thread, nil,
        { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, context)
    guard status == 0 else {
        Unmanaged<Box>.fromOpaque(context).release()
        fatalError("pthread_create failed with error \(status)")
    }
    pthread_detach(thread)
}
