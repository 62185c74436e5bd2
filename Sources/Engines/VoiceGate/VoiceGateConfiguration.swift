public import ProofkitCore

/// The settings of a ``VoiceActivityGate``. Every field has a default tuned on real room noise
/// (fan, air conditioner, fridge, night insects) and on soft speech; see ``VoiceActivityGate`` for
/// how each one is used.
///
/// Levels are RMS levels in dBFS, `20 * log10(rms)`, where a full-scale square wave is 0 dBFS
/// (the "RMS lev dB" that `sox -n stats` prints).
public struct VoiceGateConfiguration: Sendable, Equatable {
    /// Samples per second of the input, in Hz. Default 16 000. Must be 4 000...192 000.
    public var sampleRate: Int
    /// The length of one analysis frame. Default 20 ms. Must be 5...100 ms.
    public var frameDuration: Duration
    /// How far above the noise floor a frame must be to start voice, in dB. Default 6.
    public var marginDecibels: Float
    /// How far below the start threshold a voiced run may dip and still continue, in dB.
    /// The run continues while the level is above `floor + margin - hysteresis`. Default 3.
    /// Must be 0...margin.
    public var hysteresisDecibels: Float
    /// How long voice stays on after the level drops below the continue threshold. Gaps shorter
    /// than this (between words) are bridged. Default 300 ms.
    public var hangOver: Duration
    /// The shortest run of loud frames that counts as voice: clicks, knocks and clock ticks are
    /// shorter. Also the decision delay of a new run. Default 100 ms.
    public var minimumVoicedRun: Duration
    /// How fast the floor may rise towards a louder room, in dB per second, while the room is not
    /// steady (speech or changing noise). Default 0.5 dB/s.
    public var floorRiseDecibelsPerSecond: Float
    /// How fast the floor rises when the level has been steady for ``steadyWindow`` (a fan or an
    /// air conditioner switched on), in dB per second. Default 8 dB/s.
    public var steadyFloorRiseDecibelsPerSecond: Float
    /// How fast the floor falls back when the room gets quieter, in dB per second. Default 20 dB/s.
    public var floorFallDecibelsPerSecond: Float
    /// The time constant of the level smoothing that the floor follows. Default 150 ms: single
    /// quiet frames (a fan's beat) do not drag the floor down, a quiet room does within ~0.5 s.
    public var floorSmoothing: Duration
    /// How long the gate listens to the room before deciding anything: the floor follows the
    /// level closely meanwhile. Default 500 ms. Speech in this time is not counted.
    public var warmUp: Duration
    /// The window over which steadiness is judged. Default 500 ms.
    public var steadyWindow: Duration
    /// The level is steady when its lightly smoothed value (over 3 frames) stays within this
    /// range over ``steadyWindow``, in dB. Speech swings by 10 dB or more between syllables; fans,
    /// air conditioners and passing cars drift smoothly. Default 4 dB.
    public var steadinessDecibels: Float
    /// The lowest dominant frequency that the sound a run adds above the floor may have, as a
    /// fraction of the sample rate (see ``maximumDominantFrequencyRatio``). Rumble (traffic, a
    /// fan's hum, a lorry) sits below it. Default 0.008 (128 Hz at 16 kHz).
    public var minimumDominantFrequencyRatio: Float
    /// The highest dominant frequency that the sound a run adds above the floor may have and still
    /// count as voice, as a fraction of the sample rate. It is judged from the energy of the
    /// first difference against the energy (the lag-one autocorrelation), summed over the run,
    /// with the floor's own share removed. Voice has most of its energy below about 1 kHz;
    /// crickets, hiss and clicks are far higher. Default 0.16 (2.56 kHz at 16 kHz).
    public var maximumDominantFrequencyRatio: Float
    /// The syllable cue: how far the level in the speech band (about 0.5-2 kHz, smoothed over
    /// about two frames) must fall below its own recent peak, within ``modulationWindow``, for a
    /// run to count as speech, in dB. Speech falls by 10 dB or more between syllables several
    /// times a second (a 3-8 Hz modulation of its energy); a fan or an air conditioner after it
    /// starts, and a passing car or a lorry, swell and settle smoothly (real fans jitter by up to
    /// about 3 dB). The full-band level must have peaked above the start threshold in the same
    /// window. A run becomes voice only once such a fall happened during it or within 100 ms of
    /// its end. Default 6 dB. `0` turns the cue off (every run counts as modulated).
    public var modulationDecibels: Float
    /// How quickly the fall of ``modulationDecibels`` must happen. Default 200 ms (a syllable's
    /// decay takes 50-150 ms; a passing car's or lorry's swell takes half a second or more to
    /// fall by 6 dB). Must be 20 ms...2 s.
    public var modulationWindow: Duration
    /// How long a loud run may go without the syllable cue before it is taken for a change in
    /// the room (a fan switching on, a car approaching): the floor then rises at
    /// ``unmodulatedFloorRiseDecibelsPerSecond``. Default 1.2 s (a reciter's opening hum or long
    /// first vowel can go most of a second without a syllable fall). Must be 0...10 s.
    public var unmodulatedWindow: Duration
    /// How fast the floor rises under a loud run that has shown no syllable cue for
    /// ``unmodulatedWindow``, in dB per second (unused when ``modulationDecibels`` is 0).
    /// Default 40 dB/s: a fan 20 dB above a quiet room is part of the room about 2 s after it
    /// starts (it never counts as voice: it shows no syllable cue).
    public var unmodulatedFloorRiseDecibelsPerSecond: Float
    /// The voicing cue: the pitch strength (the peak normalised autocorrelation at a lag between
    /// ``lowestPitch`` and ``highestPitch``, of the sound low-passed at 1 kHz, see
    /// ``VoiceActivityGate``) that a loud frame needs to count as voiced, 0...1. Vowels score
    /// 0.7-0.99; clicks, ticks, drips, key presses, rain and hiss score less. A run becomes voice
    /// only with a voiced stretch of ``minimumVoicedStretch``, and voice lasts at most
    /// ``voicedTail`` after the last voiced frames. Default 0.6. `0` turns the cue off (the gate
    /// then judges loudness, spectrum and the syllable cue only).
    public var minimumHarmonicity: Float
    /// The pure-tone cue: the largest share of a pitched frame's harmonic energy (at the pitch
    /// found and its multiples up to 1 kHz) that its strongest harmonic may hold for the frame to
    /// count as voiced, 0...1. A bubble in running water, a dripping tap's ring, a kettle or a
    /// whistle is one sinusoid (0.9-1); a vowel spreads its energy over several harmonics (mostly
    /// 0.4-0.85). Default 0.9. `1` turns the cue off.
    public var maximumHarmonicShare: Float
    /// The pitch-continuity cue: how far, as a fraction, the pitch of a voiced frame may differ
    /// from the previous voiced frame's and still continue a voiced stretch. A voice glides (a few per cent per 20 ms frame); bubbles, splashes and
    /// drops come at unrelated pitches one after another. Default 0.15. `0` turns the cue off.
    /// Must be 0...1.
    public var pitchContinuity: Float
    /// The level cue of a voiced stretch: how far, in dB, a voiced frame may fall below the
    /// loudest frame of its stretch and still continue it. A bubble or a drop rings down by 4 to
    /// 20 dB per 20 ms frame; a vowel holds its level (its frames mostly within 2-5 dB) until the
    /// syllable ends. Default 6 dB. `.infinity` turns the cue off. Must be > 0.
    public var maximumVoicedFallDecibels: Float
    /// The lowest voice pitch looked for, in Hz. Default 70. Must be 40...1000 and below
    /// ``highestPitch``.
    public var lowestPitch: Double
    /// The highest voice pitch looked for, in Hz. Default 400.
    public var highestPitch: Double
    /// The shortest stretch of consecutive voiced frames (see ``minimumHarmonicity``) that a run
    /// needs to count as voice. A syllable's vowel lasts 60-250 ms; a clock's tick, a drip or a
    /// key press rings for well under 60 ms. Default 60 ms. Must be 0...1 s.
    public var minimumVoicedStretch: Duration
    /// How long after the last voiced frames (two in a row) loud frames still count as voice: a
    /// word's final consonant. Later loud frames (a room's noise after the reading, ticks between
    /// words) do not extend the segment. Default 150 ms. Must be 0...2 s.
    public var voicedTail: Duration
    /// The level of digital silence, in dBFS: levels are clamped to at least this. Default -100.
    public var silenceDecibels: Float
    /// The floor before the first frame, in dBFS, or `nil` to start at the first frame's level.
    /// Default `nil`.
    public var initialFloorDecibels: Float?
    /// Whether ``VoiceActivityGate/finish()`` returns the per-frame floor and threshold track
    /// (one point per frame, about 16 bytes each). Default `true`; turn it off for very long
    /// live sessions.
    public var recordsTrack: Bool

    /// Creates a configuration; every parameter has the documented default.
    public init(
        sampleRate: Int = 16_000,
        frameDuration: Duration = .milliseconds(20),
        marginDecibels: Float = 6,
        hysteresisDecibels: Float = 3,
        hangOver: Duration = .milliseconds(300),
        minimumVoicedRun: Duration = .milliseconds(100),
        floorRiseDecibelsPerSecond: Float = 0.5,
        steadyFloorRiseDecibelsPerSecond: Float = 8,
        floorFallDecibelsPerSecond: Float = 20,
        floorSmoothing: Duration = .milliseconds(150),
        warmUp: Duration = .milliseconds(500),
        steadyWindow: Duration = .milliseconds(500),
        steadinessDecibels: Float = 4,
        minimumDominantFrequencyRatio: Float = 0.008,
        maximumDominantFrequencyRatio: Float = 0.16,
        modulationDecibels: Float = 6,
        modulationWindow: Duration = .milliseconds(200),
        unmodulatedWindow: Duration = .milliseconds(1200),
        unmodulatedFloorRiseDecibelsPerSecond: Float = 40,
        minimumHarmonicity: Float = 0.6,
        maximumHarmonicShare: Float = 0.9,
        pitchContinuity: Float = 0.15,
        maximumVoicedFallDecibels: Float = 6,
        lowestPitch: Double = 70,
        highestPitch: Double = 400,
        minimumVoicedStretch: Duration = .milliseconds(60),
        voicedTail: Duration = .milliseconds(150),
        silenceDecibels: Float = -100,
        initialFloorDecibels: Float? = nil,
        recordsTrack: Bool = true
    ) {
        self.sampleRate = sampleRate
        self.frameDuration = frameDuration
        self.marginDecibels = marginDecibels
        self.hysteresisDecibels = hysteresisDecibels
        self.hangOver = hangOver
        self.minimumVoicedRun = minimumVoicedRun
        self.floorRiseDecibelsPerSecond = floorRiseDecibelsPerSecond
        self.steadyFloorRiseDecibelsPerSecond = steadyFloorRiseDecibelsPerSecond
        self.floorFallDecibelsPerSecond = floorFallDecibelsPerSecond
        self.floorSmoothing = floorSmoothing
        self.warmUp = warmUp
        self.steadyWindow = steadyWindow
        self.steadinessDecibels = steadinessDecibels
        self.minimumDominantFrequencyRatio = minimumDominantFrequencyRatio
        self.maximumDominantFrequencyRatio = maximumDominantFrequencyRatio
        self.modulationDecibels = modulationDecibels
        self.modulationWindow = modulationWindow
        self.unmodulatedWindow = unmodulatedWindow
        self.unmodulatedFloorRiseDecibelsPerSecond = unmodulatedFloorRiseDecibelsPerSecond
        self.minimumHarmonicity = minimumHarmonicity
        self.maximumHarmonicShare = maximumHarmonicShare
        self.pitchContinuity = pitchContinuity
        self.maximumVoicedFallDecibels = maximumVoicedFallDecibels
        self.lowestPitch = lowestPitch
        self.highestPitch = highestPitch
        self.minimumVoicedStretch = minimumVoicedStretch
        self.voicedTail = voicedTail
        self.silenceDecibels = silenceDecibels
        self.initialFloorDecibels = initialFloorDecibels
        self.recordsTrack = recordsTrack
    }

    /// Samples per frame (`sampleRate * frameDuration`, rounded, at least 1).
    public var frameLength: Int {
        max(1, Int(Double(sampleRate) * frameDuration.seconds + 0.5))
    }

    /// Checks that every value is in range.
    /// - Throws: `ProofkitError` `.invalidArgument` naming the first bad field.
    public func validate() throws(ProofkitError) {
        func bad(_ message: String) -> ProofkitError { ProofkitError(.invalidArgument, message) }
        guard (4_000...192_000).contains(sampleRate) else {
            throw bad("voice gate sample rate must be 4000...192000 Hz, got \(sampleRate)")
        }
        let frame = frameDuration.seconds
        guard frame >= 0.005, frame <= 0.1 else {
            throw bad("voice gate frame duration must be 5...100 ms, got \(frame * 1000) ms")
        }
        guard marginDecibels.isFinite, marginDecibels > 0, marginDecibels <= 40 else {
            throw bad("voice gate margin must be in (0, 40] dB, got \(marginDecibels)")
        }
        guard hysteresisDecibels.isFinite, hysteresisDecibels >= 0,
            hysteresisDecibels <= marginDecibels
        else {
            throw bad("voice gate hysteresis must be 0...margin dB, got \(hysteresisDecibels)")
        }
        for (name, value) in [
            ("hang-over", hangOver.seconds), ("minimum voiced run", minimumVoicedRun.seconds),
            ("steady window", steadyWindow.seconds), ("floor smoothing", floorSmoothing.seconds),
            ("warm-up", warmUp.seconds),
            ("unmodulated window", unmodulatedWindow.seconds),
        ] where !(value >= 0 && value <= 10) {
            throw bad("voice gate \(name) must be 0...10 s, got \(value) s")
        }
        for (name, value) in [
            ("floor rise rate", floorRiseDecibelsPerSecond),
            ("steady floor rise rate", steadyFloorRiseDecibelsPerSecond),
            ("floor fall rate", floorFallDecibelsPerSecond),
            ("steadiness", steadinessDecibels),
            ("unmodulated floor rise rate", unmodulatedFloorRiseDecibelsPerSecond),
        ] where !(value.isFinite && value >= 0) {
            throw bad("voice gate \(name) must be a finite number >= 0, got \(value)")
        }
        guard minimumDominantFrequencyRatio >= 0,
            minimumDominantFrequencyRatio < maximumDominantFrequencyRatio,
            maximumDominantFrequencyRatio <= 0.5
        else {
            throw bad(
                "voice gate dominant frequency ratios must satisfy 0 <= minimum < maximum <= 0.5, got \(minimumDominantFrequencyRatio) and \(maximumDominantFrequencyRatio)"
            )
        }
        guard modulationDecibels.isFinite, modulationDecibels >= 0, modulationDecibels <= 40 else {
            throw bad("voice gate modulation depth must be 0...40 dB, got \(modulationDecibels)")
        }
        let modulation = modulationWindow.seconds
        guard modulation >= 0.02, modulation <= 2 else {
            throw bad("voice gate modulation window must be 20 ms...2 s, got \(modulation * 1000) ms")
        }
        guard minimumHarmonicity.isFinite, minimumHarmonicity >= 0, minimumHarmonicity <= 1 else {
            throw bad("voice gate minimum harmonicity must be 0...1, got \(minimumHarmonicity)")
        }
        guard maximumHarmonicShare.isFinite, maximumHarmonicShare > 0, maximumHarmonicShare <= 1 else {
            throw bad("voice gate maximum harmonic share must be in (0, 1], got \(maximumHarmonicShare)")
        }
        guard pitchContinuity.isFinite, pitchContinuity >= 0, pitchContinuity <= 1 else {
            throw bad("voice gate pitch continuity must be 0...1, got \(pitchContinuity)")
        }
        guard !maximumVoicedFallDecibels.isNaN, maximumVoicedFallDecibels > 0 else {
            throw bad("voice gate maximum voiced fall must be > 0 dB, got \(maximumVoicedFallDecibels)")
        }
        guard lowestPitch.isFinite, highestPitch.isFinite, lowestPitch >= 40, highestPitch <= 1000,
            lowestPitch < highestPitch
        else {
            throw bad(
                "voice gate pitch range must satisfy 40 <= lowest < highest <= 1000 Hz, got \(lowestPitch) and \(highestPitch)"
            )
        }
        let stretch = minimumVoicedStretch.seconds
        guard stretch >= 0, stretch <= 1 else {
            throw bad("voice gate minimum voiced stretch must be 0...1 s, got \(stretch) s")
        }
        let tail = voicedTail.seconds
        guard tail >= 0, tail <= 2 else {
            throw bad("voice gate voiced tail must be 0...2 s, got \(tail) s")
        }
        guard silenceDecibels.isFinite, silenceDecibels < 0 else {
            throw bad("voice gate silence level must be a negative dBFS value, got \(silenceDecibels)")
        }
        if let initialFloorDecibels, !initialFloorDecibels.isFinite {
            throw bad("voice gate initial floor must be finite")
        }
    }
}

extension Duration {
    /// This duration in seconds, as a `Double`.
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }
}
