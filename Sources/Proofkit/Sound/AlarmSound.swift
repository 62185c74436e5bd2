import AudioDSP
import AudioIO
public import ProofkitCore
internal import ProofkitSystem

/// Preparing and checking alarm sounds: the pipelines behind `proofkit trim` and `proofkit check`.
///
/// An alarm sound for iOS AlarmKit (or a notification) must be CAF, WAV or AIFF with 16-bit
/// linear PCM and shorter than 30 s. ``trim(input:output:options:)`` makes one from any
/// recitation or adhan that libsndfile decodes; ``check(path:limitSeconds:)`` says whether a sound is safe to
/// book, and why not.
public enum AlarmSound {
    /// The alarm's hard limit: sounds must be shorter than this, in seconds (decoded length):
    /// 30 (iOS AlarmKit). The default of ``TrimOptions/limitSeconds`` and ``check(path:limitSeconds:)``.
    public static let limitSeconds = 30.0
    /// The default and the largest cut, in seconds.
    public static let defaultMaxSeconds = 29.0
    /// The largest `maxSeconds` allowed under the default limit, in seconds: 29.9.
    public static let largestMaxSeconds = largestMaxSeconds(limitSeconds: limitSeconds)
    /// How far under the limit the cut may go at most, in seconds: 0.1.
    static let cutMargin = 0.1

    /// The largest `maxSeconds` allowed under `limitSeconds`: 0.1 s less.
    public static func largestMaxSeconds(limitSeconds: Double) -> Double { limitSeconds - cutMargin }
    /// The rates `--rate` accepts, in Hz.
    public static let commonSampleRates = [8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000, 88200, 96000]

    /// How ``trim(input:output:options:)`` shapes the sound.
    public struct TrimOptions: Sendable, Equatable {
        /// Cut after this much decoded audio, in seconds (default 29.0, at most ``limitSeconds``
        /// - 0.1: 29.9). The cut is sample-exact: the output has `floor(maxSeconds * rate)`
        /// frames when the input is longer.
        public var maxSeconds: Double = AlarmSound.defaultMaxSeconds
        /// The limit the output is checked against: it must be shorter than this, in seconds
        /// (default ``AlarmSound/limitSeconds``, 30). Tests use a short one with short inputs.
        public var limitSeconds: Double = AlarmSound.limitSeconds
        /// Skip this much of the input first, in seconds (default 0).
        public var startSeconds: Double = 0
        /// Drop leading frames whose loudest channel stays below ``silenceThresholdDBFS`` (default off).
        public var trimsLeadingSilence = false
        /// The level below which a frame counts as silence for ``trimsLeadingSilence``, in dBFS
        /// (default -50).
        public var silenceThresholdDBFS: Double = -50
        /// Scale so that the kept part peaks at this level, in dBFS (<= 0), or `nil` to keep the
        /// level (default). Never clips: the peak is measured on exactly what is written.
        public var normalizePeakDBFS: Double? = nil
        /// Mix all channels to one (default off: the channel count is kept).
        public var mixesToMono = false
        /// Resample to this rate in Hz (one of ``AlarmSound/commonSampleRates``), or `nil` to
        /// keep the input's rate (default).
        public var sampleRate: Int? = nil
        /// Length of the raised-cosine fade-out applied at a cut, in seconds (default 0.03).
        /// A sound that is not cut gets no fade.
        public var fadeOutSeconds: Double = 0.03
        /// The container written (default CAF).
        public var container: AudioOutputContainer = .caf
        /// Wait until the complete output is on the disk (`fdatasync`) before renaming it into
        /// place (default `false`). Either way the output is atomic and its writes are started
        /// before the rename, so on ext4 (default `data=ordered`) a power cut leaves the old
        /// sound (or none) or the complete new one, never a torn or empty alarm sound; the sync
        /// adds the promise that the new file is on the disk when `trim` returns, on any file
        /// system, at the cost of the disk's write time (see
        /// `AudioFileWriter.commit(syncsToDisk:verify:)`). While a synced output is written,
        /// its data is sent to the disk every MiB, so the final sync waits for little more than
        /// the last MiB.
        public var syncsToDisk = false

        /// The defaults: cut at 29.000 s, keep rate, channels and level.
        public init() {}

        /// Checks the ranges.
        /// - Throws: `.invalidArgument` naming the option.
        public func validate() throws(ProofkitError) {
            guard limitSeconds > AlarmSound.cutMargin, limitSeconds.isFinite else {
                throw ProofkitError(
                    .invalidArgument,
                    "the length limit must be more than \(AlarmSound.cutMargin) s, got \(limitSeconds)")
            }
            let largest = AlarmSound.largestMaxSeconds(limitSeconds: limitSeconds)
            guard maxSeconds > 0, maxSeconds <= largest else {
                throw ProofkitError(
                    .invalidArgument, "--max-seconds must be above 0 and at most \(largest), got \(maxSeconds)")
            }
            guard startSeconds >= 0, startSeconds.isFinite else {
                throw ProofkitError(.invalidArgument, "--start must be 0 or more seconds")
            }
            if let peak = normalizePeakDBFS, !(peak <= 0 && peak >= -60) {
                throw ProofkitError(.invalidArgument, "--normalize must be between -60 and 0 dBFS, got \(peak)")
            }
            if let rate = sampleRate, !AlarmSound.commonSampleRates.contains(rate) {
                throw ProofkitError(
                    .invalidArgument,
                    "--rate must be one of \(AlarmSound.commonSampleRates.map(String.init).joined(separator: ", ")) Hz, got \(rate)"
                )
            }
            guard fadeOutSeconds >= 0, fadeOutSeconds <= 1 else {
                throw ProofkitError(.invalidArgument, "the fade-out must be 0...1 s")
            }
        }
    }

    /// What ``trim(input:output:options:)`` did.
    public struct TrimResult: Sendable {
        /// The input path.
        public var input: String
        /// The output path (written).
        public var output: String
        /// The input's format, from its header.
        public var inputFormat: AudioFileFormat
        /// Input frames skipped before the kept part (`--start` plus leading silence), at the input rate.
        public var skippedInputFrames: Int
        /// Whether the input went on past the cut (then the end is faded out).
        public var wasCut: Bool
        /// Frames of the fade-out (0 when not cut).
        public var fadeFrames: Int
        /// The gain applied by normalisation, in dB, or `nil` when not normalising.
        public var gainDB: Double?
        /// The check of the written file.
        public var check: CheckReport

        /// Seconds skipped before the kept part.
        public var skippedSeconds: Double { Double(skippedInputFrames) / Double(inputFormat.sampleRate) }
    }

    /// Makes an alarm sound: decodes `input`, optionally skips a lead-in and leading silence,
    /// mixes to mono, resamples, cuts at `maxSeconds` (sample-exact, with a short fade-out only
    /// when cut), normalises the peak, writes 16-bit PCM atomically, and checks what it wrote.
    ///
    /// Memory and time are bounded whatever the input's length: decoding stops just past the
    /// cut, and only small chunks are held (normalising decodes the kept part twice instead of
    /// holding it).
    ///
    /// - Parameters:
    ///   - input: the sound to read (any format libsndfile decodes, detected by content).
    ///   - output: the file to write; refused when it is the input itself.
    ///   - options: see ``TrimOptions``.
    /// - Returns: what was done, with the check of the output.
    /// - Throws: `ProofkitError`: `.notFound`, `.decodeFailed`, `.unsupportedFormat` for bad input
    ///   (including input that is all silence, or that fails the check once trimmed);
    ///   `.invalidArgument` for bad options or output over input; `.io` when the output cannot
    ///   be written (no output appears, and an existing one is left as it was).
    public static func trim(input: String, output: String, options: TrimOptions = TrimOptions())
        throws(ProofkitError) -> TrimResult
    {
        try options.validate()
        if POSIX.sameFile(input, output) {
            throw ProofkitError(
                .invalidArgument, "the output is the input file; choose another output with -o", path: output)
        }
        var source = try TrimSource(path: input, options: options)
        let format = source.inputFormat
        let rate = source.outputRate
        let channels = source.outputChannels
        let maxFrames = Int((options.maxSeconds * Double(rate) + 1e-9).rounded(.down))
        let fadeFrames = max(1, Int((options.fadeOutSeconds * Double(rate)).rounded()))

        var gain: Float = 1
        var gainDB: Double? = nil
        if let target = options.normalizePeakDBFS {
            var levels = SignalLevels(channels: channels)
            _ = try source.run(maxFrames: maxFrames, fadeFrames: fadeFrames) {
                (chunk: inout [Float]) throws(ProofkitError) in
                levels.add(chunk)
            }
            guard levels.peak > 0 else {
                throw ProofkitError(.decodeFailed, "is all digital silence; nothing to normalise", path: input)
            }
            // Full scale in 16 bits is 32767/32768: 0 dBFS maps the peak there, never past it.
            let ceiling = min(Decibels.toAmplitude(target), 32767.0 / 32768.0)
            gain = Float(ceiling / Double(levels.peak))
            while levels.peak * gain * 32768 > 32767.49 { gain = gain.nextDown }
            gainDB = Decibels.fromAmplitude(Double(gain))
            source = try TrimSource(path: input, options: options)
        }

        var writer = try AudioFileWriter(
            path: output, container: options.container, sampleRate: rate, channels: channels,
            writesBackEarly: options.syncsToDisk)
        let summary: TrimSource.Summary
        if gainDB == nil && source.passesSamplesThrough {
            // 16-bit in, 16-bit out, nothing to mix or resample: the samples go through as they
            // are (only the fade-out is computed), bit for bit what the float path writes.
            summary = try source.runPassingThrough(maxFrames: maxFrames, fadeFrames: fadeFrames) {
                (chunk: ArraySlice<Int16>) throws(ProofkitError) in
                try writer.write(chunk)
            }
        } else {
            summary = try source.run(maxFrames: maxFrames, fadeFrames: fadeFrames) {
                (chunk: inout [Float]) throws(ProofkitError) in
                SignalMath.applyGain(&chunk, gain)
                try writer.write(chunk)
            }
        }
        if writer.framesWritten == 0 {
            writer.cancel()
            throw ProofkitError(.decodeFailed, summary.noAudioReason, path: input)
        }
        var report: CheckReport? = nil
        try writer.commit(syncsToDisk: options.syncsToDisk) { (temporary: String) throws(ProofkitError) in
            var checked = try AlarmSound.check(path: temporary, limitSeconds: options.limitSeconds)
            checked.path = output
            if case .rejected(let reason) = checked.verdict {
                throw ProofkitError(.decodeFailed, "does not make a usable alarm sound: \(reason.detail)", path: input)
            }
            report = checked
        }
        return TrimResult(
            input: input, output: output, inputFormat: format, skippedInputFrames: summary.skippedFrames,
            wasCut: summary.wasCut, fadeFrames: summary.wasCut ? fadeFrames : 0, gainDB: gainDB,
            check: report!)
    }
}

/// The decoding half of the trim pipeline: reader → skip → silence → mono → resample → cut.
struct TrimSource: ~Copyable {
    struct Summary {
        var skippedFrames: Int
        var wasCut: Bool
        var noAudioReason: String
    }

    var reader: AudioFileReader
    let options: AlarmSound.TrimOptions
    let inputFormat: AudioFileFormat
    let outputRate: Int
    let outputChannels: Int

    init(path: String, options: AlarmSound.TrimOptions) throws(ProofkitError) {
        let opened = try AudioFileReader(path: path)
        try opened.format.requirePlayable(path: path)
        reader = opened
        self.options = options
        inputFormat = reader.format
        outputRate = options.sampleRate ?? inputFormat.sampleRate
        outputChannels = options.mixesToMono ? 1 : inputFormat.channels
    }

    /// Whether the input's 16-bit samples can be copied to the output as they are: 16-bit linear
    /// PCM input, no resampling, no mixing and no silence trimming (normalising is decided by
    /// the caller). Then ``runPassingThrough(maxFrames:fadeFrames:sink:)`` gives the same output
    /// as ``run(maxFrames:fadeFrames:sink:)``, without the round trip through float.
    var passesSamplesThrough: Bool {
        inputFormat.isLinearPCM16 && outputRate == inputFormat.sampleRate
            && outputChannels == inputFormat.channels && !options.trimsLeadingSilence
    }

    /// The pipeline for ``passesSamplesThrough`` input: skip, cut and fade on the stored 16-bit
    /// samples. The fade zone is converted to float (`s / 32768`, exact), faded and converted
    /// back with `AudioFileWriter.int16(_:)`, exactly as the float path does.
    mutating func runPassingThrough(
        maxFrames: Int, fadeFrames: Int, sink: (ArraySlice<Int16>) throws(ProofkitError) -> Void
    ) throws(ProofkitError) -> Summary {
        precondition(passesSamplesThrough)
        let channels = inputFormat.channels
        let skipped = try skipStart()
        let chunkFrames = TrimSource.chunkFrames
        var buffer = [Int16](repeating: 0, count: chunkFrames * channels)
        var cut = TrimCut<Int16>(channels: channels, maxFrames: maxFrames, fadeFrames: fadeFrames)
        var decodedAny = false
        while !cut.wasCut {
            // Ask for no more than one frame past the cut.
            let frames = try reader.read(
                into: &buffer, maxFrames: max(1, min(chunkFrames, maxFrames + 1 - cut.produced)))
            if frames == 0 { break }
            decodedAny = true
            try cut.route(buffer[0..<(frames * channels)], to: sink)
        }
        try cut.finish(
            fade: { tail, channels in
                var faded = tail.map { Float($0) / 32768 }
                SignalMath.applyFadeOut(&faded, channels: channels)
                for index in tail.indices { tail[index] = AudioFileWriter.int16(faded[index]) }
            }, to: sink)
        let reason = decodedAny ? "has no audio after the start" : "has no audio (0 frames decoded)"
        return Summary(skippedFrames: skipped, wasCut: cut.wasCut, noAudioReason: reason)
    }

    /// Frames decoded per read: 65536 (256 KiB of 16-bit stereo, 512 KiB as float; bounded for
    /// any input's length).
    static let chunkFrames = 65536

    /// Skips `--start` (by seeking where the reader can, else by decoding and dropping).
    /// - Returns: the input frames skipped.
    /// - Throws: `.invalidArgument` when the start is past the end of the audio.
    mutating func skipStart() throws(ProofkitError) -> Int {
        let inRate = inputFormat.sampleRate
        let startFrames = Int((options.startSeconds * Double(inRate)).rounded())
        let skipped = try reader.skip(frames: startFrames)
        if skipped < startFrames {
            throw ProofkitError(
                .invalidArgument,
                "--start \(options.startSeconds) s is past the end of the audio (\(decimalText(Double(skipped) / Double(inRate), places: 2)) s)",
                path: reader.path)
        }
        return skipped
    }

    /// Runs the pipeline once, handing processed output chunks (interleaved, output rate and
    /// channels, fade applied, no gain) to `sink`, and stops just past `maxFrames`.
    mutating func run(
        maxFrames: Int, fadeFrames: Int, sink: (inout [Float]) throws(ProofkitError) -> Void
    ) throws(ProofkitError) -> Summary {
        let inChannels = inputFormat.channels
        let inRate = inputFormat.sampleRate
        let chunkFrames = TrimSource.chunkFrames
        var buffer = [Float](repeating: 0, count: chunkFrames * inChannels)

        // 1. --start: seek, or decode and drop.
        var skipped = try skipStart()

        // 2. --trim-silence: decode until the first frame at or above the threshold.
        var pending: [Float] = []
        if options.trimsLeadingSilence {
            let silence = try skipLeadingSilence(buffer: &buffer)
            skipped += silence.frames
            pending = silence.rest
        }

        var resampler: SincResampler? =
            outputRate != inRate
            ? SincResampler(inputRate: inRate, outputRate: outputRate, channels: outputChannels) : nil
        var cut = TrimCut<Float>(channels: outputChannels, maxFrames: maxFrames, fadeFrames: fadeFrames)
        func give(_ part: ArraySlice<Float>) throws(ProofkitError) {
            var samples = Array(part)
            try sink(&samples)
        }
        var inputEnded = false
        var decodedAny = !pending.isEmpty

        while !cut.wasCut {
            var chunk: [Float]
            if !pending.isEmpty {
                chunk = pending
                pending = []
            } else if !inputEnded {
                // Without resampling, ask for no more than one frame past the cut.
                let want = resampler == nil ? min(chunkFrames, maxFrames + 1 - cut.produced) : chunkFrames
                chunk = try readChunk(into: &buffer, maxFrames: max(1, want))
                if chunk.isEmpty {
                    inputEnded = true
                } else {
                    decodedAny = true
                }
            } else {
                break
            }
            if options.mixesToMono && inChannels > 1 {
                chunk = SignalMath.mixToMono(chunk, channels: inChannels)
            }
            if resampler != nil {
                var output = resampler!.process(chunk)
                if inputEnded { output += resampler!.finish() }
                try cut.route(output[...], to: give)
            } else {
                try cut.route(chunk[...], to: give)
            }
            if inputEnded { break }
        }

        try cut.finish(fade: { SignalMath.applyFadeOut(&$0, channels: $1) }, to: give)
        let reason =
            decodedAny ? "has no audio after the start" : "has no audio (0 frames decoded)"
        return Summary(skippedFrames: skipped, wasCut: cut.wasCut, noAudioReason: reason)
    }

    /// Decodes the next chunk, at most `maxFrames` frames, as interleaved input samples: empty
    /// at the end of the input.
    private mutating func readChunk(into buffer: inout [Float], maxFrames: Int) throws(ProofkitError) -> [Float] {
        let frames = try reader.read(into: &buffer, maxFrames: maxFrames)
        if frames == 0 { return [] }
        return Array(buffer[0..<(frames * inputFormat.channels)])
    }

    /// `--trim-silence`: decodes until the first frame at or above the threshold.
    /// - Returns: the silent frames dropped, and the rest of the chunk from the first loud frame on.
    /// - Throws: `.decodeFailed` when the input ends first.
    private mutating func skipLeadingSilence(
        buffer: inout [Float]
    ) throws(ProofkitError) -> (frames: Int, rest: [Float]) {
        let inChannels = inputFormat.channels
        let threshold = Float(Decibels.toAmplitude(options.silenceThresholdDBFS))
        var skipped = 0
        while true {
            let chunk = try readChunk(into: &buffer, maxFrames: TrimSource.chunkFrames)
            if chunk.isEmpty {
                let reason =
                    reader.position == 0
                    ? "has no audio"
                    : "is all silence (below \(Int(options.silenceThresholdDBFS)) dBFS) after the start; nothing to keep"
                throw ProofkitError(.decodeFailed, reason, path: reader.path)
            }
            if let first = SignalMath.firstFrame(atOrAbove: threshold, in: chunk, channels: inChannels) {
                return (skipped + first, Array(chunk[(first * inChannels)...]))
            }
            skipped += chunk.count / inChannels
        }
    }
}

/// The cut at the end of the trim pipeline, on float or 16-bit samples: output-rate frames
/// before the fade zone go straight to the sink; the fade zone is held until it is known whether
/// the input goes on past the cut.
struct TrimCut<Sample> {
    /// Channels per frame.
    let channels: Int
    /// Where the cut falls, in output frames.
    let maxFrames: Int
    /// Where the fade zone starts, in output frames.
    let safeLimit: Int
    /// Output frames handed on (or held in `tail`).
    private(set) var produced = 0
    /// The fade zone so far.
    private var tail: [Sample] = []
    /// Whether the input went on past the cut.
    private(set) var wasCut = false

    init(channels: Int, maxFrames: Int, fadeFrames: Int) {
        self.channels = channels
        self.maxFrames = maxFrames
        safeLimit = max(0, maxFrames - fadeFrames)
    }

    /// Routes output-rate frames: to the sink before the fade zone, into the held tail within it,
    /// and notes a cut for any frame past `maxFrames`.
    mutating func route(
        _ output: ArraySlice<Sample>, to sink: (ArraySlice<Sample>) throws(ProofkitError) -> Void
    ) throws(ProofkitError) {
        let frames = output.count / channels
        let start = output.startIndex
        var offset = 0
        if produced < safeLimit {
            let n = min(frames, safeLimit - produced)
            if n > 0 {
                try sink(output[start..<(start + n * channels)])
                produced += n
                offset = n
            }
        }
        if offset < frames && produced < maxFrames {
            let n = min(frames - offset, maxFrames - produced)
            tail.append(contentsOf: output[(start + offset * channels)..<(start + (offset + n) * channels)])
            produced += n
            offset += n
        }
        if offset < frames { wasCut = true }
    }

    /// Fades the held tail out with `fade` when the input was cut, and hands it to the sink.
    mutating func finish(
        fade: (inout [Sample], _ channels: Int) -> Void, to sink: (ArraySlice<Sample>) throws(ProofkitError) -> Void
    ) throws(ProofkitError) {
        if wasCut { fade(&tail, channels) }
        if !tail.isEmpty { try sink(tail[...]) }
    }
}
