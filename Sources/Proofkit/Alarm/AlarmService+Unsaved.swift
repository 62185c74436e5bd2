import ProofkitCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The service's writes when the store cannot be written (a full disk, an I/O error, a disk
/// remounted read-only): the alarm rings on, and its bookkeeping waits.
///
/// Before, the first refused write ended the service with exit 74 while the ring had just
/// started: a Pi whose SD card had filled rang for a fifth of a second, and systemd's restart
/// failed again at its first write, so nothing rang at all. Now each write of the service goes
/// through ``save(_:rings:chains:transaction:_:)``: a refused one is kept and tried again, in
/// order, before every later write and at least every ``unsavedRetry`` seconds. Until it lands,
/// the rings and chains it settles count as settled in memory (a ring that sounded is not rung
/// again, a chain proven hands-free rings no more backups).
extension AlarmService {
    /// A write the store refused, waiting to be tried again.
    struct UnsavedWrite {
        /// What it records, for the log.
        var what: String
        /// The rings whose new state it records, and the chains it ends.
        var rings: Set<String>
        var chains: Set<String>
        /// Whether `body` runs inside one ``AlarmStore/write(_:)`` (else it opens its own).
        var transaction: Bool
        /// Whether it only sets what `status` shows, so that a later write of the same `what`
        /// replaces it: the list stays bounded by the rings booked and the things a user did,
        /// however long the disk stays full.
        var isStatus: Bool
        var body: () throws(ProofkitError) -> Void
    }

    /// How often unsaved writes are tried again while nothing else wakes the service: 5 s.
    static let unsavedRetry: TimeInterval = 5

    /// Whether `error` says the store cannot be written now (exit 73 or 74: a full disk, an I/O
    /// error, a read-only disk), as opposed to a damaged store or a bug.
    static func cannotWriteNow(_ error: ProofkitError) -> Bool {
        error.code == .io || error.code == .storeReadOnly
    }

    /// Writes `body` after the writes still waiting, or keeps it to try again when the store
    /// cannot be written now (logged once per episode, `store-write-failed`; `store-saved` when
    /// all have landed).
    /// - Parameters:
    ///   - what: what it records, for the log.
    ///   - rings: the rings whose state it sets; until saved, no longer scheduled for the service.
    ///   - chains: the chains it ends; until saved, ended for the service.
    ///   - transaction: run `body` inside one store transaction [true]; false when it opens its own.
    ///   - isStatus: it only sets what `status` shows: it replaces a waiting write of the same `what`.
    /// - Throws: any other failure (a damaged store): the service ends on it, as before.
    func save(
        _ what: String, rings: Set<String> = [], chains: Set<String> = [], transaction: Bool = true,
        isStatus: Bool = false, _ body: @escaping () throws(ProofkitError) -> Void
    ) throws(ProofkitError) {
        if isStatus { unsaved.removeAll { $0.isStatus && $0.what == what } }
        unsaved.append(
            UnsavedWrite(
                what: what, rings: rings, chains: chains, transaction: transaction, isStatus: isStatus, body: body))
        try saveUnsaved()
    }

    /// Tries the waiting writes in order, and stops at the first the store still refuses.
    func saveUnsaved() throws(ProofkitError) {
        while let next = unsaved.first {
            do {
                if next.transaction { try store.write(next.body) } else { try next.body() }
            } catch  where Self.cannotWriteNow(error) {
                if unsavedSince == nil {
                    unsavedSince = (options.now(), "\(error)".filter { !$0.isNewline })
                    log(
                        "store-write-failed", "-",
                        "\(next.what): \(error); the alarm rings on, and the write is retried")
                }
                return
            }
            unsaved.removeFirst()
        }
        if let since = unsavedSince {
            unsavedSince = nil
            let seconds = decimalText(options.now().timeIntervalSince(since.date), places: 0)
            log("store-saved", "-", "the store takes writes again; what waited \(seconds) s is saved")
        }
    }

    /// What the service's answer to `ping` adds while writes wait (`alarm status` shows it):
    /// ` unsaved COUNT since ISO8601 REASON`, or nothing.
    var unsavedNote: String {
        guard let since = unsavedSince, !unsaved.isEmpty else { return "" }
        return
            " unsaved \(unsaved.count) since \(iso8601(since.date, in: TimeZone(identifier: "UTC")!)) \(since.reason)"
    }

    /// The rings whose new state waits to be saved.
    var unsavedRings: Set<String> { unsaved.reduce(into: []) { $0.formUnion($1.rings) } }
    /// The chains whose end waits to be saved.
    var unsavedEnds: Set<String> { unsaved.reduce(into: []) { $0.formUnion($1.chains) } }
}
