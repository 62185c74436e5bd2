// The facade re-exports the pure engines: their values (texts, rules, configurations, results)
// are what the proofs take and give, so a caller (the CLI, an app) imports `Proofkit` alone.
// The adapters (AudioIO, ImageIO, Inference, Storage) stay behind the facade: what a caller needs
// of them is wrapped here (SoundDevices, SoundFile, LiveReadingProof, ...). ProofkitCore's values
// (ProofkitError, Verdict, PoseFrame, Keypoint, ...) come with it: ProofkitEngines re-exports them all.
@_exported public import ProofkitEngines

// The file utilities (bounded reads, the atomic write) are the libc chokepoint's, ProofkitSystem:
// `package` access, imported where needed inside this package and never re-exported.

/// proofkit's version.
public enum ProofkitVersion {
    /// The semantic version string, e.g. `"0.1.0"`.
    public static let string = "0.1.0"
}
