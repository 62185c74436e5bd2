// The facade re-exports the pure engines: their values (texts, rules, configurations, results)
// are what the proofs take and give, so a caller (the CLI, an app) imports `Proofkit` alone.
// The adapters (AudioIO, ImageIO, Inference, Storage) stay behind the facade: what a caller needs
// of them is wrapped here (SoundDevices, SoundFile, LiveReadingProof, ...).
@_exported public import DuaMatching
@_exported public import ImageProof
@_exported public import PrayerPlanning
@_exported public import SpeechRecognition
@_exported public import SquatCounting
@_exported public import VoiceGate
// The file utilities the CLI shares with the adapters, until the libc chokepoint (ProofkitSystem,
// issue 19) owns them: a bounded read and the atomic write.
@_exported public import enum AudioIO.AtomicFile
@_exported public import enum AudioIO.BoundedFile

/// proofkit's version.
public enum ProofkitVersion {
    /// The semantic version string, e.g. `"0.1.0"`.
    public static let string = "0.1.0"
}
