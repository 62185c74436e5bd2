/// Summary statistics of a set of timings (seconds), for benchmarks.
public struct LatencyStatistics: Sendable, Equatable, Codable {
    /// Number of samples.
    public var count: Int
    /// Smallest, in seconds.
    public var min: Double
    /// Median (nearest-rank), in seconds.
    public var p50: Double
    /// 90th percentile (nearest-rank), in seconds.
    public var p90: Double
    /// 99th percentile (nearest-rank), in seconds.
    public var p99: Double
    /// Largest, in seconds.
    public var max: Double
    /// Arithmetic mean, in seconds.
    public var mean: Double
    /// Sample standard deviation, in seconds (0 for one sample).
    public var standardDeviation: Double

    /// Computes the statistics of `samples` (seconds). Traps on an empty array (a programmer error).
    public init(_ samples: [Double]) {
        precondition(!samples.isEmpty, "no samples")
        let sorted = samples.sorted()
        func rank(_ p: Double) -> Double {
            // Nearest-rank percentile: the smallest value with at least p of the samples at or below it.
            let index = Swift.max(0, Swift.min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1))
            return sorted[index]
        }
        count = sorted.count
        min = sorted[0]
        max = sorted[sorted.count - 1]
        p50 = rank(0.5)
        p90 = rank(0.9)
        p99 = rank(0.99)
        mean = sorted.reduce(0, +) / Double(sorted.count)
        if sorted.count > 1 {
            let m = mean
            let variance = sorted.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(sorted.count - 1)
            standardDeviation = variance.squareRoot()
        } else {
            standardDeviation = 0
        }
    }

    enum CodingKeys: String, CodingKey {
        case count, min, p50, p90, p99, max, mean
        case standardDeviation = "stddev"
    }

    /// The relative spread `(p90 - p50) / p50`.
    public var relativeSpread: Double { p50 > 0 ? (p90 - p50) / p50 : 0 }

    /// Whether the spread is wide enough that the machine was probably busy (p90 more than 25 %
    /// above the median): figures from such a run should be re-measured before comparing.
    public var isNoisy: Bool { relativeSpread > 0.25 }
}
