import AlarmScheduling
import PrayerPlanning
import Testing

@Suite("StopKey: key names and Linux input events (struct input_event, 24 bytes)")
struct StopKeyTests {
    /// One `struct input_event` as the kernel writes it on a 64-bit machine.
    func event(type: UInt16, code: UInt16, value: Int32) -> [UInt8] {
        [UInt8](repeating: 0, count: 16) + [UInt8(type & 0xFF), UInt8(type >> 8), UInt8(code & 0xFF), UInt8(code >> 8)]
            + (0..<4).map { UInt8(truncatingIfNeeded: UInt32(bitPattern: value) >> (8 * UInt32($0))) }
    }

    @Test("only presses count (not releases, autorepeats or sync reports); a partial event waits for the rest")
    func presses() {
        let bytes =
            event(type: 1, code: 57, value: 1) + event(type: 0, code: 0, value: 0) + event(type: 1, code: 57, value: 2)
            + event(type: 1, code: 57, value: 0) + event(type: 1, code: 109, value: 1)
        let whole = StopKey.presses(in: bytes)
        #expect(whole.presses == [KeyPress(code: 57), KeyPress(code: 109)] && whole.used == 5 * 24)
        let partial = StopKey.presses(in: Array(bytes.prefix(30)))
        #expect(partial.presses == [KeyPress(code: 57)] && partial.used == 24)
    }

    @Test("names: any, a name with or without KEY_, a code; anything else is refused")
    func names() {
        #expect(StopKey("any") == StopKey.any)
        #expect(StopKey("space")?.code == 57 && StopKey("KEY_SPACE")?.code == 57 && StopKey("PageDown")?.code == 109)
        #expect(StopKey("28")?.code == 28)
        #expect(StopKey("banana") == nil && StopKey("0") == nil && StopKey("9999") == nil)
        #expect(StopKey.any.matches(KeyPress(code: 30)) && !StopKey(code: 57).matches(KeyPress(code: 30)))
    }
}
