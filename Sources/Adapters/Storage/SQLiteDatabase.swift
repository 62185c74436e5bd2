public import ProofkitCore
internal import ProofkitSystem

/// One value of a SQLite row or parameter.
public enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    /// The value as text (`nil` for NULL; numbers in their decimal form).
    public var text: String? {
        switch self {
        case .null: nil
        case .integer(let n): String(n)
        case .real(let d): String(d)
        case .text(let t): t
        }
    }
    /// The value as an integer (`nil` for NULL or text that is not a number).
    public var integer: Int64? {
        switch self {
        case .integer(let n): n
        case .real(let d): d.isFinite && abs(d) < 9.2e18 ? Int64(d) : nil
        case .text(let t): Int64(t)
        case .null: nil
        }
    }
    /// The value as a double (`nil` for NULL or text that is not a number).
    public var real: Double? {
        switch self {
        case .integer(let n): Double(n)
        case .real(let d): d
        case .text(let t): Double(t)
        case .null: nil
        }
    }
}

/// A SQLite database file (libsqlite3, loaded on first use), opened in write-ahead-log mode with
/// `synchronous=FULL`, so that a committed transaction survives a crash or power cut.
///
/// ```swift
/// let db = try SQLiteDatabase(path: "store.db")
/// try db.transaction { () throws(ProofkitError) in try db.run("INSERT ...", [.text("x")]) }
/// ```
/// Every change should go through ``transaction(_:)`` (`BEGIN IMMEDIATE`, so two writers queue
/// on the busy timeout instead of failing half-way).
///
/// `@unchecked Sendable`: the connection is opened in SQLite's serialized mode.
public final class SQLiteDatabase: @unchecked Sendable {
    private let connection: SQLiteConnection
    /// The file.
    public let path: String

    /// Which SQLite failure an error is, from its `underlying` code.
    public enum Failure: Sendable {
        /// The file is not a database, or its pages are damaged (`SQLITE_CORRUPT`, `SQLITE_NOTADB`).
        case corrupt
        /// The file or its folder cannot be written (`SQLITE_READONLY`, `SQLITE_CANTOPEN`, a
        /// read-only disk).
        case readOnly
        /// Another connection held the lock longer than the busy timeout.
        case busy
        /// Anything else.
        case other
    }

    /// What kind of SQLite failure `error` is (`.other` for errors that are not SQLite's).
    public static func failure(of error: ProofkitError) -> Failure {
        guard error.message.hasPrefix("SQLite:"), let code = error.underlying else { return .other }
        switch code & 0xff {
        case SQLiteCode.corrupt, SQLiteCode.notADatabase: return .corrupt
        case SQLiteCode.readOnly, SQLiteCode.cantOpen: return .readOnly
        case SQLiteCode.busy, SQLiteCode.locked: return .busy
        case SQLiteCode.ioError: return code == 10 | (13 << 8) ? .readOnly : .other
        default: return .other
        }
    }

    /// How a database is opened.
    public enum Access: Sendable {
        /// Read and write, creating the file when missing.
        case create
        /// Read and write an existing file (`.io`, SQLite's "cannot open", when it is missing).
        case readWrite
        /// Read only: nothing is written, not even the journal mode. On a folder nobody can
        /// write (a read-only disk), the file is read as it stands (SQLite's `immutable`).
        case readOnly
    }

    /// Opens the database at `path` (by default creating it when missing), switches it to WAL with
    /// `synchronous=FULL` (not with `.readOnly`) and sets the busy timeout.
    /// - Parameters:
    ///   - path: the file.
    ///   - access: how it is opened [`.create`].
    ///   - busyTimeoutMilliseconds: how long a writer waits for another's transaction [5000].
    /// - Throws: `.runtimeUnavailable` when libsqlite3.so.0 cannot be loaded; `.decodeFailed`
    ///   when the file is not a database (see ``failure(of:)``); `.io` otherwise.
    public init(path: String, access: Access = .create, busyTimeoutMilliseconds: Int32 = 5000) throws(ProofkitError) {
        if access == .readOnly {
            do throws(ProofkitError) {
                connection = try Self.openReadOnly(path)
            } catch {
                throw error.at(path: path)
            }
            self.path = path
            return
        }
        do throws(ProofkitError) {
            connection = try SQLiteConnection(
                path: path, mode: access == .create ? .create : .readWrite,
                busyTimeoutMilliseconds: busyTimeoutMilliseconds)
            // A store already in WAL stays so (the mode is kept in the file): reading it takes no
            // lock. Switching a new store does, and SQLite reports a concurrent opener as busy at
            // once instead of waiting, so the switch is tried again for up to the busy timeout.
            var mode = try connection.run("PRAGMA journal_mode", []).rows.first?.first?.text ?? ""
            var waitedMilliseconds: Int32 = 0
            while mode.lowercased() != "wal" {
                do {
                    mode = try connection.run("PRAGMA journal_mode=WAL", []).rows.first?.first?.text ?? ""
                    break
                } catch  where Self.failure(of: error) == .busy && waitedMilliseconds < busyTimeoutMilliseconds {
                    POSIX.sleep(microseconds: 20_000)
                    waitedMilliseconds += 20
                }
            }
            if mode.lowercased() != "wal" {
                throw ProofkitError(
                    .io, "SQLite: cannot switch to the write-ahead log (journal mode \(mode))",
                    underlying: SQLiteCode.readOnly)
            }
            try connection.exec("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")
        } catch {
            throw error.at(path: path)
        }
        self.path = path
    }

    /// A read-only connection: plain, or (when WAL's -shm file cannot be made, on a folder nobody
    /// can write) reading the file as it stands.
    private static func openReadOnly(_ path: String) throws(ProofkitError) -> SQLiteConnection {
        do throws(ProofkitError) {
            let plain = try SQLiteConnection(path: path, mode: .readOnly, busyTimeoutMilliseconds: 0)
            _ = try plain.run("SELECT count(*) FROM sqlite_schema", [])
            return plain
        } catch  where failure(of: error) == .readOnly {
            return try SQLiteConnection(path: path, mode: .immutable, busyTimeoutMilliseconds: 0)
        }
    }

    /// Runs statements without parameters (schema changes, pragmas). Rows are ignored.
    /// - Throws: `ProofkitError` (see ``failure(of:)``).
    public func execute(_ sql: String) throws(ProofkitError) {
        do { try connection.exec(sql) } catch { throw error.at(path: path) }
    }

    /// Runs one statement with `values` bound to its `?` parameters.
    /// - Returns: the number of rows it changed.
    /// - Throws: `ProofkitError` (see ``failure(of:)``).
    @discardableResult
    public func run(_ sql: String, _ values: [SQLiteValue] = []) throws(ProofkitError) -> Int {
        do { return try connection.run(sql, values).changes } catch { throw error.at(path: path) }
    }

    /// Runs one query with `values` bound to its `?` parameters.
    /// - Returns: its rows, each a list of column values.
    /// - Throws: `ProofkitError` (see ``failure(of:)``).
    public func query(_ sql: String, _ values: [SQLiteValue] = []) throws(ProofkitError) -> [[SQLiteValue]] {
        do { return try connection.run(sql, values).rows } catch { throw error.at(path: path) }
    }

    /// Runs `body` in one write transaction (`BEGIN IMMEDIATE`): committed when it returns,
    /// rolled back when it throws. Not re-entrant.
    /// - Throws: what `body` throws, or `ProofkitError` when the transaction cannot start or commit.
    public func transaction<T>(_ body: () throws(ProofkitError) -> T) throws(ProofkitError) -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}
