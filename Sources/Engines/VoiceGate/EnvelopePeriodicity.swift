/// Finds the stretches where the sound's level repeats itself on a fixed beat: a clock, a
/// metronome, a drip. A reading never does, for long.
///
/// ``PeriodicTrains`` needs a clock's beats to come out of the energy gate as separate runs. A clock
/// whose ticks ring for half a second and follow each other closely (two a second, say) never falls
/// silent: the gate makes one long run of it, and each stretch of it, judged alone, is pitched and
/// modulated like a voice. Its level over several seconds gives it away: it is the same pattern,
/// again and again, at the clock's period.
///
/// ## Algorithm
/// Every ``hopSeconds`` (0.1 s), over each of the last ``windowSeconds`` (3, 5 and 8 s) of frame
/// levels in turn (all there is while there is less; nothing before 3 s), until one is periodic:
/// 1. the levels (dBFS per frame) are taken above the window's ``floorQuantile`` (its 10th
///    percentile, the room between the beats) and capped at ``ceilingDecibels`` (40 dB);
/// 2. their normalised autocorrelation `r(L)` is computed for lags `L` (in frames) while at least
///    ``overlapSeconds`` (1 s) of the window overlaps itself;
/// 3. the window is **periodic** if, for some period `L` between ``shortestPeriodSeconds`` (0.12 s)
///    and ``longestPeriodSeconds`` (1.6 s) that comes after the autocorrelation first falls to
///    ``dip`` (0.2; a smooth swell is not a beat), all of `r(L)`, `r(2L)` and `r(3L)` reach
///    ``threshold`` (0.75): the pattern repeats itself three times over. The window must hold five
///    periods, so that `r(3L)` is measured over two of them at least.
///
/// The periodic window joins ``stretches``. A voiced segment at least ``segmentShare`` (half)
/// inside them is the clock's (``separate(_:)``). The short window names a fast clock within
/// seconds of its start, before its runs add up to a reading's time; the long ones catch slower
/// beats.
///
/// The thresholds were set on the heard splits of Benchmarks/voice_gate_eval.py (5,818 files) and on
/// every real reading in ../shared (92 du'a recordings, six speech clips, the read basmala): with a
/// single 8 s window, 0.7-0.82 took no voice from any reading in the evaluation and left the one
/// such clock heard (eboard's tick, a 13.9 s run) at most 0.73 s; one du'a recording, whose first
/// 6 s gave `r(3L)` over under two periods, is why five periods must fit. Exactly repeating noises
/// that are not voice (a looped recording) can be periodic too; that is harmless, as only voiced
/// segments are taken away.
///
/// Pure and streaming. At most about 120,000 multiply-adds per judgement, ten a second: about a
/// millisecond of a Raspberry Pi's core per second of audio.
public struct EnvelopePeriodicity: Sendable {
    /// The windows, in seconds (3, 5 and 8 s), judged in this order; the first is judged once 3 s of
    /// audio are in.
    public static let windowSeconds = [3.0, 5.0, 8.0]
    /// How often a window is judged, in seconds (0.1 s).
    public static let hopSeconds = 0.1
    /// Shortest period, in seconds (0.12 s: about 8 beats a second).
    public static let shortestPeriodSeconds = 0.12
    /// Longest period, in seconds (1.6 s: five of them fill the longest window).
    public static let longestPeriodSeconds = 1.6
    /// Least overlap of the window with its shifted self for a lag to be judged, in seconds (1 s).
    public static let overlapSeconds = 1.0
    /// The autocorrelation must first fall to this before a period is looked for (0.2).
    public static let dip = 0.2
    /// Fewest periods a window must hold (5).
    public static let periodsInWindow = 5
    /// Least autocorrelation at one, two and three periods (0.75).
    public static let threshold = 0.75
    /// The quantile of the window's levels taken as its floor (0.1).
    public static let floorQuantile = 0.1
    /// Levels are counted at most this far above the floor, in dB (40 dB).
    public static let ceilingDecibels = 40.0
    /// A segment this much inside ``stretches`` or more is the clock's (0.5).
    public static let segmentShare = 0.5

    private let frameSeconds: Double
    private let windowFrames: [Int]
    private let hopFrames: Int
    private let shortestLag: Int
    private let longestLag: Int
    private let overlapFrames: Int
    /// The last (longest) window's levels, from `levels[first]` on.
    private var levels: [Double] = []
    private var first = 0
    /// Frames added so far.
    private var frames = 0

    /// The periodic stretches found so far, in seconds, sorted and merged.
    public private(set) var stretches: [VoicedSegment] = []

    /// Creates a detector for levels that come every `frameSeconds` (the voice gate's frames, 20 ms by
    /// default).
    /// - Parameter frameSeconds: seconds per level, > 0.
    public init(frameSeconds: Double) {
        self.frameSeconds = frameSeconds
        func frames(_ seconds: Double) -> Int { max(1, Int((seconds / frameSeconds).rounded())) }
        windowFrames = Self.windowSeconds.map(frames)
        hopFrames = frames(Self.hopSeconds)
        shortestLag = frames(Self.shortestPeriodSeconds)
        longestLag = frames(Self.longestPeriodSeconds)
        overlapFrames = frames(Self.overlapSeconds)
    }

    /// Adds the next frame's level.
    /// - Parameter levelDecibels: the frame's level in dBFS (the voice gate's
    ///   ``VoiceGateFrame/levelDecibels``).
    public mutating func add(_ levelDecibels: Float) {
        levels.append(Double(levelDecibels))
        frames += 1
        let longest = windowFrames.last!
        if levels.count - first > longest { first += 1 }
        if first >= longest {
            levels.removeFirst(first)
            first = 0
        }
        let shortest = windowFrames[0]
        guard frames >= shortest && (frames - shortest) % hopFrames == 0 else { return }
        var judged = 0
        for length in windowFrames {
            let count = min(length, levels.count - first)
            guard count > judged else { continue }
            judged = count
            if isPeriodic(levels[(levels.count - count)...]) {
                mark(from: frames - count, frames: count)
                return
            }
        }
    }

    /// How much of `segment` lies inside ``stretches``, from 0 to 1.
    /// - Parameter segment: a segment in seconds.
    public func share(of segment: VoicedSegment) -> Double {
        guard segment.duration > 0 else { return 0 }
        return VoicedSegments.totalSeconds(VoicedSegments.intersection([segment], stretches)) / segment.duration
    }

    /// Splits voiced `segments` into those that are not the clock's and those at least
    /// ``segmentShare`` inside ``stretches``.
    /// - Parameter segments: sorted, non-overlapping segments (seconds).
    /// - Returns: both lists, sorted; together they are `segments`.
    public func separate(_ segments: [VoicedSegment]) -> (kept: [VoicedSegment], periodic: [VoicedSegment]) {
        guard !stretches.isEmpty else { return (segments, []) }
        let (kept, periodic) = VoicedSegments.partitioned(
            segments, by: segments.map { share(of: $0) >= Self.segmentShare })
        return (kept, periodic)
    }

    /// Whether the window's levels repeat on a beat (see the type's algorithm).
    private func isPeriodic(_ window: ArraySlice<Double>) -> Bool {
        let count = window.count
        let floor = linearQuantile(sorted: window.sorted(), Self.floorQuantile)
        var excess = window.map { min(max($0 - floor, 0), Self.ceilingDecibels) }
        let mean = excess.reduce(0, +) / Double(count)
        var energy = 0.0
        for index in excess.indices {
            excess[index] -= mean
            energy += excess[index] * excess[index]
        }
        guard energy > 1e-6 else { return false }
        // r(3L) is the farthest lag used, and five periods must fit: no lag past 3 * count / 5 is needed.
        let lags = min(3 * longestLag, count - overlapFrames, 3 * (count / Self.periodsInWindow))
        guard lags >= 3 * shortestLag else { return false }
        var r = [Double](repeating: 0, count: lags + 1)
        for lag in 1...lags {
            var cross = 0.0
            var head = 0.0
            var tail = 0.0
            for index in lag..<count {
                let a = excess[index]
                let b = excess[index - lag]
                cross += a * b
                head += a * a
                tail += b * b
            }
            let scale = (head * tail).squareRoot()
            r[lag] = scale > 1e-9 ? cross / scale : 0
        }
        var dipped = false
        for lag in 1...min(longestLag, lags) {
            if r[lag] <= Self.dip { dipped = true }
            guard dipped, lag >= shortestLag, 3 * lag <= lags, Self.periodsInWindow * lag <= count else { continue }
            if min(r[lag], r[2 * lag], r[3 * lag]) >= Self.threshold { return true }
        }
        return false
    }

    /// Adds the window of `frames` frames starting at frame `start` to ``stretches``, merged with
    /// those it touches (a longer window may reach back past earlier stretches).
    private mutating func mark(from start: Int, frames count: Int) {
        var segment = VoicedSegment(start: Double(start) * frameSeconds, end: Double(start + count) * frameSeconds)
        while let last = stretches.last, last.end >= segment.start {
            segment = VoicedSegment(start: min(last.start, segment.start), end: max(last.end, segment.end))
            stretches.removeLast()
        }
        stretches.append(segment)
    }
}

/// The `q` quantile (0...1) of ascending `sorted` values, interpolated linearly between order
/// statistics (numpy's default). `sorted` must not be empty.
func linearQuantile(sorted: [Double], _ q: Double) -> Double {
    let position = q * Double(sorted.count - 1)
    let lower = Int(position)
    let upper = min(lower + 1, sorted.count - 1)
    return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - Double(lower))
}
