public import ProofkitCore
internal import ProofkitSystem

/// Plays decoded audio through an ALSA playback device.
///
/// ```swift
/// var player = try SoundPlayer(device: "default")
/// try player.play(clip) { played, total in ... }   // blocks until the sound has been heard
/// try player.close()
/// ```
///
/// ``play(_:progress:)`` blocks the calling thread for the length of the sound: call it from a
/// thread of its own (the CLI's main thread, or ``playOnDedicatedThread(_:progress:)`` from async
/// code), never from Swift's cooperative pool.
///
/// Ownership: the unique owner of the open device; dropping it closes the device.
public struct SoundPlayer: ~Copyable, Sendable {
    var handle: PCMHandle?  // internal: SoundPlayer+Ring.swift takes it too
    let configuration: ALSAConfiguration?
    /// The device name as given.
    public let device: String

    /// Opens a playback device. The format is negotiated per sound, in ``play(_:progress:)``.
    /// - Parameters:
    ///   - device: an ALSA PCM name (`"default"`, `"hw:0,0"`, `"plughw:0,0"`, `"null"`, or one
    ///     defined by `configuration`). Default `"default"`.
    ///   - configuration: ALSA configuration text to use instead of the machine's; default `nil`.
    /// - Throws: `.deviceUnavailable` when the device is missing or busy; `.invalidArgument` when
    ///   `configuration` does not parse; `.io` for other ALSA failures; `.runtimeUnavailable` when
    ///   libasound.so.2 cannot be loaded (it is loaded on first use, not linked).
    /// Calls `snd_pcm_open` (or `snd_pcm_open_lconf`).
    public init(device: String = "default", configuration: ALSAConfiguration? = nil) throws(ProofkitError) {
        handle = try openPCM(device: device, direction: .playback, configuration: configuration)
        self.configuration = configuration
        self.device = device
    }

    /// Plays `clip` to the end (blocking), recovering quietly from underruns.
    /// - Parameters:
    ///   - clip: the sound, any rate and channel count; samples are clipped to -1...1 and
    ///     converted to S16 (ALSA's plug layer converts rate and channels where the device differs).
    ///   - progress: called on the calling thread after each block with the frames heard so far
    ///     (written minus still queued) and the clip's total frames.
    /// - Returns: the number of underruns recovered from.
    /// - Throws: `.deviceUnavailable` when the device refuses the format or goes away; `.io` for
    ///   other write failures.
    /// Calls `snd_pcm_set_params`, `snd_pcm_writei`, `snd_pcm_recover`, `snd_pcm_drain`.
    @discardableResult
    public mutating func play(
        _ clip: AudioClip, volume: Float = 1,
        progress: (_ heardFrames: Int, _ totalFrames: Int) -> Void = { _, _ in }
    )
        throws(ProofkitError) -> Int
    {
        if handle == nil {
            // A second sound: ALSA cannot renegotiate a configured PCM, so reopen it.
            handle = try openPCM(device: device, direction: .playback, configuration: configuration)
        }
        guard let pcm = handle.take() else { preconditionFailure("unreachable") }
        var samples = [Int16](repeating: 0, count: clip.samples.count)
        for (index, value) in clip.samples.enumerated() { samples[index] = AudioFileWriter.int16(value * volume) }
        _ = try pcm.configure(
            channels: clip.channels, sampleRate: clip.sampleRate, latencyMicroseconds: 200_000,
            device: device, direction: .playback)
        let total = clip.frameCount
        let block = max(1, clip.sampleRate / 20)  // 50 ms per write
        var written = 0
        var underruns = 0
        while written < total {
            let count = min(block, total - written)
            try pcm.writeAll(
                samples, frameOffset: written, frames: count, channels: clip.channels, device: device,
                underruns: &underruns
            ) { done in progress(max(0, written + done - pcm.delayFrames()), total) }
            written += count
        }
        if let drained = pcm.drain() {
            throw alsaError(Int32(drained), "snd_pcm_drain", device: device, direction: .playback)
        }
        progress(total, total)
        let closed = pcm.close()
        guard closed >= 0 else {
            throw alsaError(closed, "snd_pcm_close", device: device, direction: .playback)
        }
        return underruns
    }

    /// Plays `clip` on a dedicated thread (not the cooperative pool) and returns when it has been
    /// heard. The player is consumed (closed at the end).
    /// - Parameters:
    ///   - clip: the sound.
    ///   - progress: called on the playing thread, as in ``play(_:progress:)``.
    /// - Returns: the number of underruns recovered from.
    /// - Throws: as ``play(_:progress:)``.
    public consuming func playOnDedicatedThread(
        _ clip: AudioClip, progress: @escaping @Sendable (_ heardFrames: Int, _ totalFrames: Int) -> Void = { _, _ in }
    ) async throws(ProofkitError) -> Int {
        let box = PlayerBox(player: self)
        let result: Result<Int, ProofkitError> = await withCheckedContinuation { continuation in
            runOnDedicatedThread {
                continuation.resume(returning: box.play(clip, progress: progress))
            }
        }
        return try result.get()
    }

    /// Closes the device. Calls `snd_pcm_close`.
    /// - Throws: `.io` when ALSA reports an error while closing.
    public consuming func close() throws(ProofkitError) {
        guard let pcm = handle.take() else { return }
        let status = pcm.close()
        guard status >= 0 else {
            throw alsaError(status, "snd_pcm_close", device: device, direction: .playback)
        }
    }
}

/// Moves a player to the playing thread.
///
/// `@unchecked Sendable`: the player is taken exactly once, by the playing thread.
private final class PlayerBox: @unchecked Sendable {
    var player: SoundPlayer?
    init(player: consuming SoundPlayer) { self.player = consume player }

    func play(_ clip: AudioClip, volume: Float = 1, progress: (Int, Int) -> Void) -> Result<Int, ProofkitError> {
        guard var player = player.take() else { preconditionFailure("played twice") }
        do throws(ProofkitError) {
            let underruns = try player.play(clip, volume: volume, progress: progress)
            try player.close()
            return .success(underruns)
        } catch {
            return .failure(error)
        }
    }
}
