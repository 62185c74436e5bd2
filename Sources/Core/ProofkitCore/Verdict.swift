/// The answer of a proof engine: accepted with a score, or rejected with a reason.
///
/// A rejection is a normal outcome, not an error (after swift-certificates'
/// `PolicyEvaluationResult`). Scores are in the engine's own unit, documented by the engine
/// (a probability 0...1 for the photo proof, seconds or key words for the reading proof, reps
/// for the squat proof).
public enum Verdict: Sendable, Equatable, CustomStringConvertible {
    /// The proof holds. `score` is the engine's score that met its threshold.
    case accepted(score: Double)
    /// The proof does not hold, and why.
    case rejected(reason: RejectionReason)

    /// `true` for ``accepted(score:)``.
    public var isAccepted: Bool {
        if case .accepted = self { return true }
        return false
    }

    /// `"accepted"` or `"rejected"` (stable, used in JSON output).
    public var name: String { isAccepted ? "accepted" : "rejected" }

    public var description: String {
        switch self {
        case .accepted(let score): return "accepted (score \(score))"
        case .rejected(let reason): return "rejected: \(reason.detail)"
        }
    }
}

/// Why a proof was rejected: a small stable kind plus a human detail sentence.
public struct RejectionReason: Sendable, Equatable, CustomStringConvertible {
    /// A stable machine-readable kind.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The kind's stable name, e.g. `"belowThreshold"` (used in JSON output).
        public let name: String
        /// Creates a kind. Engines define their own as static members in extensions.
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The score did not reach the threshold.
        public static let belowThreshold = Kind("belowThreshold")
        /// The input was too poor to judge (too dark, too quiet, too little data).
        public static let insufficientInput = Kind("insufficientInput")
        /// Not enough of the required content was found (key words, reps, voiced time).
        public static let incomplete = Kind("incomplete")
    }

    /// The stable kind.
    public var kind: Kind
    /// One human sentence, e.g. "too dark: turn on a light".
    public var detail: String

    /// Creates a reason.
    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String { detail }
}
