import ProofkitCore

// Placeholder until the issue that owns `proofkit voice` lands.
enum VoiceCommand: Subcommand {
    static let name = "voice"
    static let summary = "reading proof: listen for the du'a (live or from a recording)"
    static let synopsis = "proofkit voice (--live | RECORDING) [options]"
    static let discussion = ""
    static let options: [OptionSpec] = [.flag("json", help: "one JSON object per result on stdout")]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        throw ProofkitError(.internal, "'proofkit voice' is not built yet")
    }
}
