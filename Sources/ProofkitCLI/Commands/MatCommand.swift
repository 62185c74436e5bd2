import ProofkitCore

// Placeholder until the issue that owns `proofkit mat` lands.
enum MatCommand: Subcommand {
    static let name = "mat"
    static let summary = "photo proof: is this a prayer mat?"
    static let synopsis = "proofkit mat PHOTO... [--engine lite0|lite0-fp32|clip] [--json]"
    static let discussion = ""
    static let options: [OptionSpec] = [.flag("json", help: "one JSON object per result on stdout")]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        throw ProofkitError(.internal, "'proofkit mat' is not built yet")
    }
}
