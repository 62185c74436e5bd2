public import ProofkitCore

/// The element type of a tensor, as ONNX defines it.
///
/// Every ONNX type can be *described* (for example in ``TensorDescription``); only the types with
/// a ``TensorElement`` conformance can be passed in or read out.
public enum TensorElementType: Sendable, Hashable, CustomStringConvertible {
    case float32, float64, float16, bfloat16
    case int8, uint8, int16, uint16, int32, uint32, int64, uint64
    case bool, string
    /// An ONNX type code proofkit has no name for.
    case other(Int32)

    /// Maps an ONNX `TensorProto.DataType` code.
    init(onnxCode: Int32) {
        switch onnxCode {
        case 1: self = .float32
        case 2: self = .uint8
        case 3: self = .int8
        case 4: self = .uint16
        case 5: self = .int16
        case 6: self = .int32
        case 7: self = .int64
        case 8: self = .string
        case 9: self = .bool
        case 10: self = .float16
        case 11: self = .float64
        case 12: self = .uint32
        case 13: self = .uint64
        case 16: self = .bfloat16
        default: self = .other(onnxCode)
        }
    }

    /// The ONNX `TensorProto.DataType` code.
    var onnxCode: Int32 {
        switch self {
        case .float32: 1
        case .uint8: 2
        case .int8: 3
        case .uint16: 4
        case .int16: 5
        case .int32: 6
        case .int64: 7
        case .string: 8
        case .bool: 9
        case .float16: 10
        case .float64: 11
        case .uint32: 12
        case .uint64: 13
        case .bfloat16: 16
        case .other(let code): code
        }
    }

    /// A short name such as `"float32"` or `"int64"`.
    public var description: String {
        switch self {
        case .float32: "float32"
        case .float64: "float64"
        case .float16: "float16"
        case .bfloat16: "bfloat16"
        case .int8: "int8"
        case .uint8: "uint8"
        case .int16: "int16"
        case .uint16: "uint16"
        case .int32: "int32"
        case .uint32: "uint32"
        case .int64: "int64"
        case .uint64: "uint64"
        case .bool: "bool"
        case .string: "string"
        case .other(let code): "onnx-type-\(code)"
        }
    }
}

/// A Swift scalar type that can be a tensor element: its memory layout is the ONNX one.
///
/// Conforming types: `Float` (float32), `Double` (float64), `Int64`, `Int32`, `UInt8`, `Int8`
/// and `Bool` (one byte, 0 or 1, like ONNX bool).
public protocol TensorElement: Sendable, Equatable, BitwiseCopyable {
    /// The ONNX element type this Swift type stands for.
    static var elementType: TensorElementType { get }
}

extension Float: TensorElement { public static var elementType: TensorElementType { .float32 } }
extension Double: TensorElement { public static var elementType: TensorElementType { .float64 } }
extension Int64: TensorElement { public static var elementType: TensorElementType { .int64 } }
extension Int32: TensorElement { public static var elementType: TensorElementType { .int32 } }
extension UInt8: TensorElement { public static var elementType: TensorElementType { .uint8 } }
extension Int8: TensorElement { public static var elementType: TensorElementType { .int8 } }
extension Bool: TensorElement { public static var elementType: TensorElementType { .bool } }

/// A value that can be given to ``InferenceSession/run(_:outputs:)`` as an input:
/// a ``Tensor`` of any element type, or an ``AnyTensor``.
public protocol TensorInput: Sendable {
    /// The input with its element type erased.
    var erased: AnyTensor { get }
}

/// A dense, row-major tensor of `Element`s that owns its data (a Swift array, never C memory).
///
/// The shape is checked against the number of scalars when the tensor is made.
///
/// ```swift
/// let x = try Tensor<Float>(shape: [1, 3], scalars: [0.5, -1, 2])
/// let rate = Tensor<Int64>(scalar: 16_000)   // a rank-0 tensor
/// ```
public struct Tensor<Element: TensorElement>: Sendable, Equatable, TensorInput {
    /// The size of each dimension, outermost first. `[]` is a scalar (one element).
    public let shape: [Int]
    /// The elements in row-major order; `scalars.count` is the product of `shape`.
    public private(set) var scalars: [Element]

    /// Makes a tensor.
    /// - Parameters:
    ///   - shape: dimension sizes, each 0 or more; `[]` for a scalar.
    ///   - scalars: the elements in row-major order.
    /// - Throws: `.invalidArgument` when a dimension is negative or when the product of `shape`
    ///   differs from `scalars.count`.
    public init(shape: [Int], scalars: [Element]) throws(ProofkitError) {
        let expected = try Self.elementCount(of: shape)
        guard expected == scalars.count else {
            throw ProofkitError(
                .invalidArgument,
                "A tensor of shape \(Self.describe(shape)) needs \(expected) elements, got \(scalars.count).")
        }
        self.shape = shape
        self.scalars = scalars
    }

    /// Makes a tensor with every element equal to `value`.
    /// - Throws: `.invalidArgument` when a dimension is negative.
    public init(shape: [Int], repeating value: Element) throws(ProofkitError) {
        let count = try Self.elementCount(of: shape)
        self.shape = shape
        self.scalars = Array(repeating: value, count: count)
    }

    /// A rank-0 tensor holding one value (ONNX scalars such as Silero's sample rate).
    public init(scalar: Element) {
        self.shape = []
        self.scalars = [scalar]
    }

    /// Made from data whose count was already checked.
    init(unchecked shape: [Int], scalars: [Element]) {
        self.shape = shape
        self.scalars = scalars
    }

    /// The number of dimensions.
    public var rank: Int { shape.count }

    /// The element at a multi-dimensional index (one index per dimension).
    ///
    /// An index out of range, or the wrong number of indices, is a programmer error and traps.
    public subscript(_ indices: Int...) -> Element {
        get { scalars[flatIndex(indices)] }
        set { scalars[flatIndex(indices)] = newValue }
    }

    private func flatIndex(_ indices: [Int]) -> Int {
        precondition(
            indices.count == shape.count,
            "Tensor index has \(indices.count) components but the tensor has rank \(shape.count)")
        var flat = 0
        for (index, size) in zip(indices, shape) {
            precondition(index >= 0 && index < size, "Tensor index \(index) is out of range 0..<\(size)")
            flat = flat * size + index
        }
        return flat
    }

    public var erased: AnyTensor { AnyTensor(self) }

    static func elementCount(of shape: [Int]) throws(ProofkitError) -> Int {
        var count = 1
        for size in shape {
            guard size >= 0 else {
                throw ProofkitError(.invalidArgument, "Tensor shape \(describe(shape)) has a negative dimension.")
            }
            let (product, overflow) = count.multipliedReportingOverflow(by: size)
            guard !overflow else {
                throw ProofkitError(.invalidArgument, "Tensor shape \(describe(shape)) is too large.")
            }
            count = product
        }
        return count
    }

    static func describe(_ shape: [Int]) -> String {
        "[" + shape.map(String.init).joined(separator: ", ") + "]"
    }
}

/// Internal storage of an ``AnyTensor``: an array of some ``TensorElement``.
protocol ScalarStorage: Sendable {
    var scalarCount: Int { get }
    func withRawBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R
    func isEqual(to other: any ScalarStorage) -> Bool
}

extension Array: ScalarStorage where Element: TensorElement {
    var scalarCount: Int { count }
    func withRawBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeBytes { bytes in
            do throws(E) { return .success(try body(bytes)) } catch { return .failure(error) }
        }
        return try result.get()
    }
    func isEqual(to other: any ScalarStorage) -> Bool {
        guard let other = other as? [Element] else { return false }
        return self == other
    }
}

/// A tensor whose element type is known only at run time: what a model's outputs are before you
/// ask for a type. Owns its data.
public struct AnyTensor: Sendable, Equatable, TensorInput, CustomStringConvertible {
    /// The element type.
    public let elementType: TensorElementType
    /// The size of each dimension, outermost first.
    public let shape: [Int]
    let storage: any ScalarStorage

    /// Erases the element type of `tensor`.
    public init<Element: TensorElement>(_ tensor: Tensor<Element>) {
        elementType = Element.elementType
        shape = tensor.shape
        storage = tensor.scalars
    }

    init<Element: TensorElement>(shape: [Int], scalars: [Element]) {
        elementType = Element.elementType
        self.shape = shape
        storage = scalars
    }

    /// The number of elements.
    public var count: Int { storage.scalarCount }

    /// The tensor with its element type, when it is `Element`.
    /// - Throws: `.invalidArgument` naming both types when the element type differs.
    public func typed<Element: TensorElement>(as type: Element.Type = Element.self) throws(ProofkitError)
        -> Tensor<Element>
    {
        guard let scalars = storage as? [Element] else {
            throw ProofkitError(
                .invalidArgument,
                "The tensor holds \(elementType) elements, not \(Element.elementType).")
        }
        return Tensor(unchecked: shape, scalars: scalars)
    }

    public var erased: AnyTensor { self }

    /// E.g. `float32[1, 3]`.
    public var description: String { "\(elementType)\(Tensor<Float>.describe(shape))" }

    public static func == (lhs: AnyTensor, rhs: AnyTensor) -> Bool {
        lhs.elementType == rhs.elementType && lhs.shape == rhs.shape && lhs.storage.isEqual(to: rhs.storage)
    }
}
