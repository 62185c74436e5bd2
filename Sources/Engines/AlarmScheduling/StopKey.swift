// A key as an alarm's Stop button: the pure part (no I/O). The service reads Linux input events
// (`/dev/input/event*`, evdev) through the system chokepoint and hands their bytes here.

/// One key press from a Linux input device (`struct input_event`, `EV_KEY` with value 1).
public struct KeyPress: Sendable, Hashable {
    /// The key's code (`KEY_SPACE` is 57; see `linux/input-event-codes.h`).
    public var code: Int
    public init(code: Int) { self.code = code }
}

/// Which keys stop a ring, and how input-event bytes become key presses.
public struct StopKey: Sendable, Hashable {
    /// The key code that stops a ring, or `nil` for any key.
    public var code: Int?

    /// The size of one `struct input_event` on a 64-bit Linux: a `timeval` (16 bytes), `type`
    /// (u16), `code` (u16) and `value` (s32): 24 bytes.
    public static let eventSize = 24
    /// `EV_KEY`, the event type of keys and buttons.
    static let keyEventType = 1

    /// Names users give keys (without `KEY_`), with their codes from `linux/input-event-codes.h`:
    /// the keys a keyboard, a keypad or a presenter sends.
    public static let names: [String: Int] = [
        "esc": 1, "enter": 28, "space": 57, "b": 48, "a": 30, "s": 31, "q": 16, "backspace": 14, "tab": 15,
        "up": 103, "down": 108, "left": 105, "right": 106, "pageup": 104, "pagedown": 109, "home": 102, "end": 107,
        "kpenter": 96, "kp0": 82, "kp1": 79, "kp5": 76, "volumeup": 115, "volumedown": 114, "mute": 113,
        "playpause": 164, "power": 116, "f5": 63, "btn_left": 272, "btn_right": 273,
    ]

    /// Any key stops a ring.
    public static let any = StopKey(code: nil)

    public init(code: Int?) { self.code = code }

    /// The key named `text`: `any`, a name of ``names`` (any case, with or without `KEY_`), or a
    /// code from 1 to 767; `nil` for anything else.
    public init?(_ text: String) {
        let name = text.lowercased().hasPrefix("key_") ? String(text.lowercased().dropFirst(4)) : text.lowercased()
        if name == "any" {
            self.code = nil
        } else if let code = Self.names[name] ?? Int(name), (1...767).contains(code) {
            self.code = code
        } else {
            return nil
        }
    }

    /// Whether `press` stops a ring.
    public func matches(_ press: KeyPress) -> Bool { code == nil || code == press.code }

    /// The key presses in `bytes` (whole `input_event`s, little-endian; autorepeats and releases
    /// are not presses), and how many bytes were used (a partial event waits for the rest).
    public static func presses(in bytes: [UInt8]) -> (presses: [KeyPress], used: Int) {
        var presses: [KeyPress] = []
        var offset = 0
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        while offset + eventSize <= bytes.count {
            let type = u16(offset + 16)
            let code = u16(offset + 18)
            let value = Int32(bitPattern: UInt32(u16(offset + 20)) | UInt32(u16(offset + 22)) << 16)
            if type == keyEventType && value == 1 { presses.append(KeyPress(code: code)) }
            offset += eventSize
        }
        return (presses, offset)
    }
}
