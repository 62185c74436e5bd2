import Foundation
import Proofkit
import TestSupport
import Testing

// Issue 34: the README's "Use as a library" examples, compiled and run here as an app would
// write them: `import Proofkit` alone (it re-exports the engines).

private let models = TestEnvironment.packageRoot.path + "/Models/generated"

@Suite("README: Use as a library", .offThePool)
struct LibraryExamplesTests {
    @Test("reading proof: DuaMatcher judges a transcript and gives the words heard")
    func reading() throws {
        let waking = try #require(DuaCatalog.builtIn.text(named: "waking"))
        let match = DuaMatcher(text: waking).evaluate(transcript: "الحمدلله الذي احيانا بعدما اماتنا واليه النشور")
        #expect(match.verdict.isAccepted)
        #expect(match.heardWords == ["الْحَمْدُ", "أَحْيَانَا", "أَمَاتَنَا", "وَإِلَيْهِ", "النُّشُورُ"], "\(match.heardWords)")
    }

    @Test("prayer times: Fajr in Makkah by Umm al-Qura")
    func prayerTimes() throws {
        let calculator = try PrayerTimeCalculator(
            coordinates: try Coordinates(latitude: 21.4225, longitude: 39.8262),
            timeZone: try #require(TimeZone(identifier: "Asia/Riyadh")),
            parameters: CalculationMethod.ummAlQura.parameters)
        let day = calculator.times(on: LocalDate(year: 2026, month: 12, day: 4))
        let fajr = try #require(day.fajr)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "Asia/Riyadh"))
        let hour = calendar.component(.hour, from: fajr)
        #expect(hour == 5, "Fajr in Makkah in December is a little after 5 am: \(fajr)")
    }

    @Test("squat proof: SquatRepCounter over pose frames (a person standing still: calibrated, no rep)")
    func squat() throws {
        var counter = try SquatRepCounter()
        var events: [SquatEvent] = []
        for index in 0..<60 {
            var frame = PoseFrame(time: Double(index) / 30)
            frame.leftShoulder = Keypoint(x: 0.45, y: 0.3)
            frame.rightShoulder = Keypoint(x: 0.55, y: 0.3)
            frame.leftHip = Keypoint(x: 0.46, y: 0.55)
            frame.rightHip = Keypoint(x: 0.54, y: 0.55)
            frame.leftKnee = Keypoint(x: 0.46, y: 0.72)
            frame.rightKnee = Keypoint(x: 0.54, y: 0.72)
            frame.leftAnkle = Keypoint(x: 0.46, y: 0.9)
            frame.rightAnkle = Keypoint(x: 0.54, y: 0.9)
            events += counter.process(frame)
        }
        #expect(events.count == 1 && "\(events)".contains("calibrated"), "\(events)")
        #expect(counter.finish().reps.isEmpty)
    }

    @Test(
        "photo proof: PhotoJudge on a photo, with the score that decided",
        .enabled(
            if: FileManager.default.fileExists(atPath: models + "/efficientnet_lite0_int8.onnx"), "needs the models"))
    func photo() throws {
        var judge = try PhotoJudge(options: PhotoJudgeOptions(), store: ModelStore(folder: models))
        let result = try judge.judge(contentsOf: ImageFixtures.path("demo_mat.jpg"))
        #expect(result.judgement.verdict.isAccepted)
        #expect(result.judgement.decidedBy == .score && result.judgement.decidingScore > 0.3)
        // The folder given is the only one searched: a missing model names it (exit 69).
        _ = try withTemporaryFolder { empty in
            #expect(throws: ProofkitError.self) {
                _ = try PhotoJudge(options: PhotoJudgeOptions(), store: ModelStore(folder: empty))
            }
        }
    }
}
