extension String {
    /// This string with the first occurrence of `target` replaced (unchanged when absent).
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = range(of: target) else { return self }
        return self[..<range.lowerBound] + replacement + self[range.upperBound...]
    }

    /// The first range of `target` in this string (a literal search over characters).
    func range(of target: String) -> Range<String.Index>? {
        guard !target.isEmpty else { return nil }
        var start = startIndex
        while start < endIndex {
            if self[start...].hasPrefix(target) {
                return start..<index(start, offsetBy: target.count)
            }
            start = index(after: start)
        }
        return nil
    }
}

extension Duration {
    /// This duration in seconds, as a `Double`.
    var secondsValue: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }
}

func formatSeconds(_ seconds: Double) -> String {
    let tenths = Int((seconds * 10).rounded())
    return "\(tenths / 10).\(tenths % 10) s"
}
