import ProofkitCore
internal import ProofkitSystem

/// A write-ahead log that belongs to another database is refused before SQLite reads it.
///
/// SQLite applies any WAL beside a database whose header and frames are self-consistent: it does
/// not check that the log was written for this database. A `-wal` file copied or left over from
/// another database would show (and on the next checkpoint, write) that database's pages as the
/// store's. A proofkit store always carries its `application_id` ("PfKt") on page 1, so every
/// committed copy of page 1 in its log carries it too.
extension AlarmStore {
    /// Checks the log beside `path` (`path-wal`), reading only: the log's page size must be the
    /// database's, and every committed frame of page 1 must carry the store's `application_id`
    /// when the database file does (a version 1 store, without an id, is checked when migrated).
    /// - Throws: ``ProofkitError`` `.storeCorrupt` naming the log; nothing is changed.
    static func checkLog(of path: String) throws(ProofkitError) {
        let logPath = path + "-wal"
        guard case .success(let fd) = POSIX.open(logPath, [.readOnly, .noFollow]) else { return }
        defer { POSIX.closeDescriptor(fd) }
        func bytes(_ fd: Int32, _ count: Int, at offset: Int64) -> [UInt8]? {
            var buffer = [UInt8](repeating: 0, count: count)
            guard case .success(let read) = buffer.withUnsafeMutableBytes({ POSIX.read(fd, into: $0, at: offset) }),
                read == count
            else { return nil }
            return buffer
        }
        func word(_ b: [UInt8], _ at: Int) -> UInt32 {
            UInt32(b[at]) << 24 | UInt32(b[at + 1]) << 16 | UInt32(b[at + 2]) << 8 | UInt32(b[at + 3])
        }
        guard case .success(let info) = POSIX.status(descriptor: fd), info.size >= 32,
            let header = bytes(fd, 32, at: 0), [0x377F_0682, 0x377F_0683].contains(word(header, 0))
        else { return }  // empty or not a log: SQLite resets it
        let refuse = { (why: String) in
            ProofkitError(
                .storeCorrupt,
                "\(logPath): the write-ahead log belongs to another database (\(why)); the store was left as it is: move the -wal file away to use the store as of its last checkpoint"
            )
        }
        let pageSize = Int(word(header, 8))
        var databaseID: UInt32? = nil
        if case .success(let dbFD) = POSIX.open(path, [.readOnly, .noFollow]) {
            defer { POSIX.closeDescriptor(dbFD) }
            if let dbHeader = bytes(dbFD, 100, at: 0) {
                let size = Int(dbHeader[16]) << 8 | Int(dbHeader[17])
                if (size == 1 ? 65_536 : size) != pageSize {
                    throw refuse("its page size is \(pageSize), the store's \(size == 1 ? 65_536 : size)")
                }
                databaseID = word(dbHeader, 68)
            }
        }
        guard pageSize >= 512, pageSize <= 65_536 else { throw refuse("page size \(pageSize)") }
        // Frames count while their salts are the header's, up to the last commit frame.
        let frameSize = Int64(24 + pageSize)
        var offset: Int64 = 32
        var pageOneIDs: [UInt32] = []
        var committed: [UInt32] = []
        while offset + frameSize <= Int64(info.size), let frame = bytes(fd, 24, at: offset),
            word(frame, 8) == word(header, 16), word(frame, 12) == word(header, 20)
        {
            if word(frame, 0) == 1, let page = bytes(fd, 4, at: offset + 24 + 68) { pageOneIDs.append(word(page, 0)) }
            if word(frame, 4) != 0 {  // a commit frame
                committed += pageOneIDs
                pageOneIDs = []
            }
            offset += frameSize
        }
        let storeID = UInt32(AlarmStore.applicationID)
        if databaseID == storeID || databaseID == nil, let other = committed.first(where: { $0 != storeID }) {
            throw refuse(
                "its page 1 has application_id 0x\(String(other, radix: 16)), not the store's 0x\(String(storeID, radix: 16))"
            )
        }
    }
}
