import ReadingRules
import Testing

@Suite("ReadingEnd: when the hands-free listener judges a reading")
struct ReadingEndTests {
    /// Feeds a reading as the live proof reports it: voice from `start` for `voiced` seconds of a
    /// text that needs `needed` seconds, then quiet, one update every 0.1 s. Returns the audio time
    /// at which the rule ended listening, or nil by `until`.
    func endTime(voiced: Double, needed: Double, until: Double = 20, rule: ReadingEnd = ReadingEnd()) -> Double? {
        let start = 1.0
        let progress = { (v: Double) in
            ReadingProofEvent.progress(
                ReadingProgress(voicedSeconds: v, neededSeconds: needed, heardKeyWords: 0, requiredKeyWords: 3))
        }
        if rule.observe([.voiceStarted(seconds: start)], at: start) { return start }
        var t = start
        while t < until {
            t += 0.1
            var events = [progress(min(voiced, t - start))]
            if abs(t - (start + voiced)) < 0.05 { events.append(.voiceStopped(seconds: t)) }
            if rule.observe(events, at: t) { return t }
        }
        return nil
    }

    @Test("a whole reading ends at a 1.5 s pause; a shorter one only at 4 s, so a breath does not cut it")
    func pauses() throws {
        let whole = try #require(endTime(voiced: 8, needed: 7))
        #expect(abs(whole - (1 + 8 + ReadingEnd.defaultPauseSeconds)) < 0.11)
        let part = try #require(endTime(voiced: 5, needed: 20))
        #expect(abs(part - (1 + 5 + ReadingEnd.defaultLongPauseSeconds)) < 0.11)
        // Under a second of voice (a cough) never ends a reading, however long the quiet.
        #expect(endTime(voiced: 0.5, needed: 7) == nil)
    }

    @Test("a breath shorter than the long pause lets the reading go on, and it is judged whole")
    func breath() {
        let rule = ReadingEnd()
        let needed = 10.0
        func progress(_ v: Double) -> ReadingProofEvent {
            .progress(ReadingProgress(voicedSeconds: v, neededSeconds: needed, heardKeyWords: 0, requiredKeyWords: 3))
        }
        #expect(!rule.observe([.voiceStarted(seconds: 0), progress(0)], at: 0))
        #expect(!rule.observe([progress(5), .voiceStopped(seconds: 5)], at: 5))
        #expect(!rule.observe([progress(5)], at: 8))  // 3 s of breath
        #expect(!rule.observe([.voiceStarted(seconds: 8.1), progress(5)], at: 8.1))
        #expect(!rule.observe([progress(10), .voiceStopped(seconds: 13.1)], at: 13.1))
        #expect(!rule.wholeReading)
        #expect(rule.observe([progress(10)], at: 14.7))
        #expect(rule.wholeReading)
    }

    @Test("the long pause is never shorter than the short one")
    func ordering() {
        #expect(ReadingEnd(pauseSeconds: 3, longPauseSeconds: 1).longPauseSeconds == 3)
    }
}
