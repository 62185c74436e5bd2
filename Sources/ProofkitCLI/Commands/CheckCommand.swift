import ProofkitCore

// Placeholder until the issue that owns `proofkit check` lands.
enum CheckCommand: Subcommand {
    static let name = "check"
    static let summary = "say whether a sound is safe to book as an alarm, and why not"
    static let synopsis = "proofkit check SOUND [--json]"
    static let discussion = ""
    static let options: [OptionSpec] = [.flag("json", help: "one JSON object per result on stdout")]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        throw ProofkitError(.internal, "'proofkit check' is not built yet")
    }
}
