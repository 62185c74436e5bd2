import ProofkitCore
import TestSupport
import Testing
import VoiceGate

@Suite("SpeechProbabilityGate and segment intersection")
struct SpeechProbabilityGateTests {
    @Test("segments follow the spans; short blips are dropped; short dips are bridged")
    func segments() {
        var gate = SpeechProbabilityGate()
        // 1.0-2.0 s speech with a 64 ms dip at 1.5 s; a 0.1 s blip at 3 s; 4.0-4.5 s speech.
        var input = speechProbabilities(seconds: 5, spans: [(1.0, 1.5), (1.564, 2.0), (3.0, 3.1), (4.0, 4.5)])
        for p in input { gate.process(p) }
        let segments = gate.segments
        #expect(segments.count == 2, "\(segments)")
        #expect(abs(segments[0].start - 0.992) < 0.04 && abs(segments[0].end - 2.016) < 0.04)
        #expect(abs(segments[1].start - 3.968) < 0.04 && abs(segments[1].end - 4.512) < 0.04)
        #expect(
            isApproximatelyEqual(gate.voicedSeconds, VoicedSegments.totalSeconds(segments), absoluteTolerance: 1e-9))
        // Offset hysteresis: 0.4 (between 0.35 and 0.5) keeps speech on but cannot start it.
        var hysteresis = SpeechProbabilityGate()
        input = [0.4, 0.4, 0.9] + Array(repeating: 0.4, count: 20) + Array(repeating: 0.1, count: 10)
        for p in input { hysteresis.process(p) }
        #expect(hysteresis.segments == [VoicedSegment(start: 2 * 0.032, end: 23 * 0.032)])
    }

    @Test("intersection keeps only what both lists cover")
    func intersection() {
        let a = [VoicedSegment(start: 0, end: 2), VoicedSegment(start: 3, end: 5)]
        let b = [VoicedSegment(start: 1, end: 4), VoicedSegment(start: 4.5, end: 6)]
        let both = VoicedSegments.intersection(a, b)
        #expect(
            both == [
                VoicedSegment(start: 1, end: 2), VoicedSegment(start: 3, end: 4), VoicedSegment(start: 4.5, end: 5),
            ])
        #expect(VoicedSegments.totalSeconds(both) == 2.5)
        #expect(VoicedSegments.intersection(a, []).isEmpty)
    }

    @Test("trimmedEdges cuts each segment to the kept stretches inside it, padded, and never adds time")
    func trimmedEdges() {
        let segments = [
            VoicedSegment(start: 1, end: 4), VoicedSegment(start: 5, end: 6), VoicedSegment(start: 7, end: 9),
        ]
        // Kept: two stretches inside the first segment (the gap between them stays), one that
        // reaches past the third's start, none in the second.
        let kept = [
            VoicedSegment(start: 1.5, end: 2), VoicedSegment(start: 2.5, end: 3),
            VoicedSegment(start: 6.8, end: 7.5),
        ]
        let trimmed = VoicedSegments.trimmedEdges(segments, to: kept, padding: 0.25)
        #expect(
            trimmed == [
                VoicedSegment(start: 1.25, end: 3.25), VoicedSegment(start: 5, end: 6),
                VoicedSegment(start: 7, end: 7.75),
            ], "\(trimmed)")
        // A wide pad stops at the segment's own ends.
        #expect(VoicedSegments.trimmedEdges(segments, to: kept, padding: 10) == segments)
        #expect(VoicedSegments.trimmedEdges(segments, to: [], padding: 0) == segments)
        #expect(VoicedSegments.trimmedEdges([], to: kept, padding: 0).isEmpty)
    }

    @Test("trimmedEdges sets aside short, isolated stretches at either end, repeatedly, never the last one left")
    func trimmedEdgesIsolated() {
        let segment = [VoicedSegment(start: 0, end: 10)]
        // Short stretches 0.75 s from the reading's (twice before it, once after): not edges.
        let kept = [
            VoicedSegment(start: 0.5, end: 0.75), VoicedSegment(start: 1.5, end: 1.75),
            VoicedSegment(start: 2.5, end: 6), VoicedSegment(start: 6.25, end: 6.5),
            VoicedSegment(start: 7.25, end: 7.5),
        ]
        func trimmed(_ kept: [VoicedSegment]) -> [VoicedSegment] {
            VoicedSegments.trimmedEdges(segment, to: kept, padding: 0.25, isolatedGap: 0.6, isolatedShortest: 0.5)
        }
        // 6.25-6.5 is short but only 0.25 s from the reading: it stays an edge.
        #expect(trimmed(kept) == [VoicedSegment(start: 2.25, end: 6.75)], "\(trimmed(kept))")
        // Without the rule, every stretch is an edge.
        #expect(
            VoicedSegments.trimmedEdges(segment, to: kept, padding: 0.25) == [VoicedSegment(start: 0.25, end: 7.75)])
        // Long enough (0.5 s), or close enough (0.5 s away), an end stretch is an edge.
        let long = [VoicedSegment(start: 2.5, end: 6), VoicedSegment(start: 7, end: 7.5)]
        #expect(trimmed(long) == [VoicedSegment(start: 2.25, end: 7.75)])
        let close = [VoicedSegment(start: 2.5, end: 6), VoicedSegment(start: 6.5, end: 6.75)]
        #expect(trimmed(close) == [VoicedSegment(start: 2.25, end: 7)])
        // A segment's only stretch, however short, is its edge both ways.
        #expect(trimmed([VoicedSegment(start: 4, end: 4.25)]) == [VoicedSegment(start: 3.75, end: 4.5)])
        // Two short stretches far apart: the first is left, and it is the edge.
        let pair = [VoicedSegment(start: 2, end: 2.25), VoicedSegment(start: 5, end: 5.25)]
        #expect(trimmed(pair) == [VoicedSegment(start: 1.75, end: 2.5)])
    }
}
