/// A parsed JSON value, objects with their members in document order (a small reader, so that
/// the engines and the facade need no Foundation to read the JSON files proofkit ships or writes).
public enum JSONNode: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONNode])
    case object([(String, JSONNode)])

    public static func == (a: JSONNode, b: JSONNode) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// The member `key` of an object (the last, if the document repeats it, as JSONSerialization
    /// reads it), or `nil` for a missing member or when this is not an object.
    public subscript(key: String) -> JSONNode? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.0 == key }?.1
    }

    /// The string, or `nil` when this is not one.
    public var string: String? { if case .string(let value) = self { value } else { nil } }
    /// The number, or `nil` when this is not one.
    public var number: Double? { if case .number(let value) = self { value } else { nil } }
    /// The number when it is a whole number that fits `Int`, else `nil`.
    public var integer: Int? { number.flatMap { Int(exactly: $0) } }
    /// The elements, or `nil` when this is not an array.
    public var array: [JSONNode]? { if case .array(let value) = self { value } else { nil } }
    /// The members in document order, or `nil` when this is not an object.
    public var members: [(String, JSONNode)]? { if case .object(let value) = self { value } else { nil } }
}

extension JSONNode: CustomStringConvertible {
    /// The value as `JSONSerialization`'s objects print (`2`, `0.5`, `text`, `{a = 1; b = 2}`),
    /// for messages.
    public var description: String {
        switch self {
        case .null: "<null>"
        case .bool(let value): value ? "1" : "0"
        case .number(let value): Int(exactly: value).map(String.init) ?? String(value)
        case .string(let value): value
        case .array(let values): "(" + values.map(\.description).joined(separator: ", ") + ")"
        case .object: "{" + members!.sorted { $0.0 < $1.0 }.map { "\($0.0) = \($0.1)" }.joined(separator: "; ") + "}"
        }
    }
}

/// Parses JSON (RFC 8259; numbers are read by `Double(_:)`, which also takes a leading `+` or
/// zeros) from UTF-8 text, 64 levels deep at most.
public struct JSONReader {
    private let bytes: [UInt8]
    private var index = 0

    /// Parses `text`.
    /// - Throws: `ProofkitError` `.decodeFailed` with the byte offset of the problem.
    public static func parse(_ text: String) throws(ProofkitError) -> JSONNode {
        try parse(bytes: Array(text.utf8))
    }

    /// Parses UTF-8 bytes (a file's content).
    /// - Throws: `ProofkitError` `.decodeFailed` with the byte offset of the problem.
    public static func parse(bytes: [UInt8]) throws(ProofkitError) -> JSONNode {
        do {
            return try node(bytes: bytes)
        } catch {
            throw ProofkitError(.decodeFailed, "invalid JSON at byte \(error.byteOffset): \(error.reason)")
        }
    }

    /// Parses UTF-8 bytes, for callers that word the failure themselves (a line of JSON Lines).
    /// - Throws: ``JSONSyntaxError`` with where and what.
    public static func node(bytes: [UInt8]) throws(JSONSyntaxError) -> JSONNode {
        var reader = JSONReader(bytes: bytes)
        reader.skipSpace()
        let value = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.index == reader.bytes.count else { throw reader.fail("extra text after the JSON value") }
        return value
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func fail(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(byteOffset: index, reason: message)
    }

    private mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    private mutating func expect(_ literal: String) throws(JSONSyntaxError) {
        for byte in literal.utf8 {
            guard index < bytes.count, bytes[index] == byte else { throw fail("expected '\(literal)'") }
            index += 1
        }
    }

    private mutating func value(depth: Int) throws(JSONSyntaxError) -> JSONNode {
        guard depth < 64 else { throw fail("nested too deeply") }
        guard index < bytes.count else { throw fail("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            index += 1
            var members: [(String, JSONNode)] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a key") }
                let key = try string()
                skipSpace()
                try expect(":")
                skipSpace()
                members.append((key, try value(depth: depth + 1)))
                skipSpace()
                guard index < bytes.count else { throw fail("unexpected end in object") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return .object(members)
                }
                throw fail("expected ',' or '}'")
            }
        case UInt8(ascii: "["):
            index += 1
            var items: [JSONNode] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            while true {
                skipSpace()
                items.append(try value(depth: depth + 1))
                skipSpace()
                guard index < bytes.count else { throw fail("unexpected end in array") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                if bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return .array(items)
                }
                throw fail("expected ',' or ']'")
            }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        default:
            for word in ["NaN", "Infinity", "-Infinity"] where bytes[index...].starts(with: word.utf8) {
                throw fail("NaN and Infinity are not JSON numbers")
            }
            return .number(try number())
        }
    }

    private mutating func number() throws(JSONSyntaxError) -> Double {
        let start = index
        while index < bytes.count, Self.isNumberByte(bytes[index]) { index += 1 }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard !text.isEmpty, let number = Double(text), number.isFinite else { throw fail("bad value") }
        return number
    }

    /// The bytes a number may hold (`+-0123456789.eE`); a switch, since a generic `contains` over
    /// a string's UTF-8 view cost ~5,000 instructions per number (7M of the mat head's 1,281).
    @inline(__always)
    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "e"), UInt8(ascii: "E"):
            return true
        default:
            return false
        }
    }

    private mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("short \\u escape") }
        guard let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16) else {
            throw fail("bad \\u escape")
        }
        index += 4
        return value
    }

    private mutating func string() throws(JSONSyntaxError) -> String {
        index += 1  // opening quote
        var raw: [UInt8] = []
        while true {
            guard index < bytes.count else { throw fail("unterminated string") }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return String(decoding: raw, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw fail("unterminated escape") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): raw.append(escape)
                case UInt8(ascii: "n"): raw.append(0x0A)
                case UInt8(ascii: "t"): raw.append(0x09)
                case UInt8(ascii: "r"): raw.append(0x0D)
                case UInt8(ascii: "b"): raw.append(0x08)
                case UInt8(ascii: "f"): raw.append(0x0C)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800...0xDBFF).contains(code), index + 1 < bytes.count,
                        bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                    {
                        index += 2
                        let low = try hex4()
                        if (0xDC00...0xDFFF).contains(low) {
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        } else {
                            // A high surrogate without its low half: U+FFFD for it, then the
                            // second escape as itself. (Found by fuzzing: the unchecked
                            // arithmetic trapped on "\ud800\u0041".)
                            raw.append(contentsOf: Array("\u{FFFD}".utf8))
                            code = low
                        }
                    }
                    let scalar = Unicode.Scalar(code) ?? "\u{FFFD}"
                    raw.append(contentsOf: Array(String(Character(scalar)).utf8))
                default: throw fail("bad escape")
                }
            case 0x00..<0x20: throw fail("control character in string")
            default: raw.append(byte)
            }
        }
    }
}

/// Where and why bytes are not JSON.
public struct JSONSyntaxError: Error, Sendable, Equatable {
    /// The offset of the byte where reading stopped, from 0.
    public var byteOffset: Int
    /// What was wrong there, a short phrase ("expected ':'", "unterminated string").
    public var reason: String
}
