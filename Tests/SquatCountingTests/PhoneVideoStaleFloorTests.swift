import ProofkitCore
import SquatCounting
import Testing

// Issue 36, second round (Squatify videos 07, 13, 18 and 19). A view that moves down during a
// rep (a hand-held phone tilting), or legs that look shorter than when the standing reference
// was learned, leave the person standing "0.11 to 0.23 deep": the rep never ends, is rejected as
// too long, and the counter then waited for a depth it never saw again (video19: 0 of 6). The
// synthetic tests reproduce the mechanism and a jump that must stay rejected.

@Suite("Squat counter on phone videos: standing still after a rejected rep is standing")
struct PhoneVideoStaleFloorTests {
    /// Three deep (0.6), slow (4.8 s) reps with 7 s standing between them, from t = 2 s: reps
    /// at 2-6.8 s, 13.8-18.6 s and 25.6-30.4 s.
    static func longPauses(_ t: Double) -> Double {
        repProfile(count: 3, depth: 0.6, repDuration: 4.8, pause: 7)(t)
    }

    /// The view moves down 0.06 of the image (0.17 of the leg) during rep 1's last 2 s, and stays.
    static func viewDownDuringRep1(_ t: Double) -> Double { 0.06 * min(1, max(0, (t - 4.8) / 2)) }

    @Test("the view moves down during a rep: that rep is too long, the reps after it count")
    func viewMovesDownDuringRep() throws {
        var body = SyntheticBody(depth: Self.longPauses)
        body.floorShift = Self.viewDownDuringRep1
        let (result, _) = try run(body.frames(duration: 34))
        // Rep 1 ends standing 0.17 "deep" on the stale floor line: still for 5 s, it is a sit.
        // Standing still with straight knees after it, the person is standing: the floor line
        // follows them and reps 2 and 3 count (before: none, the counter waited for depth 0.08).
        #expect(result.repCount == 2, "\(result.rejections)")
        #expect(result.rejections.map(\.reason) == [.tooLong])
        let starts = result.reps.map { ($0.startTime * 10).rounded() / 10 }
        #expect(starts.count == 2 && abs(starts[0] - 13.8) < 0.5 && abs(starts[1] - 25.6) < 0.5, "\(starts)")
    }

    @Test("after the view moved down, a squat that ends in a jump is still a jump")
    func jumpAfterViewMovedDown() throws {
        var body = SyntheticBody(depth: Self.longPauses)
        body.floorShift = Self.viewDownDuringRep1
        // Rep 2 (13.8-18.6 s, standing again from about 18.1 s) ends in a take-off: hips and feet
        // 0.25 of the leg up for 0.45 s.
        body.lift = { t in t > 18.2 && t < 18.65 ? 0.25 : 0 }
        let (result, _) = try run(body.frames(duration: 34))
        #expect(result.repCount == 1, "\(result.rejections)")
        #expect(result.rejections.map(\.reason) == [.tooLong, .jumped])
        #expect(abs((result.reps.first?.startTime ?? 0) - 25.6) < 0.5)
    }
}
