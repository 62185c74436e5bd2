import ProofkitCore

/// How an ONNX Runtime error code becomes a ``ProofkitError``: the one mapping, used by the status
/// funnel `OrtCalls.check`.
enum OrtErrorTranslation {
    /// ORT's name for each `OrtErrorCode`, as in its C API.
    static func name(ofCode code: Int32) -> String {
        switch code {
        case 0: "ORT_OK"
        case 1: "ORT_FAIL"
        case 2: "ORT_INVALID_ARGUMENT"
        case 3: "ORT_NO_SUCHFILE"
        case 4: "ORT_NO_MODEL"
        case 5: "ORT_ENGINE_ERROR"
        case 6: "ORT_RUNTIME_EXCEPTION"
        case 7: "ORT_INVALID_PROTOBUF"
        case 8: "ORT_MODEL_LOADED"
        case 9: "ORT_NOT_IMPLEMENTED"
        case 10: "ORT_INVALID_GRAPH"
        case 11: "ORT_EP_FAIL"
        default: "ORT error \(code)"
        }
    }

    /// The proofkit error code for an ORT error in `phase`:
    /// - a missing file is `.notFound`;
    /// - any other failure to load a model is `.modelInvalid` (bad bytes, bad graph, an operator
    ///   or opset this runtime lacks);
    /// - an invalid argument to `Run` (wrong shape, type or name) is `.invalidArgument`;
    /// - anything else is `.internal`.
    static func code(forORTCode code: Int32, phase: OrtPhase) -> ProofkitError.Code {
        if code == 3 { return .notFound }
        switch phase {
        case .load: return .modelInvalid
        case .run: return code == 2 ? .invalidArgument : .internal
        case .setup: return code == 2 ? .invalidArgument : .internal
        }
    }

    static func error(ortCode: Int32, ortMessage: String, operation: String, phase: OrtPhase, path: String?)
        -> ProofkitError
    {
        let what =
            switch phase {
            case .load: "ONNX Runtime could not load the model"
            case .run: "ONNX Runtime could not run the model"
            case .setup: "ONNX Runtime failed in \(operation)"
            }
        let detail = ortMessage.isEmpty ? "no message" : ortMessage
        return ProofkitError(
            code(forORTCode: ortCode, phase: phase), "\(what): \(detail) (\(name(ofCode: ortCode)))",
            operation: operation, underlying: ortCode, path: path)
    }
}
