/// Tells when a reading has ended, as the alarm's hands-free listener decides it, or the proof
/// already passed. A reading ends at a quiet of ``pauseSeconds`` once the text's reading time of
/// voice was heard (``ReadingProgress/neededSeconds``), and before that only at a longer quiet of
/// ``longPauseSeconds``: a long du'a read with breaths is judged whole, not on its first part.
/// Either needs at least ``minimumVoicedSeconds`` of voice. `proofkit voice --live --hands-free`
/// ends listening by the same rule. Pure: time is the audio's, given with each update.
///
/// Not thread-safe: one listening thread feeds it (the facade's `LiveReadingProof.run` observer).
public final class ReadingEnd: @unchecked Sendable {
    /// Quiet after a whole reading's voice that ends it, in seconds.
    public let pauseSeconds: Double
    /// Quiet that ends a reading shorter than the text's reading time, in seconds.
    public let longPauseSeconds: Double
    private var voicedSeconds = 0.0
    private var neededSeconds = 0.0
    private var quietSince: Double?
    private var voiced = false
    /// Whether listening ended on a whole reading (a pause, or a pass), not on time or a stop.
    public private(set) var wholeReading = false

    /// Voice heard before a pause ends a reading, in seconds: 1.
    public static let minimumVoicedSeconds = 1.0

    /// The quiet that ends a reading once its reading time of voice was heard, in seconds: 1.5.
    public static let defaultPauseSeconds = 1.5

    /// The quiet that ends a reading before its reading time of voice was heard, in seconds: 4.
    public static let defaultLongPauseSeconds = 4.0

    /// - Parameters:
    ///   - pauseSeconds: the quiet that ends a whole reading, in seconds [``defaultPauseSeconds``].
    ///   - longPauseSeconds: the quiet that ends a shorter one, in seconds [``defaultLongPauseSeconds``];
    ///     never less than `pauseSeconds`.
    public init(
        pauseSeconds: Double = ReadingEnd.defaultPauseSeconds,
        longPauseSeconds: Double = ReadingEnd.defaultLongPauseSeconds
    ) {
        self.pauseSeconds = pauseSeconds
        self.longPauseSeconds = max(pauseSeconds, longPauseSeconds)
    }

    /// Takes the events of one update of a live proof.
    /// - Parameters:
    ///   - events: the update's events, in order.
    ///   - now: the audio time the update reached, in seconds; `nil` for an update without audio
    ///     (a transcript line), which can end listening only by an acceptance.
    /// - Returns: whether listening should end now.
    public func observe(_ events: [ReadingProofEvent], at now: Double?) -> Bool {
        for event in events {
            switch event {
            case .accepted:
                wholeReading = true
                return true
            case .progress(let progress):
                voicedSeconds = progress.voicedSeconds
                neededSeconds = progress.neededSeconds
            case .voiceStarted:
                voiced = true
                quietSince = nil
            case .voiceStopped(let seconds):
                voiced = false
                quietSince = seconds
            default: break
            }
        }
        guard let now, !voiced, let quietSince, voicedSeconds >= Self.minimumVoicedSeconds else { return false }
        let quiet = now - quietSince
        if quiet >= longPauseSeconds || (quiet >= pauseSeconds && voicedSeconds >= neededSeconds) {
            wholeReading = true
            return true
        }
        return false
    }
}
