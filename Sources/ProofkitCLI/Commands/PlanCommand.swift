import ProofkitCore

// Placeholder until the issue that owns `proofkit plan` lands.
enum PlanCommand: Subcommand {
    static let name = "plan"
    static let summary = "plan the alarm chains for the coming days"
    static let synopsis = "proofkit plan --lat LAT --lon LON [--tz ZONE] [--state FILE] [--json]"
    static let discussion = ""
    static let options: [OptionSpec] = [.flag("json", help: "one JSON object per result on stdout")]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        throw ProofkitError(.internal, "'proofkit plan' is not built yet")
    }
}
