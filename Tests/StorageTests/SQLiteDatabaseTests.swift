import Foundation
import ProofkitCore
import TestSupport
import Testing

@testable import Storage

@Suite("Storage: SQLite loaded on first use, WAL, transactions")
struct SQLiteDatabaseTests {
    @Test("libsqlite3.so.0 loads, and each function its table declares resolves and is called")
    func table() throws {
        let table = FunctionTable(try loadSQLite())
        #expect(table.names.count == 23)
        #expect(table.unresolved.isEmpty, "not resolved: \(table.unresolved)")
        // sqlite3_bind_text is called by the C helper that passes SQLITE_TRANSIENT.
        let notCalled = try table.notCalled(in: "Sources/Adapters/Storage/SQLite+Calls.swift", receiver: "api")
        #expect(notCalled == ["sqlite3_bind_text"], "declared but never called: \(notCalled)")
    }

    @Test(
        "a missing libsqlite3 is runtimeUnavailable (exit 69) in one line naming libsqlite3-0",
        arguments: [
            FailingLibraryLoad(soname: "libsqlite3.so.99", package: "libsqlite3-0") { soname throws(ProofkitError) in
                _ = try loadSQLite(soname: soname)
            }
        ])
    func failure(_ load: FailingLibraryLoad) {
        #expect(load.problems() == [])
    }

    @Test("a new database is in WAL mode with synchronous=FULL; values round-trip")
    func walAndValues() throws {
        try withTemporaryFolder { folder in
            let db = try SQLiteDatabase(path: folder + "/t.db")
            #expect(try db.query("PRAGMA journal_mode").first?.first?.text == "wal")
            #expect(try db.query("PRAGMA synchronous").first?.first?.integer == 2)
            try db.execute("CREATE TABLE t(a, b, c, d)")
            _ = try db.transaction { () throws(ProofkitError) in
                try db.run("INSERT INTO t VALUES(?, ?, ?, ?)", [.integer(-7), .real(1.5), .text("فجر 'x'"), .null])
            }
            #expect(try db.query("SELECT a, b, c, d FROM t") == [[.integer(-7), .real(1.5), .text("فجر 'x'"), .null]])
            // A failing body rolls the whole transaction back.
            #expect(throws: ProofkitError.self) {
                try db.transaction { () throws(ProofkitError) in
                    try db.run("INSERT INTO t VALUES(1, 1, 1, 1)")
                    try db.run("INSERT INTO nosuchtable VALUES(1)")
                }
            }
            #expect(try db.query("SELECT count(*) FROM t").first?.first?.integer == 1)
        }
    }

    @Test("two connections incrementing one counter from two threads lose no update")
    func noLostUpdate() throws {
        try withTemporaryFolder { folder in
            let path = folder + "/c.db"
            let setup = try SQLiteDatabase(path: path)
            try setup.execute("CREATE TABLE c(n INTEGER); INSERT INTO c VALUES(0);")
            DispatchQueue.concurrentPerform(iterations: 2) { _ in
                guard let db = try? SQLiteDatabase(path: path) else { return }
                for _ in 0..<100 {
                    try? db.transaction { () throws(ProofkitError) in
                        let n = try db.query("SELECT n FROM c").first?.first?.integer ?? 0
                        try db.run("UPDATE c SET n = ?", [.integer(n + 1)])
                    }
                }
            }
            #expect(try setup.query("SELECT n FROM c").first?.first?.integer == 200)
        }
    }

    @Test("a file that is not a database is reported as corrupt and left untouched")
    func corrupt() throws {
        try withTemporaryFolder { folder in
            let garbage = Data(repeating: 0x5A, count: 4096)
            try garbage.write(to: URL(fileURLWithPath: folder + "/bad.db"))
            do throws(ProofkitError) {
                _ = try SQLiteDatabase(path: folder + "/bad.db")
                Issue.record("opened a file that is not a database")
            } catch {
                #expect(SQLiteDatabase.failure(of: error) == .corrupt)
                #expect(error.description.contains("bad.db"))
            }
            #expect(FileManager.default.contents(atPath: folder + "/bad.db") == garbage)
        }
    }
}
