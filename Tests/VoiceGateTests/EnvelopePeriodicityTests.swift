import Foundation
import ProofkitCore
import TestSupport
import Testing
import VoiceGate

@Suite("EnvelopePeriodicity")
struct EnvelopePeriodicityTests {
    /// Frame levels (dBFS, 20 ms) of a clock: `ring` frames decaying from -20 dBFS by `decay` dB a
    /// frame, every `period` frames, over a -70 dBFS room with +-1 dB of jitter.
    func clock(seconds: Double, period: Int, ring: Int, decay: Double = 0.6) -> [Float] {
        var generator = SyntheticAudio.Generator(seed: 11)
        return (0..<Int(seconds / 0.02)).map { frame in
            let phase = frame % period
            let level = phase < ring ? max(-20 - decay * Double(phase), -70) : -70
            return Float(level) + generator.uniform()
        }
    }

    func stretches(_ levels: [Float]) -> [VoicedSegment] {
        var periodicity = EnvelopePeriodicity(frameSeconds: 0.02)
        for level in levels { periodicity.add(level) }
        return periodicity.stretches
    }

    @Test("a clock's level, from 8 beats a second to one every 1.6 s, is periodic within a few seconds")
    func clocks() {
        for (period, ring) in [(6, 3), (25, 20), (50, 5), (80, 30)] {
            let found = stretches(clock(seconds: 20, period: period, ring: ring))
            #expect(found.count == 1, "period \(period): \(found)")
            // Named once five periods fit: by 3 s for beats up to 0.6 s, by 8 s for one every 1.6 s;
            // the window that names it reaches back to the start.
            #expect(found.first.map { $0.start == 0 && $0.end == 20 } == true, "period \(period): \(found)")
        }
    }

    @Test("a steady level, a slow swell, uneven knocks and silence are not periodic")
    func notClocks() {
        #expect(stretches([Float](repeating: -40, count: 1000)).isEmpty)
        #expect(stretches((0..<1000).map { Float(-40 + 10 * sin(Double($0) / 150)) }).isEmpty)
        var generator = SyntheticAudio.Generator(seed: 5)
        var uneven = [Float](repeating: -70, count: 1000)
        var at = 10
        while at < 990 {
            for k in 0..<5 where at + k < 1000 { uneven[at + k] = -20 - 2 * Float(k) }
            at += 30 + Int(40 * (generator.uniform() + 1))
        }
        #expect(stretches(uneven).isEmpty)
        #expect(stretches([]).isEmpty && stretches([Float](repeating: -120, count: 200)).isEmpty)
    }

    @Test("separate takes the segments at least half inside a periodic stretch")
    func separateSegments() {
        var periodicity = EnvelopePeriodicity(frameSeconds: 0.02)
        for level in clock(seconds: 10, period: 25, ring: 20) { periodicity.add(level) }
        for _ in 0..<500 { periodicity.add(-70) }
        let inside = VoicedSegment(start: 2, end: 4)
        let half = VoicedSegment(start: 9, end: 11)
        let after = VoicedSegment(start: 14, end: 18)
        let split = periodicity.separate([inside, half, after])
        #expect(split.periodic == [inside, half] && split.kept == [after])
        #expect(periodicity.share(of: after) == 0 && periodicity.share(of: inside) == 1)
    }
}
