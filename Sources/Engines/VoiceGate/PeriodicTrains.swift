/// Finds clock-like trains among an energy gate's voiced segments: short runs that start at a
/// steady beat. Speech is not metronomic; a clock is.
///
/// The energy gate's cues (see ``VoiceActivityGate``) judge one run at a time, so a sound that rings
/// with a pitch for half a second, as some clocks' ticks do, passes them however regularly it
/// comes. Looked at over several seconds, such runs give themselves away: each is short, they are
/// about as long as each other, and their onsets fall on a fixed period. A reader's runs are phrases
/// of varying length that start whenever the phrase does.
///
/// A **train** is at least ``minimumMembers`` consecutive segments, each at most
/// ``maximumMemberSeconds`` long, the longest at most ``maximumDurationRatio`` times the shortest
/// (one clock's beats are the same sound; a reader's words are not), whose onsets keep a period
/// `P` between ``shortestPeriodSeconds`` and ``longestPeriodSeconds``: every interval after the
/// first is `P` or `2P` (one beat missed) within ``relativeTolerance`` of it or
/// ``absoluteToleranceSeconds``, whichever is larger, where `P` is the mean beat so far (the first
/// interval to begin with). Trains are searched greedily from the first segment on.
///
/// The thresholds were set on the tuning split and the heard held-out splits of
/// Benchmarks/voice_gate_eval.py: on English read at about one stressed word a second, under an
/// air conditioner at 5 dB SNR, four word runs came 0.92-0.96 s apart, but their lengths differed
/// 2.3-fold; a tick-tock clock's runs differ by 7 %.
///
/// Pure and cheap: a pass over the segment list. While streaming, the train's first members count
/// until the train is long enough to be named, so a count may briefly rise and then fall.
public enum PeriodicTrains {
    /// Fewest consecutive segments that make a train (5: four equal intervals).
    public static let minimumMembers = 5
    /// Longest segment that may be a member, in seconds (1.0 s; a tick's ring is shorter, and a
    /// run of a second or more of voice is a phrase).
    public static let maximumMemberSeconds = 1.0
    /// Longest member over the shortest (1.5): one clock's beats are alike.
    public static let maximumDurationRatio = 1.5
    /// Shortest period, in seconds (0.12 s: about 8 beats per second).
    public static let shortestPeriodSeconds = 0.12
    /// Longest period, in seconds (4 s: a slow tick-tock of which only the tick passes the gate).
    public static let longestPeriodSeconds = 4.0
    /// An interval may differ from its beat by this fraction of it (0.08) ...
    public static let relativeTolerance = 0.08
    /// ... or by this many seconds, whichever is larger (0.06 s: each onset is known to a 20 ms
    /// frame, and the mean beat to about as much).
    public static let absoluteToleranceSeconds = 0.06

    /// Splits `segments` into those outside any train and the members of trains.
    /// - Parameter segments: sorted, non-overlapping segments (seconds).
    /// - Returns: both lists, sorted; together they are `segments`.
    public static func separate(_ segments: [VoicedSegment]) -> (kept: [VoicedSegment], trains: [VoicedSegment]) {
        let (kept, trains) = VoicedSegments.partitioned(segments, by: membership(segments))
        return (kept, trains)
    }

    /// Whether each segment belongs to a train.
    /// - Parameter segments: sorted, non-overlapping segments (seconds).
    /// - Returns: one flag per segment, in order.
    public static func membership(_ segments: [VoicedSegment]) -> [Bool] {
        var member = [Bool](repeating: false, count: segments.count)
        var first = 0
        while first + minimumMembers <= segments.count {
            let end = trainEnd(segments, from: first)
            if end - first >= minimumMembers {
                for index in first..<end { member[index] = true }
                first = end
            } else {
                first += 1
            }
        }
        return member
    }

    /// One past the last segment of the longest train-like chain that starts at `first`.
    private static func trainEnd(_ segments: [VoicedSegment], from first: Int) -> Int {
        guard segments[first].duration <= maximumMemberSeconds, first + 1 < segments.count else { return first + 1 }
        let firstInterval = segments[first + 1].start - segments[first].start
        guard firstInterval >= shortestPeriodSeconds, firstInterval <= longestPeriodSeconds else { return first + 1 }
        var beatsSoFar = 0.0
        var shortest = segments[first].duration
        var longest = shortest
        var next = first + 1
        while next < segments.count {
            let duration = segments[next].duration
            let low = min(shortest, duration)
            let high = max(longest, duration)
            guard duration <= maximumMemberSeconds, high <= maximumDurationRatio * low else { break }
            let interval = segments[next].start - segments[next - 1].start
            let period =
                beatsSoFar == 0 ? firstInterval : (segments[next - 1].start - segments[first].start) / beatsSoFar
            let beats = (interval / period).rounded()
            guard beats == 1 || (beats == 2 && next > first + 1) else { break }
            let tolerance = max(relativeTolerance * beats * period, absoluteToleranceSeconds)
            guard abs(interval - beats * period) <= tolerance else { break }
            shortest = low
            longest = high
            beatsSoFar += beats
            next += 1
        }
        return next
    }
}
