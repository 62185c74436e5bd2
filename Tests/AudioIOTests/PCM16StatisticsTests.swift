import AudioIO
import Testing

@Suite("PCM16Statistics: the C level statistics equal a plain Swift count")
struct PCM16StatisticsTests {
    static func reference(_ samples: [Int16]) -> (UInt64, Int16, Int16) {
        var sum: UInt64 = 0
        var low: Int16 = 0
        var high: Int16 = 0
        for x in samples {
            sum += UInt64(Int64(x) * Int64(x))
            low = min(low, x)
            high = max(high, x)
        }
        return (sum, low, high)
    }

    @Test(
        "random samples of every length around the vector width, both rails included",
        arguments: [0, 1, 7, 8, 9, 15, 16, 17, 1000, 65_537])
    func random(count: Int) {
        var generator = SystemRandomNumberGenerator()
        var samples = (0..<count).map { _ in Int16.random(in: .min ... .max, using: &generator) }
        if count >= 2 {
            samples[0] = .min
            samples[count - 1] = .max
        }
        let measured = samples.withUnsafeBufferPointer { PCM16Statistics.measure($0) }
        let expected = Self.reference(samples)
        #expect(measured.sumOfSquares == expected.0)
        #expect(measured.lowest == expected.1 && measured.highest == expected.2)
    }

    @Test("all -32768 (where a 32-bit signed pair sum would overflow) and all silence")
    func extremes() {
        let rail = [Int16](repeating: .min, count: 1003)
        let measured = rail.withUnsafeBufferPointer { PCM16Statistics.measure($0) }
        #expect(measured.sumOfSquares == 1003 * (1 << 30))
        #expect(measured.lowest == .min && measured.highest == 0)
        let silence = [Int16](repeating: 0, count: 64)
        let quiet = silence.withUnsafeBufferPointer { PCM16Statistics.measure($0) }
        #expect(quiet.sumOfSquares == 0 && quiet.lowest == 0 && quiet.highest == 0)
    }
}
