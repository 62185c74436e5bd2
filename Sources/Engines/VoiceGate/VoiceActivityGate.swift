public import ProofkitCore

/// One analysis frame of a ``VoiceActivityGate``, as known when the frame was processed.
public struct VoiceGateFrame: Sendable, Equatable {
    /// When the frame starts, in seconds from the first sample.
    public var seconds: Double
    /// The frame's RMS level, in dBFS (at least the configured silence level).
    public var levelDecibels: Float
    /// The noise floor after this frame, in dBFS.
    public var floorDecibels: Float
    /// The level a frame must exceed to start voice (`floor + margin`), in dBFS.
    public var thresholdDecibels: Float
    /// Whether voice was on at this frame, as decided live. A new run turns on only after
    /// ``VoiceGateConfiguration/minimumVoicedRun``; ``VoiceGateResult/segments`` then start at the
    /// run's true beginning.
    public var isVoiced: Bool

    /// Creates a frame record.
    public init(
        seconds: Double, levelDecibels: Float, floorDecibels: Float, thresholdDecibels: Float,
        isVoiced: Bool
    ) {
        self.seconds = seconds
        self.levelDecibels = levelDecibels
        self.floorDecibels = floorDecibels
        self.thresholdDecibels = thresholdDecibels
        self.isVoiced = isVoiced
    }
}

/// A stretch of voice, in seconds from the first sample.
public struct VoicedSegment: Sendable, Equatable, CustomStringConvertible {
    /// Start, in seconds.
    public var start: Double
    /// End, in seconds (`end > start`).
    public var end: Double
    /// Creates a segment.
    public init(start: Double, end: Double) {
        self.start = start
        self.end = end
    }
    /// `end - start`, in seconds.
    public var duration: Double { end - start }
    public var description: String { "[\(start), \(end)]" }
}

/// What a ``VoiceActivityGate`` found over everything it processed.
public struct VoiceGateResult: Sendable, Equatable {
    /// Total voiced time, in seconds (the sum of ``segments``' durations).
    public var voicedSeconds: Double
    /// The voiced stretches, in order, not overlapping. Gaps shorter than the hang-over are
    /// bridged; each segment ends at the end of its last loud frame (the hang-over tail is not
    /// counted).
    public var segments: [VoicedSegment]
    /// The noise floor after the last frame, in dBFS.
    public var finalFloorDecibels: Float
    /// How much audio was analysed, in seconds (whole frames only).
    public var analysedSeconds: Double
    /// Every frame (level, floor, threshold, live decision) for plotting; empty when
    /// ``VoiceGateConfiguration/recordsTrack`` is off.
    public var track: [VoiceGateFrame]
}

/// A room-level voice gate: says when someone is speaking aloud, from frame energy against a
/// noise floor that follows the room. Pure, deterministic and streaming; cheap enough for a
/// Raspberry Pi to run at thousands of times real time.
///
/// ## Algorithm
/// 1. The input is cut into frames of ``VoiceGateConfiguration/frameDuration`` (20 ms). Each
///    frame's level is its RMS in dBFS after removing its mean (a microphone's DC offset is not
///    sound). The energy of its first difference is kept too, as a cheap spectral cue, and so is
///    the energy in the speech band (a 2nd-order band-pass around 1 kHz, Q 0.7, about
///    0.5-2 kHz), for the syllable cue.
/// 2. **Noise floor.** It starts at the first frame's level. When the level is below it, it falls
///    at up to ``VoiceGateConfiguration/floorFallDecibelsPerSecond`` (20 dB/s: a quiet room is
///    found again within a word's pause). When the level is above it, it rises at only
///    ``VoiceGateConfiguration/floorRiseDecibelsPerSecond`` (0.5 dB/s), unless the level has been
///    *steady* for ``VoiceGateConfiguration/steadyWindow`` (its smoothed value stays within
///    ``VoiceGateConfiguration/steadinessDecibels``; twice the window while voice is on): a fan or
///    an air conditioner that starts is absorbed at
///    ``VoiceGateConfiguration/steadyFloorRiseDecibelsPerSecond`` (8 dB/s), while speech, which
///    swings by 10 dB or more between syllables, is not. While voice is on, only a steady level
///    lifts the floor. A loud run that has shown no syllable cue (below) for
///    ``VoiceGateConfiguration/unmodulatedWindow`` (1.2 s) lifts it at
///    ``VoiceGateConfiguration/unmodulatedFloorRiseDecibelsPerSecond`` (40 dB/s). The floor
///    follows the level smoothed over ``VoiceGateConfiguration/floorSmoothing`` (150 ms), and the
///    first
///    ``VoiceGateConfiguration/warmUp`` (500 ms) only learns the room.
/// 3. **Decision.** A run starts when a frame is ``VoiceGateConfiguration/marginDecibels`` above
///    the floor and continues while frames stay above `floor + margin - hysteresis`. A run becomes
///    voice once it has lasted ``VoiceGateConfiguration/minimumVoicedRun`` (100 ms: clicks, knocks
///    and clock ticks are shorter), the energy it adds above the floor sits low in frequency
///    (``VoiceGateConfiguration/maximumDominantFrequencyRatio``; crickets, hiss and clicks are
///    high), *and* it shows the **syllable cue**: its speech-band level (smoothed over about two
///    frames) fell by ``VoiceGateConfiguration/modulationDecibels`` (6 dB) within
///    ``VoiceGateConfiguration/modulationWindow`` (200 ms) from a peak that stood above the start
///    threshold. Speech does this several times a second (its energy is modulated at 3-8 Hz);
///    a fan or an air conditioner switching on, a passing car or a lorry swell and settle
///    smoothly. A run stays open for 100 ms below the continue threshold so that a syllable's
///    own decay can show the cue. The run must also show the **voicing cue**: a stretch of
///    ``VoiceGateConfiguration/minimumVoicedStretch`` (60 ms) of consecutive loud frames whose
///    pitch strength (the peak normalised autocorrelation at a lag of a 70-400 Hz pitch, of the
///    sound pre-emphasised, low-passed at 1 kHz and decimated to about 4 kHz; see
///    ``VoiceGateConfiguration/minimumHarmonicity``) is at least 0.6. A vowel repeats itself every
///    pitch period for tens of milliseconds; a clock's tick, a drip, a key press or a shaker rings
///    for a few milliseconds without a pitch, however regularly it comes. A pitched frame counts
///    as voiced only if it is not a **pure tone**: its strongest harmonic (of the pitch found,
///    up to 1 kHz) holds at most ``VoiceGateConfiguration/maximumHarmonicShare`` (0.9) of the
///    energy at its harmonics (a bubble in running water or a drop's ring is one sinusoid; a
///    vowel spreads over several harmonics). Within a stretch, each frame's pitch must be within
///    ``VoiceGateConfiguration/pitchContinuity`` (15 %) of the previous frame's (bubbles come at
///    unrelated pitches) and its level within ``VoiceGateConfiguration/maximumVoicedFallDecibels``
///    (6 dB) of the stretch's loudest frame (a bubble rings down by 4-20 dB per frame; a vowel
///    holds its level). The run's segment still
///    starts at its first loud frame. Voice stays on for ``VoiceGateConfiguration/hangOver`` after
///    the last loud frame, so the gaps between words do not split a reading; but a loud frame
///    extends the segment only within ``VoiceGateConfiguration/voicedTail`` (150 ms) of the last
///    voiced frames (two pitched, non-pure-tone frames in a row whose level holds; the pitch may
///    jump there), so the segment ends where the speech ends: ticks between
///    words and the room after the reading do not lengthen it. While voice is on, a stretch of
///    ``VoiceGateConfiguration/unmodulatedWindow`` without voiced frames lifts the floor as an
///    unmodulated run does (a noise that started under the reading).
///
/// Known limits: a voice-like sound (a radio, a television, someone else talking, a musical
/// instrument, a buzzing insect, a machine with a pitched drone such as a steam engine or a
/// rhythmic pump motor) counts as voice (``SpeechLikenessVeto`` removes most drones afterwards, in
/// `ReadingProof`); running water is mostly rejected, but a dense boil or gurgle can still pass for
/// several seconds (Benchmarks/VOICE_GATE_EVAL.md);
/// a long monotone sustained vowel (over a few seconds) is slowly absorbed into the floor; and the
/// first frames set the floor, so audio that starts in the middle of loud speech is detected only
/// after the first pause.
///
/// ## Use
/// ```swift
/// var gate = try VoiceActivityGate(configuration: .init(sampleRate: 16_000))
/// for chunk in chunks { let frames = gate.process(chunk) /* live level meter */ }
/// let result = gate.finish()   // voiced seconds, segments, floor
/// ```
public struct VoiceActivityGate: Sendable {
    /// The settings in use.
    public let configuration: VoiceGateConfiguration

    // Derived constants.
    private let frameLength: Int
    private let frameSeconds: Double
    private let minimumRunFrames: Int
    private let hangOverFrames: Int
    private let warmUpFrames: Int
    private let riseStep: Float
    private let steadyRiseStep: Float
    private let fallStep: Float
    private let smoothing: Float
    private let steadyFrames: Int
    /// Difference-to-energy ratios bounding the dominant frequency of a run's excess (see init).
    private let minimumDifferenceRatio: Float
    private let maximumDifferenceRatio: Float
    /// Per-frame upper bound while voice continues, looser (fricatives inside words).
    private let frameDifferenceLimit: Float
    /// The syllable cue (see ``VoiceGateConfiguration/modulationDecibels``).
    private let modulationDecibels: Float
    private let unmodulatedFrames: Int
    private let unmodulatedRiseStep: Float
    /// How long a candidate run stays open below the continue threshold, waiting for the cue.
    private let closingFrames: Int
    /// The voicing cue (see ``VoiceGateConfiguration/minimumHarmonicity``).
    private var pitch: HarmonicityTracker
    private let usesHarmonicity: Bool
    private let voicedStretchFrames: Int
    private let voicedTailFrames: Int
    private var harmonicStreak = 0
    /// Consecutive pitched frames, whatever their pitch (the voiced tail's count).
    private var pitchedStreak = 0
    /// The pure-tone and pitch-continuity cues (see ``VoiceGateConfiguration/maximumHarmonicShare``).
    private let usesHarmonicShare: Bool
    private let continuity: Float
    /// The pitch lag of the last voiced frame, in decimated samples.
    private var previousLag = 0
    /// The loudest frame of the current voiced stretch, in dBFS.
    private var stretchPeakLevel: Float = 0
    /// The loudest frame of the current run of pitched frames (the tail's count), in dBFS.
    private var pitchedPeakLevel: Float = 0
    /// The last frame of two voiced frames in a row, and the last frame that completed a voiced
    /// stretch, or -1.
    private var lastVoicingFrame = -1
    private var lastStretchFrame = -1
    /// The speech-band filter (a 2nd-order band-pass around 1 kHz, Q 0.7): rumble and hiss are
    /// outside it, so their jitter does not pass for syllables.
    private let bandGain: Float
    private let bandFeedback1: Float
    private let bandFeedback2: Float

    // Per-frame accumulators (carry across chunk boundaries).
    private var countInFrame = 0
    private var sum: Float = 0
    private var sumSquares: Float = 0
    private var sumDifferenceSquares: Float = 0
    private var previousSample: Float = 0
    private var sumBandSquares: Float = 0
    private var beforePreviousSample: Float = 0
    /// The band-pass filter's last two outputs.
    private var band1: Float = 0
    private var band2: Float = 0

    // Floor state.
    private var frameIndex = 0
    private var roomFrames = 0
    private var floor: Float = 0
    private var hasFloor = false
    /// The floor's own difference-to-energy ratio (spectral shape of the room), smoothed.
    private var floorDifferenceRatio: Float = 0.1
    /// The level smoothed over ``VoiceGateConfiguration/floorSmoothing``, in dBFS: the floor
    /// follows this, so that single quiet frames do not drag it down.
    private var smoothedLevel: Float = 0
    /// The last levels, lightly smoothed (3 frames), for the steadiness test.
    private var recentLevels: [Float]
    private var recentIndex = 0
    private var recentCount = 0
    private var lightLevel: Float = 0
    /// The light levels over the modulation window (a ring), for the syllable cue.
    private var peakLevels: [Float]
    private var peakIndex = 0
    /// The light speech-band levels over the modulation window (same ring positions).
    private var peakBandLevels: [Float]
    private var lightBandLevel: Float = 0
    /// The last frame that showed the syllable cue, or -1.
    private var lastModulationFrame = -1

    // Decision state.
    private enum State: Sendable { case idle, candidate, voiced }
    private var state = State.idle
    private var runStartFrame = 0
    private var runLength = 0
    private var runExcessEnergy: Float = 0
    private var runExcessDifference: Float = 0
    private var lastActiveFrame = 0
    /// The last frame of the candidate run above the continue threshold.
    private var lastLoudFrame = 0

    // Output.
    private var segments: [VoicedSegment] = []
    private var voicedFrames = 0
    private var track: [VoiceGateFrame] = []

    /// Creates a gate.
    /// - Parameter configuration: the settings; defaults suit 16 kHz speech in a bedroom.
    /// - Throws: `ProofkitError` `.invalidArgument` when a setting is out of range.
    public init(configuration: VoiceGateConfiguration = VoiceGateConfiguration()) throws(ProofkitError) {
        try configuration.validate()
        self.configuration = configuration
        frameLength = configuration.frameLength
        frameSeconds = Double(frameLength) / Double(configuration.sampleRate)
        let frameSeconds = self.frameSeconds
        func frames(_ duration: Duration) -> Int {
            ceilingInt(duration.seconds / frameSeconds - 1e-9)
        }
        minimumRunFrames = max(1, frames(configuration.minimumVoicedRun))
        hangOverFrames = frames(configuration.hangOver)
        warmUpFrames = frames(configuration.warmUp)
        riseStep = configuration.floorRiseDecibelsPerSecond * Float(frameSeconds)
        steadyRiseStep = configuration.steadyFloorRiseDecibelsPerSecond * Float(frameSeconds)
        fallStep = configuration.floorFallDecibelsPerSecond * Float(frameSeconds)
        let smoothingFrames = configuration.floorSmoothing.seconds / frameSeconds
        smoothing = Float(1 / max(1, smoothingFrames))
        steadyFrames = max(2, frames(configuration.steadyWindow))
        recentLevels = [Float](repeating: 0, count: 2 * steadyFrames)
        modulationDecibels = configuration.modulationDecibels
        peakLevels = [Float](
            repeating: -.infinity, count: max(2, frames(configuration.modulationWindow) + 1))
        peakBandLevels = peakLevels
        unmodulatedFrames = frames(configuration.unmodulatedWindow)
        unmodulatedRiseStep = configuration.unmodulatedFloorRiseDecibelsPerSecond * Float(frameSeconds)
        closingFrames = max(1, frames(.milliseconds(100)))
        pitch = HarmonicityTracker(
            sampleRate: configuration.sampleRate, frameLength: frameLength,
            lowestPitch: configuration.lowestPitch, highestPitch: configuration.highestPitch)
        usesHarmonicity = configuration.minimumHarmonicity > 0
        usesHarmonicShare = configuration.maximumHarmonicShare < 1
        continuity = configuration.pitchContinuity
        voicedStretchFrames = max(1, frames(configuration.minimumVoicedStretch))
        voicedTailFrames = frames(configuration.voicedTail)
        // RBJ band-pass (0 dB peak gain): b = (alpha, 0, -alpha), a = (1 + alpha, -2 cos w, 1 - alpha).
        let centre = 2 * Double.pi * 1000 / Double(configuration.sampleRate)
        let alpha = cosine(centre - Double.pi / 2) / (2 * 0.7)
        bandGain = Float(alpha / (1 + alpha))
        bandFeedback1 = Float(-2 * cosine(centre) / (1 + alpha))
        bandFeedback2 = Float((1 - alpha) / (1 + alpha))
        // A sinusoid at f has first-difference energy 2(1 - cos(2πf/fs)) times its energy.
        func differenceRatio(_ fraction: Double) -> Float {
            Float(2 * (1 - cosine(2 * Double.pi * min(0.5, fraction))))
        }
        minimumDifferenceRatio = differenceRatio(Double(configuration.minimumDominantFrequencyRatio))
        maximumDifferenceRatio = differenceRatio(Double(configuration.maximumDominantFrequencyRatio))
        frameDifferenceLimit = differenceRatio(Double(configuration.maximumDominantFrequencyRatio) * 1.5)
        if let initial = configuration.initialFloorDecibels {
            floor = initial
            smoothedLevel = initial
            lightLevel = initial
            hasFloor = true
        }
    }

    /// Seconds of voice found so far (closed segments plus the open one, if any).
    public var voicedSeconds: Double {
        var total = Double(voicedFrames) * frameSeconds
        if state == .voiced { total += Double(lastActiveFrame + 1 - runStartFrame) * frameSeconds }
        return total
    }

    /// The current noise floor, in dBFS (the silence level before the first frame).
    public var floorDecibels: Float { hasFloor ? floor : configuration.silenceDecibels }

    /// The open voiced segment (up to its last loud frame) when voice is on, else the last closed
    /// one, or `nil` before any voice. Cheap (no copy of the track).
    public var lastSegment: VoicedSegment? {
        if state == .voiced { return segment(from: runStartFrame, through: lastActiveFrame) }
        return segments.last
    }

    /// The voiced segments so far: the closed ones and the open one up to its last loud frame, as
    /// ``finish()`` returns them, without copying the level track.
    public var voicedSegments: [VoicedSegment] {
        guard state == .voiced else { return segments }
        return segments + [segment(from: runStartFrame, through: lastActiveFrame)]
    }

    /// Whether voice is on now.
    public var isVoiced: Bool { state == .voiced }

    /// How much audio has been analysed, in seconds (whole frames only).
    public var analysedSeconds: Double { Double(frameIndex) * frameSeconds }

    /// Feeds the next samples (mono, nominally -1...1, at the configured rate). Any length works;
    /// a partial frame is kept for the next call.
    /// - Parameter samples: the next samples, in order.
    /// - Returns: one record per frame completed by these samples (often empty for tiny chunks).
    public mutating func process(_ samples: [Float]) -> [VoiceGateFrame] {
        var frames: [VoiceGateFrame] = []
        frames.reserveCapacity((countInFrame + samples.count) / frameLength)
        let frameLength = self.frameLength
        let total = samples.count
        var index = 0
        while index < total {
            let end = min(total, index + (frameLength - countInFrame))
            var sum = self.sum
            var sumSquares = self.sumSquares
            var sumDifferenceSquares = self.sumDifferenceSquares
            var sumBandSquares = self.sumBandSquares
            var previous = previousSample
            var beforePrevious = beforePreviousSample
            var band1 = band1
            var band2 = band2
            let (gain, feedback1, feedback2) = (bandGain, bandFeedback1, bandFeedback2)
            // The hot loop: four sums and one band-pass biquad per sample.
            for position in index..<end {
                let x = samples[position]
                let d = x - previous
                // Only the last step waits for the previous output: a short dependency chain.
                let partial = gain * (x - beforePrevious) - feedback2 * band2
                let y = partial - feedback1 * band1
                sum += x
                sumSquares += x * x
                sumDifferenceSquares += d * d
                sumBandSquares += y * y
                beforePrevious = previous
                previous = x
                band2 = band1
                band1 = y
            }
            if usesHarmonicity { pitch.push(samples[index..<end]) }
            countInFrame += end - index
            index = end
            previousSample = previous
            beforePreviousSample = beforePrevious
            self.band1 = band1
            self.band2 = band2
            if countInFrame == frameLength {
                // Digital silence would leave the filter ringing down into subnormal numbers
                // (slow on most CPUs); flushed at frame ends so chunking cannot change results.
                if abs(band1) < 1e-20, abs(band2) < 1e-20 {
                    self.band1 = 0
                    self.band2 = 0
                }
                frames.append(
                    endFrame(
                        sum: sum, sumSquares: sumSquares, sumDifferenceSquares: sumDifferenceSquares,
                        sumBandSquares: sumBandSquares))
                self.sum = 0
                self.sumSquares = 0
                self.sumDifferenceSquares = 0
                self.sumBandSquares = 0
                countInFrame = 0
            } else {
                self.sum = sum
                self.sumSquares = sumSquares
                self.sumDifferenceSquares = sumDifferenceSquares
                self.sumBandSquares = sumBandSquares
            }
        }
        return frames
    }

    /// The result so far: closes an open voiced segment at its last loud frame (a partial frame
    /// at the end is not analysed). Does not change the gate; processing may continue.
    public func finish() -> VoiceGateResult {
        VoiceGateResult(
            voicedSeconds: voicedSeconds, segments: voicedSegments, finalFloorDecibels: floorDecibels,
            analysedSeconds: analysedSeconds, track: track)
    }

    /// Forgets everything (floor included), keeping the configuration.
    public mutating func reset() {
        // The initialiser cannot fail here: the configuration was validated already.
        self = try! VoiceActivityGate(configuration: configuration)
    }

    private func segment(from first: Int, through last: Int) -> VoicedSegment {
        VoicedSegment(start: Double(first) * frameSeconds, end: Double(last + 1) * frameSeconds)
    }

    /// Decides one complete frame and updates the floor.
    private mutating func endFrame(
        sum: Float, sumSquares: Float, sumDifferenceSquares: Float, sumBandSquares: Float
    ) -> VoiceGateFrame {
        let n = Float(frameLength)
        let mean = sum / n
        // Energy per sample without the frame's DC; the difference is DC-free already.
        let energy = max(0, sumSquares / n - mean * mean)
        let differenceEnergy = sumDifferenceSquares / n
        let silence = configuration.silenceDecibels
        let level = max(silence, decibels(power: energy))
        let current = frameIndex
        frameIndex += 1

        let isWarmingUp = followLevel(level)
        let isSteady = updateSteadiness()

        // Decision against the floor as it stood before this frame.
        let onThreshold = floor + configuration.marginDecibels
        let offThreshold = onThreshold - configuration.hysteresisDecibels
        let floorPower = power(decibels: floor)

        let bandLevel = max(silence, decibels(power: sumBandSquares / n))
        trackModulation(bandLevel: bandLevel, frame: current, onThreshold: onThreshold)
        if usesHarmonicity {
            trackVoicing(level: level, frame: current, offThreshold: offThreshold)
        }
        if !isWarmingUp {
            advanceState(
                level: level, energy: energy, difference: differenceEnergy, frame: current,
                onThreshold: onThreshold, offThreshold: offThreshold, floorPower: floorPower)
        }
        updateFloor(isWarmingUp: isWarmingUp, isSteady: isSteady, frame: current)
        learnRoomShape(energy: energy, difference: differenceEnergy, isWarmingUp: isWarmingUp)

        let frame = VoiceGateFrame(
            seconds: Double(current) * frameSeconds, levelDecibels: level, floorDecibels: floor,
            thresholdDecibels: floor + configuration.marginDecibels, isVoiced: state == .voiced)
        if configuration.recordsTrack { track.append(frame) }
        return frame
    }

    /// Counts the frame in the room and smooths its level into the floor's and the light level
    /// (the first frame starts them); returns whether the gate is still warming up.
    @inline(__always)
    private mutating func followLevel(_ level: Float) -> Bool {
        if !hasFloor {
            floor = level
            smoothedLevel = level
            lightLevel = level
            hasFloor = true
        }
        roomFrames += 1
        let isWarmingUp = roomFrames <= warmUpFrames
        smoothedLevel += (level - smoothedLevel) * (isWarmingUp ? max(smoothing, 0.5) : smoothing)
        lightLevel += (level - lightLevel) * 0.5
        return isWarmingUp
    }

    /// Records the smoothed level and says whether it stayed within a narrow range over the
    /// steadiness window.
    @inline(__always)
    private mutating func updateSteadiness() -> Bool {
        recentLevels[recentIndex] = smoothedLevel
        recentIndex = (recentIndex + 1) % recentLevels.count
        recentCount = min(recentCount + 1, recentLevels.count)
        // While voice is on, steadiness must hold twice as long: a reciter's long vowel
        // (madd) is steady for a second or two, a fan for ever.
        let window = state == .idle ? steadyFrames : recentLevels.count
        var isSteady = false
        if recentCount >= window {
            var low = Float.infinity
            var high = -Float.infinity
            var position = recentIndex
            for _ in 0..<window {
                position = position == 0 ? recentLevels.count - 1 : position - 1
                low = min(low, recentLevels[position])
                high = max(high, recentLevels[position])
            }
            isSteady = high - low <= configuration.steadinessDecibels
        }
        return isSteady
    }

    /// The syllable cue: the light speech-band level fell fast from its recent peak while the
    /// full-band level peaked above the start threshold. The speech band (around 1 kHz)
    /// matters: a car's rumble and a fan's hum jitter from frame to frame by several dB in the
    /// full band, but their share of the speech band is smooth.
    @inline(__always)
    private mutating func trackModulation(bandLevel: Float, frame current: Int, onThreshold: Float) {
        lightBandLevel = current == 0 ? bandLevel : lightBandLevel + (bandLevel - lightBandLevel) * 0.5
        peakLevels[peakIndex] = lightLevel
        peakBandLevels[peakIndex] = lightBandLevel
        peakIndex = peakIndex + 1 == peakLevels.count ? 0 : peakIndex + 1
        var recentPeak = -Float.infinity
        var recentBandPeak = -Float.infinity
        for position in peakLevels.indices {
            recentPeak = max(recentPeak, peakLevels[position])
            recentBandPeak = max(recentBandPeak, peakBandLevels[position])
        }
        if recentPeak > onThreshold, recentBandPeak - lightBandLevel >= modulationDecibels {
            lastModulationFrame = current
        }
    }

    /// The voicing cue: loud frames that repeat at a voice's pitch, in stretches.
    @inline(__always)
    private mutating func trackVoicing(level: Float, frame current: Int, offThreshold: Float) {
        var isPitched = false
        if level > offThreshold, pitch.strength() >= configuration.minimumHarmonicity {
            // A pure tone (a bubble, a drop's ring) is periodic without being a voice.
            isPitched = !usesHarmonicShare || pitch.harmonicSpread() <= configuration.maximumHarmonicShare
        }
        if isPitched {
            // A stretch continues only while the pitch glides (bubbles come at unrelated
            // pitches) and the level holds.
            if harmonicStreak > 0,
                (continuity > 0 && !isContinuous(previousLag, pitch.bestLag))
                    || level < stretchPeakLevel - configuration.maximumVoicedFallDecibels
            {
                harmonicStreak = 0
            }
            // A ringing bubble or drop decays by 4-20 dB per frame; a vowel holds its level.
            stretchPeakLevel = harmonicStreak == 0 ? level : max(stretchPeakLevel, level)
            harmonicStreak += 1
            // The tail's count asks only for the level to hold: a word's end may glide fast.
            if pitchedStreak > 0, level < pitchedPeakLevel - configuration.maximumVoicedFallDecibels {
                pitchedStreak = 0
            }
            pitchedPeakLevel = pitchedStreak == 0 ? level : max(pitchedPeakLevel, level)
            pitchedStreak += 1
            previousLag = pitch.bestLag
        } else {
            harmonicStreak = 0
            pitchedStreak = 0
        }
        if pitchedStreak >= 2 { lastVoicingFrame = current }
        if harmonicStreak >= voicedStretchFrames { lastStretchFrame = current }
    }

    /// Moves the decision (idle, candidate run, voiced) on by one frame after the warm-up.
    @inline(__always)
    private mutating func advanceState(
        level: Float, energy: Float, difference differenceEnergy: Float, frame current: Int,
        onThreshold: Float, offThreshold: Float, floorPower: Float
    ) {
        // A candidate run that stayed below the continue threshold for the closing time
        // without showing the cue is dropped; shorter dips are bridged.
        if state == .candidate, current - lastLoudFrame > closingFrames {
            state = .idle
        }
        switch state {
        case .idle:
            if level > onThreshold {
                state = .candidate
                runStartFrame = current
                runLength = 0
                runExcessEnergy = 0
                runExcessDifference = 0
                lastLoudFrame = current
                accumulateRun(energy: energy, difference: differenceEnergy, floorPower: floorPower)
                confirmIfReady()
            }
        case .candidate:
            if level > offThreshold {
                lastLoudFrame = current
                accumulateRun(energy: energy, difference: differenceEnergy, floorPower: floorPower)
                confirmIfReady()
            } else {
                // Closing: a syllable that just ended shows the cue now or within the
                // closing time.
                confirmIfReady()
            }
        case .voiced:
            // Loud frames extend the segment only near voiced frames: a tick between words or
            // the room after the reading does not.
            if level > offThreshold,
                isLowPitched(energy: energy, difference: differenceEnergy, floorPower: floorPower),
                !usesHarmonicity || current - lastVoicingFrame <= voicedTailFrames
            {
                lastActiveFrame = current
            } else if current - lastActiveFrame > hangOverFrames {
                segments.append(segment(from: runStartFrame, through: lastActiveFrame))
                voicedFrames += lastActiveFrame + 1 - runStartFrame
                state = .idle
            }
        }
    }

    /// Moves the floor toward the smoothed level: falling fast and rising slowly.
    @inline(__always)
    private mutating func updateFloor(isWarmingUp: Bool, isSteady: Bool, frame current: Int) {
        if isWarmingUp {
            floor = smoothedLevel
        } else if smoothedLevel < floor {
            floor = max(smoothedLevel, floor - fallStep)
        } else {
            // While voice is on, only a steady level lifts the floor; a loud run without the
            // syllable cue (a fan switching on, a car approaching) lifts it fast.
            var step = isSteady ? steadyRiseStep : (state == .idle ? riseStep : 0)
            if state == .candidate, modulationDecibels > 0,
                current - max(runStartFrame, lastModulationFrame) >= unmodulatedFrames
            {
                step = max(step, unmodulatedRiseStep)
            }
            // Voice on, but nothing voiced for as long: the room got louder under the reading
            // (a noise that started, the room after the last word).
            if state == .voiced, usesHarmonicity, current - max(runStartFrame, lastVoicingFrame) >= unmodulatedFrames {
                step = max(step, unmodulatedRiseStep)
            }
            floor = min(smoothedLevel, floor + step)
        }
    }

    /// Learns the room's spectral shape (its difference-to-energy ratio) while nothing is happening.
    @inline(__always)
    private mutating func learnRoomShape(energy: Float, difference differenceEnergy: Float, isWarmingUp: Bool) {
        if state == .idle, energy > 0 {
            let ratio = differenceEnergy / energy
            floorDifferenceRatio += (ratio - floorDifferenceRatio) * (isWarmingUp ? 0.3 : 0.05)
        }
    }

    /// Whether a pitch lag continues the previous one: within ``VoiceGateConfiguration/pitchContinuity``
    /// of it. (Allowing octave jumps too would let about half of random lag pairs through.)
    private func isContinuous(_ previous: Int, _ lag: Int) -> Bool {
        guard previous > 0, lag > 0 else { return false }
        return abs(Float(lag) / Float(previous) - 1) <= continuity
    }

    /// The power and first-difference power that a frame adds above the floor.
    private func excess(energy: Float, difference: Float, floorPower: Float) -> (energy: Float, difference: Float) {
        (max(0, energy - floorPower), max(0, difference - floorPower * floorDifferenceRatio))
    }

    /// Whether the sound this frame adds above the floor sits low enough in frequency to be voice
    /// (crickets, hiss and clicks are high). A fricative frame fails this; the hang-over bridges it.
    private func isLowPitched(energy: Float, difference: Float, floorPower: Float) -> Bool {
        let added = excess(energy: energy, difference: difference, floorPower: floorPower)
        return added.difference <= frameDifferenceLimit * added.energy
    }

    /// Adds a frame's power above the floor to the candidate run.
    private mutating func accumulateRun(energy: Float, difference: Float, floorPower: Float) {
        let added = excess(energy: energy, difference: difference, floorPower: floorPower)
        runLength += 1
        runExcessEnergy += added.energy
        runExcessDifference += added.difference
    }

    /// Turns voice on when the candidate run is long enough and shows every cue in use.
    private mutating func confirmIfReady() {
        guard runLength >= minimumRunFrames else { return }
        guard modulationDecibels == 0 || lastModulationFrame >= runStartFrame else { return }
        guard !usesHarmonicity || lastStretchFrame >= runStartFrame else { return }
        guard runExcessDifference <= maximumDifferenceRatio * runExcessEnergy,
            runExcessDifference >= minimumDifferenceRatio * runExcessEnergy
        else { return }
        state = .voiced
        lastActiveFrame = usesHarmonicity ? min(lastLoudFrame, lastVoicingFrame + voicedTailFrames) : lastLoudFrame
    }
}

/// 10 * log10(power), without Foundation: log2 from the exponent plus an atanh series for the
/// significand (error below 1e-5 dB).
@inline(__always)
func decibels(power: Float) -> Float {
    guard power > 0, power.isFinite else { return -.infinity }
    let exponent = Double(power.exponent)
    let m = Double(power.significand)  // 1 <= m < 2
    let s = (m - 1) / (m + 1)
    let s2 = s * s
    let ln = 2 * s * (1 + s2 * (1.0 / 3 + s2 * (1.0 / 5 + s2 * (1.0 / 7 + s2 * (1.0 / 9 + s2 / 11)))))
    let log2 = exponent + ln * 1.4426950408889634
    return Float(log2 * 3.0102999566398120)
}

/// 10^(decibels / 10), without Foundation.
@inline(__always)
func power(decibels: Float) -> Float {
    // 10^(x/10) = 2^(x * log2(10) / 10) = 2^k * 2^f with f in [0, 1).
    let y = Double(decibels) * 0.33219280948873623
    guard y > -1000, y < 1000 else { return y < 0 ? 0 : .infinity }
    let k = Double(floorInt(y))
    let f = (y - k) * 0.6931471805599453  // ln(2^f)
    var term = 1.0
    var e = 1.0
    for n in 1...12 {
        term *= f / Double(n)
        e += term
    }
    return Float(e * Double(sign: .plus, exponent: Int(k), significand: 1))
}

/// cos(x) for the one-off constants in `init`, without importing Foundation.
func cosine(_ x: Double) -> Double {
    // Taylor series around 0 after reducing to [-π, π]; ample for a constant.
    var y = x.truncatingRemainder(dividingBy: 2 * Double.pi)
    if y > Double.pi { y -= 2 * Double.pi }
    if y < -Double.pi { y += 2 * Double.pi }
    var term = 1.0
    var result = 1.0
    for n in 1...20 {
        term *= -y * y / Double((2 * n - 1) * (2 * n))
        result += term
    }
    return result
}

// Rounding without libm: `Double.rounded(_:)` calls libm's `ceil`/`floor`, which an engine that
// imports nothing but the standard library does not link on Linux.

/// The smallest integer >= x, for |x| < 2^53.
func ceilingInt(_ x: Double) -> Int {
    let t = Int(x)  // truncates toward zero
    return Double(t) < x ? t + 1 : t
}

/// The largest integer <= x, for |x| < 2^53.
func floorInt(_ x: Double) -> Int {
    let t = Int(x)
    return Double(t) > x ? t - 1 : t
}
