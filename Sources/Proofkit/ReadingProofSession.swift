public import ProofkitCore
import VoiceGate

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The reading proof's entry point for audio that arrives in pieces (a recording whole:
/// ``ReadingProofRecording``; a microphone: ``LiveReadingProof``). A reading-proof session that also runs the Silero model when the configured
/// ``VoiceDetectionMode`` needs it: feed it audio and transcript lines as they come, and it feeds
/// ``ReadingProof`` with the audio and the speech probabilities of each 32 ms chunk.
///
/// ```swift
/// var session = try ReadingProofSession(configuration: .init(voiceDetection: .both),
///                                       sileroModelPath: ReadingProofSession.sileroModelPath(environment: env))
/// for chunk in chunks { for event in try session.process(audio: chunk) { show(event) } }
/// let result = try session.finish()
/// ```
///
/// In a Silero mode the audio reaches the proof in whole 32 ms chunks, so decisions lag the
/// audio by at most one chunk (32 ms) plus the model's run time (about 0.1 ms here).
///
/// Owns the model session (`~Copyable`): one session per audio stream.
public struct ReadingProofSession: ~Copyable {
    /// The proof being driven (its configuration says the mode actually in use).
    public private(set) var proof: ReadingProof
    /// Why the session fell back to energy mode (Silero wanted but not installed, see
    /// ``VoiceDetectionFallback``), or `nil`.
    public let fallbackReason: String?

    /// The model, boxed: it is run in place. (Taking an optional non-copyable detector out of this
    /// non-copyable struct and consuming it back after each chunk crashed debug builds with a
    /// division by zero: `chunkSize` read as 0 after the write-back.)
    private let detector: SileroBox?
    private var pending: [Float] = []
    private let chunkSize: Int

    /// Starts a session.
    /// - Parameters:
    ///   - configuration: the text, gate, recogniser use and ``VoiceDetectionMode``.
    ///   - sileroModelPath: the Silero model (see ``sileroModelPath(environment:)``); needed only
    ///     in a Silero mode; `nil` means "not found".
    ///   - fallback: when Silero cannot be loaded (no ONNX Runtime, no model), whether to go on
    ///     with the energy gate alone and say why in ``fallbackReason`` instead of throwing:
    ///     default ``VoiceDetectionFallback/bothOnly`` (only in ``VoiceDetectionMode/both``);
    ///     ``VoiceDetectionFallback/always`` for the default gate. A model whose SHA-256 is not the
    ///     manifest's always throws `.modelInvalid`.
    /// - Throws: `ProofkitError` `.runtimeUnavailable` when Silero is needed but ONNX Runtime or
    ///   the model is missing (the message says how to fix it), `.modelInvalid` when the model is
    ///   damaged (its SHA-256 is not the manifest's) or not Silero, `.invalidArgument` for bad
    ///   gate settings.
    public init(
        configuration: ReadingProofConfiguration, sileroModelPath: String?,
        fallback: VoiceDetectionFallback = .bothOnly
    ) throws(ProofkitError) {
        var configuration = configuration
        var reason: String?
        var detector: SileroVoiceDetector?
        if configuration.voiceDetection.usesSilero {
            do throws(ProofkitError) {
                guard let sileroModelPath else {
                    throw ProofkitError(
                        .runtimeUnavailable,
                        "the Silero VAD model was not found (looked for \(ReadingProofSession.sileroEnvironmentVariable), then \(SileroVoiceDetector.modelFileName) in \(ModelStore.environmentVariable) or \(SileroVoiceDetector.defaultModelPath) above the executable and in the current folder): run Models/build.sh or set \(ModelStore.environmentVariable)"
                    )
                }
                detector = try SileroVoiceDetector(
                    modelPath: sileroModelPath, sampleRate: configuration.gate.sampleRate)
            } catch {
                var failure = error
                if failure.code == .notFound {
                    failure = ProofkitError(
                        .runtimeUnavailable,
                        "the Silero VAD model is missing: run Models/build.sh or set \(ReadingProofSession.sileroEnvironmentVariable)",
                        path: error.path)
                }
                let fallsBack = fallback == .always || (fallback == .bothOnly && configuration.voiceDetection == .both)
                guard fallsBack, failure.code == .runtimeUnavailable else {
                    throw failure
                }
                reason = failure.message
                configuration.voiceDetection = .energy
            }
        }
        proof = try ReadingProof(configuration: configuration)
        fallbackReason = reason
        if let model = detector.take() { self.detector = SileroBox(model) } else { self.detector = nil }
        chunkSize = ReadingProof.sileroChunkSize(sampleRate: configuration.gate.sampleRate)
    }

    /// The environment variable naming the Silero model file: `PROOFKIT_SILERO_MODEL`. The file
    /// is still checked against the models manifest's digest (see
    /// ``SileroVoiceDetector/expectedSHA256(ofModelAt:)``).
    public static let sileroEnvironmentVariable = "PROOFKIT_SILERO_MODEL"

    /// Where the Silero model is: the file named by `PROOFKIT_SILERO_MODEL`; else
    /// `silero_vad.onnx` in the models folder that ``ModelStore`` finds (`PROOFKIT_MODELS`
    /// when set, only there; else `Models/generated` in the running executable's folder or the
    /// nearest folder above it, else under the current folder).
    /// - Parameter environment: the process environment.
    /// - Returns: an existing file's path, or `nil` (the environment's path is returned as given).
    public static func sileroModelPath(environment: [String: String]) -> String? {
        if let explicit = environment[sileroEnvironmentVariable], !explicit.isEmpty { return explicit }
        return try? ModelStore(environment: environment).locate(SileroVoiceDetector.modelFileName)
    }

    /// Feeds captured audio.
    /// - Parameter audio: mono samples in -1...1 at the gate's rate (any chunk size).
    /// - Returns: the proof's events (see ``ReadingProofEvent``).
    /// - Throws: `.internal` when ONNX Runtime fails mid-run.
    public mutating func process(audio: [Float]) throws(ProofkitError) -> [ReadingProofEvent] {
        guard proof.configuration.voiceDetection.usesSilero else { return proof.process(audio: audio) }
        pending += audio
        let whole = pending.count / chunkSize * chunkSize
        guard whole > 0 else { return [] }
        let ready = Array(pending[..<whole])
        pending.removeFirst(whole)
        let probabilities = try runSilero(on: ready)
        return proof.process(audio: ready, speechProbabilities: probabilities)
    }

    /// Feeds one transcript line (see ``ReadingProof/process(transcript:at:)``).
    public mutating func process(transcript line: String, at seconds: Double? = nil) -> [ReadingProofEvent] {
        proof.process(transcript: line, at: seconds)
    }

    /// Flushes a last partial chunk (padded with silence for Silero) and returns the result.
    /// - Returns: the events of the flushed audio and the final result.
    /// - Throws: `.internal` when ONNX Runtime fails.
    public mutating func finish() throws(ProofkitError) -> (events: [ReadingProofEvent], result: ReadingProofResult) {
        var events: [ReadingProofEvent] = []
        if !pending.isEmpty && proof.configuration.voiceDetection.usesSilero {
            let tail = pending
            pending = []
            let padded = tail + [Float](repeating: 0, count: chunkSize - tail.count)
            let probabilities = try runSilero(on: padded)
            events = proof.process(audio: tail, speechProbabilities: probabilities)
        }
        return (events, proof.finish())
    }

    private mutating func runSilero(on samples: [Float]) throws(ProofkitError) -> [Float] {
        guard let box = detector else { return [] }
        var result: [Float] = []
        var start = 0
        while start + chunkSize <= samples.count {
            result.append(try box.model.probability(ofChunk: Array(samples[start..<start + chunkSize])))
            start += chunkSize
        }
        return result
    }
}

/// The Silero detector of one session, run in place (see ``ReadingProofSession``).
private final class SileroBox {
    var model: SileroVoiceDetector

    init(_ model: consuming SileroVoiceDetector) {
        self.model = model
    }
}

// The name before the reading proof's types were named by role (issue 19).
@available(*, deprecated, renamed: "ReadingProofSession")
public typealias VoiceProofSession = ReadingProofSession
