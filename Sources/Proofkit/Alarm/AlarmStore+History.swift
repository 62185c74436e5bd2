public import AlarmScheduling
import PrayerPlanning
import ProofkitCore
import Storage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The alarm history as the store holds it: read only, never written.
extension AlarmStore {
    /// Every chain of the store with its rings that played and its record lines, as the history
    /// rules read them (``AlarmHistory``). Record lines of a chain the store no longer holds (a
    /// past prayer chain it dropped) come back as a chain of their own, at the time of its first
    /// line, when the id names a prayer occurrence (`fajr.2026-11-30`).
    /// - Throws: ``ProofkitError`` `.storeCorrupt`.
    public func historyChains() throws(ProofkitError) -> [AlarmHistoryChain] {
        try read { () throws(ProofkitError) in
            // A store whose creation was cut before its tables were made has no history.
            guard try db.query("PRAGMA user_version").first?.first?.integer ?? 0 > 0 else { return [] }
            var rang: [String: [Date]] = [:]
            for row in try db.query(
                "SELECT chain, rang_at FROM rings WHERE state IN ('rang', 'ringing') AND rang_at IS NOT NULL")
            {
                rang[row[0].text ?? "", default: []].append(Date(timeIntervalSince1970: row[1].real ?? 0))
            }
            var events: [String: [AlarmHistoryEvent]] = [:]
            for row in try db.query("SELECT chain, kind, at, detail FROM outcomes ORDER BY seq") {
                // A line of a kind this version does not know counts for nothing, as before.
                guard let kind = row[1].text.flatMap(AlarmRecordKind.init(rawValue:)) else { continue }
                events[row[0].text ?? "", default: []].append(
                    AlarmHistoryEvent(
                        kind: kind, at: Date(timeIntervalSince1970: row[2].real ?? 0), detail: row[3].text))
            }
            var result = try chains().map { chain in
                AlarmHistoryChain(
                    id: chain.id, series: AlarmStore.series(chain), firstFire: chain.firstFire,
                    windowEnd: chain.windowEnd, rang: rang[chain.id] ?? [],
                    events: events.removeValue(forKey: chain.id) ?? [],
                    day: chain.kind == .prayer ? Occurrence(chain.id)?.date : nil)
            }
            for (id, lines) in events {
                guard let occurrence = Occurrence(id), let first = lines.map(\.at).min() else { continue }
                result.append(
                    AlarmHistoryChain(
                        id: id, series: occurrence.prayer.rawValue, firstFire: first, windowEnd: first, events: lines,
                        day: occurrence.date))
            }
            return result
        }
    }

    /// What a chain is counted under: its prayer, else its label, else `one-off`.
    static func series(_ chain: StoredChain) -> String {
        if chain.kind == .prayer, let occurrence = Occurrence(chain.id) { return occurrence.prayer.rawValue }
        if let label = chain.label?.split(separator: " ").joined(separator: " "), !label.isEmpty { return label }
        return "one-off"
    }
}
