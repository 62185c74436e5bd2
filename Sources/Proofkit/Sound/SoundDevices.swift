import AudioIO
public import ProofkitCore

/// The sound devices proofkit opens: the machine's ALSA devices, or only those defined by the
/// ALSA configuration file that `PROOFKIT_ALSA_CONFIG` names (for tests and demos without
/// hardware; such devices are not paced in real time).
public struct SoundDevices: Sendable, Equatable {
    /// The configuration used instead of the machine's, or `nil` for the machine's own.
    let configuration: ALSAConfiguration?

    /// The machine's own ALSA devices.
    public static let machine = SoundDevices(configuration: nil)

    init(configuration: ALSAConfiguration?) {
        self.configuration = configuration
    }

    /// The devices `environment` asks for: those of the file `PROOFKIT_ALSA_CONFIG` names, else
    /// the machine's.
    /// - Throws: `ProofkitError` `.notFound` / `.io` when the named file cannot be read.
    public init(environment: [String: String]) throws(ProofkitError) {
        configuration = try ALSAConfiguration.fromEnvironment(environment)
    }

    /// Whether the devices come from a configuration file (virtual, not paced in real time).
    public var isVirtual: Bool { configuration != nil }

    /// Every PCM device, in ALSA's order.
    /// - Throws: `ProofkitError` `.runtimeUnavailable` when libasound cannot be loaded.
    public func list() throws(ProofkitError) -> [SoundDevice] {
        try AudioDevice.all(configuration: configuration).map {
            SoundDevice(name: $0.name, description: $0.description, canCapture: $0.canCapture, canPlay: $0.canPlay)
        }
    }

    /// Opens `device` for playback.
    /// - Parameter device: an ALSA PCM name, e.g. `"default"`, `"plughw:1,0"`.
    /// - Throws: `ProofkitError` `.runtimeUnavailable` (missing, busy or gone device, no libasound).
    public func openSpeaker(_ device: String) throws(ProofkitError) -> Speaker {
        Speaker(player: try SoundPlayer(device: device, configuration: configuration))
    }
}

/// One ALSA PCM device (see ``SoundDevices/list()``).
public struct SoundDevice: Sendable, Equatable {
    /// Its name, e.g. `"default"`, `"hw:1,0"`.
    public var name: String
    /// ALSA's description (may hold several lines).
    public var description: String
    /// Whether it can record.
    public var canCapture: Bool
    /// Whether it can play.
    public var canPlay: Bool
}

/// An open playback device (``SoundDevices/openSpeaker(_:)``); closed by ``close()`` or when dropped.
public struct Speaker: ~Copyable, Sendable {
    var player: SoundPlayer

    /// The device's name.
    public var device: String { player.device }

    /// Plays `clip` to its end, blocking (call it off Swift's cooperative pool).
    /// - Parameters:
    ///   - clip: the sound, at the device's rate and channel count.
    ///   - volume: the gain on every sample, 0...1 [1], as an alarm's `--volume` rings it.
    ///   - progress: called with the frames heard so far and the clip's frames.
    /// - Returns: the underruns the device reported.
    /// - Throws: `ProofkitError` `.io` when the device fails while playing.
    public mutating func play(
        _ clip: AudioClip, volume: Float = 1,
        progress: (_ heardFrames: Int, _ totalFrames: Int) -> Void = { _, _ in }
    )
        throws(ProofkitError) -> Int
    {
        try player.play(clip, volume: volume, progress: progress)
    }

    /// Drains and closes the device.
    /// - Throws: `ProofkitError` `.io` when draining fails.
    public consuming func close() throws(ProofkitError) {
        try player.close()
    }
}

/// Sound files read whole.
public enum SoundFile {
    /// Reads the first `maximumSeconds` of the sound file at `path` (any format proofkit reads).
    /// - Returns: the clip, and whether the file goes on past `maximumSeconds`.
    /// - Throws: `ProofkitError` `.notFound`, `.decodeFailed`, `.io`, naming `path`.
    public static func readClip(path: String, maximumSeconds: Int) throws(ProofkitError) -> (
        clip: AudioClip, isCut: Bool
    ) {
        var reader = try AudioFileReader(path: path)
        let format = reader.format
        let clip = try reader.readClip(maxFrames: format.sampleRate * maximumSeconds)
        var probe = [Float](repeating: 0, count: format.channels)
        let isCut = try reader.read(into: &probe, maxFrames: 1) > 0
        reader.close()
        return (clip, isCut)
    }
}
