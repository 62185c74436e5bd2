import ProofkitCore

// Placeholder until the issue that owns `proofkit times` lands.
enum TimesCommand: Subcommand {
    static let name = "times"
    static let summary = "prayer times for a place and date"
    static let synopsis = "proofkit times --lat LAT --lon LON [--tz ZONE] [--date D | --days N] [--json]"
    static let discussion = ""
    static let options: [OptionSpec] = [.flag("json", help: "one JSON object per result on stdout")]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        throw ProofkitError(.internal, "'proofkit times' is not built yet")
    }
}
