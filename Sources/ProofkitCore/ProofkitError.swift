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
            case deviceUnavailable, runtimeUnavailable, modelInvalid, io, `internal`
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
    public var description: String {
        let oneLine = message.split(whereSeparator: \.isNewline).joined(separator: " ")
        if let path { return "\(path): \(oneLine)" }
        return oneLine
    }

    /// A copy of this error that names `path` (keeps an existing path).
    public func at(path: String) -> ProofkitError {
        var copy = self
        if copy.path == nil { copy.path = path }
        return copy
    }
}
