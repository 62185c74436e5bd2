internal import CProofkitShims

/// The CPU's SHA instructions for ``SHA256`` (x86 SHA extensions; see `CProofkitShims`). The only
/// file in `Inference` that calls `CProofkitShims`.
enum HardwareSHA256 {
    /// Whether this CPU has them (checked once, with CPUID).
    static let isAvailable: Bool = proofkit_sha256_hardware_available() == 1

    /// Compresses `blocks` 64-byte blocks at `data` into `state`. Only when ``isAvailable``.
    static func compress(
        _ state: inout (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32), _ data: UnsafeRawPointer,
        blocks: Int
    ) {
        precondition(isAvailable, "the CPU has no SHA instructions")
        withUnsafeMutableBytes(of: &state) { words in
            proofkit_sha256_hardware_blocks(
                words.baseAddress!.assumingMemoryBound(to: UInt32.self), data.assumingMemoryBound(to: UInt8.self),
                blocks)
        }
    }
}
