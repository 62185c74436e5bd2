import Proofkit
import ProofkitCore

/// Number formats shared by the commands' text output.
enum Formatting {
    /// `value` with `places` decimals (no Foundation).
    static func fixed(_ value: Double, _ places: Int) -> String { decimalText(value, places: places) }
    static func msValue(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
    static func ms(_ duration: Duration) -> String { fixed(msValue(duration), 1) }

    static func baseName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}
