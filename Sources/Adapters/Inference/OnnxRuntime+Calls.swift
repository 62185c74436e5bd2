// The only file of the Inference module that calls C: the loader and every ONNX Runtime slot.
//
// Every slot goes through `slot(_:_:)`, and every status through `check(_:_:phase:path:)`, the
// single funnel that turns an ORT status into a `ProofkitError` carrying ORT's code and message.
internal import COnnxRuntime
import ProofkitCore
import Synchronization

/// Which table slots were called, recorded only once a test has set `isRecording` (a child process
/// of the tests, so the log starts with the process: see `InferenceTests/DeclaredSlotExitTests`),
/// so a test can prove that every slot the C module declares is exercised. Off, a slot call costs
/// one relaxed atomic load more.
enum OrtSlotLog {
    static let isRecording = Atomic<Bool>(false)
    static let called = Mutex<Set<String>>([])
    static func record(_ name: StaticString) {
        _ = called.withLock { $0.insert(name.description) }
    }
}

/// Where in the life of a session a call failed; it decides which `ProofkitError.Code` an ORT
/// error becomes.
enum OrtPhase {
    /// Creating the environment, options, memory descriptions; reading metadata.
    case setup
    /// Creating a session from a model file or bytes.
    case load
    /// Running a session.
    case run
}

/// The library's function table, with one Swift method per slot proofkit calls.
///
/// `@unchecked Sendable`: the table is immutable static memory of the library, and ORT documents
/// its C API as callable from any thread (a session's `Run` we keep exclusive ourselves).
struct OrtCalls: @unchecked Sendable {
    let table: UnsafePointer<PKOrtApi>

    @inline(__always)
    private func slot<Function>(_ name: StaticString, _ function: Function?) -> Function {
        if OrtSlotLog.isRecording.load(ordering: .relaxed) { OrtSlotLog.record(name) }
        guard let function else { fatalError("ONNX Runtime's table has no \(name) slot") }
        return function
    }

    // MARK: Loading the library

    /// Outcome of `proofkit_ort_load` for one path.
    enum LoadOutcome {
        case loaded(OrtCalls, version: String)
        case notLoadable(String)
        case notOnnxRuntime(String)
        case tooOld(version: String)
    }

    /// dlopen + OrtGetApiBase + GetApi(pinned) for one path (see loader.c).
    static func load(path: String) -> LoadOutcome {
        var library = PKOrtLibrary()
        let result = proofkit_ort_load(path, &library)
        let version = cString(inTuple: library.version)
        let detail = cString(inTuple: library.detail)
        switch result {
        case PKOrtLoadOK:
            guard let api = library.api else { return .notLoadable("no function table") }
            return .loaded(OrtCalls(table: api), version: version)
        case PKOrtLoadTooOld: return .tooOld(version: version)
        case PKOrtLoadNoEntryPoint: return .notOnnxRuntime(detail)
        default: return .notLoadable(detail)
        }
    }

    /// The pinned API version (the `PROOFKIT_ORT_API_VERSION` macro).
    static var pinnedAPIVersion: Int { Int(PROOFKIT_ORT_API_VERSION) }

    /// Reads a NUL-terminated string out of a fixed `char[N]` field (imported as a tuple).
    private static func cString<T>(inTuple tuple: T) -> String {
        withUnsafeBytes(of: tuple) { bytes in
            String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
    }

    // MARK: The status funnel

    /// Throws the error a non-NULL status stands for, after releasing it.
    /// - Parameters:
    ///   - status: the returned status; NULL means success.
    ///   - operation: the ORT function name, e.g. `"CreateSession"`.
    ///   - phase: decides the `ProofkitError.Code` (see ``OrtErrorTranslation``).
    ///   - path: the model file concerned, if any.
    func check(_ status: OpaquePointer?, _ operation: String, phase: OrtPhase, path: String? = nil)
        throws(ProofkitError)
    {
        guard let status else { return }
        let code = Int32(bitPattern: slot("status_code", table.pointee.status_code)(status).rawValue)
        let message = slot("status_message", table.pointee.status_message)(status).map {
            String(cString: $0)
        }
        slot("release_status", table.pointee.release_status)(status)
        throw OrtErrorTranslation.error(
            ortCode: code, ortMessage: message ?? "", operation: operation, phase: phase, path: path)
    }

    // MARK: Environment and allocator

    func createEnvironment(logLevel: Int32, logID: String) throws(ProofkitError) -> OpaquePointer {
        var env: OpaquePointer?
        try check(
            slot("create_env", table.pointee.create_env)(
                PKOrtLogLevel(rawValue: UInt32(logLevel)), logID, &env), "CreateEnv", phase: .setup)
        guard let env else { fatalError("CreateEnv succeeded without an environment") }
        return env
    }

    func defaultAllocator() throws(ProofkitError) -> OpaquePointer {
        var allocator: OpaquePointer?
        try check(
            slot("default_allocator", table.pointee.default_allocator)(&allocator),
            "GetAllocatorWithDefaultOptions", phase: .setup)
        guard let allocator else { fatalError("GetAllocatorWithDefaultOptions returned nothing") }
        return allocator
    }

    func createCPUMemoryInfo() throws(ProofkitError) -> OpaquePointer {
        var info: OpaquePointer?
        try check(
            slot("create_cpu_memory_info", table.pointee.create_cpu_memory_info)(
                PKOrtAllocatorArena, PKOrtMemoryDefault, &info), "CreateCpuMemoryInfo", phase: .setup)
        guard let info else { fatalError("CreateCpuMemoryInfo returned nothing") }
        return info
    }

    func releaseMemoryInfo(_ info: OpaquePointer) {
        slot("release_memory_info", table.pointee.release_memory_info)(info)
    }

    // MARK: Session options

    /// Creates session options with the given settings and extra session configuration entries
    /// (key, value), in order. The caller releases them.
    func createSessionOptions(
        intraOpThreads: Int, allowsSpinning: Bool, optimizationLevel: Int32, configEntries: [(String, String)] = [],
        optimizedModelPath: String? = nil, memoryPattern: Bool = true, cpuMemoryArena: Bool = true
    ) throws(ProofkitError) -> OpaquePointer {
        var created: OpaquePointer?
        try check(
            slot("create_session_options", table.pointee.create_session_options)(&created),
            "CreateSessionOptions", phase: .setup)
        guard let options = created else { fatalError("CreateSessionOptions returned nothing") }
        do throws(ProofkitError) {
            try check(
                slot("set_intra_op_threads", table.pointee.set_intra_op_threads)(
                    options, Int32(clamping: intraOpThreads)), "SetIntraOpNumThreads", phase: .setup)
            try check(
                slot("set_optimization_level", table.pointee.set_optimization_level)(
                    options, PKOrtOptimizationLevel(rawValue: UInt32(optimizationLevel))),
                "SetSessionGraphOptimizationLevel", phase: .setup)
            if !memoryPattern {
                try check(
                    slot("disable_mem_pattern", table.pointee.disable_mem_pattern)(options), "DisableMemPattern",
                    phase: .setup)
            }
            if !cpuMemoryArena {
                try check(
                    slot("disable_cpu_mem_arena", table.pointee.disable_cpu_mem_arena)(options), "DisableCpuMemArena",
                    phase: .setup)
            }
            var entries = [("session.intra_op.allow_spinning", allowsSpinning ? "1" : "0")] + configEntries
            if let optimizedModelPath {
                try check(
                    slot("set_optimized_model_path", table.pointee.set_optimized_model_path)(
                        options, optimizedModelPath),
                    "SetOptimizedModelFilePath", phase: .setup)
                entries.append(("session.save_model_format", "ORT"))
            }
            for (key, value) in entries {
                try check(
                    slot("add_session_config_entry", table.pointee.add_session_config_entry)(options, key, value),
                    "AddSessionConfigEntry", phase: .setup)
            }
        } catch {
            releaseSessionOptions(options)
            throw error
        }
        return options
    }

    func releaseSessionOptions(_ options: OpaquePointer) {
        slot("release_session_options", table.pointee.release_session_options)(options)
    }

    // MARK: Sessions

    /// `reportedPath`: the path errors name (default `path`).
    func createSession(env: OpaquePointer, path: String, options: OpaquePointer, reportedPath: String? = nil)
        throws(ProofkitError) -> OpaquePointer
    {
        var session: OpaquePointer?
        try check(
            slot("create_session_from_file", table.pointee.create_session_from_file)(
                env, path, options, &session), "CreateSession", phase: .load, path: reportedPath ?? path)
        guard let session else { fatalError("CreateSession returned nothing") }
        return session
    }

    func createSession(
        env: OpaquePointer, bytes: UnsafeRawBufferPointer, options: OpaquePointer, path: String?
    ) throws(ProofkitError) -> OpaquePointer {
        var session: OpaquePointer?
        try check(
            slot("create_session_from_bytes", table.pointee.create_session_from_bytes)(
                env, bytes.baseAddress, bytes.count, options, &session),
            "CreateSessionFromArray", phase: .load, path: path)
        guard let session else { fatalError("CreateSessionFromArray returned nothing") }
        return session
    }

    func releaseSession(_ session: OpaquePointer) {
        slot("release_session", table.pointee.release_session)(session)
    }

    /// Names and types of a session's inputs (`isInput`) or outputs. The names are returned
    /// twice: as Swift strings in the descriptions, and as the C strings ORT allocated, which the
    /// session keeps for `Run` and frees with ``freeNames(_:allocator:)``.
    func describe(session: OpaquePointer, inputs isInput: Bool, allocator: OpaquePointer)
        throws(ProofkitError) -> (descriptions: [TensorDescription], names: [UnsafeMutablePointer<CChar>])
    {
        var count = 0
        if isInput {
            try check(
                slot("session_input_count", table.pointee.session_input_count)(session, &count),
                "SessionGetInputCount", phase: .setup)
        } else {
            try check(
                slot("session_output_count", table.pointee.session_output_count)(session, &count),
                "SessionGetOutputCount", phase: .setup)
        }
        var names: [UnsafeMutablePointer<CChar>] = []
        var descriptions: [TensorDescription] = []
        do throws(ProofkitError) {
            for index in 0..<count {
                var name: UnsafeMutablePointer<CChar>?
                var typeInfo: OpaquePointer?
                if isInput {
                    try check(
                        slot("session_input_name", table.pointee.session_input_name)(
                            session, index, allocator, &name), "SessionGetInputName", phase: .setup)
                } else {
                    try check(
                        slot("session_output_name", table.pointee.session_output_name)(
                            session, index, allocator, &name), "SessionGetOutputName", phase: .setup)
                }
                guard let name else { fatalError("SessionGetInputName/OutputName returned nothing") }
                names.append(name)
                if isInput {
                    try check(
                        slot("session_input_type", table.pointee.session_input_type)(
                            session, index, &typeInfo), "SessionGetInputTypeInfo", phase: .setup)
                } else {
                    try check(
                        slot("session_output_type", table.pointee.session_output_type)(
                            session, index, &typeInfo), "SessionGetOutputTypeInfo", phase: .setup)
                }
                guard let typeInfo else { fatalError("SessionGetInputTypeInfo returned nothing") }
                defer { slot("release_type_info", table.pointee.release_type_info)(typeInfo) }
                descriptions.append(try describe(typeInfo: typeInfo, name: String(cString: name)))
            }
        } catch {
            freeNames(names, allocator: allocator)
            throw error
        }
        return (descriptions, names)
    }

    private func describe(typeInfo: OpaquePointer, name: String) throws(ProofkitError) -> TensorDescription {
        var tensorInfo: OpaquePointer?
        try check(
            slot("type_info_as_tensor_info", table.pointee.type_info_as_tensor_info)(typeInfo, &tensorInfo),
            "CastTypeInfoToTensorInfo", phase: .setup)
        guard let tensorInfo else {  // a sequence, map or optional: described, never run by us
            return TensorDescription(name: name, elementType: nil, shape: [])
        }
        let elementType = try self.elementType(of: tensorInfo)
        let dimensions = try self.dimensions(of: tensorInfo)
        var dimensionNames = [UnsafePointer<CChar>?](repeating: nil, count: dimensions.count)
        try check(
            slot("tensor_dimension_names", table.pointee.tensor_dimension_names)(
                tensorInfo, &dimensionNames, dimensionNames.count), "GetSymbolicDimensions", phase: .setup)
        let shape = zip(dimensions, dimensionNames).map { size, cName -> TensorDescription.Dimension in
            if size >= 0 { return .fixed(Int(size)) }
            let label = cName.map { String(cString: $0) } ?? ""
            return .dynamic(label.isEmpty ? nil : label)
        }
        return TensorDescription(name: name, elementType: elementType, shape: shape)
    }

    private func elementType(of tensorInfo: OpaquePointer) throws(ProofkitError) -> TensorElementType {
        var type = PKOrtElementUndefined
        try check(
            slot("tensor_element_type", table.pointee.tensor_element_type)(tensorInfo, &type),
            "GetTensorElementType", phase: .setup)
        return TensorElementType(onnxCode: Int32(bitPattern: type.rawValue))
    }

    private func dimensions(of tensorInfo: OpaquePointer) throws(ProofkitError) -> [Int64] {
        var rank = 0
        try check(
            slot("tensor_rank", table.pointee.tensor_rank)(tensorInfo, &rank), "GetDimensionsCount",
            phase: .setup)
        var dimensions = [Int64](repeating: 0, count: rank)
        try check(
            slot("tensor_dimensions", table.pointee.tensor_dimensions)(tensorInfo, &dimensions, rank),
            "GetDimensions", phase: .setup)
        return dimensions
    }

    func freeNames(_ names: [UnsafeMutablePointer<CChar>], allocator: OpaquePointer) {
        for name in names {
            // AllocatorFree only fails for a foreign pointer, which would be our bug.
            if let status = slot("allocator_free", table.pointee.allocator_free)(allocator, name) {
                slot("release_status", table.pointee.release_status)(status)
                assertionFailure("AllocatorFree failed for a name ORT allocated")
            }
        }
    }

    // MARK: Running

    /// Runs `session` on `inputs` (in the session's input order, named by `inputNames`) and
    /// returns copies of the outputs named by `outputNames`.
    ///
    /// Input data is borrowed (not copied) for exactly the span of `Run`. Output data is copied
    /// into Swift arrays, and each ORT value is released as soon as it is copied.
    func run(
        session: OpaquePointer, memory: OpaquePointer,
        inputNames: [UnsafeMutablePointer<CChar>], inputs: [AnyTensor],
        outputNames: [UnsafeMutablePointer<CChar>], outputLabels: [String]
    ) throws(ProofkitError) -> [AnyTensor] {
        try withBorrowedBytes(inputs[...], borrowed: []) { (buffers) throws(ProofkitError) -> [AnyTensor] in
            var inputValues: [OpaquePointer?] = []
            inputValues.reserveCapacity(inputs.count)
            var outputValues = [OpaquePointer?](repeating: nil, count: outputNames.count)
            defer {
                for value in inputValues { if let value { releaseValue(value) } }
                for value in outputValues { if let value { releaseValue(value) } }
            }
            for (tensor, bytes) in zip(inputs, buffers) {
                inputValues.append(try createTensor(tensor, bytes: bytes, memory: memory))
            }
            let inputNamePointers = inputNames.map { UnsafePointer($0) as UnsafePointer<CChar>? }
            let outputNamePointers = outputNames.map { UnsafePointer($0) as UnsafePointer<CChar>? }
            try check(
                slot("run", table.pointee.run)(
                    session, nil, inputNamePointers, inputValues, inputValues.count,
                    outputNamePointers, outputNamePointers.count, &outputValues),
                "Run", phase: .run)
            var results: [AnyTensor] = []
            results.reserveCapacity(outputValues.count)
            for index in outputValues.indices {
                guard let value = outputValues[index] else {
                    fatalError("Run succeeded without output \(outputLabels[index])")
                }
                results.append(try copyTensor(value, name: outputLabels[index]))
                // Released as soon as it is copied, so the outputs are held twice one at a time
                // rather than all at once (Whisper's encoder gives 37 MB of them).
                releaseValue(value)
                outputValues[index] = nil
            }
            return results
        }
    }

    /// Pins the bytes of every tensor at once (nested `withUnsafeBytes`), then calls `body`.
    private func withBorrowedBytes<R>(
        _ tensors: ArraySlice<AnyTensor>, borrowed: [UnsafeRawBufferPointer],
        _ body: ([UnsafeRawBufferPointer]) throws(ProofkitError) -> R
    ) throws(ProofkitError) -> R {
        guard let first = tensors.first else { return try body(borrowed) }
        return try first.storage.withRawBytes { (bytes) throws(ProofkitError) -> R in
            try withBorrowedBytes(tensors.dropFirst(), borrowed: borrowed + [bytes], body)
        }
    }

    private func createTensor(_ tensor: AnyTensor, bytes: UnsafeRawBufferPointer, memory: OpaquePointer)
        throws(ProofkitError) -> OpaquePointer
    {
        let shape = tensor.shape.map { Int64($0) }
        // ORT wants a non-NULL buffer even for an empty tensor; it never writes to inputs.
        let buffer = bytes.baseAddress.map { UnsafeMutableRawPointer(mutating: $0) } ?? emptyTensorBuffer
        var value: OpaquePointer?
        try check(
            slot("create_tensor_over_buffer", table.pointee.create_tensor_over_buffer)(
                memory, buffer, bytes.count, shape, shape.count,
                PKOrtElementType(rawValue: UInt32(bitPattern: tensor.elementType.onnxCode)), &value),
            "CreateTensorWithDataAsOrtValue", phase: .run)
        guard let value else { fatalError("CreateTensorWithDataAsOrtValue returned nothing") }
        return value
    }

    private func releaseValue(_ value: OpaquePointer) {
        slot("release_value", table.pointee.release_value)(value)
    }

    /// Copies an output value into an ``AnyTensor`` (owned Swift arrays; no pointer escapes).
    private func copyTensor(_ value: OpaquePointer, name: String) throws(ProofkitError) -> AnyTensor {
        var isTensor: Int32 = 0
        try check(
            slot("value_is_tensor", table.pointee.value_is_tensor)(value, &isTensor), "IsTensor",
            phase: .run)
        guard isTensor != 0 else {
            throw ProofkitError(
                .modelInvalid, "Output \(name) is not a tensor (a sequence or map), which proofkit does not read.",
                operation: "IsTensor")
        }
        var created: OpaquePointer?
        try check(
            slot("value_tensor_info", table.pointee.value_tensor_info)(value, &created),
            "GetTensorTypeAndShape", phase: .run)
        guard let info = created else { fatalError("GetTensorTypeAndShape returned nothing") }
        defer { slot("release_tensor_info", table.pointee.release_tensor_info)(info) }
        let elementType = try self.elementType(of: info)
        let shape = try dimensions(of: info).map { Int($0) }
        var count = 0
        try check(
            slot("tensor_element_count", table.pointee.tensor_element_count)(info, &count),
            "GetTensorShapeElementCount", phase: .run)
        var data: UnsafeMutableRawPointer?
        try check(
            slot("tensor_data", table.pointee.tensor_data)(value, &data), "GetTensorMutableData", phase: .run)
        let source = UnsafeRawPointer(data)
        switch elementType {
        case .float32: return AnyTensor(shape: shape, scalars: Self.copy(Float.self, from: source, count: count))
        case .float64: return AnyTensor(shape: shape, scalars: Self.copy(Double.self, from: source, count: count))
        case .int64: return AnyTensor(shape: shape, scalars: Self.copy(Int64.self, from: source, count: count))
        case .int32: return AnyTensor(shape: shape, scalars: Self.copy(Int32.self, from: source, count: count))
        case .uint8: return AnyTensor(shape: shape, scalars: Self.copy(UInt8.self, from: source, count: count))
        case .int8: return AnyTensor(shape: shape, scalars: Self.copy(Int8.self, from: source, count: count))
        case .bool: return AnyTensor(shape: shape, scalars: Self.copy(Bool.self, from: source, count: count))
        default:
            throw ProofkitError(
                .modelInvalid, "Output \(name) has \(elementType) elements, which proofkit does not read.",
                operation: "GetTensorElementType")
        }
    }

    private static func copy<Element: TensorElement>(
        _ type: Element.Type, from source: UnsafeRawPointer?, count: Int
    ) -> [Element] {
        guard count > 0, let source else { return [] }
        return Array(unsafeUninitializedCapacity: count) { buffer, initialized in
            UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(
                from: source, byteCount: count * MemoryLayout<Element>.stride)
            initialized = count
        }
    }
}

/// A one-byte buffer standing in for the data of empty input tensors.
/// `nonisolated(unsafe)`: written once at initialisation, never written again, only read.
nonisolated(unsafe) private let emptyTensorBuffer = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)
