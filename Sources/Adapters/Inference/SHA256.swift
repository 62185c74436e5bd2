/// SHA-256 (FIPS 180-4), in plain Swift, with the CPU's SHA instructions for whole blocks where
/// the CPU has them (x86 SHA extensions, through `CProofkitShims`): proofkit checks model files
/// with it and has no crypto package. Streaming: feed bytes with ``update(_:)`` any number of times, then ``finalize()``.
///
/// ```swift
/// SHA256.hexDigest(of: Array("abc".utf8))
/// // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// ```
public struct SHA256: Sendable {
    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19
    )
    private var block = [UInt8](repeating: 0, count: 64)
    private var blockCount = 0
    private var totalBytes: UInt64 = 0

    /// Whether whole blocks may go to the CPU's SHA instructions (tests turn it off to check the
    /// Swift code on machines that have them).
    private let allowsHardware: Bool

    /// A fresh hash state.
    public init() { allowsHardware = true }

    /// A fresh hash state that uses only the Swift code when `allowsHardware` is false.
    init(allowsHardware: Bool) { self.allowsHardware = allowsHardware }

    /// Adds bytes to the message.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            totalBytes &+= 1
            block[blockCount] = byte
            blockCount += 1
            if blockCount == 64 {
                compressBlock()
                blockCount = 0
            }
        }
    }

    /// Adds the bytes of a contiguous buffer (faster than a generic sequence: whole 64-byte
    /// blocks are compressed straight from the buffer, with no copy and no allocation).
    public mutating func update(bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let count = bytes.count
        totalBytes &+= UInt64(count)
        var index = 0
        if blockCount > 0 {
            let take = min(64 - blockCount, count)
            for offset in 0..<take { block[blockCount + offset] = bytes[offset] }
            blockCount += take
            index = take
            guard blockCount == 64 else { return }
            compressBlock()
            blockCount = 0
        }
        if count - index >= 64, allowsHardware, HardwareSHA256.isAvailable {
            let blocks = (count - index) / 64
            HardwareSHA256.compress(&state, base + index, blocks: blocks)
            index += blocks * 64
        } else if count - index >= 64 {
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
                Self.roundConstants.withUnsafeBufferPointer { constants in
                    while count - index >= 64 {
                        Self.compress(&state, base + index, schedule.baseAddress!, constants.baseAddress!)
                        index += 64
                    }
                }
            }
        }
        for offset in 0..<(count - index) { block[offset] = bytes[index + offset] }
        blockCount = count - index
    }

    /// Pads the message and returns the 32-byte digest.
    public consuming func finalize() -> [UInt8] {
        let bitLength = totalBytes &* 8
        block[blockCount] = 0x80
        blockCount += 1
        if blockCount > 56 {
            for index in blockCount..<64 { block[index] = 0 }
            compressBlock()
            blockCount = 0
        }
        for index in blockCount..<56 { block[index] = 0 }
        for index in 0..<8 { block[56 + index] = UInt8(truncatingIfNeeded: bitLength >> (56 - 8 * UInt64(index))) }
        compressBlock()
        var digest: [UInt8] = []
        digest.reserveCapacity(32)
        for word in [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7] {
            digest.append(contentsOf: [
                UInt8(truncatingIfNeeded: word >> 24), UInt8(truncatingIfNeeded: word >> 16),
                UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word),
            ])
        }
        return digest
    }

    /// The digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        bytes.withUnsafeBytes { hasher.update(bytes: $0) }
        return hasher.finalize()
    }

    /// The digest of `bytes` as 64 lowercase hex digits (the form `sha256sum` prints).
    public static func hexDigest(of bytes: [UInt8]) -> String {
        hex(hash(bytes))
    }

    /// Lowercase hex of `bytes`.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    private mutating func compressBlock() {
        let copy = block
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
            Self.roundConstants.withUnsafeBufferPointer { constants in
                copy.withUnsafeBytes {
                    Self.compress(&state, $0.baseAddress!, schedule.baseAddress!, constants.baseAddress!)
                }
            }
        }
    }

    /// One FIPS 180-4 compression of the 64 bytes at `block` into `state`; `schedule` is
    /// scratch space for 64 words and `constants` the 64 round constants.
    private static func compress(
        _ state: inout (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32), _ block: UnsafeRawPointer,
        _ schedule: UnsafeMutablePointer<UInt32>, _ constants: UnsafePointer<UInt32>
    ) {
        for index in 0..<16 {
            schedule[index] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: 4 * index, as: UInt32.self))
        }
        for index in 16..<64 {
            let w15 = schedule[index - 15]
            let w2 = schedule[index - 2]
            let s0 = w15.rotatedRight(7) ^ w15.rotatedRight(18) ^ (w15 >> 3)
            let s1 = w2.rotatedRight(17) ^ w2.rotatedRight(19) ^ (w2 >> 10)
            schedule[index] = schedule[index - 16] &+ s0 &+ schedule[index - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, h) = state
        for index in 0..<64 {
            let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
            let choice = (e & f) ^ (~e & g)
            let t1 = h &+ s1 &+ choice &+ constants[index] &+ schedule[index]
            let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
            let majority = (a & b) ^ (a & c) ^ (b & c)
            let t2 = s0 &+ majority
            (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
        }
        state = (
            state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g,
            state.7 &+ h
        )
    }
}

extension UInt32 {
    fileprivate func rotatedRight(_ count: UInt32) -> UInt32 { (self >> count) | (self << (32 - count)) }
}
