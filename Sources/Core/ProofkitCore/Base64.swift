// Base64 decoding for data that is embedded in source as text: the speech-likeness veto's weights
// (VoiceGate) and the demo's media (ProofkitDemoMedia). Text literals are stored as they are by
// the compiler, where a large `[UInt8]` literal costs tens of seconds of optimised compiling.

/// Base64 (RFC 4648's standard alphabet) for embedded data.
public enum Base64 {
    /// The bytes that `text` encodes.
    ///
    /// Made for text that a generator wrote, so it is lenient: whitespace (the line breaks of a
    /// multi-line literal), `=` padding and any other character outside the alphabet are skipped,
    /// and a final group of fewer than 8 bits is dropped, as padding implies.
    /// - Parameter text: base64 text, in any number of lines.
    /// - Returns: the decoded bytes, 3 for every 4 characters of the alphabet.
    public static func bytes(_ text: String) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(text.utf8.count / 4 * 3)
        var bits: UInt32 = 0
        var count = 0
        for character in text.utf8 {
            let value: UInt32
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(character - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(character - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(character - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "/"): value = 63
            default: continue
            }
            bits = (bits << 6 | value) & 0xFFFF
            count += 6
            if count >= 8 {
                count -= 8
                result.append(UInt8(truncatingIfNeeded: bits >> UInt32(count)))
            }
        }
        return result
    }
}
