internal import CProofkitShims

/// Level statistics of 16-bit PCM samples, measured in C with the CPU's 16-bit multiply-add
/// (the only file in `AudioIO` that calls `proofkit_pcm16_measure`).
public enum PCM16Statistics {
    /// The exact sum of the squares of `samples` (in 16-bit units, so full scale squared is
    /// 2^30), and the lowest and highest sample, which start from 0 (so `lowest <= 0 <= highest`;
    /// both are 0 for no samples). Calls `proofkit_pcm16_measure`.
    public static func measure(_ samples: UnsafeBufferPointer<Int16>)
        -> (sumOfSquares: UInt64, lowest: Int16, highest: Int16)
    {
        var sum: UInt64 = 0
        var lowest: Int16 = 0
        var highest: Int16 = 0
        if let base = samples.baseAddress {
            proofkit_pcm16_measure(base, samples.count, &sum, &lowest, &highest)
        }
        return (sum, lowest, highest)
    }
}
