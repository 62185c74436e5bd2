public import ProofkitCore
internal import ProofkitSystem

/// ALSA configuration text that defines PCM devices of its own, used *instead of* the machine's
/// configuration (`/usr/share/alsa/alsa.conf`, `~/.asoundrc` are never read nor changed).
///
/// Tests and benchmarks use it to open a virtual microphone without hardware: the `file` PCM
/// plugin over a `null` slave, with `infile` naming a raw S16_LE file (or a FIFO) that is played
/// into capture:
///
/// ```
/// pcm.vmic { type file  slave.pcm { type null }  file "/dev/null"  infile "speech.raw"  format "raw" }
/// ```
///
/// Only the devices defined in the text exist for a device opened with a configuration (the
/// machine's `null`, `default`, `plughw:` are not there; write `{ type null }` inline instead).
///
/// The environment variable `PROOFKIT_ALSA_CONFIG` names such a file for the `proofkit` CLI
/// (see ``fromEnvironment(_:)``).
public struct ALSAConfiguration: Sendable, Equatable {
    /// The configuration text, in ALSA's own syntax (as in `~/.asoundrc`).
    public var text: String

    /// Creates a configuration from ALSA configuration text (parsed when a device is opened).
    public init(text: String) {
        self.text = text
    }

    /// The most bytes read from a configuration file: 1 MiB (ALSA's own files are a few KiB).
    static let configurationLimitBytes = 1 << 20

    /// Reads a configuration file (opened once, capped at 1 MiB while reading).
    /// - Throws: `.notFound` when the file is missing or a folder, `.io` when it cannot be read
    ///   (with its errno: `EACCES` is not "missing"), `.decodeFailed` over 1 MiB.
    public init(contentsOfFile path: String) throws(ProofkitError) {
        let bytes = try BoundedFile.read(path, limit: Self.configurationLimitBytes, what: "ALSA configuration file")
        text = String(decoding: bytes, as: UTF8.self)
    }

    /// The name of the environment variable the CLI reads: `PROOFKIT_ALSA_CONFIG`.
    public static let environmentVariable = "PROOFKIT_ALSA_CONFIG"

    /// The configuration named by `PROOFKIT_ALSA_CONFIG` in `environment`, or `nil` when unset or
    /// empty (then the machine's own ALSA configuration is used).
    /// - Throws: as ``init(contentsOfFile:)``.
    public static func fromEnvironment(_ environment: [String: String]) throws(ProofkitError)
        -> ALSAConfiguration?
    {
        guard let path = environment[environmentVariable], !path.isEmpty else { return nil }
        return try ALSAConfiguration(contentsOfFile: path)
    }

    /// A virtual microphone `name` that plays `rawFile` (headerless S16_LE, `channels` channels at
    /// `sampleRate` Hz) into capture, then silence. When the file's format differs from the
    /// 16 kHz mono that ``MicrophoneCapture`` asks for, a `plug` layer converts it, as a real
    /// USB microphone behind `plughw:` would be.
    ///
    /// The device also works for playback: it then writes what is played to `rawFile`.
    /// - Parameters:
    ///   - name: the PCM name to define, e.g. `"vmic"`.
    ///   - rawFile: path of the raw file (or FIFO) to play; quotes in it are not allowed.
    ///   - sampleRate: the file's rate in Hz, default 16000.
    ///   - channels: the file's channels, default 1.
    public static func virtualMicrophone(
        name: String, rawFile: String, sampleRate: Int = 16000, channels: Int = 1
    ) -> ALSAConfiguration {
        precondition(!rawFile.contains("\""), "the raw file path may not contain quotes")
        let file = "{ type file slave.pcm { type null } file \"/dev/null\" infile \"\(rawFile)\" format \"raw\" }"
        if sampleRate == 16000 && channels == 1 {
            return ALSAConfiguration(text: "pcm.\(name) \(file)\n")
        }
        return ALSAConfiguration(
            text: """
                pcm.\(name) {
                    type plug
                    slave { pcm \(file) format S16_LE rate \(sampleRate) channels \(channels) }
                }

                """)
    }

    /// A playback device `name` that records what is played into `rawFile` (headerless S16_LE
    /// at the rate and channels negotiated by the player) and discards it otherwise.
    public static func recordingSink(name: String, rawFile: String) -> ALSAConfiguration {
        precondition(!rawFile.contains("\""), "the raw file path may not contain quotes")
        return ALSAConfiguration(
            text: """
                pcm.\(name) { type file slave.pcm { type null } file "\(rawFile)" format "raw" }

                """)
    }

    /// The null device as `name`: capture gives silence, playback discards everything.
    public static func null(name: String = "null") -> ALSAConfiguration {
        ALSAConfiguration(text: "pcm.\(name) { type null }\n")
    }
}

/// One PCM device, as `proofkit voice --list-devices` shows it.
public struct AudioDevice: Sendable, Equatable {
    /// The name to pass as `device:` (e.g. `"default"`, `"hw:CARD=USB,DEV=0"`, `"null"`).
    public var name: String
    /// The human description ALSA gives, possibly several lines; empty when none.
    public var description: String
    /// Whether the device can record (`false` for playback-only devices).
    public var canCapture: Bool
    /// Whether the device can play (`false` for capture-only devices).
    public var canPlay: Bool

    /// Creates a device entry.
    public init(name: String, description: String, canCapture: Bool, canPlay: Bool) {
        self.name = name
        self.description = description
        self.canCapture = canCapture
        self.canPlay = canPlay
    }

    /// The PCM devices: those of `configuration` when given (its `pcm.NAME` definitions, with
    /// `hint.description` as description), otherwise the machine's (ALSA's device name hints).
    ///
    /// A machine without sound cards still lists `null`.
    /// - Parameter configuration: a configuration to list instead of the machine's.
    /// - Returns: the devices in ALSA's order (none when `configuration` does not parse).
    /// - Throws: `.runtimeUnavailable` when libasound.so.2 cannot be loaded (it is loaded on
    ///   first use, not linked).
    /// Calls `snd_device_name_hint` (or walks the configuration's `pcm` node).
    public static func all(configuration: ALSAConfiguration? = nil) throws(ProofkitError) -> [AudioDevice] {
        if let configuration {
            let tree: ALSAConfigTree
            do { tree = try ALSAConfigTree(text: configuration.text) } catch  where error.code == .runtimeUnavailable {
                throw error
            } catch { return [] }
            return tree.pcmDefinitions().map {
                AudioDevice(name: $0.name, description: $0.description ?? "", canCapture: true, canPlay: true)
            }
        }
        return try alsaDeviceHints().map { hint in
            AudioDevice(
                name: hint.name, description: hint.description ?? "",
                canCapture: hint.ioid != "Output", canPlay: hint.ioid != "Input")
        }
    }
}

/// Opens `device` from the machine's configuration, or from `configuration` when given.
func openPCM(device: String, direction: PCMDirection, configuration: ALSAConfiguration?)
    throws(ProofkitError) -> PCMHandle
{
    try PCMHandle(device: device, direction: direction, configurationText: configuration?.text)
}
