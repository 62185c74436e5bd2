import ProofkitCore

// Placeholder until the issue that owns `proofkit demo` lands.
enum DemoCommand: Subcommand {
    static let name = "demo"
    static let summary = "run the main job on built-in defaults: prepare and check an alarm sound, then the photo and reading proofs"
    static let synopsis = "proofkit demo [--json]"
    static let discussion = ""
    static let options: [OptionSpec] = [.flag("json", help: "one JSON object per result on stdout")]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        throw ProofkitError(.internal, "'proofkit demo' is not built yet")
    }
}
