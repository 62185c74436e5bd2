public import AudioDSP
internal import AudioIO

extension SignalLevels {
    /// Adds interleaved 16-bit samples (whole frames), read as `sample / 32768`: the same
    /// statistics as converting them to floats and calling `add(_:)`, in one pass with no float
    /// buffer (what `proofkit check` runs on). The sum of squares and the extremes are measured
    /// in C with the CPU's 16-bit multiply-add (AudioIO's `PCM16Statistics`), exactly.
    public mutating func add(int16 samples: ArraySlice<Int16>) {
        let measured = samples.withUnsafeBufferPointer { PCM16Statistics.measure($0) }
        add(
            int16: samples, sumOfSquares: measured.sumOfSquares, lowest: measured.lowest,
            highest: measured.highest)
    }
}
