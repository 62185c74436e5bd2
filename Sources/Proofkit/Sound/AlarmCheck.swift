import AudioIO
public import ProofkitCore

extension RejectionReason.Kind {
    /// The sound decodes to no audio at all.
    public static let noAudio = RejectionReason.Kind("noAudio")
    /// The decoded sound is 30 s or longer.
    public static let tooLong = RejectionReason.Kind("tooLong")
    /// Not CAF/WAV/AIFF with 16-bit linear PCM.
    public static let notAlarmFormat = RejectionReason.Kind("notAlarmFormat")
    /// All samples are zero.
    public static let silent = RejectionReason.Kind("silent")
    /// Too quiet to wake anyone.
    public static let nearlySilent = RejectionReason.Kind("nearlySilent")
}

extension AlarmSound {
    /// A sound whose peak is below this is nearly silent, in dBFS: -45.
    public static let nearlySilentPeakDBFS = -45.0
    /// A sound whose RMS level is below this is nearly silent, in dBFS: -60.
    public static let nearlySilentRMSDBFS = -60.0
    /// Clipping is heavy when at least this fraction of samples sits in clipped flat tops: 0.001.
    public static let heavyClippingFraction = 0.001

    /// What ``check(path:limitSeconds:)`` found.
    public struct CheckReport: Sendable {
        /// The file checked.
        public var path: String
        /// Its format, from the header.
        public var format: AudioFileFormat
        /// Frames decoded. Decoding stops at the 30 s limit, so for a longer sound this is the
        /// limit (see ``reachedLimit``).
        public var decodedFrames: Int
        /// Whether decoding stopped at the limit because the sound is at least 30 s long.
        public var reachedLimit: Bool
        /// Levels of the decoded audio (peak, RMS, clipping).
        public var levels: SignalLevels
        /// Every reason the sound cannot be booked, in order (empty when accepted).
        public var problems: [RejectionReason]
        /// Things worth knowing that do not stop the booking (clipping, header length mismatch).
        public var warnings: [String]

        /// Decoded seconds.
        public var decodedSeconds: Double { Double(decodedFrames) / Double(format.sampleRate) }
        /// Whether at least ``AlarmSound/heavyClippingFraction`` of the samples are clipped.
        public var isHeavilyClipped: Bool { levels.clippedFraction >= AlarmSound.heavyClippingFraction }

        /// Accepted (score: decoded seconds) when there are no problems, else rejected with the
        /// first problem (all of them are in ``problems``).
        public var verdict: Verdict {
            if let first = problems.first {
                let detail = problems.map(\.detail).joined(separator: "; ")
                return .rejected(reason: RejectionReason(first.kind, detail))
            }
            return .accepted(score: decodedSeconds)
        }
    }

    /// Says whether the sound at `path` is safe to book as an alarm.
    ///
    /// It must decode; its decoded length (not the header's) must be under 30 s; it must be
    /// CAF, WAV or AIFF with 16-bit linear PCM; and it must not be silent (all zero) or nearly
    /// so (peak below -45 dBFS or RMS below -60 dBFS). Clipping is reported as a warning (heavy
    /// from 0.1% of samples in flat tops). Decoding stops at 30 s, so a long input costs no more.
    /// - Parameters:
    ///   - path: the sound file.
    ///   - limitSeconds: the length limit, in seconds (default ``AlarmSound/limitSeconds``, 30;
    ///     the sound must be shorter, and decoding stops there).
    /// - Returns: the report; its ``CheckReport/verdict`` is the answer.
    /// - Throws: `ProofkitError` when the file cannot be opened at all (`.notFound`,
    ///   `.decodeFailed`, `.unsupportedFormat`, `.io`), naming `path`.
    public static func check(path: String, limitSeconds: Double = AlarmSound.limitSeconds) throws(ProofkitError)
        -> CheckReport
    {
        var reader = try AudioFileReader(path: path)
        let format = reader.format
        try format.requirePlayable(path: path)
        let limitFrames = Int((limitSeconds * Double(format.sampleRate)).rounded(.up))
        let (levels, decoded) = try measure(&reader, limitFrames: limitFrames)
        reader.close()
        if levels.hasNonFiniteSamples {
            throw ProofkitError(.decodeFailed, "holds NaN or infinite samples, which no player can play", path: path)
        }
        let reachedLimit = decoded >= limitFrames
        let (problems, warnings) = judge(
            format: format, decoded: decoded, reachedLimit: reachedLimit, limitSeconds: limitSeconds, levels: levels)
        return CheckReport(
            path: path, format: format, decodedFrames: decoded, reachedLimit: reachedLimit,
            levels: levels, problems: problems, warnings: warnings)
    }

    /// Decodes up to `limitFrames` frames and measures their levels: 16-bit PCM as stored,
    /// anything else as floats. Returns the levels and the frames decoded.
    private static func measure(_ reader: inout AudioFileReader, limitFrames: Int) throws(ProofkitError) -> (
        SignalLevels, Int
    ) {
        let format = reader.format
        var levels = SignalLevels(channels: format.channels)
        var decoded = 0
        if format.isLinearPCM16 {
            // The stored 16-bit samples, measured as they are (libsndfile's conversion to float
            // is a slower scalar loop, and a float copy is not needed): the same levels.
            let chunk = 65536
            var buffer = [Int16](repeating: 0, count: chunk * format.channels)
            while decoded < limitFrames {
                let frames = try reader.read(into: &buffer, maxFrames: min(chunk, limitFrames - decoded))
                if frames == 0 { break }
                levels.add(int16: buffer[0..<(frames * format.channels)])
                decoded += frames
            }
        } else {
            let chunk = 8192
            var buffer = [Float](repeating: 0, count: chunk * format.channels)
            while decoded < limitFrames {
                let frames = try reader.read(into: &buffer, maxFrames: min(chunk, limitFrames - decoded))
                if frames == 0 { break }
                levels.add(buffer[0..<(frames * format.channels)])
                decoded += frames
            }
        }
        return (levels, decoded)
    }

    /// The problems that stop a sound from being booked and the warnings worth knowing, from its
    /// header's format, the frames decoded (up to the limit) and their levels.
    private static func judge(
        format: AudioFileFormat, decoded: Int, reachedLimit: Bool, limitSeconds: Double, levels: SignalLevels
    ) -> (problems: [RejectionReason], warnings: [String]) {
        var problems: [RejectionReason] = []
        var warnings: [String] = []
        let seconds = Double(decoded) / Double(format.sampleRate)
        if decoded == 0 {
            problems.append(RejectionReason(.noAudio, "it decodes to no audio"))
        }
        if reachedLimit {
            problems.append(
                RejectionReason(
                    .tooLong,
                    "it is at least \(decimalText(limitSeconds, places: 2)) s long as decoded; an alarm sound must be shorter than \(limitSeconds == limitSeconds.rounded() ? String(Int(limitSeconds)) : decimalText(limitSeconds, places: 2)) s (use 'proofkit trim')"
                ))
        }
        let isAlarmContainer = [AudioContainer.caf, .wav, .aiff].contains(format.container)
        if !isAlarmContainer || !format.isLinearPCM16 {
            problems.append(
                RejectionReason(
                    .notAlarmFormat,
                    "it is \(format.majorFormatName) \(format.subtypeName); an alarm plays CAF, WAV or AIFF with 16-bit linear PCM (use 'proofkit trim')"
                ))
        }
        if decoded > 0 {
            if levels.peak == 0 {
                problems.append(RejectionReason(.silent, "it is all digital silence"))
            } else if levels.peakDBFS < nearlySilentPeakDBFS || levels.rmsDBFS < nearlySilentRMSDBFS {
                problems.append(
                    RejectionReason(
                        .nearlySilent,
                        "it is nearly silent (peak \(decimalText(levels.peakDBFS, places: 2)) dBFS, RMS \(decimalText(levels.rmsDBFS, places: 2)) dBFS); normalise it, e.g. 'proofkit trim --normalize -1'"
                    ))
            }
        }
        if levels.clippedSamples > 0 {
            let percent = decimalText(levels.clippedFraction * 100, places: 2)
            warnings.append(
                "\(levels.isHeavy ? "heavy clipping" : "some clipping"): \(levels.clippedSamples) samples (\(percent)%) in flat tops at full scale"
            )
        }
        if let header = format.headerFrameCount, !reachedLimit, header != decoded,
            abs(Double(header - decoded)) / Double(format.sampleRate) >= 0.5
        {
            warnings.append(
                "the header claims \(decimalText(Double(header) / Double(format.sampleRate), places: 2)) s but \(decimalText(seconds, places: 2)) s decode"
            )
        }
        return (problems, warnings)
    }
}

extension SignalLevels {
    fileprivate var isHeavy: Bool { clippedFraction >= AlarmSound.heavyClippingFraction }
}
