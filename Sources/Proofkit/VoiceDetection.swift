/// When a ``ReadingProofSession`` that cannot load Silero goes on with the energy gate instead of
/// failing. Only a missing ONNX Runtime or a missing model falls back: a damaged or different
/// model (digest mismatch) always fails.
public enum VoiceDetectionFallback: Sendable, Equatable {
    /// Never: a Silero mode without Silero throws.
    case never
    /// In ``VoiceDetectionMode/both`` only (an explicit `--vad both`).
    case bothOnly
    /// In every Silero mode (the default gate, ``VoiceDetectionMode/preferred``, not asked for).
    case always
}
