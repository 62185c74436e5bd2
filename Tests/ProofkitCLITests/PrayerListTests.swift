import AlarmScheduling
import PrayerPlanning
import Testing

@testable import ProofkitCLI

@Suite("The --prayers list of plan and alarm prayers")
struct PrayerListTests {
    @Test("each prayer once, in the day's order, whatever the case, spaces or repeats")
    func namesOnceInOrder() throws {
        #expect(try PrayerOptions.prayers("fajr") == [.fajr])
        #expect(try PrayerOptions.prayers("isha,Fajr, fajr ,FAJR") == [.fajr, .isha])
        #expect(try PrayerOptions.prayers("maghrib,asr,dhuhr,isha,fajr") == [.fajr, .dhuhr, .asr, .maghrib, .isha])
        #expect(try PrayerOptions.prayers("fajr,,isha,") == [.fajr, .isha])
    }

    @Test(
        "an unknown name, sunrise, or a list that names none is a usage error",
        arguments: ["zuhr", "sunrise", "", ",", " , "])
    func refused(list: String) {
        #expect(throws: UsageError.self) { try PrayerOptions.prayers(list) }
    }
}
