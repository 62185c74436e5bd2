/// Which detector decides that someone is reading aloud.
public enum VoiceDetectionMode: String, Sendable, Equatable, CaseIterable {
    /// The room-level energy gate (`VoiceActivityGate`), whose voiced frames must also
    /// look like speech to `SpeechLikenessVeto` at 16 kHz (see
    /// ``ReadingProofConfiguration/vetoesUnlikeSpeech``). Needs no model file or ONNX Runtime;
    /// counts any voice-like sound, a radio included.
    case energy
    /// The Silero VAD neural detector (needs ONNX Runtime and the model): robust to loud steady
    /// noise, but it judges speech, not loudness, so a whisper counts too. At 16 kHz a whole
    /// segment that does not look like speech to `SpeechLikenessVeto` (bubbling on
    /// its own) is left out (see ``ReadingProofConfiguration/vetoesUnlikeSpeech``).
    case silero
    /// Voiced only where both agree: the intersection of the energy gate's segments and Silero's.
    /// Speech must be both loud enough for the room and speech-like.
    case both

    /// Whether this mode needs Silero probabilities.
    public var usesSilero: Bool { self != .energy }
}

extension VoiceDetectionMode {
    /// The detector used when none is asked for, if it can run (ONNX Runtime and the Silero model
    /// installed): ``silero``, with the veto's segment check at 16 kHz. Measured with
    /// `Benchmarks/voice_gate_eval.py` on real speech mixed into the 14 newest real noise sources,
    /// unheard until this version was fixed (Benchmarks/VOICE_GATE_EVAL.md): 0.0 s voiced in every
    /// noise alone, a median voiced-seconds error of 0.9-1.1 % at 20, 10 and 5 dB SNR, and within
    /// 25 % on every file at 10 dB or more (worst 23.8 %).
    /// ``both`` can only shorten what the energy gate finds and lost whole readings under loud
    /// noise (up to 100 % at 10 dB). Without Silero the session falls back to ``energy`` and says
    /// so (the facade's `ReadingProofSession.fallbackReason`).
    public static let preferred: VoiceDetectionMode = .silero
}
