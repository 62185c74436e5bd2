/// File names as Linux has them: bytes, not always UTF-8.
///
/// Swift's `String` cannot hold bytes that are not UTF-8, and `CommandLine.arguments` replaces
/// them with U+FFFD, so a file named `caf\xE9.wav` (Latin-1) could not be opened. proofkit keeps
/// such a name in a `String` reversibly instead: each byte of an invalid sequence becomes the
/// private-use scalar U+10FC00 + byte (U+10FC80...U+10FCFF), and ``cString(_:)`` turns those back
/// into the original bytes for `open`, `stat` and `rename`. ``displayName(_:)`` shows them as
/// `\xE9`. (A valid name that really contains U+10FC80...U+10FCFF, private-use characters no
/// font draws, would be read as those bytes.)
public enum FilePath {
    /// The first scalar of the escapes: U+10FC00 (+ 0x80...0xFF).
    static let escapeBase: UInt32 = 0x10FC00

    /// A `String` for the bytes of a path or argument: valid UTF-8 as it is, each byte of an
    /// invalid sequence as U+10FC00 + byte.
    public static func string(fromBytes bytes: [UInt8]) -> String {
        if let valid = String(validating: bytes, as: UTF8.self) { return valid }
        var out = String.UnicodeScalarView()
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            let length =
                lead < 0x80
                ? 1
                : lead >= 0xC2 && lead <= 0xDF
                    ? 2
                    : lead >= 0xE0 && lead <= 0xEF
                        ? 3
                        : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0
            if length > 0, index + length <= bytes.count,
                let text = String(validating: bytes[index..<(index + length)], as: UTF8.self)
            {
                out.append(contentsOf: text.unicodeScalars)
                index += length
            } else {
                out.append(Unicode.Scalar(escapeBase + UInt32(lead))!)
                index += 1
            }
        }
        return String(out)
    }

    /// The bytes of `path` for a C call, NUL-terminated: UTF-8, with the escapes of
    /// ``string(fromBytes:)`` turned back into their bytes.
    public static func cString(_ path: String) -> [CChar] {
        guard path.unicodeScalars.contains(where: isEscape) else { return Array(path.utf8CString) }
        var bytes: [UInt8] = []
        for scalar in path.unicodeScalars {
            if isEscape(scalar) {
                bytes.append(UInt8(scalar.value - escapeBase))
            } else {
                bytes.append(contentsOf: String(scalar).utf8)
            }
        }
        return bytes.map { CChar(bitPattern: $0) } + [0]
    }

    /// Whether `scalar` stands for a byte that is not UTF-8.
    static func isEscape(_ scalar: Unicode.Scalar) -> Bool {
        (escapeBase + 0x80...escapeBase + 0xFF).contains(scalar.value)
    }
}
