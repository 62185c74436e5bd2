internal import CProofkitShims
// Every libsqlite3 call proofkit makes is in this file (the chokepoint, as ALSA+Calls.swift is
// for libasound). libsqlite3 is not linked: its functions come from the table `loadSQLite()`
// fills on first use.
internal import CSQLite
import ProofkitCore

#if canImport(Glibc)
    import Glibc
#endif

/// libsqlite3's functions, from `libsqlite3.so.0`, loaded on the first call (thread-safe).
/// - Parameter soname: another file to load instead, into a table of its own (tests only).
/// - Throws: `.runtimeUnavailable` (exit 69) in one line naming the Debian package libsqlite3-0.
func loadSQLite(soname: String? = nil) throws(ProofkitError) -> proofkit_sqlite_api {
    guard let table = proofkit_library_load(proofkit_sqlite_library(), soname) else {
        throw ProofkitError(.runtimeUnavailable, String(cString: proofkit_library_failure()), operation: "dlopen")
    }
    return table.load(as: proofkit_sqlite_api.self)
}

/// SQLite's result codes proofkit tells apart (the primary code, `extended & 0xff`).
enum SQLiteCode {
    static let ok: Int32 = 0
    static let busy: Int32 = 5
    static let locked: Int32 = 6
    static let readOnly: Int32 = 8
    static let ioError: Int32 = 10
    static let corrupt: Int32 = 11
    static let full: Int32 = 13
    static let cantOpen: Int32 = 14
    static let notADatabase: Int32 = 26
    static let row: Int32 = 100
    static let done: Int32 = 101
}

/// An open connection (`sqlite3 *`) and the library it came from.
final class SQLiteConnection: @unchecked Sendable {
    let api: proofkit_sqlite_api
    let raw: OpaquePointer

    /// Opens (and with `create`, creates) the database file at `path`, in serialized mode; with
    /// `readOnly`, `path` is a `file:` URI opened with `SQLITE_OPEN_READONLY` (never created).
    /// A symbolic link at `path` is refused (`SQLITE_OPEN_NOFOLLOW`, error `.io` with
    /// `SQLITE_CANTOPEN_SYMLINK`): it is never followed. Calls `sqlite3_open_v2`,
    /// `sqlite3_busy_timeout`.
    init(path: String, create: Bool, busyTimeoutMilliseconds: Int32, readOnly: Bool = false) throws(ProofkitError) {
        let api = try loadSQLite()
        var handle: OpaquePointer?
        let flags =
            readOnly
            ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW
            : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW
        let status = api.sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLiteCode.ok, let handle else {
            let message =
                handle.map { String(cString: api.sqlite3_errmsg($0)!) + systemReason(api, $0, status) }
                ?? String(cString: api.sqlite3_errstr(status)!)
            if let handle { _ = api.sqlite3_close_v2(handle) }
            throw sqliteError(status, message, operation: "sqlite3_open_v2", path: path)
        }
        _ = api.sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        self.api = api
        raw = handle
    }

    deinit { _ = api.sqlite3_close_v2(raw) }

    /// The last error on this connection, with the system's reason for an I/O failure. Calls
    /// `sqlite3_extended_errcode`, `sqlite3_errmsg`.
    func lastError(_ operation: String) -> ProofkitError {
        let code = api.sqlite3_extended_errcode(raw)
        return sqliteError(
            code,
            (api.sqlite3_errmsg(raw).map { String(cString: $0) } ?? "unknown error") + systemReason(api, raw, code),
            operation: operation,
            path: nil)
    }

    /// Keeps the `-wal` and `-shm` files when the last connection closes
    /// (`SQLITE_FCNTL_PERSIST_WAL`), so that a later opener finds them made and sized: on a full
    /// disk, a database whose `-shm` must be made again cannot even be read. Calls
    /// `sqlite3_file_control`.
    func persistWriteAheadLog() {
        var on: Int32 = 1
        _ = api.sqlite3_file_control(raw, "main", SQLITE_FCNTL_PERSIST_WAL, &on)
    }

    /// Runs `sql` (one or more statements, no parameters, rows ignored). Calls `sqlite3_exec`.
    func exec(_ sql: String) throws(ProofkitError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = api.sqlite3_exec(raw, sql, nil, nil, &message)
        if let message { api.sqlite3_free(message) }
        guard status == SQLiteCode.ok else { throw lastError("sqlite3_exec") }
    }

    /// Prepares one statement, binds `values`, steps it to the end and returns its rows.
    /// Calls `sqlite3_prepare_v2`, `sqlite3_bind_*`, `sqlite3_step`, `sqlite3_column_*`,
    /// `sqlite3_finalize`, `sqlite3_changes`.
    func run(_ sql: String, _ values: [SQLiteValue]) throws(ProofkitError) -> (rows: [[SQLiteValue]], changes: Int) {
        var statement: OpaquePointer?
        guard api.sqlite3_prepare_v2(raw, sql, -1, &statement, nil) == SQLiteCode.ok, let statement else {
            throw lastError("sqlite3_prepare_v2")
        }
        defer { _ = api.sqlite3_finalize(statement) }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch value {
            case .null: status = api.sqlite3_bind_null(statement, index)
            case .integer(let number): status = api.sqlite3_bind_int64(statement, index, number)
            case .real(let number): status = api.sqlite3_bind_double(statement, index, number)
            case .text(let text):
                var api = self.api
                status = text.withCString { chars in
                    proofkit_sqlite_bind_text_copy(&api, statement, index, chars, Int32(strlen(chars)))
                }
            }
            guard status == SQLiteCode.ok else { throw lastError("sqlite3_bind") }
        }
        var rows: [[SQLiteValue]] = []
        let columns = api.sqlite3_column_count(statement)
        while true {
            let status = api.sqlite3_step(statement)
            if status == SQLiteCode.done { break }
            guard status == SQLiteCode.row else { throw lastError("sqlite3_step") }
            var row: [SQLiteValue] = []
            row.reserveCapacity(Int(columns))
            for column in 0..<columns {
                switch api.sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(.integer(api.sqlite3_column_int64(statement, column)))
                case SQLITE_FLOAT: row.append(.real(api.sqlite3_column_double(statement, column)))
                case SQLITE_NULL: row.append(.null)
                default:
                    let text = api.sqlite3_column_text(statement, column).map { String(cString: $0) } ?? ""
                    row.append(.text(text))
                }
            }
            rows.append(row)
        }
        return (rows, Int(api.sqlite3_changes(raw)))
    }
}

/// The one funnel from SQLite result codes to `ProofkitError` (`underlying` is the extended code).
/// " (No space left on device)": the errno behind an I/O, full-disk or cannot-open failure
/// (SQLite's own message for a full disk is often only "disk I/O error"); empty otherwise. Calls
/// `sqlite3_system_errno`.
func systemReason(_ api: proofkit_sqlite_api, _ connection: OpaquePointer, _ code: Int32) -> String {
    let system = api.sqlite3_system_errno(connection)
    guard system > 0, [SQLiteCode.ioError, SQLiteCode.full, SQLiteCode.cantOpen].contains(code & 0xff) else {
        return ""
    }
    return " (" + String(cString: strerror(system)) + ")"
}

func sqliteError(_ code: Int32, _ message: String, operation: String, path: String?) -> ProofkitError {
    let primary = code & 0xff
    let kind: ProofkitError.Code
    switch primary {
    case SQLiteCode.corrupt, SQLiteCode.notADatabase: kind = .decodeFailed
    case SQLiteCode.cantOpen: kind = .io
    default: kind = .io
    }
    return ProofkitError(kind, "SQLite: \(message)", operation: operation, underlying: code, path: path)
}
