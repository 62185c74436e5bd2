import Foundation
import ProofkitCore
import TestSupport
import Testing

@testable import Storage

/// A database with one table of three rows, written and closed (its `-wal` checkpointed away).
/// A database of 3 rows at `path`, as a copy without its side files: a writer keeps its `-wal` and
/// `-shm` after it closes (checkpointed), and they are removed here.
private func makeDatabase(at path: String) throws {
    do {
        let db = try SQLiteDatabase(path: path)
        try db.execute("CREATE TABLE t(n INTEGER, s TEXT)")
        _ = try db.transaction { () throws(ProofkitError) in
            for n in 1...3 { try db.run("INSERT INTO t VALUES(?, ?)", [.integer(Int64(n)), .text("row \(n)")]) }
        }
    }
    for side in ["-wal", "-shm"] {
        #expect(FileManager.default.fileExists(atPath: path + side), "kept after the last close: \(side)")
        try FileManager.default.removeItem(atPath: path + side)
    }
}

private func fileStamp(_ path: String) throws -> (Data, Date) {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (try Data(contentsOf: URL(fileURLWithPath: path)), attributes[.modificationDate] as? Date ?? .distantPast)
}

@Suite("Storage: a database opened for reading only")
struct SQLiteReadOnlyTests {
    @Test("a missing file is .notFound and is not created")
    func missing() throws {
        try withTemporaryFolder { folder throws in
            #expect(throws: ProofkitError.self) { _ = try SQLiteDatabase(readingOnly: folder + "/none.db") }
            do throws(ProofkitError) {
                _ = try SQLiteDatabase(readingOnly: folder + "/none.db")
            } catch {
                #expect(error.code == .notFound)
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        }
    }

    @Test("it reads; a write through it fails as read-only; the file's bytes and time are unchanged")
    func readsNeverWrites() throws {
        try withTemporaryFolder { folder in
            // '?', '#' and '%' in the folder name: the path goes into a file: URI.
            let sub = folder + "/a?b#c%20d"
            try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
            let path = sub + "/t.db"
            try makeDatabase(at: path)
            let before = try fileStamp(path)
            let db = try SQLiteDatabase(readingOnly: path)
            #expect(try db.query("SELECT n, s FROM t ORDER BY n").map { $0[0].integer } == [1, 2, 3])
            do throws(ProofkitError) {
                try db.execute("INSERT INTO t VALUES(4, 'x')")
                Issue.record("a write through a read-only connection passed")
            } catch {
                #expect(SQLiteDatabase.failure(of: error) == .readOnly, "\(error)")
            }
            #expect(try db.query("SELECT count(*) FROM t").first?.first?.integer == 3)
            let after = try fileStamp(path)
            #expect(after.0 == before.0 && after.1 == before.1)
            // A writer's commit is seen by the reader (it reads the write-ahead log).
            let writer = try SQLiteDatabase(path: path)
            try writer.execute("INSERT INTO t VALUES(4, 'row 4')")
            #expect(try db.query("SELECT count(*) FROM t").first?.first?.integer == 4)
        }
    }

    @Test(
        "on a read-only disk (tmpfs remounted ro), a database without its -wal is read",
        .enabled(if: getuid() == 0, "needs root to mount"))
    func readOnlyDisk() throws {
        try withTemporaryFolder { folder in
            try #require(AudioTestTools.mountTmpfs(at: folder, kilobytes: 1024), "cannot mount a tmpfs")
            defer { AudioTestTools.unmount(folder) }
            try makeDatabase(at: folder + "/t.db")
            #expect(!FileManager.default.fileExists(atPath: folder + "/t.db-wal"))
            let before = try fileStamp(folder + "/t.db")
            let remount = try AudioTestTools.run("mount", ["-o", "remount,ro", folder])
            try #require(remount.status == 0, "remount: \(remount.stderr)")
            // Even root cannot write there now.
            #expect(!FileManager.default.createFile(atPath: folder + "/probe", contents: Data([1])))
            #expect(throws: ProofkitError.self) { _ = try SQLiteDatabase(path: folder + "/t.db") }
            let db = try SQLiteDatabase(readingOnly: folder + "/t.db")
            #expect(try db.query("SELECT s FROM t ORDER BY n").map { $0[0].text } == ["row 1", "row 2", "row 3"])
            #expect(try fileStamp(folder + "/t.db") == before)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["t.db"])
        }
    }

    @Test(
        "in a folder and file without write permission, a database without its -wal is read",
        .enabled(if: getuid() != 0, "root is not stopped by file modes: see the read-only disk test"))
    func readOnlyModes() throws {
        let folder = try TestFolder.make()
        defer {
            chmod(folder, 0o755)
            try? FileManager.default.removeItem(atPath: folder)
        }
        try makeDatabase(at: folder + "/t.db")
        chmod(folder + "/t.db", 0o444)
        chmod(folder, 0o555)
        let db = try SQLiteDatabase(readingOnly: folder + "/t.db")
        #expect(try db.query("SELECT count(*) FROM t").first?.first?.integer == 3)
    }
}
