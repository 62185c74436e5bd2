/// Writing JSON text: the one string escaper, shared by the CLI's JSON output and the engines that
/// write JSON (a du'a catalogue kept in the alarm store).
public enum JSONText {
    /// Appends `text` to `out` as a JSON string: quoted, with quotes, backslashes and control
    /// characters escaped (other characters as they are, UTF-8).
    public static func quote(_ text: String, into out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    /// `text` as a JSON string (see ``quote(_:into:)``).
    public static func quoted(_ text: String) -> String {
        var out = ""
        quote(text, into: &out)
        return out
    }
}
