/// The smallest value seen over the last `window` seconds, updated in amortised O(1) time per
/// sample (a monotonic queue in a fixed ring, no allocation after creation).
///
/// Used as "how far has this stayed for the whole window": a foot (or a knee) counts as moved
/// only when it has been away for the whole window, so a tracker glitch of a few frames, however
/// large, never reads as a step. The value is defined only once samples cover the whole window
/// (``value`` is `-infinity` before).
struct SustainedMinimum: Sendable {
    /// Samples kept at most (the queue only holds increasing values, so it rarely fills; when it
    /// does, at frame rates above `capacity / window`, the oldest is dropped).
    static let capacity = 64
    var times: [Double]
    var values: [Double]
    var head = 0, count = 0
    /// Time of the first sample since the last reset (or after a gap).
    var since = Double.nan
    var lastTime = -Double.infinity

    init() {
        times = [Double](repeating: 0, count: Self.capacity)
        values = [Double](repeating: 0, count: Self.capacity)
    }

    mutating func reset() {
        head = 0
        count = 0
        since = .nan
        lastTime = -.infinity
    }

    /// Adds a sample and returns the minimum over the samples of the last `window` seconds, or
    /// `-infinity` while the samples do not yet cover `window` (or `value` is not finite; a gap
    /// longer than `maximumGap` starts afresh).
    mutating func push(_ value: Double, at time: Double, window: Double, maximumGap: Double) -> Double {
        guard value.isFinite else { return -.infinity }
        if time - lastTime > maximumGap { reset() }
        if !since.isFinite { since = time }
        lastTime = time
        // Drop from the back every value not smaller than the new one: it can never be the
        // minimum again while the new one is in the window.
        while count > 0 {
            let last = (head + count - 1) % Self.capacity
            if values[last] >= value { count -= 1 } else { break }
        }
        if count == Self.capacity {
            head = (head + 1) % Self.capacity
            count -= 1
        }
        let slot = (head + count) % Self.capacity
        times[slot] = time
        values[slot] = value
        count += 1
        // Drop from the front what has left the window.
        let start = time - window
        while count > 1, times[head] < start {
            head = (head + 1) % Self.capacity
            count -= 1
        }
        guard time - since >= window else { return -.infinity }
        return values[head]
    }
}
