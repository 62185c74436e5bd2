public import ProofkitCore
internal import ProofkitSystem

/// How a ring ended (``SoundPlayer/ring(_:seconds:rampSeconds:startGain:shouldStop:started:)``).
public struct RingReport: Sendable, Hashable {
    /// Frames written to the device.
    public var frames: Int
    /// Seconds of sound written (frames / rate).
    public var seconds: Double
    /// Whether `shouldStop` ended it before its time.
    public var wasStopped: Bool
    /// Underruns recovered from.
    public var underruns: Int
}

extension SoundPlayer {
    /// Rings `clip` for an alarm: looped for `seconds` at `volume`, with a ramp from `startGain`
    /// of it to all of it over `rampSeconds`, paced by the clock: at most a quarter of a second is written ahead
    /// of real time, so a device that takes samples as fast as they come (ALSA's `null`, or the
    /// `file` plugin over it) still receives them in real time, and a stop is heard at once.
    /// Blocks the calling thread: call it from a thread of its own.
    /// - Parameters:
    ///   - clip: the sound (any rate and channels).
    ///   - seconds: how long the ring lasts, > 0 (60 for an alarm).
    ///   - volume: the gain applied to every sample, 0...1 [1]: a ring at 1 after its ramp writes
    ///     the clip's 16-bit samples exactly (gain on the samples, so it works on any device,
    ///     one without a mixer too).
    ///   - rampSeconds: the ramp's length, 0 for none [3].
    ///   - startGain: the fraction of `volume` the ramp starts from, 0...1 [0.3].
    ///   - shouldStop: polled between writes (every period, about 20-50 ms); `true` ends the ring at
    ///     once (queued frames are dropped).
    ///   - started: called once, right after the first frames were written.
    /// - Returns: what was played.
    /// - Throws: `.deviceUnavailable` when the device refuses the format or goes away; `.io` for
    ///   other write failures.
    /// Calls `snd_pcm_set_params`, `snd_pcm_writei`, `snd_pcm_recover`, `snd_pcm_drop`, `snd_pcm_drain`.
    public mutating func ring(
        _ clip: AudioClip, seconds: Double, volume: Float = 1, rampSeconds: Double = 3, startGain: Float = 0.3,
        shouldStop: () -> Bool, started: () -> Void = {}
    ) throws(ProofkitError) -> RingReport {
        precondition(clip.frameCount > 0 && seconds > 0, "a ring needs a sound and a length")
        if handle == nil { handle = try openPCM(device: device, direction: .playback, configuration: configuration) }
        guard let pcm = handle.take() else { preconditionFailure("unreachable") }
        let channels = clip.channels
        let negotiated = try pcm.configure(
            channels: channels, sampleRate: clip.sampleRate, latencyMicroseconds: 100_000,
            device: device, direction: .playback)
        let rate = clip.sampleRate
        let block = max(64, min(negotiated.periodFrames > 0 ? negotiated.periodFrames : rate / 50, rate / 20))
        let total = Int((seconds * Double(rate)).rounded())
        let rampFrames = max(0, Int(rampSeconds * Double(rate)))
        var buffer = [Int16](repeating: 0, count: block * channels)
        var written = 0
        var source = 0  // frame position in the clip
        var underruns = 0
        var stopped = false
        var start: Double? = nil  // monotonic seconds at the first write
        let lead = 0.25
        while written < total {
            if shouldStop() {
                stopped = true
                break
            }
            let count = min(block, total - written)
            for frame in 0..<count {
                let position = written + frame
                let gain =
                    volume
                    * (position >= rampFrames
                        ? Float(1) : startGain + (1 - startGain) * Float(position) / Float(rampFrames))
                let first = source * channels
                for channel in 0..<channels {
                    buffer[frame * channels + channel] = AudioFileWriter.int16(clip.samples[first + channel] * gain)
                }
                source += 1
                if source == clip.frameCount { source = 0 }
            }
            try pcm.writeAll(
                buffer, frameOffset: 0, frames: count, channels: channels, device: device, underruns: &underruns)
            if start == nil {
                start = POSIX.monotonicSeconds()
                started()
            }
            written += count
            // Pace by the clock: never more than `lead` seconds ahead of real time.
            if let start {
                let elapsed = POSIX.monotonicSeconds() - start
                POSIX.sleep(seconds: Double(written) / Double(rate) - elapsed - lead)
            }
        }
        if stopped {
            pcm.drop()
        } else {
            if let drained = pcm.drain() {
                throw alsaError(Int32(drained), "snd_pcm_drain", device: device, direction: .playback)
            }
        }
        let closed = pcm.close()
        guard closed >= 0 else { throw alsaError(closed, "snd_pcm_close", device: device, direction: .playback) }
        return RingReport(
            frames: written, seconds: Double(written) / Double(rate), wasStopped: stopped,
            underruns: underruns)
    }
}
