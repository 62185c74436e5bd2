/// The one error type of proofkit's adapters and facade.
///
/// Environment and data errors throw a `ProofkitError`; programmer errors (double close,
/// a buffer of the wrong size) trap instead. An engine's "no" is a ``Verdict``, never an error.
///
/// `description` is one human sentence that names the file (when there is one) and what is wrong.
public struct ProofkitError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What kind of failure this is. Extensible: new codes can be added without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Storage: String, Hashable, Sendable {
            case invalidArgument, notFound, unsupportedFormat, decodeFailed
            case deviceUnavailable, runtimeUnavailable, modelInvalid, io, busy, `internal`
            case cameraBusy, cameraUnplugged, cameraStalled, notACamera, cameraFormat
            case storeCorrupt, storeReadOnly, serviceRunning, serviceNotRunning, notDue
        }
        let storage: Storage
        init(_ storage: Storage) { self.storage = storage }

        /// A parameter or option value is out of range or malformed (a usage error).
        public static let invalidArgument = Code(.invalidArgument)
        /// A file, model or named item does not exist.
        public static let notFound = Code(.notFound)
        /// The input is in a format proofkit cannot read (e.g. AAC/M4A audio).
        public static let unsupportedFormat = Code(.unsupportedFormat)
        /// The input claims a readable format but its content is broken or empty.
        public static let decodeFailed = Code(.decodeFailed)
        /// An audio device is missing, busy or went away.
        public static let deviceUnavailable = Code(.deviceUnavailable)
        /// A runtime library (ONNX Runtime, or a C library loaded on first use) is missing or too old.
        public static let runtimeUnavailable = Code(.runtimeUnavailable)
        /// A model file is corrupt, has the wrong checksum, or does not have the expected shape.
        public static let modelInvalid = Code(.modelInvalid)
        /// Reading or writing failed (permissions, full disk, ...).
        public static let io = Code(.io)
        /// Another process holds a lock (for example on a state file) longer than the wait
        /// allowed; trying again later may succeed.
        public static let busy = Code(.busy)
        /// The camera is open in another program (`EBUSY`).
        public static let cameraBusy = Code(.cameraBusy)
        /// The camera went away (`ENODEV`): unplugged, mid-stream or before it was opened.
        public static let cameraUnplugged = Code(.cameraUnplugged)
        /// The camera streams but gave no frame for 5 s.
        public static let cameraStalled = Code(.cameraStalled)
        /// The device is not a video capture device (a metadata node, a sound card, a file).
        public static let notACamera = Code(.notACamera)
        /// The camera offers no pixel format proofkit decodes (MJPEG or YUYV).
        public static let cameraFormat = Code(.cameraFormat)
        /// The alarm store is not a database, is damaged, or is not a proofkit store; it was left as it is.
        public static let storeCorrupt = Code(.storeCorrupt)
        /// The alarm store's folder or file cannot be written (read-only disk, permissions, another
        /// user's folder when run as root).
        public static let storeReadOnly = Code(.storeReadOnly)
        /// Another alarm service holds the store.
        public static let serviceRunning = Code(.serviceRunning)
        /// The command needs the alarm service and none is running on the store.
        public static let serviceNotRunning = Code(.serviceNotRunning)
        /// A proof or an escape for an alarm chain that is not due (its first ring has not come, or
        /// its proof window has ended); nothing was changed.
        public static let notDue = Code(.notDue)
        /// A bug or an unexpected library failure.
        public static let `internal` = Code(.internal)

        /// The code's stable name, e.g. `"decodeFailed"` (used in JSON output).
        public var name: String { storage.rawValue }
        public var description: String { storage.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// One human sentence saying what is wrong, without the path (see ``path``).
    public var message: String
    /// The C function or step that failed, e.g. `"sf_open"`, when there is one.
    public var operation: String?
    /// The raw code of the underlying library (errno, libsndfile error, ALSA `-errno`, ORT code).
    public var underlying: Int32?
    /// The file the error is about, when there is one.
    public var path: String?

    /// Creates an error.
    /// - Parameters:
    ///   - code: the kind of failure.
    ///   - message: one human sentence.
    ///   - operation: the failing C function or step, if any.
    ///   - underlying: the library's raw error code, if any.
    ///   - path: the file concerned, if any.
    public init(
        _ code: Code, _ message: String, operation: String? = nil, underlying: Int32? = nil,
        path: String? = nil
    ) {
        self.code = code
        self.message = message
        self.operation = operation
        self.underlying = underlying
        self.path = path
    }

    /// `path: message` when there is a path, otherwise the message alone. One line.
    /// The path is shown with ``displayName(_:)`` (control characters and terminal escapes
    /// escaped, so a hostile file name cannot move the cursor or recolour the terminal), and so
    /// is the message.
    public var description: String {
        let oneLine = displayText(message.split(whereSeparator: \.isNewline).joined(separator: " "))
        if let path { return "\(displayName(path)): \(oneLine)" }
        return oneLine
    }

    /// A copy of this error that names `path` (keeps an existing path).
    public func at(path: String) -> ProofkitError {
        var copy = self
        if copy.path == nil { copy.path = path }
        return copy
    }
}

/// A file name as it can be shown on a terminal or in a one-line message: control characters
/// (C0, DEL, C1, which include ESC and so every ANSI sequence) and the Unicode bidirectional
/// overrides are written as `\u{1B}`-style escapes, and a backslash as `\\` only when something
/// was escaped, so that an ordinary name is shown exactly as typed; bytes that are not UTF-8
/// (see ``FilePath``) as `\xE9`. Names longer than 512
/// characters are shortened in the middle.
public func displayName(_ path: String) -> String {
    var shown = displayText(path)
    if shown.count > 512 {
        shown = String(shown.prefix(250)) + "...(\(shown.count - 500) characters)..." + String(shown.suffix(250))
    }
    return shown
}

/// `text` with control characters and bidirectional overrides escaped (see ``displayName(_:)``);
/// newlines and tabs too, so that the result is one line.
public func displayText(_ text: String) -> String {
    func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || (0x7F...0x9F).contains(value) || (0x202A...0x202E).contains(value)
            || (0x2066...0x2069).contains(value)
    }
    guard text.unicodeScalars.contains(where: { needsEscape($0) || FilePath.isEscape($0) }) else { return text }
    var out = ""
    for scalar in text.unicodeScalars {
        if FilePath.isEscape(scalar) {
            out += "\\x" + String(scalar.value - FilePath.escapeBase, radix: 16, uppercase: true)
        } else if needsEscape(scalar) {
            out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        } else if scalar == "\\" {
            out += "\\\\"
        } else {
            out.unicodeScalars.append(scalar)
        }
    }
    return out
}
