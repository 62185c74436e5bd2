public import ProofkitCore
internal import ProofkitSystem

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reading model files with an integrity check.
public enum ModelFile {
    /// Reads a model file and checks its SHA-256.
    /// - Parameters:
    ///   - path: the file.
    ///   - expectedSHA256: 64 hex digits (case-insensitive), e.g. from `Models/MODELS.md`.
    /// - Returns: the file's bytes, which match the digest.
    /// - Throws: `.invalidArgument` (malformed digest), `.notFound` (no such file), `.io` (a folder,
    ///   or unreadable), `.modelInvalid` (digest mismatch; the message has both digests).
    public static func read(_ path: String, expectedSHA256: String) throws(ProofkitError) -> [UInt8] {
        let expected = try checkedDigest(expectedSHA256, path: path)
        let bytes = try read(path)
        try checkDigest(SHA256.hexDigest(of: bytes), expected: expected, path: path)
        return bytes
    }

    /// Maps a model file into memory and checks its SHA-256 on the mapped bytes (no copy).
    /// - Returns: the mapping, which matches the digest; it stays valid while referenced.
    /// - Throws: as ``read(_:expectedSHA256:)``.
    static func map(_ path: String, expectedSHA256: String) throws(ProofkitError) -> MappedFile {
        let expected = try checkedDigest(expectedSHA256, path: path)
        let mapped = try opened(path) { () throws(ReadFailure) in try POSIX.map(path) }
        var hasher = SHA256()
        hasher.update(bytes: mapped.bytes)
        try checkDigest(SHA256.hex(hasher.finalize()), expected: expected, path: path)
        return mapped
    }

    /// Opens a model file and checks its SHA-256 on a mapping of it that is unmapped again, so the
    /// checked file can be handed on (``OpenFile/procPath``) without keeping its pages resident.
    /// - Returns: the open file, which matches the digest.
    /// - Throws: as ``read(_:expectedSHA256:)``.
    static func openChecked(_ path: String, expectedSHA256: String) throws(ProofkitError) -> OpenFile {
        let expected = try checkedDigest(expectedSHA256, path: path)
        let file = try opened(path) { () throws(ReadFailure) in try OpenFile.openReadOnly(path) }
        guard case .success(let mapped) = MappedFile.map(file.fd, size: file.size) else {
            throw ProofkitError(.io, "The model file cannot be read (permissions?).", operation: "mmap", path: path)
        }
        var hasher = SHA256()
        hasher.update(bytes: mapped.bytes)
        mapped.releaseResidentPages()
        try checkDigest(SHA256.hex(hasher.finalize()), expected: expected, path: path)
        return file
    }

    /// `digest` in lowercase after checking it is 64 hex digits.
    private static func checkedDigest(_ digest: String, path: String) throws(ProofkitError) -> String {
        let expected = digest.lowercased()
        guard expected.count == 64, expected.allSatisfy({ $0.isHexDigit }) else {
            throw ProofkitError(
                .invalidArgument, "The expected SHA-256 \"\(digest)\" is not 64 hex digits.", path: path)
        }
        return expected
    }

    private static func checkDigest(_ actual: String, expected: String, path: String) throws(ProofkitError) {
        guard actual == expected else {
            throw ProofkitError(
                .modelInvalid,
                "The model's SHA-256 is \(actual), not the expected \(expected): the file is damaged or a different model. Rebuild it with the set-up.",
                operation: "sha256", path: path)
        }
    }

    /// The SHA-256 of a file as 64 lowercase hex digits (what `sha256sum` prints).
    /// - Throws: `.notFound`, `.io`.
    public static func sha256(ofFileAt path: String) throws(ProofkitError) -> String {
        SHA256.hexDigest(of: try read(path))
    }

    /// The most bytes read from a model file: 2 GiB (ONNX Runtime cannot load a bigger protobuf).
    static let limitBytes = 1 << 31

    /// The whole model file, read once with a cap that holds while reading (no extra copy: the
    /// buffer is sized from `fstat`).
    static func read(_ path: String) throws(ProofkitError) -> [UInt8] {
        try opened(path) { () throws(ReadFailure) in try POSIX.readWhole(path, limit: limitBytes) }
    }

    /// The value, or the error for why the file could not be read: `.notFound` for a missing
    /// path, `.io` for a folder or an unreadable file (with its errno: `EACCES` is not "missing").
    private static func opened<T>(_ path: String, _ body: () throws(ReadFailure) -> T) throws(ProofkitError) -> T {
        do throws(ReadFailure) {
            return try body()
        } catch {
            switch error {
            case .open(let errno) where errno.isNotFound:
                throw ProofkitError(.notFound, "The model file does not exist.", path: path)
            case .folder:
                throw ProofkitError(.io, "This is a folder, not a model file.", path: path)
            case .open(let errno):
                throw ProofkitError(
                    .io, "The model file cannot be read (permissions?).", operation: "open",
                    underlying: errno.code, path: path)
            case .failed(let operation, let errno):
                throw ProofkitError(
                    .io, "The model file cannot be read (permissions?).", operation: operation,
                    underlying: errno.code, path: path)
            case .noWriter, .overLimit, .notRegular:
                throw ProofkitError(.io, "The model file cannot be read (permissions?).", path: path)
            }
        }
    }
}
