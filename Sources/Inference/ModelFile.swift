#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import ProofkitCore

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
        let expected = expectedSHA256.lowercased()
        guard expected.count == 64, expected.allSatisfy({ $0.isHexDigit }) else {
            throw ProofkitError(
                .invalidArgument, "The expected SHA-256 \"\(expectedSHA256)\" is not 64 hex digits.", path: path)
        }
        let bytes = try read(path)
        let actual = SHA256.hexDigest(of: bytes)
        guard actual == expected else {
            throw ProofkitError(
                .modelInvalid,
                "The model's SHA-256 is \(actual), not the expected \(expected): the file is damaged or a different model. Rebuild it with the set-up.",
                operation: "sha256", path: path)
        }
        return bytes
    }

    /// The SHA-256 of a file as 64 lowercase hex digits (what `sha256sum` prints).
    /// - Throws: `.notFound`, `.io`.
    public static func sha256(ofFileAt path: String) throws(ProofkitError) -> String {
        SHA256.hexDigest(of: try read(path))
    }

    static func read(_ path: String) throws(ProofkitError) -> [UInt8] {
        guard let isFolder = POSIXFile.isFolder(path) else {
            throw ProofkitError(.notFound, "The model file does not exist.", path: path)
        }
        guard !isFolder else {
            throw ProofkitError(.io, "This is a folder, not a model file.", path: path)
        }
        guard let bytes = POSIXFile.readAll(path) else {
            throw ProofkitError(.io, "The model file cannot be read (permissions?).", path: path)
        }
        return bytes
    }
}
