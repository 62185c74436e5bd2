import Foundation
import ProofkitSystem
import Synchronization

/// The tests' temporary folders: one maker (ProofkitSystem's `TemporaryFolder`: `mkdtemp`, a fresh
/// name no one else can have planted, mode 0700, in `$TMPDIR` or /tmp) and one scope that removes
/// the folder with everything in it when the body returns or throws.
public enum TestFolder {
    /// A new empty folder named `LABEL-XXXXXX`; the caller removes it (prefer
    /// ``withTemporaryFolder(_:_:)-(_,(String)->T)``, which does).
    /// - Parameter label: the start of the folder's name ["proofkit-test"].
    /// - Throws: `ProofkitError` (`.io`) when `mkdtemp` fails.
    public static func make(_ label: String = "proofkit-test") throws -> String {
        try TemporaryFolder(prefix: label).path
    }

    /// A new empty folder shared by the tests of one process (something made once, such as a
    /// built scratch package), removed with everything in it when the test process exits.
    /// - Parameter label: the start of the folder's name.
    /// - Throws: ``TestAudioError`` when `mkdtemp` fails.
    public static func makeForProcess(_ label: String) throws -> String {
        let folder = try make(label)
        removedAtExit.withLock { list in
            if list.isEmpty {
                atexit { for path in TestFolder.removedAtExit.withLock({ $0 }) { TestFolder.remove(path) } }
            }
            list.append(folder)
        }
        return folder
    }

    /// The folders ``makeForProcess(_:)`` made.
    private static let removedAtExit = Mutex<[String]>([])

    /// Removes `path` and everything in it (nothing when it is gone already).
    public static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Runs `body` with a new empty temporary folder (``TestFolder/make(_:)``), then removes the
/// folder and everything in it, whether `body` returns or throws.
/// - Parameters:
///   - label: the start of the folder's name ["proofkit-test"].
///   - body: gets the folder's path.
/// - Returns: what `body` returns.
/// - Throws: what `body` throws, or when the folder cannot be made.
public func withTemporaryFolder<T>(_ label: String = "proofkit-test", _ body: (String) throws -> T) throws -> T {
    let folder = try TestFolder.make(label)
    defer { TestFolder.remove(folder) }
    return try body(folder)
}

/// The `async` form of ``withTemporaryFolder(_:_:)-(_,(String)->T)``.
public func withTemporaryFolder<T>(
    _ label: String = "proofkit-test", _ body: (String) async throws -> T
) async throws -> T {
    let folder = try TestFolder.make(label)
    defer { TestFolder.remove(folder) }
    return try await body(folder)
}
