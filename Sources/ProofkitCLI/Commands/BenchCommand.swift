import ProofkitCore

// Placeholder until the issue that owns `proofkit bench` lands.
enum BenchCommand: Subcommand {
    static let name = "bench"
    static let summary = "inference benchmarks to compare boards"
    static let synopsis = "proofkit bench [--model M] [--threads 1,2,4] [--json]"
    static let discussion = ""
    static let options: [OptionSpec] = [.flag("json", help: "one JSON object per result on stdout")]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        throw ProofkitError(.internal, "'proofkit bench' is not built yet")
    }
}
