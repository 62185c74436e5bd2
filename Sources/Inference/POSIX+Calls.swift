internal import CProofkitShims
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reading a whole file straight into a byte array with POSIX calls (and mapping one,
/// ``MappedFile``): one copy from the page cache, where `FileManager.contents` plus `[UInt8](data)` makes two (for a 5 to 18 MB model, a few
/// milliseconds and as many megabytes of peak memory on every `proofkit mat`). The only file in
/// `Inference` that calls libc directly.
enum POSIXFile {
    /// Why a file could not be read.
    enum Failure: Error {
        /// Nothing at the path (`ENOENT`, `ENOTDIR`).
        case missing
        /// The path is a folder.
        case folder
        /// It exists but cannot be opened, sized, mapped or read.
        case unreadable
    }

    /// The file's bytes. `fstat` gives the size (no user or group lookups); a file that grows
    /// while it is read is read up to its size at open time, and one that shrinks is unreadable.
    static func readAll(_ path: String) -> Result<[UInt8], Failure> {
        withOpenFile(path) { fd, size in readAll(fd, size: size) }
    }

    /// Opens `path` read-only and calls `body` with the descriptor and the size `fstat` gives,
    /// closing it afterwards. One `open` and one `fstat` tell a missing path and a folder apart
    /// from a file; `body` returning `nil` is `.unreadable`. Calls `open`, `fstat`, `close`.
    static func withOpenFile<T>(_ path: String, _ body: (_ fd: Int32, _ size: Int) -> T?) -> Result<T, Failure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(errno == ENOENT || errno == ENOTDIR ? .missing : .unreadable) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .failure(.unreadable) }
        guard info.st_mode & S_IFMT != S_IFDIR else { return .failure(.folder) }
        guard let value = body(fd, Int(info.st_size)) else { return .failure(.unreadable) }
        return .success(value)
    }

    /// `size` bytes read from `fd`, or `nil` (`errno` set; `EIO` when the file ends early).
    private static func readAll(_ fd: Int32, size: Int) -> [UInt8]? {
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var offset = 0
            while offset < size {
                let n = read(fd, buffer.baseAddress! + offset, size - offset)
                if n > 0 {
                    offset += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    if n == 0 { errno = EIO }
                    failed = true
                    break
                }
            }
            // Bytes past a short read stay uninitialised: report none of them.
            initialized = failed ? 0 : size
        }
        return failed ? nil : bytes
    }
}

/// A whole file mapped read-only into memory (`mmap`, `MAP_PRIVATE`), unmapped when the last
/// reference goes. Its pages are the page cache's: nothing is copied, and pages nobody reads are
/// never loaded. Immutable, so `Sendable`; the mapping must not be written.
final class MappedFile: @unchecked Sendable {
    /// The mapped bytes (empty for an empty file).
    let bytes: UnsafeRawBufferPointer

    private init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    deinit {
        if let base = bytes.baseAddress, bytes.count > 0 {
            munmap(UnsafeMutableRawPointer(mutating: base), bytes.count)
        }
    }

    /// Drops this process's view of the pages read so far (`madvise(MADV_DONTNEED)`): they leave
    /// its resident set but stay in the page cache, and a later read maps them again from there
    /// (a minor fault, no disk read). For a private read-only mapping the bytes read afterwards
    /// are the file's, as before.
    func releaseResidentPages() {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: base), bytes.count, MADV_DONTNEED)
    }

    /// Maps the file at `path`. The descriptor is closed at once (the mapping keeps the file's
    /// pages).
    static func map(_ path: String) -> Result<MappedFile, POSIXFile.Failure> {
        POSIXFile.withOpenFile(path) { fd, size in map(fd: fd, size: size) }
    }

    /// Maps `size` bytes of an open file (`nil` when `mmap` fails).
    static func map(fd: Int32, size: Int) -> MappedFile? {
        guard size > 0 else { return MappedFile(bytes: UnsafeRawBufferPointer(start: nil, count: 0)) }
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else { return nil }
        return MappedFile(bytes: UnsafeRawBufferPointer(start: base, count: size))
    }
}

/// A file held open read-only (closed when the last reference goes), so that a later reader can
/// open the very file that was checked through ``procPath`` even if its path is replaced meanwhile.
final class OpenFile: @unchecked Sendable {
    /// The descriptor.
    let fd: Int32
    /// The size `fstat` gave at open time.
    let size: Int

    private init(fd: Int32, size: Int) {
        self.fd = fd
        self.size = size
    }

    deinit { close(fd) }

    /// `/proc/self/fd/N`: the path under which this process opens the same file again (Linux).
    var procPath: String { "/proc/self/fd/\(fd)" }

    /// Opens `path` read-only (`.missing`, `.folder` or `.unreadable` as ``POSIXFile/withOpenFile(_:_:)``).
    static func openReadOnly(_ path: String) -> Result<OpenFile, POSIXFile.Failure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(errno == ENOENT || errno == ENOTDIR ? .missing : .unreadable) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            return .failure(.unreadable)
        }
        guard info.st_mode & S_IFMT != S_IFDIR else {
            close(fd)
            return .failure(.folder)
        }
        return .success(OpenFile(fd: fd, size: Int(info.st_size)))
    }
}

/// The C heap of this process.
public enum ProcessHeap {
    /// Gives the C heap's free memory back to the system (`malloc_trim(0)`, glibc; nothing
    /// elsewhere). ONNX Runtime without its arena frees a run's working memory with `free`, but
    /// glibc keeps freed blocks of up to 32 MB in its heaps for reuse (its mmap threshold grows
    /// with the blocks it has freed), so the process would keep the largest run's working memory
    /// for good. Costs about a millisecond.
    public static func returnFreedMemory() {
        proofkit_heap_trim()
    }
}
