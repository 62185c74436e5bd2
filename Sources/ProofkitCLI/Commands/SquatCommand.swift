import ProofkitCore

// Placeholder until the issue that owns `proofkit squat` lands.
enum SquatCommand: Subcommand {
    static let name = "squat"
    static let summary = "squat proof: count reps from body-pose keypoints (JSON Lines)"
    static let synopsis = "proofkit squat POSES.jsonl [--target N] [--json] [--plot depth.svg]"
    static let discussion = ""
    static let options: [OptionSpec] = [.flag("json", help: "one JSON object per result on stdout")]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        throw ProofkitError(.internal, "'proofkit squat' is not built yet")
    }
}
