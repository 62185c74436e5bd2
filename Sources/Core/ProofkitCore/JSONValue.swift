/// A JSON value with deterministic output (object keys sorted), written without Foundation
/// so that `proofkit` starts fast.
///
/// The writer beside ``JSONReader``: what `proofkit` prints with `--json`, and the pose lines
/// (`PoseLines`) that `squat` reads back.
public enum JSONValue: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer, written without a fraction.
    case int(Int)
    /// A number, written as the shortest text that reads back to it (`null` when not finite).
    case number(Double)
    /// A string, escaped as JSON requires.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, written with its keys sorted.
    case object([String: JSONValue])

    /// Compact one-line serialisation with sorted keys. Non-finite numbers become `null`.
    public var serialized: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .number(let value): out += JSONValue.format(value)
        case .string(let value): JSONValue.quote(value, into: &out)
        case .array(let values):
            out += "["
            for (i, value) in values.enumerated() {
                if i > 0 { out += "," }
                value.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, key) in members.keys.sorted().enumerated() {
                if i > 0 { out += "," }
                JSONValue.quote(key, into: &out)
                out += ":"
                members[key]!.write(to: &out)
            }
            out += "}"
        }
    }

    /// Shortest round-tripping text for a finite double; integers print without a fraction.
    static func format(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return "\(value)"
    }

    static func quote(_ text: String, into out: inout String) { JSONText.quote(text, into: &out) }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByNilLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue {
    /// `.string` or `.null`.
    public init(_ value: String?) { self = value.map(JSONValue.string) ?? .null }
    /// `.number` or `.null` (non-finite becomes `.null` on output).
    public init(_ value: Double?) { self = value.map(JSONValue.number) ?? .null }
    /// A number rounded to `places` decimals (for stable, readable output).
    public static func rounded(_ value: Double, places: Int = 4) -> JSONValue {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        return .number((value * scale).rounded() / scale)
    }
}
