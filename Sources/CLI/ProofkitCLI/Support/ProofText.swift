import DuaMatching
import ProofkitCore

/// Text shown for the proofs' verdicts, shared by the commands that judge them (`voice`,
/// `alarm prove`).
enum ProofText {
    /// The reading proof's verdict line: "accepted: the key words were heard", "rejected: ...".
    static func verdictLine(_ match: DuaMatchResult) -> String {
        switch match.verdict {
        case .accepted:
            switch match.rule {
            case .keyWords: return "accepted: the key words were heard"
            case .readTwice: return "accepted: read aloud twice the reading time, with key words"
            case .voiceOnly: return "accepted: read aloud for the reading time (voice only)"
            case .forcedScore:
                return "accepted: the recogniser finds the text about as likely as what it wrote (forced score)"
            }
        case .rejected(let why):
            return "rejected: \(why.detail)"
        }
    }
}
