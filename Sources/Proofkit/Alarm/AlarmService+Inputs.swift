import ProofkitCore
internal import ProofkitSystem

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The keys that stop a ring: input devices (`/dev/input/eventN`, or a FIFO of `struct
/// input_event`s), opened at start, tried again while missing, and read without blocking.
extension AlarmService {
    /// What opening an input device gave.
    enum InputOpening {
        /// Open, non-blocking: an input device, or a FIFO of `struct input_event`s.
        case opened(Int32, isFIFO: Bool)
        /// Not there (now): why, for the log.
        case missing(String)
        /// There, but never a source of keys: a file, a folder, `/dev/null`, a terminal, or a device
        /// this user may not read.
        case refused(ProofkitError)
    }

    /// Opens `path` as a source of key presses (non-blocking; a FIFO opens without a writer). Only an
    /// input device (it answers `EVIOCGVERSION`) or a FIFO is kept: anything else would read as
    /// endless ends of file, or replay its bytes as presses.
    static func openInputDevice(_ path: String) -> InputOpening {
        let fd: Int32
        switch POSIX.open(path, [.readOnly, .nonBlocking]) {
        case .success(let opened): fd = opened
        case .failure(let errno) where errno.isNotFound: return .missing("\(errno)")
        case .failure(let errno) where errno == .permissionDenied:
            return .refused(
                ProofkitError(
                    .io, "cannot read this input device (\(errno)): add the service's user to the 'input' group",
                    operation: "open", underlying: errno.code, path: path))
        case .failure(let errno):
            return .refused(
                ProofkitError(.io, "cannot open the input device: \(errno)", underlying: errno.code, path: path))
        }
        guard case .success(let status) = POSIX.status(descriptor: fd) else {
            POSIX.closeDescriptor(fd)
            return .missing("gone while opened")
        }
        if status.isFIFO || WakeUp.isInputDevice(fd) { return .opened(fd, isFIFO: status.isFIFO) }
        POSIX.closeDescriptor(fd)
        let kind = status.isCharacterDevice ? "a device but not an input device" : status.kind
        return .refused(
            ProofkitError(
                status.isDirectory ? .notFound : .unsupportedFormat,
                "is \(kind); keys are read from a keyboard, keypad or presenter (/dev/input/eventN) or a FIFO of its events",
                path: path))
    }

    /// Records the input devices open now and those missing (`alarm status` shows them).
    func recordInputs() throws(ProofkitError) {
        try store.write { () throws(ProofkitError) in try store.put(inputsRecord) }
    }

    /// The settings ``recordInputs()`` writes (``checkDevice()`` writes them with its own).
    var inputsRecord: [String: String?] {
        [
            "service.inputs": inputs.values.map(\.path).sorted().joined(separator: ","),
            "service.inputs_missing": missingInputs.keys.sorted().joined(separator: ","),
        ]
    }

    /// Opens the named input devices that are missing (see ``missingInputs``), logging each that
    /// opens; one refused now (replaced by a file, say) is logged and no longer tried.
    func reopenMissingInputs() {
        let before = missingInputs.count
        // A failed write leaves status a tick behind; the service itself goes on.
        defer { if missingInputs.count != before { try? recordInputs() } }
        for path in missingInputs.keys.sorted() {
            switch Self.openInputDevice(path) {
            case .opened(let fd, let isFIFO):
                inputs[fd] = (path, [], isFIFO)
                missingInputs.removeValue(forKey: path)
                log("input-opened", "-", path)
            case .missing: break
            case .refused(let error):
                missingInputs.removeValue(forKey: path)
                log("input-refused", "-", error.description)
            }
        }
    }

    /// Reads the key events waiting on `fd`; a press of the stop key silences the ring now
    /// sounding, as `alarm stop` does. Returns whether a tick is due.
    func readInput(_ fd: Int32) throws(ProofkitError) -> Bool {
        guard let input = inputs[fd] else { return false }
        var buffer = [UInt8](repeating: 0, count: StopKey.eventSize * 64)
        switch buffer.withUnsafeMutableBytes({ POSIX.read(fd, into: $0) }) {
        case .success(let count) where count > 0:
            let bytes = input.pending + buffer[0..<count]
            let (presses, used) = StopKey.presses(in: bytes)
            inputs[fd] = (input.path, Array(bytes[used...]), input.isFIFO)
            var due = false
            for press in presses {
                guard options.stopKey.matches(press) else { continue }
                due = try stopRing(by: "key \(press.code) on \(input.path)") != nil || due
            }
            return due
        case .failure(let errno) where errno == .wouldBlock:
            return false
        default:
            // The end of a FIFO whose writer left (open it again for the next one), or a device
            // that went away (unplugged: logged, and tried again at each tick until it is back).
            inputs.removeValue(forKey: fd)
            POSIX.closeDescriptor(fd)
            if input.isFIFO, case .opened(let again, _) = Self.openInputDevice(input.path) {
                inputs[again] = (input.path, [], true)
            } else {
                log("input-gone", "-", input.path)
                missingInputs[input.path] = "gone"
                try? recordInputs()  // only what status shows: a failed write must not stop the service
            }
            return false
        }
    }
}
