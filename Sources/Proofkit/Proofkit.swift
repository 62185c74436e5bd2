/// proofkit's version.
public enum ProofkitVersion {
    /// The semantic version string, e.g. `"0.1.0"`.
    public static let string = "0.1.0"
}
