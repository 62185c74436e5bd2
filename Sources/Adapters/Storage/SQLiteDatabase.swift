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
        /// Read only, as ``init(readingOnly:busyTimeoutMilliseconds:)``: nothing is written, not
        /// even the journal mode.
        case readOnly
    }

    /// Opens the database at `path` (by default creating it when missing), switches it to WAL with
    /// `synchronous=FULL` (not with `.readOnly`), keeps the `-wal` and `-shm` files after the last
    /// connection closes (so a full disk can still read it), and sets the busy timeout.
    /// - Parameters:
    ///   - path: the file.
    ///   - access: how it is opened [`.create`].
    ///   - busyTimeoutMilliseconds: how long a writer waits for another's transaction [5000].
    /// - Throws: `.runtimeUnavailable` when libsqlite3.so.0 cannot be loaded; `.decodeFailed`
    ///   when the file is not a database (see ``failure(of:)``); `.io` otherwise.
    public init(path: String, access: Access = .create, busyTimeoutMilliseconds: Int32 = 5000) throws(ProofkitError) {
        if access == .readOnly {
            connection = try Self.readingOnlyConnection(path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
            self.path = path
            return
        }
        do throws(ProofkitError) {
            connection = try SQLiteConnection(
                path: path, create: access == .create, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
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
            connection.persistWriteAheadLog()
        } catch {
            throw error.at(path: path)
        }
        self.path = path
    }

    /// Opens the existing database at `path` for reading only (`SQLITE_OPEN_READONLY`): the file
    /// is never created, switched to WAL or written, and a write through this connection fails
    /// (``Failure/readOnly``). SQLite may create the empty `-wal` and `-shm` side files beside it,
    /// as any reader of a WAL database does. In a folder that cannot be written, a database
    /// whose `-wal` file is absent is read as immutable: no writer can be at work there, since
    /// a writer must create that file first. A `-wal` file that exists is always read.
    /// - Parameters:
    ///   - path: the file.
    ///   - busyTimeoutMilliseconds: how long a read waits for a writer's lock [5000].
    /// - Throws: `.notFound` when there is no file at `path`; `.runtimeUnavailable` when
    ///   libsqlite3.so.0 cannot be loaded; `.decodeFailed` when the file is not a database;
    ///   `.io` otherwise (see ``failure(of:)``).
    public init(readingOnly path: String, busyTimeoutMilliseconds: Int32 = 5000) throws(ProofkitError) {
        connection = try Self.readingOnlyConnection(path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        self.path = path
    }

    /// The connection of ``init(readingOnly:busyTimeoutMilliseconds:)``.
    static func readingOnlyConnection(_ path: String, busyTimeoutMilliseconds: Int32) throws(ProofkitError)
        -> SQLiteConnection
    {
        guard case .success(let status) = POSIX.status(path), !status.isDirectory else {
            throw ProofkitError(.notFound, "SQLite: no database file", path: path)
        }
        let uri = "file:" + Self.uriPath(path)
        do throws(ProofkitError) {
            var reader = try SQLiteConnection(
                path: uri + "?mode=ro", create: false, busyTimeoutMilliseconds: busyTimeoutMilliseconds, readOnly: true)
            do {
                // SQLite opens lazily: the first read is where a WAL it cannot index shows.
                _ = try reader.run("PRAGMA schema_version", [])
            } catch  where Self.failure(of: error) == .readOnly && !Self.exists(path + "-wal") {
                reader = try SQLiteConnection(
                    path: uri + "?immutable=1", create: false, busyTimeoutMilliseconds: busyTimeoutMilliseconds,
                    readOnly: true)
                _ = try reader.run("PRAGMA schema_version", [])
            }
            return reader
        } catch {
            throw error.at(path: path)
        }
    }

    /// `path` as the path of a `file:` URI: `%`, `?` and `#` percent-encoded.
    static func uriPath(_ path: String) -> String {
        var out: [UInt8] = []
        for byte in path.utf8 {
            if byte == UInt8(ascii: "%") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") {
                out += Array(("%" + String(byte, radix: 16, uppercase: true)).utf8)
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func exists(_ path: String) -> Bool {
        if case .success = POSIX.status(path) { return true }
        return false
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
