import ProofkitCore

// Placeholder until the issue that owns `proofkit dua` lands.
enum DuaCommand: Subcommand {
    static let name = "dua"
    static let summary = "list, show and check the du'a texts of the reading proof"
    static let synopsis = "proofkit dua (list | show NAME | check TRANSCRIPT) [--json]"
    static let discussion = ""
    static let options: [OptionSpec] = [.flag("json", help: "one JSON object per result on stdout")]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        throw ProofkitError(.internal, "'proofkit dua' is not built yet")
    }
}
