/// The container of an audio file, as detected from its content (never from its extension).
public enum AudioContainer: Sendable, Equatable, CustomStringConvertible {
    /// RIFF WAVE, including WAVE_FORMAT_EXTENSIBLE.
    case wav
    /// Apple/SGI AIFF or AIFF-C.
    case aiff
    /// Apple Core Audio Format.
    case caf
    /// FLAC.
    case flac
    /// Ogg (Vorbis or Opus inside).
    case ogg
    /// An MPEG audio stream (MP3).
    case mpeg
    /// Any other container libsndfile reads, by its libsndfile name (e.g. `"AU"`, `"W64"`).
    case other(String)

    /// A short stable name: `"WAV"`, `"AIFF"`, `"CAF"`, `"FLAC"`, `"OGG"`, `"MPEG"`, or the other name.
    public var description: String {
        switch self {
        case .wav: return "WAV"
        case .aiff: return "AIFF"
        case .caf: return "CAF"
        case .flac: return "FLAC"
        case .ogg: return "OGG"
        case .mpeg: return "MPEG"
        case .other(let name): return name
        }
    }
}

/// What an opened audio file says about itself (from its header).
///
/// The header frame count can be wrong (MP3 headers in particular): only decoding tells the real
/// length. AudioIO's `AudioFileReader` decodes.
public struct AudioFileFormat: Sendable, Equatable {
    /// Frames per second, in Hz (at least 1).
    public var sampleRate: Int
    /// Channels per frame (at least 1).
    public var channels: Int
    /// The frame count the header claims, or `nil` when it states none.
    public var headerFrameCount: Int?
    /// The container, detected from the content.
    public var container: AudioContainer
    /// libsndfile's name for the major format, e.g. `"WAV"`, `"WAVEX"`, `"CAF"`, `"MPEG"`.
    public var majorFormatName: String
    /// libsndfile's name for the sample encoding, e.g. `"PCM_16"`, `"PCM_24"`, `"FLOAT"`,
    /// `"VORBIS"`, `"OPUS"`, `"MPEG_LAYER_III"`.
    public var subtypeName: String
    /// Whether the file can seek (skipping a lead-in is then instant).
    public var isSeekable: Bool

    /// Creates a format description (mostly for tests; readers fill it from the header).
    public init(
        sampleRate: Int, channels: Int, headerFrameCount: Int?, container: AudioContainer,
        majorFormatName: String, subtypeName: String, isSeekable: Bool
    ) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.headerFrameCount = headerFrameCount
        self.container = container
        self.majorFormatName = majorFormatName
        self.subtypeName = subtypeName
        self.isSeekable = isSeekable
    }

    /// The header's duration in seconds, or `nil` when the header states no length.
    public var headerSeconds: Double? {
        headerFrameCount.map { Double($0) / Double(sampleRate) }
    }

    /// Whether the samples are 16-bit linear PCM (what an alarm sound must be).
    public var isLinearPCM16: Bool { subtypeName == "PCM_16" }

    /// Sample rates that phones and sound cards play, in Hz: 8000...384000. A header outside
    /// them is broken or hostile (a 1 Hz header makes the work scale with a duration of days).
    public static let playableSampleRates = 8_000...384_000
    /// Channel counts that phones and sound cards play: 1...8 (7.1). More would let a small
    /// file demand large per-frame buffers.
    public static let playableChannels = 1...8

    /// Throws unless the rate is in ``playableSampleRates`` and the channel count in
    /// ``playableChannels``.
    /// - Parameter path: the file, for the message.
    /// - Throws: `.decodeFailed` (exit 65) naming `path`, e.g. "declares 1 Hz; playable sounds
    ///   are 8000 to 384000 Hz".
    public func requirePlayable(path: String) throws(ProofkitError) {
        guard Self.playableSampleRates.contains(sampleRate) else {
            throw ProofkitError(
                .decodeFailed,
                "declares \(sampleRate) Hz; playable sounds are \(Self.playableSampleRates.lowerBound) to \(Self.playableSampleRates.upperBound) Hz",
                path: path)
        }
        guard Self.playableChannels.contains(channels) else {
            throw ProofkitError(
                .decodeFailed,
                "declares \(channels) channels; playable sounds have \(Self.playableChannels.lowerBound) to \(Self.playableChannels.upperBound) channels",
                path: path)
        }
    }
}

/// The containers an alarm-sound writer produces, always as 16-bit linear PCM.
public enum AudioOutputContainer: Sendable, Equatable, CustomStringConvertible {
    /// Apple Core Audio Format, 16-bit little-endian linear PCM (what an iOS alarm plays).
    case caf
    /// RIFF WAVE, 16-bit little-endian linear PCM.
    case wav

    /// `"CAF"` or `"WAV"`.
    public var description: String { self == .caf ? "CAF" : "WAV" }
}
