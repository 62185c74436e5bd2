public import ProofkitCore
internal import ProofkitSystem

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A loaded model, ready to run: one ONNX Runtime session.
///
/// ```swift
/// var session = try InferenceSession(contentsOf: "Models/generated/silero_vad.onnx")
/// print(session.inputs)    // [input: float32[?, ?], state: float32[2, ?, 128], sr: int64[]]
/// let outputs = try session.run([
///     "input": try Tensor<Float>(shape: [1, 576], repeating: 0),
///     "state": try Tensor<Float>(shape: [2, 1, 128], repeating: 0),
///     "sr": Tensor<Int64>(scalar: 16_000),
/// ])
/// let probability = try outputs.tensor("output", as: Float.self).scalars[0]
/// ```
///
/// Ownership: the session is a unique owner (`~Copyable`) of the ORT session and is released when
/// it goes out of scope, or earlier with ``close()``. ``run(_:outputs:)`` is `mutating`, so one
/// session runs one call at a time; to run in parallel, make one session per task.
/// Blocking: loading and running block the calling thread (keep them off the main actor).
///
/// `@unchecked Sendable`: a unique owner with no shared mutable state; ORT sessions may move
/// between threads, and `run` is exclusive by `mutating`.
public struct InferenceSession: ~Copyable, @unchecked Sendable {
    /// How a session is set up.
    public struct Options: Sendable, Hashable {
        /// Graph optimisation levels (ORT's `GraphOptimizationLevel`).
        public enum GraphOptimization: Int32, Sendable, Hashable {
            /// No graph rewriting.
            case disabled = 0
            /// Constant folding and redundant-node removal.
            case basic = 1
            /// Basic plus operator fusions.
            case extended = 2
            /// Everything ORT offers, including layout optimisations (ORT's default).
            case all = 99
        }

        /// Threads for work inside one operator. Default 1: an alarm device stays cool and a
        /// session never competes with audio capture; the small models proofkit runs take
        /// milliseconds on one core. Use 2 to 4 for photo models on a multi-core board; 0 lets
        /// ORT choose (one per physical core). Negative values are a programmer error (trap).
        public var intraOpThreads: Int
        /// Whether idle intra-op threads spin waiting for work. Default `false`: spinning cuts
        /// latency a little but burns a core while an alarm waits (sets
        /// `session.intra_op.allow_spinning`).
        public var allowsSpinning: Bool
        /// Graph optimisation. Default ``GraphOptimization/all``.
        public var graphOptimization: GraphOptimization
        /// Where ONNX Runtime saves the optimised model, in its own format (`.ort`), when the
        /// session is created (`SetOptimizedModelFilePath`, `session.save_model_format=ORT`);
        /// default `nil`: nothing is saved. The file is written by ONNX Runtime in place: give a
        /// temporary name and rename it once the session exists.
        public var optimizedModelPath: String?
        /// Whether ONNX Runtime plans a run's memory from the previous run with the same input
        /// shapes (`EnableMemPattern`). Default `true`. For a model whose input shapes change on
        /// every call (a decoder with a growing cache) each shape gets a plan of its own; `false`
        /// (`DisableMemPattern`) keeps the peak memory lower there.
        public var memoryPattern: Bool = true
        /// Whether the session allocates through ONNX Runtime's CPU arena, which keeps freed
        /// blocks for reuse (`EnableCpuMemArena`). Default `true`; `false` (`DisableCpuMemArena`)
        /// returns a run's working memory to the system after each run.
        public var cpuMemoryArena: Bool = true

        /// - Parameters:
        ///   - intraOpThreads: threads per operator, 0 = ORT's choice; default 1.
        ///   - allowsSpinning: let idle threads spin; default `false`.
        ///   - graphOptimization: default `.all`.
        ///   - optimizedModelPath: save the optimised model there; default `nil`.
        public init(
            intraOpThreads: Int = 1, allowsSpinning: Bool = false, graphOptimization: GraphOptimization = .all,
            optimizedModelPath: String? = nil
        ) {
            precondition(intraOpThreads >= 0, "intraOpThreads must be 0 (ORT's choice) or more")
            self.intraOpThreads = intraOpThreads
            self.allowsSpinning = allowsSpinning
            self.graphOptimization = graphOptimization
            self.optimizedModelPath = optimizedModelPath
        }
    }

    private let calls: OrtCalls
    private let raw: OpaquePointer
    private let memory: OpaquePointer
    private let allocator: OpaquePointer
    private let inputNames: [UnsafeMutablePointer<CChar>]
    private let outputNames: [UnsafeMutablePointer<CChar>]
    /// The mapped model file ONNX Runtime reads in place (ORT format only); unmapped after the
    /// session is released.
    private let backing: MappedFile?

    /// The model's inputs, in the model's order.
    public let inputs: [TensorDescription]
    /// The model's outputs, in the model's order.
    public let outputs: [TensorDescription]
    /// The model file, when the session was loaded from one.
    public let path: String?

    /// Loads a model file.
    /// - Parameters:
    ///   - path: an `.onnx` file.
    ///   - options: threads and optimisation; see ``Options``.
    /// - Throws: `.runtimeUnavailable` (no ONNX Runtime), `.notFound` (no such file),
    ///   `.modelInvalid` (ORT cannot load it; the message is ORT's). Calls `CreateSession`.
    public init(contentsOf path: String, options: Options = Options()) throws(ProofkitError) {
        let runtime = try OnnxRuntime.shared.get()
        try self.init(runtime: runtime, options: options, path: path) { (sessionOptions) throws(ProofkitError) in
            try runtime.calls.createSession(env: runtime.environment, path: path, options: sessionOptions)
        }
    }

    /// Loads a model from its bytes (ORT copies what it needs; `bytes` can be dropped after).
    /// - Parameters:
    ///   - bytes: the content of an `.onnx` file.
    ///   - options: threads and optimisation; see ``Options``.
    /// - Throws: `.runtimeUnavailable`, or `.modelInvalid` with ORT's message.
    ///   Calls `CreateSessionFromArray`.
    public init(bytes: [UInt8], options: Options = Options()) throws(ProofkitError) {
        try self.init(bytes: bytes, options: options, path: nil)
    }

    /// Loads a model file after checking its SHA-256, so a damaged or swapped model is refused
    /// before ORT sees it. The file is read once; the checked bytes are what ORT loads.
    /// - Parameters:
    ///   - path: an `.onnx` file.
    ///   - expectedSHA256: the digest as 64 hex digits (case-insensitive); `nil` loads the file
    ///     unchecked, as ``init(contentsOf:options:)``.
    ///   - options: see ``Options``.
    /// - Throws: `.notFound` (no file), `.io` (unreadable), `.modelInvalid` (digest mismatch,
    ///   naming both digests, or ORT cannot load it), `.invalidArgument` (malformed
    ///   `expectedSHA256`), `.runtimeUnavailable`.
    public init(contentsOf path: String, expectedSHA256: String?, options: Options = Options())
        throws(ProofkitError)
    {
        guard let expectedSHA256 else {
            try self.init(contentsOf: path, options: options)
            return
        }
        let bytes = try ModelFile.read(path, expectedSHA256: expectedSHA256)
        try self.init(bytes: bytes, options: options, path: path)
    }

    /// Loads a large `.onnx` model file after checking its SHA-256 on a memory mapping of it, with
    /// no copy of the file on the heap: the mapping is hashed, its pages are dropped from the
    /// resident set, ONNX Runtime parses the checked bytes from it, and it is unmapped once the
    /// session is made (ORT keeps its own copy of the weights). For Whisper's 95 + 195 MB graphs
    /// this keeps the peak memory near the model's size instead of twice or three times it.
    /// - Parameters:
    ///   - path: an `.onnx` file.
    ///   - expectedSHA256: the digest as 64 hex digits (case-insensitive).
    ///   - options: see ``Options``.
    /// - Throws: as ``init(contentsOf:expectedSHA256:options:)``.
    public init(mappingContentsOf path: String, expectedSHA256: String, options: Options = Options())
        throws(ProofkitError)
    {
        let mapped = try ModelFile.map(path, expectedSHA256: expectedSHA256)
        mapped.releaseResidentPages()
        let runtime = try OnnxRuntime.shared.get()
        try self.init(runtime: runtime, options: options, path: path) { (sessionOptions) throws(ProofkitError) in
            try runtime.calls.createSession(
                env: runtime.environment, bytes: mapped.bytes, options: sessionOptions, path: path)
        }
        withExtendedLifetime(mapped) {}  // unmapped here: ORT copied what it needs
    }

    /// Loads a large `.onnx` model file after checking its SHA-256, letting ONNX Runtime read the
    /// checked file itself: the file is opened, hashed on a mapping that is dropped again, and ORT
    /// opens the same open file (`/proc/self/fd/N`, so a file swapped in at the path meanwhile is not
    /// what it reads). Loaded from a path, ORT keeps less of the model resident than from bytes
    /// (Whisper base int8: about 50 MB less per session, measured with ORT 1.32); this is the
    /// loader for the Whisper graphs. Where `/proc/self/fd` does not exist it behaves as
    /// ``init(mappingContentsOf:expectedSHA256:options:)``.
    /// - Parameters:
    ///   - path: an `.onnx` file.
    ///   - expectedSHA256: the digest as 64 hex digits (case-insensitive).
    ///   - options: see ``Options``.
    /// - Throws: as ``init(contentsOf:expectedSHA256:options:)``.
    public init(checkingFileAt path: String, expectedSHA256: String, options: Options = Options())
        throws(ProofkitError)
    {
        let file = try ModelFile.openChecked(path, expectedSHA256: expectedSHA256)
        guard case .success = POSIX.status(file.procPath) else {
            try self.init(mappingContentsOf: path, expectedSHA256: expectedSHA256, options: options)
            return
        }
        let runtime = try OnnxRuntime.shared.get()
        try self.init(runtime: runtime, options: options, path: path) { (sessionOptions) throws(ProofkitError) in
            try runtime.calls.createSession(
                env: runtime.environment, path: file.procPath, options: sessionOptions, reportedPath: path)
        }
        withExtendedLifetime(file) {}  // closed here: ORT has read what it needs
    }

    /// Loads a model saved in ONNX Runtime's own format (`.ort`, e.g. by `Models/build.sh`, which
    /// saves each photo model fully optimised on the machine that runs it) after checking its
    /// SHA-256. The file is memory-mapped and hashed in place, and ONNX Runtime reads the mapped
    /// bytes directly, weights included (session configuration `session.load_model_format=ORT`,
    /// `session.use_ort_model_bytes_directly=1`, `session.use_ort_model_bytes_for_initializers=1`):
    /// no copy of the model is made and no graph is parsed or optimised again, so the session is
    /// created about twice as fast as from the `.onnx`. The mapping lives as long as the session;
    /// once the session is made, its pages are dropped from the resident set (`MADV_DONTNEED`),
    /// and those ORT reads again are mapped back from the page cache.
    /// - Parameters:
    ///   - path: an `.ort` file.
    ///   - expectedSHA256: the digest as 64 hex digits (case-insensitive).
    ///   - options: see ``Options``; give ``Options/GraphOptimization/disabled`` for a model saved
    ///     after optimisation (nothing is left to do, and it is the fastest).
    /// - Throws: as ``init(contentsOf:expectedSHA256:options:)``; `.modelInvalid` also when ONNX
    ///   Runtime cannot read this ORT format version (a file saved by another release).
    public init(ortFormatContentsOf path: String, expectedSHA256: String, options: Options)
        throws(ProofkitError)
    {
        let mapped = try ModelFile.map(path, expectedSHA256: expectedSHA256)
        let runtime = try OnnxRuntime.shared.get()
        try self.init(
            runtime: runtime, options: options, path: path, backing: mapped,
            configEntries: [
                ("session.load_model_format", "ORT"),
                ("session.use_ort_model_bytes_directly", "1"),
                ("session.use_ort_model_bytes_for_initializers", "1"),
            ]
        ) { (sessionOptions) throws(ProofkitError) in
            try runtime.calls.createSession(
                env: runtime.environment, bytes: mapped.bytes, options: sessionOptions, path: path)
        }
    }

    private init(bytes: [UInt8], options: Options, path: String?) throws(ProofkitError) {
        let runtime = try OnnxRuntime.shared.get()
        try self.init(runtime: runtime, options: options, path: path) { (sessionOptions) throws(ProofkitError) in
            let result: Result<OpaquePointer, ProofkitError> = bytes.withUnsafeBytes { buffer in
                do throws(ProofkitError) {
                    return .success(
                        try runtime.calls.createSession(
                            env: runtime.environment, bytes: buffer, options: sessionOptions, path: path))
                } catch { return .failure(error) }
            }
            return try result.get()
        }
    }

    private init(
        runtime: OrtRuntime, options: Options, path: String?, backing: MappedFile? = nil,
        configEntries: [(String, String)] = [],
        create: (OpaquePointer) throws(ProofkitError) -> OpaquePointer
    ) throws(ProofkitError) {
        precondition(options.intraOpThreads >= 0, "intraOpThreads must be 0 (ORT's choice) or more")
        let calls = runtime.calls
        let sessionOptions = try calls.createSessionOptions(
            intraOpThreads: options.intraOpThreads, allowsSpinning: options.allowsSpinning,
            optimizationLevel: options.graphOptimization.rawValue, configEntries: configEntries,
            optimizedModelPath: options.optimizedModelPath, memoryPattern: options.memoryPattern,
            cpuMemoryArena: options.cpuMemoryArena)
        defer { calls.releaseSessionOptions(sessionOptions) }
        let raw = try create(sessionOptions)
        var inputNames: [UnsafeMutablePointer<CChar>] = []
        var outputNames: [UnsafeMutablePointer<CChar>] = []
        do throws(ProofkitError) {
            let inputs = try calls.describe(session: raw, inputs: true, allocator: runtime.allocator)
            inputNames = inputs.names
            let outputs = try calls.describe(session: raw, inputs: false, allocator: runtime.allocator)
            outputNames = outputs.names
            self.memory = try calls.createCPUMemoryInfo()
            self.inputs = inputs.descriptions
            self.outputs = outputs.descriptions
        } catch {
            calls.freeNames(inputNames + outputNames, allocator: runtime.allocator)
            calls.releaseSession(raw)
            throw path.map { error.at(path: $0) } ?? error
        }
        self.calls = calls
        self.raw = raw
        self.allocator = runtime.allocator
        self.inputNames = inputNames
        self.outputNames = outputNames
        self.path = path
        self.backing = backing
        // The whole file was read to check its SHA-256 and again by ORT to build the session,
        // which packs most weights into buffers of its own: the file's pages need not stay
        // mapped. Those ORT still reads in place come back on the first run (about half of an
        // int8 Lite0); the rest leave the resident set (about 3 MiB of its 5 MiB).
        backing?.releaseResidentPages()
    }

    deinit {
        calls.releaseMemoryInfo(memory)
        calls.freeNames(inputNames + outputNames, allocator: allocator)
        calls.releaseSession(raw)
        withExtendedLifetime(backing) {}  // the mapping goes only after the session
    }

    /// Releases the session now (otherwise it is released when it goes out of scope).
    public consuming func close() {}

    /// Runs the model.
    /// - Parameters:
    ///   - feeds: one tensor per model input, by name (``Tensor`` or ``AnyTensor``). Every input
    ///     must be given, with the element type the model declares.
    ///   - outputs: the outputs to compute, by name; `nil` (the default) computes all of them.
    /// - Returns: copies of the outputs, in the order asked for (the model's order by default).
    /// - Throws: `.invalidArgument` for a missing, unknown or wrongly typed input or an unknown
    ///   output (checked here), or for a shape ORT rejects (ORT's message and code);
    ///   `.internal` for another ORT failure while running. Calls `Run`.
    public mutating func run(_ feeds: [String: any TensorInput], outputs requested: [String]? = nil)
        throws(ProofkitError) -> InferenceOutputs
    {
        if feeds.count > inputs.count {  // some name is not an input: say which (sorted, so stable)
            let expected = inputs.map(\.name)
            let unknown = feeds.keys.filter { !expected.contains($0) }.sorted()
            throw ProofkitError(
                .invalidArgument,
                "The model has no input named \(unknown.joined(separator: ", ")); its inputs are \(expected.joined(separator: ", ")).",
                path: path)
        }
        var ordered: [AnyTensor] = []
        ordered.reserveCapacity(inputs.count)
        for description in inputs {
            guard let feed = feeds[description.name] else {
                throw ProofkitError(
                    .invalidArgument, "Input \(description) was not given.", path: path)
            }
            let tensor = feed.erased
            guard tensor.elementType == description.elementType else {
                throw ProofkitError(
                    .invalidArgument,
                    "Input \(description.name) must hold \(description.elementType.map(String.init(describing:)) ?? "non-tensor") elements, not \(tensor.elementType).",
                    path: path)
            }
            ordered.append(tensor)
        }
        let outputIndices: [Int]
        if let requested {
            var indices: [Int] = []
            for name in requested {
                guard let index = outputs.firstIndex(where: { $0.name == name }) else {
                    throw ProofkitError(
                        .invalidArgument,
                        "The model has no output named \(name); its outputs are \(outputs.map(\.name).joined(separator: ", ")).",
                        path: path)
                }
                indices.append(index)
            }
            outputIndices = indices
        } else {
            outputIndices = Array(outputs.indices)
        }
        let labels = outputIndices.map { outputs[$0].name }
        do {
            let tensors = try calls.run(
                session: raw, memory: memory, inputNames: inputNames, inputs: ordered,
                outputNames: outputIndices.map { outputNames[$0] }, outputLabels: labels)
            return InferenceOutputs(names: labels, tensors: tensors)
        } catch {
            throw path.map { error.at(path: $0) } ?? error
        }
    }
}
