import Foundation
import ProofkitCore
import TestSupport
import Testing

@Suite("Duration.seconds")
struct DurationSecondsTests {
    @Test("whole, fractional, tiny and negative durations")
    func values() {
        #expect(Duration.seconds(3).seconds == 3)
        #expect(Duration.milliseconds(1500).seconds == 1.5)
        #expect(Duration.nanoseconds(1).seconds == 1e-9)
        #expect(Duration.milliseconds(-1500).seconds == -1.5)
        #expect(Duration.zero.seconds == 0)
        #expect(Duration.seconds(86_400 * 365).seconds == 31_536_000)
    }

    @Test("agrees with Foundation's TimeInterval from the components, 1,000 seeded durations")
    func againstComponents() {
        var generator = SyntheticAudio.Generator(seed: 0xD0_2A71_0001)
        for _ in 0..<1000 {
            let nanoseconds = Int64.random(in: -10_000_000_000_000...10_000_000_000_000, using: &generator)
            let duration = Duration.nanoseconds(nanoseconds)
            let expected = TimeInterval(nanoseconds) / 1e9
            #expect(abs(duration.seconds - expected) <= 1e-15 * max(1, abs(expected)), "\(nanoseconds) ns")
        }
    }
}

@Suite("Double.fixedDecimal(places:)")
struct FixedDecimalTests {
    @Test("examples: rounding, padding, sign, zero places, non-finite")
    func examples() {
        #expect(3.14159.fixedDecimal(places: 2) == "3.14")
        #expect(2.5.fixedDecimal(places: 0) == "3")
        #expect((-2.5).fixedDecimal(places: 0) == "-3")
        #expect(1.0.fixedDecimal(places: 3) == "1.000")
        #expect(0.05.fixedDecimal(places: 2) == "0.05")
        #expect((-0.004).fixedDecimal(places: 2) == "0.00")
        #expect((-1.25).fixedDecimal(places: 1) == "-1.3")
        #expect(13.898639.fixedDecimal(places: 2) == "13.90")
        #expect(Double.nan.fixedDecimal(places: 2) == "-")
        #expect((-Double.infinity).fixedDecimal(places: 2) == "-")
    }

    @Test(
        "agrees with printf's %.Nf on 20,000 seeded random values away from exact halves", .tags(.property),
        .propertyRun)
    func againstPrintf() {
        var generator = SyntheticAudio.Generator(seed: 0xF1_DEC1_0002)
        for index in 0..<20_000 {
            let places = index % 5
            let value = Double.random(in: -100_000...100_000, using: &generator) / Double([1, 10, 1000][index % 3])
            var scale = 1.0
            for _ in 0..<places { scale *= 10 }
            let scaled = abs(value) * scale
            // printf rounds the exact binary value; at (or within rounding of) a half the two may differ.
            guard abs(scaled - scaled.rounded(.down) - 0.5) > 1e-6 else { continue }
            var expected = String(format: "%.\(places)f", value)
            if expected.hasPrefix("-"), expected.dropFirst().allSatisfy({ $0 == "0" || $0 == "." }) {
                expected.removeFirst()  // printf writes "-0.00"; proofkit writes "0.00"
            }
            #expect(value.fixedDecimal(places: places) == expected, "\(value) \(places)")
        }
    }
}

@Suite("Decibels")
struct DecibelsTests {
    @Test("full scale is 0 dBFS, half is -6.02, a full-scale sine's RMS is -3.01, silence is -infinity")
    func values() {
        #expect(Decibels.fromAmplitude(1) == 0)
        #expect(abs(Decibels.fromAmplitude(0.5) - -6.020_599_913_279_624) < 1e-12)
        #expect(abs(Decibels.fromAmplitude(1 / 2.0.squareRoot()) - -3.010_299_956_639_812) < 1e-12)
        #expect(Decibels.fromAmplitude(0) == -.infinity)
        #expect(Decibels.fromPower(0) == -.infinity)
        #expect(Decibels.toAmplitude(0) == 1)
        #expect(abs(Decibels.toAmplitude(-20) - 0.1) < 1e-15)
        #expect(abs(Decibels.toAmplitude(-1) - 0.891_250_938_133_745_5) < 1e-15)
    }

    @Test(
        "amplitude and dBFS round-trip; a power's dBFS is its square root's", arguments: [1e-6, 0.001, 0.25, 0.9, 1, 4])
    func roundTrip(amplitude: Double) {
        let dBFS = Decibels.fromAmplitude(amplitude)
        #expect(abs(Decibels.toAmplitude(dBFS) - amplitude) <= 1e-12 * amplitude)
        #expect(abs(Decibels.fromPower(amplitude * amplitude) - dBFS) < 1e-9)
    }
}
