import ProofkitCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Reading the pose JSON Lines format of `proofkit squat`:
//     {"t": seconds, "keypoints": {"left_hip": [x, y, conf], ...}}
// Each line is read by ProofkitCore's JSONReader (no Foundation: start-up stays at a few
// milliseconds, and a live stream is parsed a line at a time).

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
