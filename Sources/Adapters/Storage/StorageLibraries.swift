public import ProofkitCore

/// The storage C library proofkit loads on first use (SQLite, for `proofkit alarm`), for
/// `proofkit doctor`.
public enum StorageLibraries {
    /// Loads libsqlite3 (if not loaded yet) and says whether it loaded.
    /// - Returns: one status; a failure carries the one-line reason (the file, the loader's
    ///   message and the Debian package to install).
    public static func probe() -> [CLibraryStatus] {
        var sqlite = CLibraryStatus(name: "libsqlite3", soname: "libsqlite3.so.0", debianPackage: "libsqlite3-0")
        do { _ = try loadSQLite() } catch { sqlite.failure = error.message }
        return [sqlite]
    }
}
