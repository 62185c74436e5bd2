import ProofkitCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Reading the pose JSON Lines format of `proofkit squat`:
//     {"t": seconds, "keypoints": {"left_hip": [x, y, conf], ...}}
// A small hand-written JSON parser instead of Foundation's JSONSerialization: the CLI links no
// Foundation (startup stays at a few milliseconds) and a live stream is parsed a line at a time.

/// A parsed JSON value (only what the pose format needs to look at).
enum PoseJSON {
    case number(Double)
    case string(String)
    case bool(Bool)
    case null
    case array([PoseJSON])
    case object([(String, PoseJSON)])
}

/// Parses one JSON text from UTF-8 bytes. Errors are short phrases ("expected ':'").
struct PoseJSONParser {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    static func parse(_ bytes: [UInt8]) -> Result<PoseJSON, PoseLineError> {
        var parser = PoseJSONParser(bytes)
        do throws(PoseLineError) {
            let value = try parser.value(depth: 0)
            parser.skipSpace()
            if parser.index < bytes.count { throw PoseLineError("not JSON: extra text after the object") }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

    mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    mutating func value(depth: Int) throws(PoseLineError) -> PoseJSON {
        guard depth < 64 else { throw PoseLineError("not JSON: nested too deeply") }
        skipSpace()
        guard index < bytes.count else { throw PoseLineError("not JSON: the line ends too early") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            index += 1
            var members: [(String, PoseJSON)] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                    throw PoseLineError("not JSON: expected a quoted key")
                }
                let key = try string()
                skipSpace()
                try expect(UInt8(ascii: ":"))
                members.append((key, try value(depth: depth + 1)))
                skipSpace()
                guard index < bytes.count else { throw PoseLineError("not JSON: missing '}'") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                throw PoseLineError("not JSON: expected ',' or '}'")
            }
        case UInt8(ascii: "["):
            index += 1
            var elements: [PoseJSON] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            while true {
                elements.append(try value(depth: depth + 1))
                skipSpace()
                guard index < bytes.count else { throw PoseLineError("not JSON: missing ']'") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
                throw PoseLineError("not JSON: expected ',' or ']'")
            }
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"):
            try word("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try word("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try word("null")
            return .null
        case UInt8(ascii: "N"), UInt8(ascii: "I"):
            throw PoseLineError("not JSON: NaN and Infinity are not JSON numbers")
        default:
            return .number(try number())
        }
    }

    mutating func expect(_ byte: UInt8) throws(PoseLineError) {
        guard index < bytes.count, bytes[index] == byte else {
            throw PoseLineError("not JSON: expected '\(Character(Unicode.Scalar(byte)))'")
        }
        index += 1
    }

    mutating func word(_ text: String) throws(PoseLineError) {
        for byte in text.utf8 { try expect(byte) }
    }

    mutating func number() throws(PoseLineError) -> Double {
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            let isNumberByte = (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e")
                || byte == UInt8(ascii: "E")
            if !isNumberByte { break }
            index += 1
        }
        guard index > start else { throw PoseLineError("not JSON: unexpected character") }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let first = text.first, first == "-" || first.isNumber, let value = Double(text) else {
            throw PoseLineError("not JSON: bad number '\(text)'")
        }
        return value
    }

    mutating func string() throws(PoseLineError) -> String {
        index += 1  // opening quote
        var out: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\"") { return String(decoding: out, as: UTF8.self) }
            if byte == UInt8(ascii: "\\") {
                guard index < bytes.count else { break }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "u"):
                    guard index + 4 <= bytes.count,
                          let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
                    else { throw PoseLineError("not JSON: bad \\u escape") }
                    index += 4
                    out.append(contentsOf: Array(String(Character(Unicode.Scalar(code) ?? "?")).utf8))
                default: out.append(escaped)
                }
                continue
            }
            out.append(byte)
        }
        throw PoseLineError("not JSON: unterminated string")
    }
}

/// A problem with one line of pose input (the caller adds the line number).
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

    /// Decodes one line. Blank lines give `nil`.
    /// - Throws: `PoseLineError` with the line number in the message.
    mutating func decode(_ line: ArraySlice<UInt8>) throws(PoseLineError) -> PoseFrame? {
        lineNumber += 1
        var bytes = Array(line)
        if bytes.last == 0x0D { bytes.removeLast() }
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return nil }
        do throws(PoseLineError) {
            let json: PoseJSON
            switch PoseJSONParser.parse(bytes) {
            case .success(let value): json = value
            case .failure(let error): throw error
            }
            return try frame(from: json)
        } catch {
            throw PoseLineError("line \(lineNumber): \(error.message)")
        }
    }

    private mutating func frame(from json: PoseJSON) throws(PoseLineError) -> PoseFrame {
        guard case .object(let members) = json else {
            throw PoseLineError("expected a JSON object {\"t\": ..., \"keypoints\": {...}}")
        }
        guard let timeValue = members.first(where: { $0.0 == "t" })?.1 else {
            throw PoseLineError("missing field \"t\" (seconds)")
        }
        guard case .number(let time) = timeValue else { throw PoseLineError("\"t\" must be a number") }
        guard time.isFinite else { throw PoseLineError("\"t\" is not a finite number") }
        guard time > lastTime else {
            throw PoseLineError(time == lastTime
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

/// Reads a whole file's bytes.
/// - Throws: `ProofkitError` `.notFound` (missing, or a folder) or `.io`.
func readWholeFile(_ path: String) throws(ProofkitError) -> [UInt8] {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else {
        let code = errno
        if code == ENOENT {
            throw ProofkitError(.notFound, "no such file", operation: "open", underlying: code, path: path)
        }
        throw ProofkitError(.io, "cannot open: \(errnoText())", operation: "open", underlying: code, path: path)
    }
    defer { close(fd) }
    var info = stat()
    if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
        throw ProofkitError(.notFound, "is a folder, not a file", path: path)
    }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n > 0 {
            bytes.append(contentsOf: buffer[0..<n])
        } else if n == 0 {
            return bytes
        } else if errno != EINTR {
            throw ProofkitError(.io, "cannot read: \(errnoText())", operation: "read", underlying: errno, path: path)
        }
    }
}

/// Calls `body` with each line read from `fd` as soon as the line is complete (a live stream),
/// and with a last line without newline at the end of the stream.
func forEachLine(
    fd: Int32, _ body: (ArraySlice<UInt8>) throws -> Void
) throws {
    var pending: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 14)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            throw ProofkitError(.io, "cannot read: \(errnoText())", operation: "read", underlying: errno, path: "stdin")
        }
        if n == 0 { break }
        pending.append(contentsOf: buffer[0..<n])
        var start = 0
        while let newline = pending[start...].firstIndex(of: 0x0A) {
            try body(pending[start..<newline])
            start = newline + 1
        }
        pending.removeFirst(start)
    }
    if !pending.isEmpty { try body(pending[...]) }
}
