import ProofkitCore

/// Whisper's log-mel front end, in pure Swift: what the encoder reads.
///
/// The same features as OpenAI Whisper's `log_mel_spectrogram` and faster-whisper's numpy
/// `FeatureExtractor`: 16 kHz mono in; a short-time Fourier transform with n_fft 400 (25 ms) and
/// hop 160 (10 ms), a periodic Hann window, centred frames (the signal is reflect-padded by 200
/// samples at each end) and the last frame dropped; the power spectrum through 80 mel filters
/// (Slaney's mel scale and area normalisation, librosa's defaults, 0 to 8 kHz); then
/// `log10(max(mel, 1e-10))`, clamped from below at the maximum minus 8, and scaled as `(x + 4) / 4`.
/// One 30 s window is 3000 frames; windows shorter than that are padded with 0 (as Whisper pads
/// its segments).
///
/// ```swift
/// let features = WhisperFeatures.logMel(of: samples)   // 80 x frames
/// let window = features.window(startingAt: 0)           // 80 x 3000, row-major
/// ```
public struct LogMelSpectrogram: Sendable, Equatable {
    /// Mel bins per frame (80).
    public let bins: Int
    /// Frames (10 ms each).
    public let frames: Int
    /// Frames that hold the input (the rest come from the padding), `samples / 160`.
    public let contentFrames: Int
    /// The values, bin-major: `values[bin * frames + frame]`.
    public let values: [Float]

    /// Makes a spectrogram from bin-major values.
    /// - Precondition: `values.count == bins * frames`.
    public init(bins: Int, frames: Int, contentFrames: Int, values: [Float]) {
        precondition(
            values.count == bins * frames, "a spectrogram of \(bins) x \(frames) needs \(bins * frames) values")
        self.bins = bins
        self.frames = frames
        self.contentFrames = min(contentFrames, frames)
        self.values = values
    }

    /// The value of `bin` at `frame`.
    public subscript(bin: Int, frame: Int) -> Float { values[bin * frames + frame] }

    /// The frames `start ..< start + length` as a bin-major `[bins, length]` block; frames past
    /// ``contentFrames`` are 0 (faster-whisper's segment padding, in the log-mel domain).
    /// - Parameters:
    ///   - start: the first frame (0 or more).
    ///   - length: frames in the window, default 3000 (30 s).
    /// - Returns: `bins * length` values, `result[bin * length + i]`.
    public func window(startingAt start: Int, length: Int = WhisperFeatures.windowFrames) -> [Float] {
        var result = [Float](repeating: 0, count: bins * length)
        let available = max(0, min(length, contentFrames - start))
        guard available > 0 else { return result }
        for bin in 0..<bins {
            let source = bin * frames + start
            let target = bin * length
            for i in 0..<available { result[target + i] = values[source + i] }
        }
        return result
    }
}

/// Whisper's feature extraction constants and the log-mel transform (see ``LogMelSpectrogram``).
public enum WhisperFeatures {
    /// The sample rate the model hears, in Hz.
    public static let sampleRate = 16_000
    /// FFT length in samples (25 ms).
    public static let fftLength = 400
    /// Hop between frames in samples (10 ms).
    public static let hopLength = 160
    /// Mel bins.
    public static let melBins = 80
    /// Frames in one 30 s window.
    public static let windowFrames = 3000
    /// Samples in one 30 s window.
    public static let windowSamples = 480_000

    /// The periodic Hann window of ``fftLength`` samples (`numpy.hanning(401)[:-1]`, as
    /// `torch.hann_window(400)`).
    public static let hannWindow: [Float] = (0..<fftLength).map { n in
        Float(0.5 - 0.5 * cosine(2 * Double.pi * Double(n) / Double(fftLength)))
    }

    /// The mel filterbank, `[melBins, fftLength / 2 + 1]` row-major: librosa's
    /// `filters.mel(sr=16000, n_fft=400, n_mels=80)` (Slaney mel scale, `norm="slaney"`),
    /// computed in Double and stored as Float like Whisper's `mel_filters.npz`.
    public static let melFilters: [Float] = makeMelFilters(
        sampleRate: sampleRate, fftLength: fftLength, bins: melBins)

    /// The centre frequency of each mel filter, in Hz (the peak of its triangle).
    public static let melCentres: [Double] = {
        let points = melPoints(bins: melBins, maxHz: Double(sampleRate) / 2)
        return Array(points[1...melBins])
    }()

    /// The log-mel spectrogram of `samples`.
    /// - Parameters:
    ///   - samples: mono audio at 16 kHz, nominally in -1...1.
    ///   - padding: zeros appended before the transform, default 160 (faster-whisper's default;
    ///     OpenAI Whisper appends 30 s, which only adds frames after the content).
    /// - Returns: 80 bins by `(samples.count + padding) / 160` frames, Whisper-scaled.
    public static func logMel(of samples: [Float], padding: Int = hopLength) -> LogMelSpectrogram {
        let padded = samples + [Float](repeating: 0, count: max(0, padding))
        let power = powerSpectrogram(padded)
        let frameCount = power.count / spectrumBins
        var mel = [Float](repeating: 0, count: melBins * frameCount)
        let ranges = filterRanges
        var maximum: Float = -.infinity
        for frame in 0..<frameCount {
            let base = frame * spectrumBins
            for bin in 0..<melBins {
                var sum: Float = 0
                let row = bin * spectrumBins
                for k in ranges[bin] { sum += melFilters[row + k] * power[base + k] }
                let value = log10f(max(sum, 1e-10))
                mel[bin * frameCount + frame] = value
                if value > maximum { maximum = value }
            }
        }
        let floor = maximum - 8
        for i in mel.indices { mel[i] = (max(mel[i], floor) + 4) / 4 }
        return LogMelSpectrogram(
            bins: melBins, frames: frameCount, contentFrames: samples.count / hopLength, values: mel)
    }

    /// Bins of the one-sided spectrum (201).
    static let spectrumBins = fftLength / 2 + 1

    /// For each mel filter, the spectrum bins where it is not zero.
    static let filterRanges: [Range<Int>] = (0..<melBins).map { bin in
        let row = Array(melFilters[bin * spectrumBins..<(bin + 1) * spectrumBins])
        guard let first = row.firstIndex(where: { $0 != 0 }), let last = row.lastIndex(where: { $0 != 0 }) else {
            return 0..<0
        }
        return first..<(last + 1)
    }

    /// |STFT|² of `signal`, frame-major (`[frames, 201]`), centred frames with reflect padding,
    /// last frame dropped (Whisper's `stft[..., :-1]`).
    static func powerSpectrogram(_ signal: [Float]) -> [Float] {
        let half = fftLength / 2
        // Reflect padding needs at least half + 1 samples; shorter input is zero-extended first.
        let source = signal.count > half ? signal : signal + [Float](repeating: 0, count: half + 1 - signal.count)
        let n = source.count
        var padded = [Float](repeating: 0, count: n + 2 * half)
        for i in 0..<half { padded[i] = source[half - i] }
        for i in 0..<n { padded[half + i] = source[i] }
        for i in 0..<half { padded[half + n + i] = source[n - 2 - i] }
        let frames = 1 + (padded.count - fftLength) / hopLength - 1
        guard frames > 0 else { return [] }
        var result = [Float](repeating: 0, count: frames * spectrumBins)
        var fft = MixedRadixFFT(length: fftLength)
        var real = [Double](repeating: 0, count: fftLength)
        var imaginary = [Double](repeating: 0, count: fftLength)
        let window = hannWindow
        for frame in 0..<frames {
            let start = frame * hopLength
            for i in 0..<fftLength {
                real[i] = Double(padded[start + i] * window[i])
                imaginary[i] = 0
            }
            fft.transform(real: &real, imaginary: &imaginary)
            let base = frame * spectrumBins
            for k in 0..<spectrumBins {
                result[base + k] = Float(real[k] * real[k] + imaginary[k] * imaginary[k])
            }
        }
        return result
    }

    // MARK: The mel scale (Slaney, as librosa with htk=False)

    static func hzToMel(_ hz: Double) -> Double {
        let fSp = 200.0 / 3
        let minLogHz = 1000.0
        let minLogMel = minLogHz / fSp
        let logStep = logarithm(6.4) / 27
        return hz >= minLogHz ? minLogMel + logarithm(hz / minLogHz) / logStep : hz / fSp
    }

    static func melToHz(_ mel: Double) -> Double {
        let fSp = 200.0 / 3
        let minLogHz = 1000.0
        let minLogMel = minLogHz / fSp
        let logStep = logarithm(6.4) / 27
        return mel >= minLogMel ? minLogHz * exponential(logStep * (mel - minLogMel)) : fSp * mel
    }

    /// `bins + 2` frequencies (Hz) evenly spaced on the mel scale from 0 to `maxHz`.
    static func melPoints(bins: Int, maxHz: Double) -> [Double] {
        let top = hzToMel(maxHz)
        return (0..<(bins + 2)).map { melToHz(top * Double($0) / Double(bins + 1)) }
    }

    static func makeMelFilters(sampleRate: Int, fftLength: Int, bins: Int) -> [Float] {
        let columns = fftLength / 2 + 1
        let frequencies = (0..<columns).map { Double($0) * Double(sampleRate) / Double(fftLength) }
        let points = melPoints(bins: bins, maxHz: Double(sampleRate) / 2)
        var weights = [Float](repeating: 0, count: bins * columns)
        for bin in 0..<bins {
            let lowerWidth = points[bin + 1] - points[bin]
            let upperWidth = points[bin + 2] - points[bin + 1]
            let norm = 2 / (points[bin + 2] - points[bin])
            for k in 0..<columns {
                let lower = (frequencies[k] - points[bin]) / lowerWidth
                let upper = (points[bin + 2] - frequencies[k]) / upperWidth
                weights[bin * columns + k] = Float(max(0, min(lower, upper)) * norm)
            }
        }
        return weights
    }
}
