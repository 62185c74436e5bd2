import ProofkitCore

// Small pure operations on interleaved [Float] audio: silence, channel mixing, fades, gain.
// No I/O; libm's cos from Glibc.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Small pure operations on interleaved audio.
public enum SignalMath {
    /// The index of the first frame whose loudest channel reaches `threshold` (linear, e.g. 0.00316
    /// for -50 dBFS), or `nil` when every frame stays below it.
    public static func firstFrame(
        atOrAbove threshold: Float, in samples: [Float], channels: Int
    ) -> Int? {
        guard let index = samples.firstIndex(where: { abs($0) >= threshold }) else { return nil }
        return index / channels
    }

    /// Mixes interleaved `channels`-channel audio to mono (the mean of the channels).
    public static func mixToMono(_ samples: [Float], channels: Int) -> [Float] {
        AudioClip(samples: samples, channels: channels, sampleRate: 0).mono()
    }

    /// The gain of a raised-cosine (half-Hann) fade-out of `length` frames at frame `index`
    /// (0-based): falls from just under 1 to exactly 0 at the last frame.
    public static func fadeOutGain(at index: Int, length: Int) -> Float {
        precondition(length >= 1 && index >= 0 && index < length)
        return Float(0.5 * (1 + cos(Double.pi * Double(index + 1) / Double(length))))
    }

    /// Applies a raised-cosine fade-out over all frames of `samples` (interleaved), so that the
    /// last frame is exactly 0.
    public static func applyFadeOut(_ samples: inout [Float], channels: Int) {
        let frames = samples.count / channels
        guard frames > 0 else { return }
        for frame in 0..<frames {
            let gain = fadeOutGain(at: frame, length: frames)
            for channel in 0..<channels { samples[frame * channels + channel] *= gain }
        }
    }

    /// Multiplies every sample by `gain`.
    public static func applyGain(_ samples: inout [Float], _ gain: Float) {
        guard gain != 1 else { return }
        for index in samples.indices { samples[index] *= gain }
    }
}
