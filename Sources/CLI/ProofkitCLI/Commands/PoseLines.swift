import ProofkitCore
internal import ProofkitSystem

// Reading the pose JSON Lines format of `proofkit squat`:
//     {"t": seconds, "keypoints": {"left_hip": [x, y, conf], ...}}
//
// Two decoders that accept exactly the same lines and give the same frames:
// - the fast one (`FastPoseLine`) reads the bytes once, parses numbers straight from them and
//   builds no JSON tree (a line is ~300 bytes and 25 numbers; the general path spent 75 % of the
//   command's time in JSON nodes and `Double(String)`);
// - the general one (ProofkitCore's JSONReader, then the checks of `frame(from:)`) runs only when
//   the fast one meets anything unusual (a bad line, an escape in a string, a number written in a
//   form the fast one does not take, a repeated field), so every message and every accepted
//   oddity is the general reader's own. Tests/ProofkitCLITests/PoseLineTests.swift checks the
//   two against each other on the fixtures and on malformed lines.
//
// Lines come from `PoseLineReader`: one fixed buffer, a file read exactly as stdin, lines capped
// at ``PoseLineReader/maximumLineLength`` (so `squat - < /dev/zero` ends at once with an error and
// memory stays bounded whatever the input's length or what `st_size` says).

struct PoseLineError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// Turns JSON Lines into pose frames, checking each line: JSON, the `t` and `keypoints` fields,
/// `[x, y, conf]` triples of finite numbers, and time that keeps growing.
struct PoseLineDecoder {
    /// Lines seen so far (1-based number of the last line).
    private(set) var lineNumber = 0
    private var lastTime = -Double.infinity
    /// Use only the general JSONReader path (for the differential test and the benchmark's
    /// "before" figure).
    var generalOnly = false

    /// Decodes one line (without its newline). Blank lines give `nil`.
    /// - Throws: `PoseLineError` with the line number in the message.
    mutating func decode(_ line: UnsafeBufferPointer<UInt8>) throws(PoseLineError) -> PoseFrame? {
        lineNumber += 1
        var count = line.count
        if count > 0, line[count - 1] == 0x0D { count -= 1 }
        var blank = true
        for index in 0..<count where line[index] != 0x20 && line[index] != 0x09 {
            blank = false
            break
        }
        if blank { return nil }
        if !generalOnly, let frame = FastPoseLine.parse(UnsafeBufferPointer(rebasing: line[0..<count])),
            frame.time > lastTime
        {
            lastTime = frame.time
            return frame
        }
        return try decodeGeneral(Array(UnsafeBufferPointer(rebasing: line[0..<count])))
    }

    /// Decodes one line given as bytes (tests, small inputs).
    mutating func decode(_ line: ArraySlice<UInt8>) throws(PoseLineError) -> PoseFrame? {
        let copy = Array(line)
        return try copy.withUnsafeBufferPointer { buffer throws(PoseLineError) in try decode(buffer) }
    }

    private mutating func decodeGeneral(_ bytes: [UInt8]) throws(PoseLineError) -> PoseFrame {
        do throws(PoseLineError) {
            let json: JSONNode
            do {
                json = try JSONReader.node(bytes: bytes)
            } catch {
                throw PoseLineError("not JSON: \(error.reason) (byte \(error.byteOffset + 1))")
            }
            return try frame(from: json)
        } catch {
            throw PoseLineError("line \(lineNumber): \(error.message)")
        }
    }

    private mutating func frame(from json: JSONNode) throws(PoseLineError) -> PoseFrame {
        guard case .object(let members) = json else {
            throw PoseLineError("expected a JSON object {\"t\": ..., \"keypoints\": {...}}")
        }
        guard let timeValue = members.first(where: { $0.0 == "t" })?.1 else {
            throw PoseLineError("missing field \"t\" (seconds)")
        }
        guard case .number(let time) = timeValue else { throw PoseLineError("\"t\" must be a number") }
        guard time.isFinite else { throw PoseLineError("\"t\" is not a finite number") }
        guard time > lastTime else {
            throw PoseLineError(
                time == lastTime
                    ? "time does not increase (t = \(time) s twice)"
                    : "time goes backwards (t = \(time) s after \(lastTime) s)")
        }
        guard let keypointsValue = members.first(where: { $0.0 == "keypoints" })?.1 else {
            throw PoseLineError("missing field \"keypoints\"")
        }
        guard case .object(let points) = keypointsValue else {
            throw PoseLineError("\"keypoints\" must be an object of name: [x, y, conf]")
        }
        var frame = PoseFrame(time: time)
        for (name, value) in points {
            guard let joint = PoseJoint(rawValue: name) else { continue }  // other joints: ignored
            guard case .array(let triple) = value, triple.count == 3 else {
                throw PoseLineError("keypoint \"\(name)\" must be [x, y, conf]")
            }
            var numbers: [Double] = []
            for element in triple {
                guard case .number(let number) = element, number.isFinite else {
                    throw PoseLineError("keypoint \"\(name)\" must hold three finite numbers")
                }
                numbers.append(number)
            }
            guard numbers[2] >= 0, numbers[2] <= 1 else {
                throw PoseLineError("keypoint \"\(name)\" confidence \(numbers[2]) is not in 0...1")
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

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> PoseFrame? {
        var parser = Parser(bytes: bytes)
        return parser.line()
    }

    struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        @inline(__always) mutating func skipSpace() {
            while index < bytes.count {
                let byte = bytes[index]
                guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
                index += 1
            }
        }

        @inline(__always) mutating func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// A string without escapes: the range of its bytes (quotes excluded).
        mutating func plainString() -> Range<Int>? {
            skipSpace()
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

        func equals(_ range: Range<Int>, _ word: StaticString) -> Bool {
            guard range.count == word.utf8CodeUnitCount else { return false }
            let text = word.utf8Start
            for offset in 0..<range.count where bytes[range.lowerBound + offset] != text[offset] { return false }
            return true
        }

        /// `-?digits(.digits)?([eE][+-]?digits)?`, exactly as `Double(String)` reads it: by an
        /// exact product or quotient when the digits fit 2^53 and the power of ten is at most 22
        /// (both exact, so the one rounding is correct), else by `Double(String)` itself.
        mutating func number() -> Double? {
            skipSpace()
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
                    value /= Self.powers(-exponent)
                } else if exponent > 0 {
                    value *= Self.powers(exponent)
                }
                if negative { value = -value }
            } else {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<cursor]), as: UTF8.self)
                guard let parsed = Double(text) else { return nil }
                value = parsed
            }
            return value.isFinite ? value : nil
        }

        @inline(__always) static func powers(_ exponent: Int) -> Double {
            FastPoseLine.powers.withUnsafeBufferPointer { $0[exponent] }
        }

        /// Skips any JSON value, checking its syntax (strings with escapes are left to the
        /// general reader).
        mutating func skipValue(depth: Int) -> Bool {
            guard depth < 60 else { return false }
            skipSpace()
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                if take(UInt8(ascii: "}")) { return true }
                repeat {
                    guard plainString() != nil, take(UInt8(ascii: ":")), skipValue(depth: depth + 1) else {
                        return false
                    }
                } while take(UInt8(ascii: ","))
                return take(UInt8(ascii: "}"))
            case UInt8(ascii: "["):
                index += 1
                if take(UInt8(ascii: "]")) { return true }
                repeat {
                    guard skipValue(depth: depth + 1) else { return false }
                } while take(UInt8(ascii: ","))
                return take(UInt8(ascii: "]"))
            case UInt8(ascii: "\""): return plainString() != nil
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return number() != nil
            }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count, equals(index..<index + count, word) else { return false }
            index += count
            return true
        }

        static let jointNames: [(StaticString, PoseJoint)] = [
            ("left_hip", .leftHip), ("right_hip", .rightHip), ("left_knee", .leftKnee),
            ("right_knee", .rightKnee), ("left_ankle", .leftAnkle), ("right_ankle", .rightAnkle),
            ("left_shoulder", .leftShoulder), ("right_shoulder", .rightShoulder),
        ]

        func joint(_ range: Range<Int>) -> PoseJoint? {
            // The names differ in length and first letter: compare the few that match those.
            guard range.count >= 8 else { return nil }
            for (name, joint) in Self.jointNames where equals(range, name) { return joint }
            return nil
        }

        mutating func keypoints(into frame: inout PoseFrame) -> Bool {
            guard take(UInt8(ascii: "{")) else { return false }
            if take(UInt8(ascii: "}")) { return true }
            repeat {
                guard let key = plainString(), take(UInt8(ascii: ":")) else { return false }
                if let joint = joint(key) {
                    guard take(UInt8(ascii: "[")), let x = number(), take(UInt8(ascii: ",")),
                        let y = number(), take(UInt8(ascii: ",")), let confidence = number(),
                        take(UInt8(ascii: "]")), confidence >= 0, confidence <= 1
                    else { return false }
                    frame[joint] = Keypoint(x: x, y: y, confidence: confidence)
                } else if !skipValue(depth: 2) {
                    return false
                }
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "}"))
        }

        mutating func line() -> PoseFrame? {
            guard take(UInt8(ascii: "{")) else { return nil }
            var frame = PoseFrame(time: 0)
            var haveTime = false
            var haveKeypoints = false
            if take(UInt8(ascii: "}")) { return nil }
            repeat {
                guard let key = plainString(), take(UInt8(ascii: ":")) else { return nil }
                if equals(key, "t") {
                    guard !haveTime, let time = number() else { return nil }
                    frame.time = time
                    haveTime = true
                } else if equals(key, "keypoints") {
                    guard !haveKeypoints, keypoints(into: &frame) else { return nil }
                    haveKeypoints = true
                } else if !skipValue(depth: 1) {
                    return nil
                }
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")), haveTime, haveKeypoints else { return nil }
            skipSpace()
            return index == bytes.count ? frame : nil
        }
    }
}

/// Reads lines from a file descriptor through one fixed buffer: a file exactly as stdin, each
/// line handed over as soon as it is complete (a live stream), the last line without a newline
/// too. Memory is the buffer, whatever the input's length.
struct PoseLineReader {
    /// The longest line accepted, in bytes (a pose line is a few hundred; 33 named MediaPipe
    /// landmarks with long numbers stay under 4 KiB). 1 MiB.
    static let maximumLineLength = 1 << 20
    /// Bytes read at once.
    static let chunk = 1 << 16

    /// Calls `body` with each line (without its newline).
    /// - Throws: `ProofkitError` `.decodeFailed` for a line longer than the maximum (naming
    ///   its number), `.io` for a read error; or what `body` throws.
    static func forEachLine(
        fd: Int32, name: String, deadline: Double? = nil, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void
    ) throws {
        do {
            try POSIX.forEachLine(fd, maximumLineLength: maximumLineLength, chunk: chunk, deadline: deadline, body)
        } catch LineReadFailure.read(let errno) {
            throw ProofkitError(.io, "cannot read: \(errno)", operation: "read", underlying: errno.code, path: name)
        } catch LineReadFailure.lineTooLong(let lineNumber) {
            throw ProofkitError(
                .decodeFailed,
                "line \(lineNumber) is longer than \(maximumLineLength / 1024 / 1024) MiB (a pose line is a few hundred bytes)",
                path: name)
        }
    }

    /// Opens `path` for reading (a regular file, a FIFO, `/dev/stdin`, ...), once, as `check` and
    /// `trim` do (``POSIX/openInput(_:what:)``): a FIFO whose writer sends nothing is given up after
    /// 10 s instead of waiting forever.
    /// - Throws: `ProofkitError` `.notFound` (missing, or a folder) or `.io` (cannot open; no writer).
    static func openInput(_ path: String) throws(ProofkitError) -> Int32 {
        try POSIX.openInput(path, what: "pose file").fd
    }
}
