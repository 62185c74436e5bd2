import ProofkitCore

// Placeholder until the issue that owns `proofkit trim` lands.
enum TrimCommand: Subcommand {
    static let name = "trim"
    static let summary = "turn a recitation or adhan into a CAF alarm sound (16-bit PCM, under 30 s)"
    static let synopsis = "proofkit trim INPUT [-o OUTPUT.caf] [options]"
    static let discussion = ""
    static let options: [OptionSpec] = [.flag("json", help: "one JSON object per result on stdout")]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        throw ProofkitError(.internal, "'proofkit trim' is not built yet")
    }
}
