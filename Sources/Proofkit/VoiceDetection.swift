/// Which detector decides that someone is reading aloud.
public enum VoiceDetectionMode: String, Sendable, Equatable, CaseIterable {
    /// The room-level energy gate (``VoiceGate/VoiceActivityGate``) alone. Cheap (well under 1 % of
    /// a core live); counts any voice-like sound, a radio included.
    case energy
    /// The Silero VAD neural detector alone (needs ONNX Runtime and the model): robust to loud
    /// steady noise, but it judges speech, not loudness, so a whisper counts too.
    case silero
    /// Voiced only where both agree: the intersection of the energy gate's segments and Silero's.
    /// Speech must be both loud enough for the room and speech-like.
    case both

    /// Whether this mode needs Silero probabilities.
    public var usesSilero: Bool { self != .energy }
}
