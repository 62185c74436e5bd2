import Inference
import ProofkitCore
internal import ProofkitSystem
import Storage

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The kept copies of the alarm sounds, in the store's `sounds/` folder: a chain rings its copy
/// when its sound file is moved or breaks.
extension AlarmStore {
    /// The largest sound kept in the store: 64 MiB (an alarm sound is under 30 s).
    static let soundLimit = 64 << 20

    /// Keeps a copy of `path` in the store's sounds folder (atomically: a temporary file, then
    /// rename; a symlink planted as the folder or the copy is never followed) and returns the
    /// copy's name in that folder, as the store records it: `PREFIX-HASH.EXT`, where HASH is the
    /// first 16 hex digits of the sound's SHA-256. So two commands at once never replace each
    /// other's copy with another sound (a name from the time alone was shared by two `alarm add`s
    /// in one millisecond), and chains booked with the same sound share one copy. A chain read
    /// from the store gives the copy's path (`keptSoundPath(_:)`).
    /// - Parameters:
    ///   - path: the sound file (at most 64 MiB).
    ///   - prefix: the copy's name before the hash, e.g. `oneoff` or `prayers`.
    /// - Throws: `ProofkitError` (the sound cannot be read), ``ProofkitError`` `.storeReadOnly`.
    public func keepCopy(of path: String, prefix: String) throws(ProofkitError) -> String {
        let data = try BoundedFile.read(path, limit: AlarmStore.soundLimit, what: "sound")
        let name = prefix + "-" + SHA256.hexDigest(of: data).prefix(16)
        try AlarmStore.makeFolder(soundsFolder)
        guard case .success(let info) = POSIX.linkStatus(soundsFolder), info.isDirectory,
            info.owner == POSIX.effectiveUser
        else {
            throw ProofkitError(.storeReadOnly, "\(soundsFolder): not a folder of this user's; refusing to write there")
        }
        let ext =
            path.split(separator: "/").last.flatMap { $0.contains(".") ? $0.split(separator: ".").last : nil }
            .map { "." + $0 } ?? ""
        let target = soundsFolder + "/" + name + ext
        if case .success(let existing) = POSIX.linkStatus(target), !existing.isRegular {
            POSIX.remove(target)  // a planted symlink is replaced, not followed
        }
        do throws(ProofkitError) {
            try AtomicFile.write(data, to: target)
        } catch {
            throw ProofkitError(.storeReadOnly, "\(target): cannot keep a copy of the sound (\(error.message))")
        }
        return name + ext
    }

    /// The path of a kept copy the store records as `stored`: its name in this store's sounds
    /// folder. Earlier stores recorded the path as the booking command spelled the store
    /// (`store/sounds/NAME`, relative or absolute), which named nothing once the store was opened
    /// under another spelling; the name is the part after the last `/`.
    func keptSoundPath(_ stored: String?) -> String? {
        guard let name = stored.flatMap({ $0.split(separator: "/").last }), name != "..", name != "." else {
            return nil
        }
        return soundsFolder + "/" + name
    }

    /// Removes kept sound copies that no chain and no setting names (left by a command killed
    /// between copying and booking, or by a sound replaced), older than a minute so that a
    /// booking under way keeps its copy. A name is matched whatever spelling of the store
    /// recorded it.
    /// - Returns: the removed paths.
    @discardableResult
    public func removeOrphanedSounds(now: Date) throws(ProofkitError) -> [String] {
        guard case .success(let info) = POSIX.linkStatus(soundsFolder), info.isDirectory else { return [] }
        var named = Set(
            try read { () throws(ProofkitError) in
                try db.query("SELECT kept_sound FROM chains").compactMap { keptSoundPath($0.first?.text) }
            })
        if let kept = keptSoundPath(try setting("prayers.kept_sound")) { named.insert(kept) }
        var removed: [String] = []
        for entry in POSIX.folderEntries(soundsFolder) {
            let path = soundsFolder + "/" + FilePath.string(fromBytes: entry)
            guard !named.contains(path), case .success(let file) = POSIX.linkStatus(path), !file.isDirectory,
                Double(file.modified) < now.timeIntervalSince1970 - 60
            else { continue }
            POSIX.remove(path)
            removed.append(path)
        }
        return removed
    }
}
