import ProofkitCore

// Placeholder until the issue that owns `proofkit play` lands.
enum PlayCommand: Subcommand {
    static let name = "play"
    static let summary = "play an alarm sound through ALSA"
    static let synopsis = "proofkit play SOUND [--device D] [--in 10s]"
    static let discussion = ""
    static let options: [OptionSpec] = [.flag("json", help: "one JSON object per result on stdout")]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        throw ProofkitError(.internal, "'proofkit play' is not built yet")
    }
}
