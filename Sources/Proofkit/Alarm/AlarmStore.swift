public import AlarmScheduling
import AudioIO
import DuaMatching
import PrayerPlanning
import ProofkitCore
internal import ProofkitSystem
import Storage

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The alarm store: a SQLite database in a folder of its own (the system's alarm list and its
/// history), with the service's lock file, control socket and the kept copies of the sounds.
///
/// Every change is one transaction (WAL, `synchronous=FULL`), so two commands at once both land
/// and a crash (kill -9, power cut) leaves the last committed state. Schema version in
/// `PRAGMA user_version` (1).
public final class AlarmStore: @unchecked Sendable {
    /// The folder.
    public let folder: String
    let db: SQLiteDatabase

    /// The schema version this build writes and reads: 3 (1 had no `rings.detail` and ring
    /// levels, 2 no hands-free columns `chains.listen`, `text_name`, `text_json`).
    public static let schemaVersion = 3

    /// SQLite's `application_id` of a proofkit alarm store: "PfKt". A database with another id,
    /// or with none and tables that are not a store's, is refused before anything is written.
    public static let applicationID: Int64 = 0x5066_4B74

    /// The tables a store has.
    static let tables: Set<String> = ["settings", "chains", "rings", "outcomes"]

    /// Instants a store may hold, in seconds since 1970: 2000-01-01 to 2200-01-01. A row outside
    /// (a damaged or edited store) is skipped, never read into a date.
    static let validTimes = 946_684_800.0...7_258_118_400.0

    /// How a command opens the store.
    public enum Access: Sendable {
        /// Create the folder and the database when missing (`run`, `add`, `prayers`).
        case create
        /// An existing store, read and written (`stop`, `prove`); a missing one is `.unknownID`.
        case existing
        /// An existing store, only read (`status`, `history`): works on a read-only disk.
        case readOnly
    }

    /// The store folder: `explicit`, else `$PROOFKIT_ALARM_DIR`, else `$XDG_STATE_HOME/proofkit`,
    /// else `~/.local/state/proofkit` (``UserFolders/state(_:)``: a relative `XDG_STATE_HOME` is
    /// ignored), else `/root/.local/state/proofkit`.
    public static func folder(explicit: String?, environment: [String: String]) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let dir = environment["PROOFKIT_ALARM_DIR"], !dir.isEmpty { return dir }
        return (UserFolders.state(environment) ?? "/root/.local/state") + "/proofkit"
    }

    /// The names of the database and the control socket in the store's folder.
    static let databaseName = "alarms.sqlite3"
    static let socketName = "control.sock"

    public var databasePath: String { folder + "/" + AlarmStore.databaseName }
    public var lockPath: String { folder + "/service.lock" }
    public var socketPath: String { folder + "/" + AlarmStore.socketName }
    public var soundsFolder: String { folder + "/sounds" }

    /// Opens the store in `folder`.
    /// - Parameters:
    ///   - folder: the store's folder.
    ///   - access: whether a missing store is created, and whether it is written [`.create`].
    /// - Throws: ``ProofkitError`` `.notFound` (no store, with `.existing`/`.readOnly`),
    ///   `.storeCorrupt` (damaged, not a proofkit store, missing a table, or written by a newer
    ///   proofkit: nothing written), `.storeReadOnly` (cannot be written, a symbolic link as the
    ///   folder or the database, or run as root on a folder another user owns);
    ///   `ProofkitError` `.runtimeUnavailable` when libsqlite3 is missing.
    public init(folder: String, access: Access = .create) throws(ProofkitError) {
        self.folder = folder
        let path = folder + "/" + AlarmStore.databaseName
        if access == .create {
            try AlarmStore.makeFolder(folder)
        } else {
            guard case .success(let info) = POSIX.status(path), info.isRegular else {
                throw ProofkitError(
                    .notFound,
                    "no alarm store in \(folder); 'proofkit alarm add' or 'proofkit alarm prayers' creates one")
            }
            if access == .existing, case .failure(let errno) = POSIX.checkWritable(folder) {
                throw ProofkitError(.storeReadOnly, "\(folder): the alarm store cannot be written (\(errno))")
            }
        }
        try AlarmStore.checkOwner(folder)
        if case .success(let info) = POSIX.linkStatus(path), info.isSymbolicLink {
            throw ProofkitError(
                .storeReadOnly,
                "\(path): a symbolic link, which proofkit never follows in its store; it was left as it is: put the database itself there"
            )
        }
        try AlarmStore.checkLog(of: path)
        do throws(ProofkitError) {
            if case .success(let info) = POSIX.status(path), info.size > 0 {
                // Look before writing anything (even the journal mode): a file that is not a store is left as it is.
                try AlarmStore.verify(SQLiteDatabase(path: path, access: .readOnly), path: path)
            }
            db = try SQLiteDatabase(path: path, access: access == .readOnly ? .readOnly : .create)
            if access != .readOnly { try AlarmStore.migrate(db) }
        } catch  where error.code == .storeCorrupt || error.code == .storeReadOnly {
            throw error
        } catch {
            throw AlarmStore.translate(error, path: path)
        }
    }

    /// Refuses a store that is a symlink, or that another user owns when run as root (a folder
    /// someone else controls could redirect root's writes).
    static func checkOwner(_ folder: String) throws(ProofkitError) {
        guard case .success(let info) = POSIX.linkStatus(folder) else { return }
        guard !info.isSymbolicLink else {
            throw ProofkitError(
                .storeReadOnly,
                "\(folder): the alarm store is a symbolic link, which proofkit does not follow; give the folder itself")
        }
        guard info.isDirectory else {
            throw ProofkitError(.storeReadOnly, "\(folder): the alarm store is not a folder (it is \(info.kind))")
        }
        if POSIX.effectiveUser == 0 && info.owner != 0 {
            throw ProofkitError(
                .storeReadOnly,
                "\(folder): the alarm store belongs to user \(info.owner); as root, use a store of root's own (or run as that user)"
            )
        }
    }

    /// Checks, reading only, that `db` is a proofkit store (or an empty database).
    static func verify(_ db: SQLiteDatabase, path: String) throws(ProofkitError) {
        let id = try db.query("PRAGMA application_id").first?.first?.integer ?? 0
        let version = try db.query("PRAGMA user_version").first?.first?.integer ?? 0
        let names = Set(
            try db.query("SELECT name FROM sqlite_schema WHERE type = 'table'").compactMap { $0.first?.text })
        if id == 0 && names.isEmpty { return }
        let isStore = id == applicationID || (id == 0 && version == 1 && tables.isSubset(of: names))
        guard isStore else {
            throw ProofkitError(
                .storeCorrupt,
                "\(path): not a proofkit alarm store (application_id \(id), tables \(names.sorted().joined(separator: ", "))); it was left as it is"
            )
        }
        try checkVersion(version, path: path)
        if let missing = tables.subtracting(names).sorted().first {
            throw ProofkitError(
                .storeCorrupt, "\(path): the alarm store has no '\(missing)' table; it was left as it is")
        }
    }

    /// Refuses a store of a newer schema (written by a newer proofkit): this build would misread
    /// it, and writing would damage it.
    static func checkVersion(_ version: Int64, path: String) throws(ProofkitError) {
        guard version > Int64(schemaVersion) else { return }
        throw ProofkitError(
            .storeCorrupt,
            "\(path): the alarm store was written by a newer proofkit (schema \(version); this one reads up to \(schemaVersion)); it was left as it is: use that proofkit again"
        )
    }

    static func makeFolder(_ path: String) throws(ProofkitError) {
        if let (_, errno) = POSIX.makeFolders(path, mode: 0o700) {
            if [.readOnlyFileSystem, .permissionDenied, .notPermitted].contains(errno) {
                throw ProofkitError(.storeReadOnly, "\(path): the alarm store cannot be written (\(errno))")
            }
            throw ProofkitError(
                .io, "cannot create the alarm store folder: \(errno)", underlying: errno.code, path: path)
        }
        if case .failure(let errno) = POSIX.checkWritable(path) {
            throw ProofkitError(.storeReadOnly, "\(path): the alarm store cannot be written (\(errno))")
        }
    }

    /// SQLite failures as the alarm commands report them.
    static func translate(_ error: ProofkitError, path: String) -> ProofkitError {
        switch SQLiteDatabase.failure(of: error) {
        case .corrupt:
            return ProofkitError(
                .storeCorrupt,
                "\(path): the alarm store is corrupt (\(error.message)); it was left as it is: move it away to start a new one"
            )
        case .readOnly:
            return ProofkitError(.storeReadOnly, "\(path): the alarm store cannot be written (\(error.message))")
        default:
            return error
        }
    }

    static func migrate(_ db: SQLiteDatabase) throws(ProofkitError) {
        let version = try db.query("PRAGMA user_version").first?.first?.integer ?? 0
        if version == Int64(schemaVersion) { return }
        try checkVersion(version, path: db.path)
        try db.transaction { () throws(ProofkitError) in
            // Re-read inside the transaction: another command may have migrated meanwhile.
            let current = try db.query("PRAGMA user_version").first?.first?.integer ?? 0
            if current == 0 {
                try db.execute(
                    """
                    CREATE TABLE IF NOT EXISTS settings(key TEXT PRIMARY KEY, value TEXT NOT NULL);
                    CREATE TABLE IF NOT EXISTS chains(
                      id TEXT PRIMARY KEY, kind TEXT NOT NULL, label TEXT, sound TEXT NOT NULL, kept_sound TEXT,
                      proof TEXT NOT NULL, first_fire REAL NOT NULL, window_end REAL NOT NULL,
                      state TEXT NOT NULL DEFAULT 'active', created REAL NOT NULL,
                      volume REAL NOT NULL DEFAULT 100, ramp REAL NOT NULL DEFAULT 3, escalate INTEGER NOT NULL DEFAULT 0,
                      listen TEXT NOT NULL DEFAULT 'auto', text_name TEXT, text_json TEXT);
                    CREATE TABLE IF NOT EXISTS rings(
                      id TEXT PRIMARY KEY, chain TEXT NOT NULL, ring INTEGER NOT NULL, fire REAL NOT NULL,
                      sound TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'scheduled', rang_at REAL, detail TEXT);
                    CREATE INDEX IF NOT EXISTS rings_by_state ON rings(state, fire);
                    CREATE TABLE IF NOT EXISTS outcomes(
                      seq INTEGER PRIMARY KEY AUTOINCREMENT, chain TEXT NOT NULL, kind TEXT NOT NULL,
                      at REAL NOT NULL, detail TEXT);
                    """)
            }
            if current == 1 {
                try db.execute(
                    """
                    ALTER TABLE rings ADD COLUMN detail TEXT;
                    ALTER TABLE chains ADD COLUMN volume REAL NOT NULL DEFAULT 100;
                    ALTER TABLE chains ADD COLUMN ramp REAL NOT NULL DEFAULT 3;
                    ALTER TABLE chains ADD COLUMN escalate INTEGER NOT NULL DEFAULT 0;
                    """)
            }
            if current == 1 || current == 2 {
                try db.execute(
                    """
                    ALTER TABLE chains ADD COLUMN listen TEXT NOT NULL DEFAULT 'auto';
                    ALTER TABLE chains ADD COLUMN text_name TEXT;
                    ALTER TABLE chains ADD COLUMN text_json TEXT;
                    """)
            }
            if current < Int64(schemaVersion) {
                try db.execute("PRAGMA application_id = \(applicationID); PRAGMA user_version = \(schemaVersion);")
            }
        }
    }

    /// Runs `body` in one write transaction, translating SQLite failures.
    public func write<T>(_ body: () throws(ProofkitError) -> T) throws(ProofkitError) -> T {
        do throws(ProofkitError) {
            try db.execute("BEGIN IMMEDIATE")
        } catch {
            throw AlarmStore.translate(error, path: databasePath)
        }
        do throws(ProofkitError) {
            let result = try body()
            try db.execute("COMMIT")
            return result
        } catch {
            try? db.execute("ROLLBACK")
            throw AlarmStore.translate(error, path: databasePath)
        }
    }

    func read<T>(_ body: () throws(ProofkitError) -> T) throws(ProofkitError) -> T {
        do throws(ProofkitError) { return try body() } catch {
            throw AlarmStore.translate(error, path: databasePath)
        }
    }

    // MARK: Settings

    public func setting(_ key: String) throws(ProofkitError) -> String? {
        try read { () throws(ProofkitError) in
            try db.query("SELECT value FROM settings WHERE key = ?", [.text(key)]).first?.first?.text
        }
    }

    /// The prayer times the last re-plan found none of, in its days (7 from today), with why:
    /// the Sun does not rise or does not set there that day. Empty when every time was found.
    /// - Throws: a `ProofkitError` when the store cannot be read.
    public func unavailablePrayerTimes() throws(ProofkitError) -> [UnavailableOccurrence] {
        try setting("prayers.unavailable")?.split(separator: ",").compactMap { entry in
            let parts = entry.split(separator: "=")
            guard parts.count == 2, let occurrence = Occurrence(String(parts[0])),
                let reason = UndefinedReason(rawValue: String(parts[1]))
            else { return nil }
            return UnavailableOccurrence(occurrence: occurrence, reason: reason)
        } ?? []
    }

    public func settings() throws(ProofkitError) -> [String: String] {
        try read { () throws(ProofkitError) in
            var result: [String: String] = [:]
            for row in try db.query("SELECT key, value FROM settings") { result[row[0].text ?? ""] = row[1].text ?? "" }
            return result
        }
    }

    /// Sets (or with `nil` removes) settings; call inside ``write(_:)``.
    public func put(_ values: [String: String?]) throws(ProofkitError) {
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            if let value {
                try db.run(
                    "INSERT INTO settings(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    [.text(key), .text(value)])
            } else {
                try db.run("DELETE FROM settings WHERE key = ?", [.text(key)])
            }
        }
    }

    // MARK: Chains and rings

    static func chain(_ row: [SQLiteValue]) -> StoredChain {
        StoredChain(
            id: row[0].text ?? "", kind: row[1].text.flatMap(ChainKind.init(rawValue:)) ?? .oneoff, label: row[2].text,
            sound: row[3].text ?? "",
            keptSound: row[4].text, proof: row[5].text.flatMap(ProofKind.init(rawValue:)) ?? .any,
            firstFire: Date(timeIntervalSince1970: row[6].real ?? 0),
            windowEnd: Date(timeIntervalSince1970: row[7].real ?? 0),
            state: row[8].text.flatMap(ChainState.init(rawValue:)) ?? .ended,
            volume: min(100, max(1, row[9].real ?? 100)), ramp: min(60, max(0, row[10].real ?? 3)),
            escalate: (row[11].integer ?? 0) != 0, listen: row[12].text.flatMap(HandsFree.Listen.init) ?? .auto,
            textJSON: row[13].text)
    }
    static let chainColumns =
        "id, kind, label, sound, kept_sound, proof, first_fire, window_end, state, volume, ramp, escalate, listen, text_json"

    /// SQL that holds for a row whose times are all in ``validTimes``.
    static func validTime(_ columns: String...) -> String {
        columns.map {
            "(typeof(\($0)) IN ('integer', 'real') AND \($0) BETWEEN \(validTimes.lowerBound) AND \(validTimes.upperBound))"
        }.joined(separator: " AND ")
    }

    func chains(where clause: String = "1", _ values: [SQLiteValue] = []) throws(ProofkitError) -> [StoredChain] {
        try read { () throws(ProofkitError) in
            try db.query(
                "SELECT \(AlarmStore.chainColumns) FROM chains WHERE (\(clause)) AND \(AlarmStore.validTime("first_fire", "window_end")) ORDER BY first_fire, id",
                values
            )
            .map { row in
                var chain = AlarmStore.chain(row)
                chain.keptSound = keptSoundPath(chain.keptSound)
                return chain
            }
        }
    }

    public func chain(id: String) throws(ProofkitError) -> StoredChain? {
        try chains(where: "id = ?", [.text(id)]).first
    }

    /// Every chain, in first-ring order.
    public func allChains() throws(ProofkitError) -> [StoredChain] { try chains() }

    /// Every ring (all states), in fire order.
    public func allRings() throws(ProofkitError) -> [StoredRing] { try rings() }

    func rings(where clause: String = "1", _ values: [SQLiteValue] = []) throws(ProofkitError) -> [StoredRing] {
        try read { () throws(ProofkitError) in
            try db.query(
                "SELECT id, chain, ring, fire, sound, state, rang_at, detail FROM rings WHERE (\(clause)) AND \(AlarmStore.validTime("fire")) ORDER BY fire, id",
                values
            )
            .map { row in
                StoredRing(
                    ring: BookedRing(
                        id: row[0].text ?? "", chain: row[1].text ?? "", ringIndex: Int(row[2].integer ?? 0),
                        fireDate: Date(timeIntervalSince1970: row[3].real ?? 0)),
                    sound: row[4].text ?? "", state: row[5].text.flatMap(RingState.init(rawValue:)) ?? .failed,
                    rangAt: row[6].real.flatMap {
                        AlarmStore.validTimes.contains($0) ? Date(timeIntervalSince1970: $0) : nil
                    },
                    detail: row[5].text.flatMap(RingState.init(rawValue:)) == nil
                        ? "unknown state '\(row[5].text ?? "")' in the store" : row[7].text)
            }
        }
    }

    /// Rows whose times are out of `validTimes` (years 2000 to 2199; skipped everywhere), as `ring ID` / `chain ID`.
    public func invalidRows() throws(ProofkitError) -> [String] {
        try read { () throws(ProofkitError) in
            try db.query(
                "SELECT 'ring ' || id FROM rings WHERE NOT \(AlarmStore.validTime("fire")) UNION ALL SELECT 'chain ' || id FROM chains WHERE NOT \(AlarmStore.validTime("first_fire", "window_end"))"
            ).compactMap { $0.first?.text }
        }
    }

    /// The newest history lines, newest first, with their sequence numbers.
    public func outcomes(limit: Int = 20, after sequence: Int64 = 0) throws(ProofkitError) -> [StoredOutcome] {
        try read { () throws(ProofkitError) in
            try db.query(
                "SELECT chain, kind, at, detail, seq FROM outcomes WHERE seq > ? AND \(AlarmStore.validTime("at")) ORDER BY seq DESC LIMIT ?",
                [.integer(sequence), .integer(Int64(limit))]
            )
            .compactMap {
                // A line of a kind this version does not know is left out, as lines out of time are.
                guard let kind = $0[1].text.flatMap(AlarmRecordKind.init(rawValue:)) else { return nil }
                return StoredOutcome(
                    chain: $0[0].text ?? "", kind: kind, at: Date(timeIntervalSince1970: $0[2].real ?? 0),
                    detail: $0[3].text, sequence: $0[4].integer ?? 0)
            }
        }
    }

    /// Sets a ring's state (and when it rang, and why it failed); call inside ``write(_:)``.
    public func setRingState(_ id: String, _ state: RingState, at: Date? = nil, detail: String? = nil)
        throws(ProofkitError)
    {
        try db.run(
            "UPDATE rings SET state = ?, rang_at = COALESCE(?, rang_at), detail = ? WHERE id = ?",
            [
                .text(state.rawValue), at.map { .real($0.timeIntervalSince1970) } ?? .null,
                detail.map { .text($0) } ?? .null,
                .text(id),
            ])
    }

    /// Appends a history line; call inside ``write(_:)``.
    public func record(chain: String, kind: AlarmRecordKind, at: Date, detail: String? = nil) throws(ProofkitError) {
        try db.run(
            "INSERT INTO outcomes(chain, kind, at, detail) VALUES(?, ?, ?, ?)",
            [.text(chain), .text(kind.rawValue), .real(at.timeIntervalSince1970), detail.map { .text($0) } ?? .null])
    }

    /// Books a one-off chain and its rings in one transaction. `keptSound` is the name that
    /// ``keepCopy(of:prefix:)`` returned.
    /// - Returns: the chain id (`a1`, `a2`, ...).
    public func addOneOff(
        first: Date, window: Duration, firstGap: Duration, gapGrowth: Duration, sound: String,
        keptSound: String?, proof: ProofKind, label: String?, level: RingLevel = RingLevel(),
        handsFree: HandsFree = HandsFree(), now: Date
    ) throws(ProofkitError) -> (String, [BookedRing]) {
        try write { () throws(ProofkitError) in
            let next = (try setting("next_chain")).flatMap { Int($0) } ?? 1
            try put(["next_chain": String(next + 1)])
            let id = "a\(next)"
            let rings = AlarmRingScheduler.oneOffRings(
                chain: id, first: first, window: window, firstGap: firstGap,
                gapGrowth: gapGrowth)
            try db.run(
                "INSERT INTO chains(id, kind, label, sound, kept_sound, proof, first_fire, window_end, state, created, volume, ramp, escalate, listen, text_name, text_json) VALUES(?, 'oneoff', ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?, ?, ?, ?)",
                [
                    .text(id), label.map { .text($0) } ?? .null, .text(sound), keptSound.map { .text($0) } ?? .null,
                    .text(proof.rawValue), .real(first.timeIntervalSince1970),
                    .real(first.timeIntervalSince1970 + Double(window.components.seconds)),
                    .real(now.timeIntervalSince1970), .real(level.volume), .real(level.ramp),
                    .integer(level.escalate ? 1 : 0), .text(handsFree.listen.rawValue),
                    handsFree.text.map { .text($0.name) } ?? .null, handsFree.textJSON.map { .text($0) } ?? .null,
                ])
            for ring in rings {
                try db.run(
                    "INSERT INTO rings(id, chain, ring, fire, sound, state) VALUES(?, ?, ?, ?, ?, 'scheduled')",
                    [
                        .text(ring.id), .text(id), .integer(Int64(ring.ringIndex)),
                        .real(ring.fireDate.timeIntervalSince1970), .text(sound),
                    ])
            }
            return (id, rings)
        }
    }

    /// How long a live proof may hold a chain's backups off: 3 minutes. The service ends a hold
    /// then, and the backups that fell inside it ring at once.
    public static let holdLimit: TimeInterval = 180

    /// Whether `chain` is due at `now`: active, its first ring has come, and its proof window
    /// (plus the late grace and a hold's limit, during which a held backup may still ring) has
    /// not ended, or one of its rings is sounding. Only a due chain takes a proof or an escape.
    public func isDue(_ chain: StoredChain, now: Date) throws(ProofkitError) -> Bool {
        guard chain.state == .active else { return false }
        if try !rings(where: "chain = ? AND state = 'ringing'", [.text(chain.id)]).isEmpty { return true }
        let end = chain.windowEnd.addingTimeInterval(AlarmRingScheduler.lateGrace + AlarmStore.holdLimit)
        return chain.firstFire <= now && now <= end
    }

    /// Ends a chain (a proof or an escape): its scheduled rings are cancelled and the outcome
    /// recorded, in one transaction. A chain that already ended is left alone.
    /// - Parameters:
    ///   - id: the chain's id.
    ///   - kind: how it ended (the proof's kind, or an escape), recorded as its outcome.
    ///   - at: when it ended.
    ///   - detail: a note recorded with the outcome; `nil` (the default) for none.
    ///   - requireDue: refuse a chain that is not due at `at` (``isDue(_:now:)``).
    /// - Returns: the ids of the cancelled rings, or `nil` when the chain had already ended.
    /// - Throws: ``ProofkitError`` `.notFound`, `.notDue` (nothing changed).
    public func end(
        chain id: String, kind: AlarmRecordKind, at: Date, detail: String? = nil, requireDue: Bool = false
    ) throws(ProofkitError) -> [String]? {
        try write { () throws(ProofkitError) in
            guard let chain = try chain(id: id) else {
                throw ProofkitError(.notFound, "no alarm chain '\(id)'; 'proofkit alarm status' lists them")
            }
            guard chain.state == .active else { return nil }
            if requireDue, try !isDue(chain, now: at) {
                throw try notDue(chain, now: at)
            }
            let cancelled = try rings(where: "chain = ? AND state = 'scheduled'", [.text(id)]).map(\.ring.id)
            try db.run("DELETE FROM rings WHERE chain = ? AND state = 'scheduled'", [.text(id)])
            try db.run("UPDATE chains SET state = 'ended' WHERE id = ?", [.text(id)])
            try record(chain: id, kind: kind, at: at, detail: detail)
            return cancelled
        }
    }

    /// The failure for a proof of `chain` (or, with `nil`, of whatever is due) when it is not
    /// due: it names the next ring.
    public func notDue(_ chain: StoredChain?, now: Date) throws(ProofkitError) -> ProofkitError {
        let next = try rings(where: "state = 'scheduled' AND fire > ?", [.real(now.timeIntervalSince1970)])
            .filter { chain == nil || $0.ring.chain == chain?.id }.first
        let when =
            next.map {
                "the next ring is \($0.ring.id) at \(iso8601($0.ring.fireDate, in: TimeZone(identifier: "UTC")!))"
            }
            ?? "no ring is booked"
        let subject =
            chain.map {
                $0.firstFire > now
                    ? "chain \($0.id) is not due yet (its first ring is \(iso8601($0.firstFire, in: TimeZone(identifier: "UTC")!)))"
                    : "chain \($0.id) is past its proof window"
            } ?? "no alarm is due"
        return ProofkitError(.notDue, "\(subject): nothing was changed; \(when)")
    }

    /// The chain a proof is for without an id: the one ringing now, else the latest due chain
    /// (``isDue(_:now:)``), else `nil`.
    public func dueChain(now: Date) throws(ProofkitError) -> StoredChain? {
        if let ringing = try rings(where: "state = 'ringing'").last, let chain = try chain(id: ringing.ring.chain),
            chain.state == .active
        {
            return chain
        }
        var latest: StoredChain?
        for chain in try chains(where: "state = 'active'") where try isDue(chain, now: now) { latest = chain }
        return latest
    }

    /// The chain a command means without an id: the one ringing now, else the latest active
    /// chain whose first ring has come (inside its window), else the next one.
    public func currentChain(now: Date) throws(ProofkitError) -> StoredChain? {
        if let due = try dueChain(now: now) { return due }
        return try chains(where: "state = 'active'").first { $0.firstFire > now }
    }

    // MARK: Prayer chains

    /// The prayer settings, when `alarm prayers` has stored them.
    public func prayerPlanner(deviceZone: TimeZone) throws(ProofkitError) -> AlarmChainPlanner? {
        let s = try settings()
        guard let lat = s["prayers.lat"].flatMap(Double.init), let lon = s["prayers.lon"].flatMap(Double.init),
            let tzName = s["prayers.tz"], let zone = TimeZone(identifier: tzName)
        else { return nil }
        // The calculation options as `prayers` was given them (`--madhab hanafi`...).
        var options = ["method": s["prayers.method"] ?? "mwl"]
        for name in CalculationParameters.optionNames where name != "method" {
            options[name] = s["prayers.option.\(name)"]
        }
        let calculator = try PrayerTimeCalculator(
            coordinates: try Coordinates(latitude: lat, longitude: lon),
            timeZone: zone, parameters: try CalculationParameters(options: options))
        var configuration = AlarmChainConfiguration(deviceTimeZone: deviceZone)
        // A prayer rings at its instant for the place, whatever the machine's zone: a zone change
        // of the machine never moves it.
        configuration.clockMode = .sameInstant
        configuration.prayers = Set(
            (s["prayers.list"] ?? "fajr").split(separator: ",").compactMap { Prayer(rawValue: String($0)) })
        configuration.proofWindow = .seconds(Int(s["prayers.window"] ?? "1800") ?? 1800)
        if let sound = s["prayers.sound"] {
            for prayer in configuration.prayers { configuration.sounds[prayer] = sound }
        }
        return try AlarmChainPlanner(calculator: calculator, configuration: configuration)
    }

    /// Plans the prayer chains at `now` and reconciles the store's prayer rings with the plan
    /// (the store is the system's alarm list): new chains booked before old ones are cancelled,
    /// ringing rings untouched, unknown ids cancelled, a failed step does not stop the rest.
    /// One transaction.
    /// - Returns: the steps' report, `nil` when no prayer settings are stored.
    @discardableResult
    public func replanPrayers(now: Date, deviceZone: TimeZone) throws(ProofkitError) -> ApplyReport? {
        try write { () throws(ProofkitError) in
            guard let planner = try prayerPlanner(deviceZone: deviceZone) else { return nil }
            let s = try settings()
            var ledger = try prayerLedger(now: now, syncedFingerprint: s["prayers.fingerprint"])
            var context = ledger.planningContext
            context.ended = Set(
                try chains(where: "kind = 'prayer' AND state = 'ended'").compactMap { Occurrence($0.id) })
            let plan = planner.plan(now: now, context: context)
            let reconciliation = AlarmReconciler.reconcile(
                plan: plan, system: ledger.systemAlarms,
                syncedFingerprint: ledger.syncedFingerprint, capacity: nil)
            let report = ledger.apply(reconciliation) { operation in
                do {
                    try performPrayerOperation(operation, configuration: planner.configuration, settings: s, now: now)
                    return nil
                } catch {
                    return "\(error)"
                }
            }
            try put([
                "prayers.fingerprint": ledger.syncedFingerprint,
                "prayers.stamp": PlanStampText.encode(
                    PlanStamp(now: now, zone: deviceZone, fingerprint: plan.fingerprint)),
                "prayers.covered_until": plan.coveredUntil(booked: Set(ledger.alarms.keys))?.description,
                // The times the plan has none of (polar day or night): `alarm prayers` and
                // `status` name them, so that no alarm is missing without a word.
                "prayers.unavailable": plan.unavailable.isEmpty
                    ? nil : plan.unavailable.map { "\($0.occurrence)=\($0.reason.rawValue)" }.joined(separator: ","),
            ])
            // The alarm list keeps 30 days of rung, missed and merged rings (the history of
            // outcomes is kept whole).
            try db.run(
                "DELETE FROM rings WHERE state NOT IN ('scheduled', 'ringing') AND fire < ?",
                [.real(now.timeIntervalSince1970 - 30 * 86_400)])
            try applyPrayerSettings(s, window: Double(planner.configuration.proofWindow.components.seconds))
            // Chains with no ring left (a prayer turned off, or the plan's past that never rang)
            // are dropped: no empty "active" chain stays behind.
            try db.run(
                "DELETE FROM chains WHERE kind = 'prayer' AND state = 'active' AND id NOT IN (SELECT chain FROM rings)")
            return report
        }
    }

    /// The system's list of prayer alarms, as the reconciler sees it: what rings now, and what is
    /// still to come; call inside ``write(_:)``.
    private func prayerLedger(now: Date, syncedFingerprint: String?) throws(ProofkitError) -> AlarmLedger {
        // Rings already due but not yet rung are the ring scheduler's (it rings them inside their
        // window or logs them as missed), so the plan does not cancel them as past.
        let prayerRings = try rings(
            where:
                "(state = 'ringing' OR (state = 'scheduled' AND fire > ?)) AND chain IN (SELECT id FROM chains WHERE kind = 'prayer')",
            [.real(now.timeIntervalSince1970)])
        return AlarmLedger(
            alarms: prayerRings.map {
                SystemAlarm(
                    id: AlarmID(rawValue: $0.ring.id),
                    content: AlarmContent(fireDate: $0.ring.fireDate, sound: $0.sound),
                    state: $0.state == .ringing ? .ringing : .scheduled)
            },
            syncedFingerprint: syncedFingerprint)
    }

    /// One step of a prayer re-plan on the store: a ring booked (its chain created or updated
    /// with the prayer settings `s`), or a scheduled ring cancelled.
    private func performPrayerOperation(
        _ operation: AlarmOperation, configuration: AlarmChainConfiguration, settings s: [String: String], now: Date
    ) throws(ProofkitError) {
        switch operation {
        case .schedule(let alarm):
            let window = Double(configuration.proofWindow.components.seconds)
            let first = alarm.fireDate.addingTimeInterval(
                -Double(configuration.ringOffsets[alarm.ringIndex].components.seconds))
            try db.run(
                "INSERT INTO chains(id, kind, label, sound, kept_sound, proof, first_fire, window_end, state, created) VALUES(?, 'prayer', ?, ?, ?, ?, ?, ?, 'active', ?) ON CONFLICT(id) DO UPDATE SET sound = excluded.sound, kept_sound = excluded.kept_sound, proof = excluded.proof, first_fire = excluded.first_fire, window_end = excluded.window_end",
                [
                    .text(alarm.occurrence.description), .text(alarm.occurrence.prayer.rawValue),
                    .text(alarm.content.sound),
                    s["prayers.kept_sound"].map { .text($0) } ?? .null, .text(s["prayers.proof"] ?? "any"),
                    .real(first.timeIntervalSince1970), .real(first.timeIntervalSince1970 + window),
                    .real(now.timeIntervalSince1970),
                ])
            try db.run(
                "INSERT INTO rings(id, chain, ring, fire, sound, state) VALUES(?, ?, ?, ?, ?, 'scheduled') ON CONFLICT(id) DO UPDATE SET fire = excluded.fire, sound = excluded.sound, state = 'scheduled'",
                [
                    .text(alarm.id.rawValue), .text(alarm.occurrence.description),
                    .integer(Int64(alarm.ringIndex)),
                    .real(alarm.fireDate.timeIntervalSince1970), .text(alarm.content.sound),
                ])
        case .cancel(let id, _):
            try db.run("DELETE FROM rings WHERE id = ? AND state = 'scheduled'", [.text(id.rawValue)])
        }
    }

    /// Applies the prayer settings `s` to every prayer chain that is not ringing, and the sound to
    /// their scheduled rings; call inside ``write(_:)``.
    private func applyPrayerSettings(_ s: [String: String], window: Double) throws(ProofkitError) {
        // A chain booked before keeps its id, so the upsert of a re-plan does not reach those the
        // plan left alone.
        try db.run(
            "UPDATE chains SET proof = ?, sound = COALESCE(?, sound), kept_sound = COALESCE(?, kept_sound), window_end = first_fire + ?, volume = ?, ramp = ?, escalate = ?, listen = ?, text_name = ?, text_json = ? WHERE kind = 'prayer' AND state = 'active' AND id NOT IN (SELECT chain FROM rings WHERE state = 'ringing')",
            [
                .text(s["prayers.proof"] ?? "any"), s["prayers.sound"].map { .text($0) } ?? .null,
                s["prayers.kept_sound"].map { .text($0) } ?? .null, .real(window),
                .real(Double(s["prayers.volume"] ?? "") ?? 100),
                .real(Double(s["prayers.ramp"] ?? "") ?? 3), .integer(s["prayers.escalate"] == "1" ? 1 : 0),
                .text(s["prayers.listen"] ?? "auto"), s["prayers.text"].map { .text($0) } ?? .null,
                s["prayers.text_json"].map { .text($0) } ?? .null,
            ])
        try db.run(
            "UPDATE rings SET sound = ? WHERE state = 'scheduled' AND chain IN (SELECT id FROM chains WHERE kind = 'prayer')",
            [s["prayers.sound"].map { .text($0) } ?? .null])
    }

    /// The stamp of the last prayer plan.
    public func prayerStamp() throws(ProofkitError) -> PlanStamp? {
        try setting("prayers.stamp").flatMap(PlanStampText.decode)
    }
}

/// The text form of a ``PlanStamp`` in the settings table: `day|zone|offset|fingerprint`.
enum PlanStampText {
    static func encode(_ stamp: PlanStamp) -> String {
        "\(stamp.day)|\(stamp.zoneIdentifier)|\(stamp.utcOffset)|\(stamp.fingerprint)"
    }
    static func decode(_ text: String) -> PlanStamp? {
        let parts = text.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4, let day = LocalDate(iso: parts[0]), let zone = TimeZone(identifier: parts[1]),
            let offset = Int(parts[2])
        else { return nil }
        var stamp = PlanStamp(
            now: WallClockTime(date: day, hour: 12, minute: 0).instant(in: zone), zone: zone, fingerprint: parts[3])
        stamp.utcOffset = offset
        return stamp
    }
}

/// The device's zone now, read afresh each time (so a change of /etc/localtime or TZ is seen):
/// `$TZ` when it names a zone, else the target of /etc/localtime, else UTC.
public func currentDeviceZone(environment: [String: String]) -> TimeZone {
    if let name = environment["TZ"], !name.isEmpty,
        let zone = TimeZone(identifier: name.hasPrefix(":") ? String(name.dropFirst()) : name)
    {
        return zone
    }
    if let link = POSIX.linkTarget("/etc/localtime") {
        let target = String(decoding: link, as: UTF8.self)
        if let range = target.firstRange(of: "zoneinfo/"),
            let zone = TimeZone(identifier: String(target[range.upperBound...]))
        {
            return zone
        }
    }
    if let text = (try? BoundedFile.read("/etc/timezone", limit: 4096, what: "zone file")).map({
        String(decoding: $0, as: UTF8.self)
    }),
        let name = text.split(whereSeparator: \.isWhitespace).first, let zone = TimeZone(identifier: String(name))
    {
        return zone
    }
    return TimeZone(identifier: "UTC")!
}
