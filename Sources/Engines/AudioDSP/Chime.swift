#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Short feedback chimes, generated rather than shipped as files: three notes rising (a pass) or
/// falling (a rejection), each with a 10 ms fade in and out so that no click is heard.
public enum Chime {
    /// The notes of a chime, in Hz: rising E5 A5 E6, falling A5 E5 A4.
    public static func notes(rising: Bool) -> [Double] {
        rising ? [659.26, 880.0, 1318.51] : [880.0, 659.26, 440.0]
    }

    /// A chime's samples, mono.
    /// - Parameters:
    ///   - rising: a rising chime (a pass) or a falling one (a rejection).
    ///   - sampleRate: in Hz [16000].
    ///   - noteSeconds: each note's length, in seconds [0.12].
    ///   - amplitude: the peak, 0...1 [0.5].
    /// - Returns: `3 × noteSeconds × sampleRate` samples in -amplitude...amplitude.
    public static func samples(
        rising: Bool, sampleRate: Int = 16_000, noteSeconds: Double = 0.12, amplitude: Float = 0.5
    ) -> [Float] {
        let length = max(1, Int(Double(sampleRate) * noteSeconds))
        let fade = max(1, sampleRate / 100)
        var samples: [Float] = []
        samples.reserveCapacity(length * 3)
        for frequency in notes(rising: rising) {
            let step = 2 * Double.pi * frequency / Double(sampleRate)
            for n in 0..<length {
                let envelope = Float(min(1, Double(min(n, length - 1 - n)) / Double(fade)))
                samples.append(amplitude * envelope * Float(sin(step * Double(n))))
            }
        }
        return samples
    }
}
