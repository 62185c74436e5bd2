public import ProofkitCore

// The pose JSON Lines format that `proofkit squat` reads and `proofkit pose --json` writes, one
// frame a line:
//     {"t": seconds, "keypoints": {"left_hip": [x, y, conf], ...}}
//
// Two decoders that accept exactly the same lines and give the same frames:
// - the fast one (`FastPoseLine`) reads the bytes once, parses numbers straight from them and
//   builds no JSON tree (a line is ~300 bytes and 25 numbers; the general path spent 75 % of the
//   command's time in JSON nodes and `Double(String)`);
// - the general one (ProofkitCore's JSONReader, then the checks of `frame(from:)`) runs only when
//   the fast one meets anything unusual (a bad line, an escape in a string, a number written in a
//   form the fast one does not take, a repeated field), so every message and every accepted
//   oddity is the general reader's own. Tests/SquatCountingTests/PoseLineDecoderTests.swift checks
//   the two against each other on the fixtures and on malformed lines.
//
// Spans, not unsafe pointers: the engine is held to strict memory safety. Reading lines from a
// file or a stream is the caller's (the CLI's `PoseLineReader`: one fixed buffer, lines capped).

/// Turns the lines of a pose JSON Lines stream into `PoseFrame` (ProofkitCore) values for
/// ``SquatRepCounter/process(_:)``, checking each line.
///
/// The format, one frame a line (what `proofkit pose --json` prints):
///
///     {"t": 0.033, "keypoints": {"left_hip": [0.46, 0.55, 0.98], "left_knee": [0.46, 0.72, 0.97]}}
///
/// - `t`: the frame's time in seconds, a finite number that grows from line to line;
/// - `keypoints`: an object of joint name (`PoseJoint`'s raw values, e.g.
///   `"left_hip"`) to `[x, y, confidence]`: normalised image coordinates (y down) and a
///   confidence in 0...1. Other names (`"nose"`, MediaPipe's extra landmarks) are ignored, and so
///   are fields other than `t` and `keypoints`.
///
/// Blank lines (spaces, tabs, a trailing carriage return) give `nil`. Anything else that is not
/// such a frame throws a `ProofkitError` `.decodeFailed` naming the line. The decoder keeps the line count and
/// the last time, so use one decoder per stream, feeding it every line in order.
///
/// ```swift
/// var decoder = PoseLineDecoder()
/// var counter = try SquatRepCounter()
/// for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
///     if let frame = try decoder.decode(String(line)) { _ = counter.process(frame) }
/// }
/// ```
public struct PoseLineDecoder: Sendable {
    /// The number of lines decoded so far (so the 1-based number of the last line), blank ones
    /// included.
    public private(set) var lineNumber = 0
    /// The last frame's time, in seconds (minus infinity before the first frame).
    private var lastTime = -Double.infinity
    /// Use only the general JSONReader path (for the differential test and the benchmark's
    /// "before" figure).
    var generalOnly = false

    /// A decoder at the start of a stream.
    public init() {}

    /// Decodes one line, given without its newline (a trailing carriage return is allowed).
    /// - Parameter line: the line's UTF-8 bytes.
    /// - Returns: the frame, or `nil` for a blank line.
    /// - Throws: `ProofkitError` `.decodeFailed` (its message starts with the line number) when the line is
    ///   not JSON, lacks `t` or `keypoints`, has a keypoint that is not three finite numbers with
    ///   a confidence in 0...1, or its time does not grow.
    public mutating func decode(_ line: Span<UInt8>) throws(ProofkitError) -> PoseFrame? {
        lineNumber += 1
        var count = line.count
        if count > 0, line[count - 1] == 0x0D { count -= 1 }
        var blank = true
        for index in 0..<count where line[index] != 0x20 && line[index] != 0x09 {
            blank = false
            break
        }
        if blank { return nil }
        if !generalOnly, let frame = FastPoseLine.parse(line.extracting(0..<count)), frame.time > lastTime {
            lastTime = frame.time
            return frame
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        for index in 0..<count { bytes.append(line[index]) }
        return try decodeGeneral(bytes)
    }

    /// Decodes one line given as bytes, without its newline; see ``decode(_:)-(Span<UInt8>)``.
    /// - Throws: `ProofkitError` `.decodeFailed`, as ``decode(_:)-(Span<UInt8>)`` does.
    public mutating func decode(_ line: ArraySlice<UInt8>) throws(ProofkitError) -> PoseFrame? {
        try decode(line.span)
    }

    /// Decodes one line given as text, without its newline; see ``decode(_:)-(Span<UInt8>)``.
    /// - Throws: `ProofkitError` `.decodeFailed`, as ``decode(_:)-(Span<UInt8>)`` does.
    public mutating func decode(_ line: String) throws(ProofkitError) -> PoseFrame? {
        try decode(Array(line.utf8)[...])
    }

    private mutating func decodeGeneral(_ bytes: [UInt8]) throws(ProofkitError) -> PoseFrame {
        do throws(ProofkitError) {
            let json: JSONNode
            do {
                json = try JSONReader.node(bytes: bytes)
            } catch {
                throw ProofkitError(.decodeFailed, "not JSON: \(error.reason) (byte \(error.byteOffset + 1))")
            }
            return try frame(from: json)
        } catch {
            throw ProofkitError(.decodeFailed, "line \(lineNumber): \(error.message)")
        }
    }

    private mutating func frame(from json: JSONNode) throws(ProofkitError) -> PoseFrame {
        guard case .object(let members) = json else {
            throw ProofkitError(.decodeFailed, "expected a JSON object {\"t\": ..., \"keypoints\": {...}}")
        }
        guard let timeValue = members.first(where: { $0.0 == "t" })?.1 else {
            throw ProofkitError(.decodeFailed, "missing field \"t\" (seconds)")
        }
        guard case .number(let time) = timeValue else { throw ProofkitError(.decodeFailed, "\"t\" must be a number") }
        guard time.isFinite else { throw ProofkitError(.decodeFailed, "\"t\" is not a finite number") }
        guard time > lastTime else {
            throw ProofkitError(
                .decodeFailed,
                time == lastTime
                    ? "time does not increase (t = \(time) s twice)"
                    : "time goes backwards (t = \(time) s after \(lastTime) s)")
        }
        guard let keypointsValue = members.first(where: { $0.0 == "keypoints" })?.1 else {
            throw ProofkitError(.decodeFailed, "missing field \"keypoints\"")
        }
        guard case .object(let points) = keypointsValue else {
            throw ProofkitError(.decodeFailed, "\"keypoints\" must be an object of name: [x, y, conf]")
        }
        var frame = PoseFrame(time: time)
        for (name, value) in points {
            guard let joint = PoseJoint(rawValue: name) else { continue }  // other joints: ignored
            guard case .array(let triple) = value, triple.count == 3 else {
                throw ProofkitError(.decodeFailed, "keypoint \"\(name)\" must be [x, y, conf]")
            }
            var numbers: [Double] = []
            for element in triple {
                guard case .number(let number) = element, number.isFinite else {
                    throw ProofkitError(.decodeFailed, "keypoint \"\(name)\" must hold three finite numbers")
                }
                numbers.append(number)
            }
            guard numbers[2] >= 0, numbers[2] <= 1 else {
                throw ProofkitError(.decodeFailed, "keypoint \"\(name)\" confidence \(numbers[2]) is not in 0...1")
            }
            frame[joint] = Keypoint(x: numbers[0], y: numbers[1], confidence: numbers[2])
        }
        lastTime = time
        return frame
    }
}

/// The fast pose-line parser: one pass over the bytes, no allocation. Returns `nil` for anything
/// it does not take (the general path then decides, and words the error).
enum FastPoseLine {
    /// Exact powers of ten (every one is a Double without rounding).
    static let powers: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    static func parse(_ bytes: Span<UInt8>) -> PoseFrame? {
        var parser = Parser()
        return parser.line(bytes)
    }

    static let t = Array("t".utf8)
    static let keypoints = Array("keypoints".utf8)
    static let trueWord = Array("true".utf8)
    static let falseWord = Array("false".utf8)
    static let nullWord = Array("null".utf8)
    static let jointNames: [([UInt8], PoseJoint)] = PoseJoint.allCases.map { (Array($0.rawValue.utf8), $0) }

    /// The position in a line; each step is given the line's bytes (a span cannot be stored in a
    /// struct without an experimental feature).
    struct Parser {
        var index = 0

        @inline(__always) mutating func skipSpace(_ bytes: Span<UInt8>) {
            while index < bytes.count {
                let byte = bytes[index]
                guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
                index += 1
            }
        }

        @inline(__always) mutating func take(_ byte: UInt8, _ bytes: Span<UInt8>) -> Bool {
            skipSpace(bytes)
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// A string without escapes: the range of its bytes (quotes excluded).
        mutating func plainString(_ bytes: Span<UInt8>) -> Range<Int>? {
            skipSpace(bytes)
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            let start = index + 1
            var cursor = start
            while cursor < bytes.count {
                let byte = bytes[cursor]
                if byte == UInt8(ascii: "\"") {
                    index = cursor + 1
                    return start..<cursor
                }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
                cursor += 1
            }
            return nil
        }

        static func equals(_ range: Range<Int>, _ word: [UInt8], _ bytes: Span<UInt8>) -> Bool {
            guard range.count == word.count else { return false }
            for offset in 0..<range.count where bytes[range.lowerBound + offset] != word[offset] { return false }
            return true
        }

        /// `-?digits(.digits)?([eE][+-]?digits)?`, exactly as `Double(String)` reads it: by an
        /// exact product or quotient when the digits fit 2^53 and the power of ten is at most 22
        /// (both exact, so the one rounding is correct), else by `Double(String)` itself.
        mutating func number(_ bytes: Span<UInt8>) -> Double? {
            skipSpace(bytes)
            let start = index
            var cursor = index
            let count = bytes.count
            var negative = false
            if cursor < count, bytes[cursor] == UInt8(ascii: "-") {
                negative = true
                cursor += 1
            }
            var mantissa: UInt64 = 0
            var digits = 0
            var significant = 0
            var exponent = 0
            while cursor < count, bytes[cursor] &- 0x30 < 10 {
                let digit = UInt64(bytes[cursor] &- 0x30)
                if significant < 19 {
                    mantissa = mantissa &* 10 &+ digit
                    if mantissa != 0 { significant += 1 }
                } else {
                    exponent += 1
                    significant += 1
                }
                digits += 1
                cursor += 1
            }
            guard digits > 0 else { return nil }
            if cursor < count, bytes[cursor] == UInt8(ascii: ".") {
                cursor += 1
                var fraction = 0
                while cursor < count, bytes[cursor] &- 0x30 < 10 {
                    let digit = UInt64(bytes[cursor] &- 0x30)
                    if significant < 19 {
                        mantissa = mantissa &* 10 &+ digit
                        if mantissa != 0 { significant += 1 }
                        exponent -= 1
                    } else {
                        significant += 1
                    }
                    fraction += 1
                    cursor += 1
                }
                guard fraction > 0 else { return nil }
            }
            if cursor < count, bytes[cursor] | 0x20 == UInt8(ascii: "e") {
                cursor += 1
                var negativeExponent = false
                if cursor < count, bytes[cursor] == UInt8(ascii: "-") || bytes[cursor] == UInt8(ascii: "+") {
                    negativeExponent = bytes[cursor] == UInt8(ascii: "-")
                    cursor += 1
                }
                var value = 0
                var exponentDigits = 0
                while cursor < count, bytes[cursor] &- 0x30 < 10 {
                    if value < 100_000 { value = value * 10 + Int(bytes[cursor] &- 0x30) }
                    exponentDigits += 1
                    cursor += 1
                }
                guard exponentDigits > 0 else { return nil }
                exponent += negativeExponent ? -value : value
            }
            // The general reader takes the longest run of these characters as the number: stop
            // where it stops, or leave the line to it.
            if cursor < count {
                let next = bytes[cursor]
                if next &- 0x30 < 10 || next == UInt8(ascii: "+") || next == UInt8(ascii: "-")
                    || next == UInt8(ascii: ".") || next | 0x20 == UInt8(ascii: "e")
                {
                    return nil
                }
            }
            index = cursor
            var value: Double
            if significant <= 19, mantissa < (1 << 53), exponent >= -22, exponent <= 22 {
                value = Double(mantissa)
                if exponent < 0 {
                    value /= FastPoseLine.powers[-exponent]
                } else if exponent > 0 {
                    value *= FastPoseLine.powers[exponent]
                }
                if negative { value = -value }
            } else {
                // Rare (long or huge numbers): the characters are ASCII digits, signs, '.' and 'e'.
                var text = ""
                for position in start..<cursor { text.unicodeScalars.append(Unicode.Scalar(bytes[position])) }
                guard let parsed = Double(text) else { return nil }
                value = parsed
            }
            return value.isFinite ? value : nil
        }

        /// Skips any JSON value, checking its syntax (strings with escapes are left to the
        /// general reader).
        mutating func skipValue(depth: Int, _ bytes: Span<UInt8>) -> Bool {
            guard depth < 60 else { return false }
            skipSpace(bytes)
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                if take(UInt8(ascii: "}"), bytes) { return true }
                repeat {
                    guard plainString(bytes) != nil, take(UInt8(ascii: ":"), bytes), skipValue(depth: depth + 1, bytes)
                    else {
                        return false
                    }
                } while take(UInt8(ascii: ","), bytes)
                return take(UInt8(ascii: "}"), bytes)
            case UInt8(ascii: "["):
                index += 1
                if take(UInt8(ascii: "]"), bytes) { return true }
                repeat {
                    guard skipValue(depth: depth + 1, bytes) else { return false }
                } while take(UInt8(ascii: ","), bytes)
                return take(UInt8(ascii: "]"), bytes)
            case UInt8(ascii: "\""): return plainString(bytes) != nil
            case UInt8(ascii: "t"): return literal(FastPoseLine.trueWord, bytes)
            case UInt8(ascii: "f"): return literal(FastPoseLine.falseWord, bytes)
            case UInt8(ascii: "n"): return literal(FastPoseLine.nullWord, bytes)
            default: return number(bytes) != nil
            }
        }

        mutating func literal(_ word: [UInt8], _ bytes: Span<UInt8>) -> Bool {
            let count = word.count
            guard index + count <= bytes.count, Self.equals(index..<index + count, word, bytes) else { return false }
            index += count
            return true
        }

        static func joint(_ range: Range<Int>, _ bytes: Span<UInt8>) -> PoseJoint? {
            // Every joint name has 8 bytes or more.
            guard range.count >= 8 else { return nil }
            for (name, joint) in FastPoseLine.jointNames where equals(range, name, bytes) { return joint }
            return nil
        }

        mutating func keypoints(into frame: inout PoseFrame, _ bytes: Span<UInt8>) -> Bool {
            guard take(UInt8(ascii: "{"), bytes) else { return false }
            if take(UInt8(ascii: "}"), bytes) { return true }
            repeat {
                guard let key = plainString(bytes), take(UInt8(ascii: ":"), bytes) else { return false }
                if let joint = Self.joint(key, bytes) {
                    guard take(UInt8(ascii: "["), bytes), let x = number(bytes), take(UInt8(ascii: ","), bytes),
                        let y = number(bytes), take(UInt8(ascii: ","), bytes), let confidence = number(bytes),
                        take(UInt8(ascii: "]"), bytes), confidence >= 0, confidence <= 1
                    else { return false }
                    frame[joint] = Keypoint(x: x, y: y, confidence: confidence)
                } else if !skipValue(depth: 2, bytes) {
                    return false
                }
            } while take(UInt8(ascii: ","), bytes)
            return take(UInt8(ascii: "}"), bytes)
        }

        mutating func line(_ bytes: Span<UInt8>) -> PoseFrame? {
            guard take(UInt8(ascii: "{"), bytes) else { return nil }
            var frame = PoseFrame(time: 0)
            var haveTime = false
            var haveKeypoints = false
            if take(UInt8(ascii: "}"), bytes) { return nil }
            repeat {
                guard let key = plainString(bytes), take(UInt8(ascii: ":"), bytes) else { return nil }
                if Self.equals(key, FastPoseLine.t, bytes) {
                    guard !haveTime, let time = number(bytes) else { return nil }
                    frame.time = time
                    haveTime = true
                } else if Self.equals(key, FastPoseLine.keypoints, bytes) {
                    guard !haveKeypoints, keypoints(into: &frame, bytes) else { return nil }
                    haveKeypoints = true
                } else if !skipValue(depth: 1, bytes) {
                    return nil
                }
            } while take(UInt8(ascii: ","), bytes)
            guard take(UInt8(ascii: "}"), bytes), haveTime, haveKeypoints else { return nil }
            skipSpace(bytes)
            return index == bytes.count ? frame : nil
        }
    }
}
