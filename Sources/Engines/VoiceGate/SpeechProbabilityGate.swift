/// Turns Silero speech probabilities (one per 32 ms chunk) into voiced segments, with the
/// hysteresis of silero-vad's own `get_speech_timestamps` defaults:
/// - speech starts at a chunk with probability at least ``onsetThreshold`` (0.5);
/// - it goes on while chunks stay at or above ``offsetThreshold`` (0.35, i.e. onset - 0.15), and
///   ends after ``minimumSilenceSeconds`` (0.1 s) of chunks below it; the segment ends at the end of
///   its last chunk at or above the offset threshold;
/// - segments shorter than ``minimumSpeechSeconds`` (0.25 s) are dropped.
///
/// Pure and streaming. Time comes from the chunk count (chunk `i` covers
/// `i * chunkSeconds ..< (i + 1) * chunkSeconds`).
public struct SpeechProbabilityGate: Sendable {
    /// Length of one chunk, in seconds (0.032 for Silero at 16 kHz).
    public let chunkSeconds: Double
    /// Probability that starts speech: 0.5.
    public var onsetThreshold: Float = 0.5
    /// Probability under which speech may end: 0.35.
    public var offsetThreshold: Float = 0.35
    /// Silence that ends a segment, in seconds: 0.1.
    public var minimumSilenceSeconds: Double = 0.1
    /// Shortest segment kept, in seconds: 0.25.
    public var minimumSpeechSeconds: Double = 0.25

    private var chunkIndex = 0
    private var runStart: Int?
    private var lastActive = 0
    private var closed: [VoicedSegment] = []
    private var closedSeconds = 0.0

    /// Creates a gate for chunks of `chunkSeconds` seconds (default 0.032, Silero at 16 kHz).
    public init(chunkSeconds: Double = 0.032) {
        self.chunkSeconds = chunkSeconds
    }

    /// Chunks seen so far.
    public var chunkCount: Int { chunkIndex }

    /// Whether speech is on after the last chunk (a run counts once it has begun, even before it
    /// reaches the minimum length).
    public var isVoiced: Bool { runStart != nil }

    /// Feeds the probability of the next chunk.
    /// - Returns: whether speech is on at this chunk.
    @discardableResult
    public mutating func process(_ probability: Float) -> Bool {
        let index = chunkIndex
        chunkIndex += 1
        if let start = runStart {
            if probability >= offsetThreshold {
                lastActive = index
            } else if Double(index - lastActive) * chunkSeconds >= minimumSilenceSeconds {
                close(start: start)
            }
        } else if probability >= onsetThreshold {
            runStart = index
            lastActive = index
        }
        return runStart != nil
    }

    private mutating func close(start: Int) {
        let segment = VoicedSegment(start: Double(start) * chunkSeconds, end: Double(lastActive + 1) * chunkSeconds)
        if segment.duration >= minimumSpeechSeconds {
            closed.append(segment)
            closedSeconds += segment.duration
        }
        runStart = nil
    }

    /// The segments so far, the open one included when it is already long enough.
    public var segments: [VoicedSegment] {
        guard let start = runStart else { return closed }
        let open = VoicedSegment(start: Double(start) * chunkSeconds, end: Double(lastActive + 1) * chunkSeconds)
        return open.duration >= minimumSpeechSeconds ? closed + [open] : closed
    }

    /// Voiced seconds so far (the sum of ``segments``).
    public var voicedSeconds: Double {
        guard let start = runStart else { return closedSeconds }
        let open = Double(lastActive + 1 - start) * chunkSeconds
        return open >= minimumSpeechSeconds ? closedSeconds + open : closedSeconds
    }
}

/// Set operations on sorted, non-overlapping segment lists.
public enum VoicedSegments {
    /// The stretches covered by both lists (each sorted and non-overlapping).
    /// - Returns: sorted, non-overlapping segments; empty pieces are dropped.
    public static func intersection(_ a: [VoicedSegment], _ b: [VoicedSegment]) -> [VoicedSegment] {
        var result: [VoicedSegment] = []
        var i = 0
        var j = 0
        while i < a.count && j < b.count {
            let start = max(a[i].start, b[j].start)
            let end = min(a[i].end, b[j].end)
            if end > start { result.append(VoicedSegment(start: start, end: end)) }
            if a[i].end < b[j].end { i += 1 } else { j += 1 }
        }
        return result
    }

    /// Each segment of `segments` cut to the part of it that `kept` covers, from the start of the
    /// first stretch of `kept` that overlaps it to the end of the last, widened by `padding` on
    /// either side (never past the segment's own ends). Gaps between those stretches stay in; a
    /// segment that no stretch overlaps is returned whole. It never adds time.
    ///
    /// An isolated stretch is not an edge: a stretch at either end of those inside a segment (each
    /// clipped to the segment) that is shorter than `isolatedShortest` and more than `isolatedGap`
    /// from its neighbour inside the segment is set aside, repeatedly, while another stretch is
    /// left. The defaults (0 s shortest) set nothing aside.
    /// - Parameters:
    ///   - segments: sorted, non-overlapping segments (seconds).
    ///   - kept: sorted, non-overlapping stretches (seconds).
    ///   - padding: seconds kept beyond the first and last covered instant, >= 0.
    ///   - isolatedGap: seconds; a shorter gap to the neighbour keeps an end stretch. Default 0.
    ///   - isolatedShortest: seconds; an end stretch this long or longer is always an edge.
    ///     Default 0 (every stretch is).
    /// - Returns: one segment per input segment, in order.
    public static func trimmedEdges(
        _ segments: [VoicedSegment], to kept: [VoicedSegment], padding: Double, isolatedGap: Double = 0,
        isolatedShortest: Double = 0
    ) -> [VoicedSegment] {
        var result: [VoicedSegment] = []
        result.reserveCapacity(segments.count)
        var next = 0
        var inside: [VoicedSegment] = []
        func isolated(_ stretch: VoicedSegment, gap: Double) -> Bool {
            stretch.duration < isolatedShortest && gap > isolatedGap
        }
        for segment in segments {
            while next < kept.count && kept[next].end <= segment.start { next += 1 }
            inside.removeAll(keepingCapacity: true)
            var index = next
            while index < kept.count && kept[index].start < segment.end {
                inside.append(
                    VoicedSegment(start: max(segment.start, kept[index].start), end: min(segment.end, kept[index].end)))
                index += 1
            }
            var first = 0
            var last = inside.count - 1
            while last > first && isolated(inside[last], gap: inside[last].start - inside[last - 1].end) { last -= 1 }
            while last > first && isolated(inside[first], gap: inside[first + 1].start - inside[first].end) {
                first += 1
            }
            guard last >= 0 else {
                result.append(segment)
                continue
            }
            result.append(
                VoicedSegment(
                    start: max(segment.start, inside[first].start - padding),
                    end: min(segment.end, inside[last].end + padding)))
        }
        return result
    }

    /// Splits `segments` by `flags`, one per segment: those flagged `false`, then those flagged
    /// `true`, each in their original order.
    /// - Parameters:
    ///   - segments: any segments.
    ///   - flags: one flag per segment (`flags.count == segments.count`).
    /// - Returns: both lists; together they are `segments`.
    public static func partitioned(_ segments: [VoicedSegment], by flags: [Bool]) -> (
        unflagged: [VoicedSegment], flagged: [VoicedSegment]
    ) {
        var unflagged: [VoicedSegment] = []
        var flagged: [VoicedSegment] = []
        for (segment, flag) in zip(segments, flags) {
            if flag { flagged.append(segment) } else { unflagged.append(segment) }
        }
        return (unflagged, flagged)
    }

    /// The total duration of a list of segments, in seconds.
    public static func totalSeconds(_ segments: [VoicedSegment]) -> Double {
        segments.reduce(0) { $0 + $1.duration }
    }
}
