public import ProofkitCore

/// The name, element type and shape of a model's input or output, as the model declares them.
public struct TensorDescription: Sendable, Hashable, CustomStringConvertible {
    /// One dimension of a declared shape.
    public enum Dimension: Sendable, Hashable, CustomStringConvertible {
        /// A size fixed by the model.
        case fixed(Int)
        /// A size chosen at run time, with the model's symbolic name for it (e.g. `"batch"`)
        /// when it has one.
        case dynamic(String?)

        /// The fixed size, or `nil` when dynamic.
        public var size: Int? {
            if case .fixed(let size) = self { return size }
            return nil
        }

        /// `3`, `batch`, or `?`.
        public var description: String {
            switch self {
            case .fixed(let size): String(size)
            case .dynamic(let name): name ?? "?"
            }
        }
    }

    /// The name to use in ``InferenceSession/run(_:outputs:)``.
    public let name: String
    /// The element type, or `nil` when the value is not a tensor (a sequence, map or optional;
    /// proofkit describes those but does not run them).
    public let elementType: TensorElementType?
    /// The declared shape, outermost dimension first; `[]` for a scalar (or a non-tensor).
    public let shape: [Dimension]

    /// Makes a description (models' descriptions come from ``InferenceSession``).
    public init(name: String, elementType: TensorElementType?, shape: [Dimension]) {
        self.name = name
        self.elementType = elementType
        self.shape = shape
    }

    /// Whether the value is a tensor.
    public var isTensor: Bool { elementType != nil }

    /// Whether `shape` fits this description: same rank, and equal where the size is fixed.
    public func accepts(shape candidate: [Int]) -> Bool {
        candidate.count == shape.count
            && zip(candidate, shape).allSatisfy { size, dimension in dimension.size.map { $0 == size } ?? true }
    }

    /// E.g. `input: float32[batch, 512]`.
    public var description: String {
        let type = elementType.map(String.init(describing:)) ?? "non-tensor"
        return "\(name): \(type)[\(shape.map(\.description).joined(separator: ", "))]"
    }
}

/// The outputs of one run, in the order they were asked for. Owns its data.
public struct InferenceOutputs: Sendable, Equatable {
    /// The output names, in order.
    public let names: [String]
    /// The output tensors, in the order of ``names``.
    public let tensors: [AnyTensor]

    /// The output called `name`, or `nil` when it was not asked for.
    public subscript(name: String) -> AnyTensor? {
        names.firstIndex(of: name).map { tensors[$0] }
    }

    /// The output called `name` as a typed tensor.
    /// - Throws: `.invalidArgument` when there is no such output or its element type is not
    ///   `Element`.
    public func tensor<Element: TensorElement>(_ name: String, as type: Element.Type = Element.self)
        throws(ProofkitError) -> Tensor<Element>
    {
        guard let tensor = self[name] else {
            throw ProofkitError(
                .invalidArgument, "There is no output named \(name); outputs: \(names.joined(separator: ", ")).")
        }
        do {
            return try tensor.typed(as: Element.self)
        } catch {
            throw ProofkitError(
                .invalidArgument, "Output \(name) holds \(tensor.elementType) elements, not \(Element.elementType).")
        }
    }
}
