import Proofkit
import ProofkitCore
internal import ProofkitSystem

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The `--state` JSON file of `proofkit plan` (format in `proofkit plan --help`).
///
/// Read whole with a size cap that holds while reading (``sizeLimit``), validated strictly (a
/// file that is not a proofkit state file, or a field of the wrong type, is refused and left
/// untouched: exit 65), and written back atomically with every key it does not know kept, at the
/// top level and inside alarms and outcomes. A read-modify-write holds ``StateFileLock``.
struct StateFile {
    /// The value of `"format"` in every state file proofkit writes.
    static let formatName = "proofkit-alarm-state"
    /// The format version this proofkit reads and writes.
    static let version = 1
    /// The largest state file read, in bytes: 16 MiB (a year of alarms is under 1 MiB).
    static let sizeLimit = 16 << 20

    /// The alarms, fingerprint, outcomes, postponements and merges.
    var ledger = AlarmLedger()
    /// Top-level members this proofkit does not know, in file order.
    var unknownMembers: [(String, JSONNode)] = []
    /// Members of alarm entries this proofkit does not know, by alarm id.
    var unknownAlarmMembers: [String: [(String, JSONNode)]] = [:]
    /// Members of outcome entries this proofkit does not know, by "occurrence kind".
    var unknownOutcomeMembers: [String: [(String, JSONNode)]] = [:]

    static let knownMembers: Set<String> = [
        "format", "version", "fingerprint", "chain_fingerprints", "alarms", "outcomes", "postponed", "merged",
    ]
    static let knownAlarmMembers: Set<String> = ["id", "state", "fire", "sound"]
    static let knownOutcomeMembers: Set<String> = ["occurrence", "kind", "at"]

    /// Reads and validates the state file at `path`. Nothing at `path` is a first run: an empty
    /// state (the file is created, atomically, when it is written). An empty file (or only white
    /// space) and `{}` are an empty state too.
    /// - Throws: `.notFound` (a folder, or a symbolic link to nothing: 66), `.io` (unreadable:
    ///   74), `.decodeFailed` (not a proofkit state file, a field of the wrong type, a newer
    ///   version, over 16 MiB: 65).
    static func read(_ path: String) throws(ProofkitError) -> StateFile {
        let bytes: [UInt8]
        do {
            bytes = try BoundedFile.read(path, limit: sizeLimit, what: "state file")
        } catch let error where error.code == .notFound && error.message.hasPrefix("no such") {
            // Only when nothing at all is there (lstat): a symbolic link whose target is missing
            // is refused, not written through or replaced.
            if case .failure(let errno) = POSIX.linkStatus(path), errno.isNotFound { return StateFile() }
            throw ProofkitError(.notFound, "is a symbolic link to nothing, not a state file", path: path)
        }
        return try parse(bytes, path: path)
    }

    /// Parses and validates the bytes of a state file (see ``read(_:)``).
    /// - Parameter path: the file, for messages.
    /// - Throws: `.decodeFailed` (exit 65) naming `path`.
    static func parse(_ bytes: [UInt8], path: String) throws(ProofkitError) -> StateFile {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return StateFile() }
        let root: JSONNode
        do { root = try JSONReader.node(bytes: bytes) } catch {
            throw bad("not JSON (\(error.reason) at byte \(error.byteOffset + 1))", path: path)
        }
        guard let members = root.members else { throw bad("not a JSON object", path: path) }
        if members.isEmpty { return StateFile() }
        try checkHeader(root, members: members, path: path)
        var file = StateFile()
        file.unknownMembers = members.filter { !knownMembers.contains($0.0) }
        let alarms = try parseAlarms(root["alarms"], unknownMembers: &file.unknownAlarmMembers, path: path)
        let outcomes = try parseOutcomes(root["outcomes"], unknownMembers: &file.unknownOutcomeMembers, path: path)
        let postponed = try parsePostponed(root["postponed"], path: path)
        let merged = try parseMerged(root["merged"], path: path)
        let fingerprint = try parseFingerprint(root["fingerprint"], path: path)
        let chains = try parseChainFingerprints(root["chain_fingerprints"], path: path)
        file.ledger = AlarmLedger(
            alarms: alarms, syncedFingerprint: fingerprint, outcomes: outcomes,
            postponed: postponed, merged: merged, syncedChains: chains)
        return file
    }

    /// The error for bytes that are not a valid state file (exit 65), naming `path`.
    private static func bad(_ message: String, path: String) -> ProofkitError {
        ProofkitError(.decodeFailed, "not a proofkit state file: \(message)", path: path)
    }

    /// Checks that no member appears twice, that `"format"` (when there) is proofkit's, and that
    /// `"version"` is the one this proofkit reads.
    private static func checkHeader(
        _ root: JSONNode, members: [(String, JSONNode)], path: String
    ) throws(ProofkitError) {
        var seen: Set<String> = []
        for (key, _) in members where !seen.insert(key).inserted {
            throw bad("\"\(key)\" appears twice", path: path)
        }
        if let format = root["format"], format.string != formatName {
            throw bad("\"format\" is not \"\(formatName)\"", path: path)
        }
        guard let versionNode = root["version"] else {
            throw bad("no \"version\" (an empty file or {} starts a new one)", path: path)
        }
        guard let version = versionNode.integer else { throw bad("\"version\" must be an integer", path: path) }
        guard version == StateFile.version else {
            throw ProofkitError(
                .decodeFailed,
                "state file version \(version) is not supported (this proofkit reads version \(StateFile.version))",
                path: path)
        }
    }

    /// The `"alarms"` array, each entry's unknown members kept by alarm id.
    private static func parseAlarms(
        _ value: JSONNode?, unknownMembers: inout [String: [(String, JSONNode)]], path: String
    ) throws(ProofkitError) -> [SystemAlarm] {
        guard let value else { return [] }
        guard let entries = value.array else { throw bad("\"alarms\" must be an array", path: path) }
        var alarms: [SystemAlarm] = []
        for entry in entries {
            guard let fields = entry.members else { throw bad("every alarm must be an object", path: path) }
            guard let id = entry["id"]?.string, !id.isEmpty else {
                throw bad("every alarm needs an \"id\" string", path: path)
            }
            for key in ["state", "fire", "sound"] {
                if let field = entry[key], field.string == nil {
                    throw bad("alarm \(id): \"\(key)\" must be a string", path: path)
                }
            }
            let stateText = entry["state"]?.string ?? "scheduled"
            guard let state = SystemAlarm.State(rawValue: stateText) else {
                throw bad("alarm \(id): unknown state '\(stateText)'", path: path)
            }
            var content: AlarmContent? = nil
            if let fire = entry["fire"]?.string {
                guard let date = parseISO8601(fire) else {
                    throw bad("alarm \(id): \"fire\" is not ISO-8601 with an offset", path: path)
                }
                content = AlarmContent(fireDate: date, sound: entry["sound"]?.string ?? "")
            }
            alarms.append(SystemAlarm(id: AlarmID(rawValue: id), content: content, state: state))
            let unknown = fields.filter { !knownAlarmMembers.contains($0.0) }
            if !unknown.isEmpty { unknownMembers[id] = unknown }
        }
        return alarms
    }

    /// The `"outcomes"` array, each entry's unknown members kept by "occurrence kind".
    private static func parseOutcomes(
        _ value: JSONNode?, unknownMembers: inout [String: [(String, JSONNode)]], path: String
    ) throws(ProofkitError) -> [ChainOutcome] {
        guard let value else { return [] }
        guard let entries = value.array else { throw bad("\"outcomes\" must be an array", path: path) }
        var outcomes: [ChainOutcome] = []
        for entry in entries {
            guard let fields = entry.members, let text = entry["occurrence"]?.string,
                let occurrence = Occurrence(text), let kindText = entry["kind"]?.string,
                let kind = ChainOutcome.Kind(rawValue: kindText), let atText = entry["at"]?.string,
                let at = parseISO8601(atText)
            else {
                throw bad(
                    "every outcome needs \"occurrence\" (fajr.YYYY-MM-DD), \"kind\" (proof|escape) and \"at\"",
                    path: path)
            }
            outcomes.append(ChainOutcome(occurrence: occurrence, kind: kind, at: at))
            let unknown = fields.filter { !knownOutcomeMembers.contains($0.0) }
            if !unknown.isEmpty { unknownMembers["\(text) \(kindText)"] = unknown }
        }
        return outcomes
    }

    /// The `"postponed"` object: alarm id to the time it was postponed to.
    private static func parsePostponed(_ value: JSONNode?, path: String) throws(ProofkitError) -> [AlarmID: Date] {
        guard let value else { return [:] }
        guard let entries = value.members else {
            throw bad("\"postponed\" must be an object of id: time", path: path)
        }
        var postponed: [AlarmID: Date] = [:]
        for (id, value) in entries {
            guard let text = value.string, let date = parseISO8601(text) else {
                throw bad("postponed \(id): not ISO-8601", path: path)
            }
            postponed[AlarmID(rawValue: id)] = date
        }
        return postponed
    }

    /// The `"merged"` array of alarm ids.
    private static func parseMerged(_ value: JSONNode?, path: String) throws(ProofkitError) -> Set<AlarmID> {
        guard let value else { return [] }
        guard let items = value.array, items.allSatisfy({ $0.string != nil }) else {
            throw bad("\"merged\" must be an array of id strings", path: path)
        }
        return Set(items.compactMap(\.string).map(AlarmID.init(rawValue:)))
    }

    /// The `"fingerprint"` string, or `nil` when it is null or absent.
    private static func parseFingerprint(_ value: JSONNode?, path: String) throws(ProofkitError) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw bad("\"fingerprint\" must be a string or null", path: path)
        }
    }

    /// The `"chain_fingerprints"` object: occurrence to fingerprint.
    private static func parseChainFingerprints(
        _ value: JSONNode?, path: String
    ) throws(ProofkitError) -> [Occurrence: String] {
        guard let value else { return [:] }
        guard let members = value.members else {
            throw bad("\"chain_fingerprints\" must be an object", path: path)
        }
        var chains: [Occurrence: String] = [:]
        for (text, value) in members {
            guard let occurrence = Occurrence(text), let hash = value.string else {
                throw bad(
                    "chain_fingerprints: \(text) needs a fingerprint string and an occurrence such as fajr.YYYY-MM-DD",
                    path: path)
            }
            chains[occurrence] = hash
        }
        return chains
    }

    /// Writes the ledger to `path` atomically (`AtomicFile`: mode and owner kept, a
    /// read-only file or a device refused), with the unknown members read kept.
    /// - Throws: `.io` (exit 74).
    func write(to path: String, zone: TimeZone) throws(ProofkitError) {
        let alarms: [JSONValue] = ledger.systemAlarms.map { alarm in
            var entry: [String: JSONValue] = [:]
            for (key, value) in unknownAlarmMembers[alarm.id.rawValue] ?? [] { entry[key] = JSONValue(value) }
            entry["id"] = .string(alarm.id.rawValue)
            entry["state"] = .string(alarm.state.rawValue)
            if let content = alarm.content {
                entry["fire"] = .string(iso8601(content.fireDate, in: zone))
                entry["sound"] = .string(content.sound)
            }
            return .object(entry)
        }
        let outcomes: [JSONValue] = ledger.outcomes.map {
            var entry: [String: JSONValue] = [:]
            for (key, value) in unknownOutcomeMembers["\($0.occurrence.description) \($0.kind.rawValue)"] ?? [] {
                entry[key] = JSONValue(value)
            }
            entry["occurrence"] = .string($0.occurrence.description)
            entry["kind"] = .string($0.kind.rawValue)
            entry["at"] = .string(iso8601($0.at, in: zone))
            return .object(entry)
        }
        var root: [String: JSONValue] = [:]
        for (key, value) in unknownMembers { root[key] = JSONValue(value) }
        root["format"] = .string(StateFile.formatName)
        root["version"] = .int(StateFile.version)
        root["fingerprint"] = JSONValue(ledger.syncedFingerprint)
        root["alarms"] = .array(alarms)
        root["outcomes"] = .array(outcomes)
        root["postponed"] = .object(
            Dictionary(
                uniqueKeysWithValues: ledger.postponed.map {
                    ($0.key.rawValue, JSONValue.string(iso8601($0.value, in: zone)))
                }))
        root["merged"] = .array(ledger.merged.sorted().map { .string($0.rawValue) })
        root["chain_fingerprints"] = .object(
            Dictionary(
                uniqueKeysWithValues: ledger.syncedChains.map {
                    ($0.key.description, JSONValue.string($0.value))
                }))
        try writeFileAtomically(JSONValue.object(root).serialized + "\n", to: path)
    }
}

extension JSONValue {
    /// The same value, for writing back what was read.
    init(_ node: JSONNode) {
        switch node {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .number(let value): self = Int(exactly: value).map(JSONValue.int) ?? .number(value)
        case .string(let value): self = .string(value)
        case .array(let values): self = .array(values.map(JSONValue.init))
        case .object(let members):
            var object: [String: JSONValue] = [:]
            for (key, value) in members where object[key] == nil { object[key] = JSONValue(value) }
            self = .object(object)
        }
    }
}

/// An exclusive lock for a read-modify-write of a state file: `flock` on `.NAME.lock` beside it
/// (the state file itself is replaced by a rename, so it cannot carry the lock).
///
/// A second writer waits up to the given time, then gets exit 75. The lock file is removed on
/// release while still locked; a waiter that then holds a lock on a removed file notices (its
/// descriptor's inode is no longer the path's) and tries again, so two writers never both hold it.
final class StateFileLock {
    private let fd: Int32
    private let path: String

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    /// Takes the lock for the state file at `statePath`, waiting up to `waitSeconds`.
    /// - Throws: `.busy` (exit 75) when another process holds it all that time; `.io` (74) when
    ///   the lock file cannot be created. Calls `open`, `flock`, `fstat`, `stat`, `close`.
    static func acquire(for statePath: String, waitSeconds: Double) throws(ProofkitError) -> StateFileLock {
        let slash = statePath.lastIndex(of: "/")
        let folder = slash.map { String(statePath[...$0]) } ?? ""
        let base = slash.map { String(statePath[statePath.index(after: $0)...]) } ?? statePath
        let lockPath = folder + "." + base + ".lock"
        let deadline = POSIX.monotonicSeconds() + waitSeconds
        while true {
            let fd: Int32
            switch POSIX.open(lockPath, [.readWrite, .create, .noFollow], mode: 0o666) {
            case .success(let value): fd = value
            case .failure(let errno):
                throw ProofkitError(
                    .io, "cannot create the lock file '\(displayName(lockPath))': \(errno)",
                    operation: "open", underlying: errno.code, path: statePath)
            }
            switch POSIX.lockExclusive(fd, wait: false) {
            case .success:
                if case .success(let held) = POSIX.status(descriptor: fd),
                    case .success(let current) = POSIX.status(lockPath),
                    held.device == current.device, held.inode == current.inode
                {
                    return StateFileLock(fd: fd, path: lockPath)
                }
                POSIX.closeDescriptor(fd)  // the file was removed by the holder that just released it: again
                continue
            case .failure(let errno):
                POSIX.closeDescriptor(fd)
                guard errno == .wouldBlock else {
                    throw ProofkitError(
                        .io, "cannot lock '\(displayName(lockPath))': \(errno)",
                        operation: "flock", underlying: errno.code, path: statePath)
                }
            }
            if POSIX.monotonicSeconds() >= deadline {
                throw ProofkitError(
                    .busy,
                    "another proofkit holds the lock on this state file (\(displayName(lockPath))) after waiting \(decimalText(waitSeconds, places: 1)) s; try again",
                    operation: "flock", path: statePath)
            }
            POSIX.sleep(microseconds: 20_000)
        }
    }

    deinit {
        POSIX.remove(path)
        POSIX.closeDescriptor(fd)
    }

}
