import Inference
public import ProofkitCore

/// The Silero VAD neural voice detector (v5/v6 ONNX model), run through proofkit's ONNX Runtime
/// wrapper: speech probability for each chunk of audio, with the model's state carried over.
///
/// Protocol of the model (silero-vad 6.2.3, `silero_vad/data/silero_vad.onnx`, opset 16):
/// - `input` float32 `[1, context + chunk]`: the last `context` samples of the previous input
///   (zeros at first) followed by `chunk` new samples in [-1, 1]; at 16 kHz chunk = 512 samples
///   (32 ms) and context = 64, at 8 kHz 256 and 32;
/// - `state` float32 `[2, 1, 128]`, zeros at first, replaced by the output `stateN` after each call;
/// - `sr` int64 scalar: the sample rate;
/// - output `output` float32 `[1, 1]`: the probability that the chunk is speech.
///
/// ```swift
/// var vad = try SileroVoiceDetector(modelPath: SileroVoiceDetector.defaultModelPath)
/// let probabilities = try vad.probabilities(of: clip)   // one per 32 ms chunk
/// ```
///
/// The detector owns an `InferenceSession` (`~Copyable`): one detector per audio stream.
public struct SileroVoiceDetector: ~Copyable {
    /// Where set-up puts the model, relative to the package root.
    public static let defaultModelPath = "Models/generated/silero_vad.onnx"
    /// SHA-256 of `silero_vad.onnx` from the silero-vad 6.2.3 wheel, the model set-up installs.
    public static let modelSHA256 = "1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3"

    /// The sample rate the detector expects, in Hz (16 000 or 8 000).
    public let sampleRate: Int
    /// New samples per chunk: 512 at 16 kHz, 256 at 8 kHz (32 ms either way).
    public let chunkSize: Int
    /// Samples of the previous input prepended to each chunk: 64 at 16 kHz, 32 at 8 kHz.
    public let contextSize: Int

    /// The recurrent state, shape [2, 1, 128].
    private static let stateShape = [2, 1, 128]

    private var session: InferenceSession
    private var state: [Float]
    private var context: [Float]
    private let rate: Tensor<Int64>

    /// The name of the model file in a models folder: `silero_vad.onnx`.
    public static let modelFileName = "silero_vad.onnx"

    /// The SHA-256 the Silero model at `path` must have: the `silero_vad.onnx` entry of the
    /// `manifest.json` beside it (written by `Models/build.sh`), else the committed digest
    /// ``modelSHA256`` (the file in the pinned silero-vad wheel). Every load is checked against
    /// one of these: a file under another name (`PROOFKIT_SILERO_MODEL`) gets no digest of its own.
    /// - Throws: `.modelInvalid` when the folder's `manifest.json` exists but is malformed.
    public static func expectedSHA256(ofModelAt path: String) throws(ProofkitError) -> String {
        let manifest = try ModelsManifest.load(besideFileAt: path)
        return manifest?.entries[modelFileName]?.sha256 ?? modelSHA256
    }

    /// Loads the model after checking its SHA-256.
    /// - Parameters:
    ///   - modelPath: the `.onnx` file (e.g. ``defaultModelPath``).
    ///   - expectedSHA256: the digest the file must have; `nil` (the default) means
    ///     ``expectedSHA256(ofModelAt:)`` (the manifest's, else ``modelSHA256``). The file is
    ///     always checked: a damaged or different model is refused before ONNX Runtime reads it.
    ///   - sampleRate: 16 000 (default) or 8 000 Hz.
    ///   - threads: intra-op threads, default 1 (the model is tiny).
    ///   - onnxRuntimeLibrary: the `libonnxruntime.so` file to run it with, loaded now (one
    ///     runtime a process, as ``ModelStore/init(folder:onnxRuntimeLibrary:)`` says); `nil` (the default) uses
    ///     the runtime already loaded, else the usual search (`PROOFKIT_ORT_LIBRARY`, set-up's
    ///     copy, the system's).
    /// - Throws: `.invalidArgument` (unsupported rate, or ONNX Runtime already loaded from
    ///   another file), `.notFound`, `.modelInvalid` (digest mismatch, a malformed manifest, or
    ///   not a Silero v5/v6 model), `.runtimeUnavailable`.
    public init(
        modelPath: String, expectedSHA256: String? = nil, sampleRate: Int = 16_000, threads: Int = 1,
        onnxRuntimeLibrary: String? = nil
    ) throws(ProofkitError) {
        if let onnxRuntimeLibrary { try OnnxRuntime.load(libraryPath: onnxRuntimeLibrary) }
        guard sampleRate == 16_000 || sampleRate == 8_000 else {
            throw ProofkitError(
                .invalidArgument, "Silero VAD runs at 16000 or 8000 Hz, not \(sampleRate) Hz: resample the audio first."
            )
        }
        let digest: String
        if let expectedSHA256 {
            digest = expectedSHA256
        } else {
            digest = try Self.expectedSHA256(ofModelAt: modelPath)
        }
        let session = try InferenceSession(
            contentsOf: modelPath, expectedSHA256: digest, options: InferenceSession.Options(intraOpThreads: threads))
        try Self.checkSignature(of: session, path: modelPath)
        self.sampleRate = sampleRate
        chunkSize = ReadingProof.sileroChunkSize(sampleRate: sampleRate)
        contextSize = sampleRate == 16_000 ? 64 : 32
        state = Array(repeating: 0, count: 2 * 128)
        context = Array(repeating: 0, count: contextSize)
        rate = Tensor(scalar: Int64(sampleRate))
        self.session = session
    }

    /// The length of one chunk, in seconds (0.032).
    public var chunkSeconds: Double { Double(chunkSize) / Double(sampleRate) }

    /// Forgets the state and context: the next chunk starts a new stream.
    public mutating func reset() {
        state = Array(repeating: 0, count: 2 * 128)
        context = Array(repeating: 0, count: contextSize)
    }

    /// The speech probability of the next chunk of the stream, carrying the state forward.
    /// - Parameter chunk: exactly ``chunkSize`` mono samples in [-1, 1] at ``sampleRate``.
    /// - Returns: the probability (0...1) that the chunk is speech.
    /// - Throws: `.invalidArgument` when the chunk has the wrong length; `.internal` when ORT fails.
    public mutating func probability(ofChunk chunk: [Float]) throws(ProofkitError) -> Float {
        guard chunk.count == chunkSize else {
            throw ProofkitError(
                .invalidArgument, "A Silero chunk is \(chunkSize) samples at \(sampleRate) Hz, not \(chunk.count).")
        }
        let input = try Tensor(shape: [1, contextSize + chunkSize], scalars: context + chunk)
        let stateTensor = try Tensor(shape: Self.stateShape, scalars: state)
        let outputs = try session.run(
            ["input": input, "state": stateTensor, "sr": rate], outputs: ["output", "stateN"])
        let next = try outputs.tensor("stateN", as: Float.self)
        guard next.shape == Self.stateShape else {
            throw ProofkitError(.modelInvalid, "Silero returned a state of shape \(next.shape), not [2, 1, 128].")
        }
        state = next.scalars
        context = Array(chunk.suffix(contextSize))
        guard let probability = try outputs.tensor("output", as: Float.self).scalars.first else {
            throw ProofkitError(.modelInvalid, "Silero returned no probability.")
        }
        return probability
    }

    /// The speech probability of every chunk of a mono stream, from a fresh state. The last
    /// partial chunk is padded with zeros.
    /// - Parameter samples: mono samples in [-1, 1] at ``sampleRate``.
    /// - Returns: one probability per ``chunkSize`` samples; chunk `i` covers
    ///   `i * chunkSeconds ..< (i + 1) * chunkSeconds`.
    /// - Throws: `.internal` when ORT fails.
    public mutating func probabilities(ofSamples samples: [Float]) throws(ProofkitError) -> [Float] {
        reset()
        var result: [Float] = []
        result.reserveCapacity((samples.count + chunkSize - 1) / chunkSize)
        var start = 0
        while start < samples.count {
            var chunk = Array(samples[start..<min(start + chunkSize, samples.count)])
            if chunk.count < chunkSize { chunk += Array(repeating: 0, count: chunkSize - chunk.count) }
            result.append(try probability(ofChunk: chunk))
            start += chunkSize
        }
        return result
    }

    /// ``probabilities(ofSamples:)`` for a clip (mixed to mono).
    /// - Throws: `.invalidArgument` when the clip's rate is not ``sampleRate``.
    public mutating func probabilities(of clip: AudioClip) throws(ProofkitError) -> [Float] {
        guard clip.sampleRate == sampleRate else {
            throw ProofkitError(
                .invalidArgument,
                "The audio is at \(clip.sampleRate) Hz but the detector runs at \(sampleRate) Hz: resample it first.")
        }
        return try probabilities(ofSamples: clip.mono())
    }

    /// Releases the model now (otherwise when the detector goes out of scope).
    public consuming func close() {}

    private static func checkSignature(of session: borrowing InferenceSession, path: String) throws(ProofkitError) {
        func find(_ name: String, in list: [TensorDescription]) -> TensorDescription? {
            list.first { $0.name == name }
        }
        let input = find("input", in: session.inputs)
        let state = find("state", in: session.inputs)
        let rate = find("sr", in: session.inputs)
        let output = find("output", in: session.outputs)
        let stateN = find("stateN", in: session.outputs)
        let fits =
            input?.elementType == .float32 && input?.shape.count == 2
            && state?.elementType == .float32 && state?.accepts(shape: [2, 1, 128]) == true
            && rate?.elementType == .int64 && rate?.shape.isEmpty == true
            && output?.elementType == .float32 && stateN?.elementType == .float32
            && session.inputs.count == 3
        guard fits else {
            let inputs = session.inputs.map(\.description).joined(separator: ", ")
            let outputs = session.outputs.map(\.description).joined(separator: ", ")
            throw ProofkitError(
                .modelInvalid,
                "This is not a Silero VAD v5/v6 model: it takes \(inputs) and gives \(outputs); expected input float32[1, n], state float32[2, 1, 128], sr int64[] -> output, stateN.",
                path: path)
        }
    }
}
