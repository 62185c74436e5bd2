/// Silero-like speech probabilities for `seconds` of 32 ms chunks: `high` in chunks whose centre
/// falls inside one of `spans` (start, end in seconds), 0.05 elsewhere.
public func speechProbabilities(seconds: Double, spans: [(Double, Double)], high: Float = 0.9) -> [Float] {
    (0..<Int(seconds / 0.032)).map { index in
        let time = (Double(index) + 0.5) * 0.032
        return spans.contains { time >= $0.0 && time < $0.1 } ? high : 0.05
    }
}
