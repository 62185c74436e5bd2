public import DuaMatching
public import ProofkitCore
public import VoiceGate

/// The settings of a ``ReadingProof`` session.
public struct ReadingProofConfiguration: Sendable {
    /// The text to be read. Default: the waking du'a.
    public var text: DuaText
    /// The voice gate's settings (its sample rate is the rate of the audio you feed). Default
    /// 16 kHz with the gate's defaults.
    public var gate: VoiceGateConfiguration
    /// Whether transcripts will come (a recogniser runs). When `false`, the voice-only fallback
    /// judges: voiced seconds against the text's reading time. Default `true`.
    public var usesRecognizer: Bool
    /// How often a ``ReadingProofEvent/level(_:)`` and ``ReadingProofEvent/progress(_:)`` event is
    /// emitted, in audio time. Default 100 ms (a level meter at 10 Hz).
    public var meterInterval: Duration
    /// Which detector decides what is voiced. Default ``VoiceDetectionMode/energy``. With
    /// ``VoiceDetectionMode/silero`` or ``VoiceDetectionMode/both`` the caller also feeds Silero
    /// speech probabilities (``ReadingProof/process(audio:speechProbabilities:)``, or
    /// the facade's `ReadingProofSession` which runs the model); the energy gate still drives the level meter.
    public var voiceDetection: VoiceDetectionMode
    /// Whether the read-twice rule may accept (voiced for twice the reading time with two key
    /// words). Default `true`, for streaming recognisers that miss words; the built-in recogniser
    /// hears the whole reading, so `proofkit voice` turns it off there and the key words alone
    /// decide.
    public var allowsReadTwice: Bool
    /// Whether `SpeechLikenessVeto` narrows the gate: ``VoiceDetectionMode/energy``
    /// keeps only the voiced frames that also look like speech (a pitched drone such as a buzzing
    /// insect stops counting), and ``VoiceDetectionMode/silero`` drops each whole Silero segment
    /// whose mean likeness is under `SpeechLikenessVeto.segmentThreshold` (bubbling
    /// heard alone) and cuts each kept one to the veto's frames inside it, plus
    /// `SpeechLikenessVeto.edgePaddingSeconds` (Silero's tail after the voice). While
    /// streaming, a segment is judged on what is decided so far, so its count can still be
    /// withdrawn until it ends. Only at 16 kHz; voiced seconds then lag the audio by
    /// 350 ms until ``ReadingProof/finish()``. Default `true`.
    public var vetoesUnlikeSpeech: Bool

    /// Creates a configuration; every parameter has the documented default.
    public init(
        text: DuaText = DuaCatalog.builtIn.text(named: DuaCatalog.defaultName)!,
        gate: VoiceGateConfiguration = VoiceGateConfiguration(),
        usesRecognizer: Bool = true, meterInterval: Duration = .milliseconds(100),
        voiceDetection: VoiceDetectionMode = .energy, allowsReadTwice: Bool = true,
        vetoesUnlikeSpeech: Bool = true
    ) {
        self.text = text
        self.gate = gate
        self.usesRecognizer = usesRecognizer
        self.meterInterval = meterInterval
        self.voiceDetection = voiceDetection
        self.allowsReadTwice = allowsReadTwice
        self.vetoesUnlikeSpeech = vetoesUnlikeSpeech
    }

    /// Whether the speech-likeness veto runs: energy or silero mode, asked for, at its 16 kHz.
    var usesVeto: Bool {
        voiceDetection != .both && vetoesUnlikeSpeech && gate.sampleRate == SpeechLikenessVeto.sampleRate
    }
}

/// The meter reading of a ``ReadingProof`` at one moment.
public struct ReadingLevel: Sendable, Equatable {
    /// Audio time, in seconds since the session started.
    public var seconds: Double
    /// The loudest frame level since the last meter event, in dBFS.
    public var levelDecibels: Float
    /// The noise floor, in dBFS.
    public var floorDecibels: Float
    /// The moving threshold (floor + margin), in dBFS.
    public var thresholdDecibels: Float
    /// Whether voice is on now (as the configured ``VoiceDetectionMode`` decides).
    public var isVoiced: Bool
}

/// How far a reading has come.
public struct ReadingProgress: Sendable, Equatable {
    /// Voiced seconds so far.
    public var voicedSeconds: Double
    /// Voiced seconds that the active rule needs: the reading time (voice-only) or twice it
    /// (read-twice rule).
    public var neededSeconds: Double
    /// Different key words heard so far.
    public var heardKeyWords: Int
    /// Key words needed.
    public var requiredKeyWords: Int

    /// - Parameters:
    ///   - voicedSeconds: voice heard so far, in seconds.
    ///   - neededSeconds: voice the active rule needs, in seconds.
    ///   - heardKeyWords: different key words heard so far.
    ///   - requiredKeyWords: key words needed.
    public init(voicedSeconds: Double, neededSeconds: Double, heardKeyWords: Int, requiredKeyWords: Int) {
        self.voicedSeconds = voicedSeconds
        self.neededSeconds = neededSeconds
        self.heardKeyWords = heardKeyWords
        self.requiredKeyWords = requiredKeyWords
    }
}

/// A key word heard for the first time.
public struct HeardKeyWord: Sendable, Equatable {
    /// Index into the text's `DuaText/keyWords`.
    public var index: Int
    /// The word as written in the text (with harakat), for lighting it up.
    public var word: String
    /// When the transcript line that held it arrived, in seconds since the session started.
    public var seconds: Double
}

/// What a live UI needs to show, in order.
public enum ReadingProofEvent: Sendable, Equatable {
    /// The level meter: level, floor, threshold, voice on/off (every meter interval of audio).
    case level(ReadingLevel)
    /// Voiced time and key words against what is needed (every meter interval, and after each
    /// key word).
    case progress(ReadingProgress)
    /// Voice turned on (the run's true start, in seconds).
    case voiceStarted(seconds: Double)
    /// Voice turned off (the end of the last loud frame, in seconds).
    case voiceStopped(seconds: Double)
    /// A key word was heard for the first time (later hearings emit nothing).
    case keyWordHeard(HeardKeyWord)
    /// The proof is accepted: emitted once, the moment it first holds. The session may go on.
    case accepted(DuaMatchResult)
}

/// Everything a finished session found.
public struct ReadingProofResult: Sendable, Equatable {
    /// The verdict with its rule, the key words heard and the voiced seconds.
    public var match: DuaMatchResult
    /// The voice findings: voiced seconds and segments as the configured ``VoiceDetectionMode``
    /// decides (the energy gate's own, Silero's, or their intersection), and the energy gate's
    /// final floor and level track.
    public var gate: VoiceGateResult
    /// Silero speech probabilities, one per 32 ms chunk (empty in ``VoiceDetectionMode/energy``).
    public var speechProbabilities: [Float]
    /// The detector that decided ``gate``'s voiced segments (the configured mode).
    public var decidedBy: VoiceDetectionMode
    /// The energy gate's own voiced segments, whatever the mode (its floor is tracked in every
    /// mode), in seconds.
    public var energySegments: [VoicedSegment]
    /// Those of ``energySegments`` that are a clock's, in seconds: members of trains
    /// (`PeriodicTrains`) or inside stretches whose level repeats on a beat
    /// (`EnvelopePeriodicity`). They never count as voice where the energy gate decides
    /// (energy and both modes); empty in ``VoiceDetectionMode/silero``, where it does not decide.
    public var periodicSegments: [VoicedSegment]
    /// Silero's own voiced segments (`SpeechProbabilityGate` over ``speechProbabilities``), in
    /// seconds; empty in ``VoiceDetectionMode/energy``.
    public var sileroSegments: [VoicedSegment]
    /// The frames `SpeechLikenessVeto` kept as speech-like (joined into segments, in
    /// seconds), when the veto ran (``ReadingProofConfiguration/vetoesUnlikeSpeech`` in energy or
    /// silero mode at 16 kHz); `nil` otherwise. In energy mode the decided segments are the energy
    /// gate's intersected with these; in silero mode they are Silero's segments whose mean
    /// likeness reached `SpeechLikenessVeto.segmentThreshold`, each cut to these
    /// stretches plus `SpeechLikenessVeto.edgePaddingSeconds` either side.
    public var likeSpeechSegments: [VoicedSegment]?
    /// The veto's mean smoothed likeness (0...1) over each of ``sileroSegments``, in order: a segment
    /// counts when it is at least `SpeechLikenessVeto.segmentThreshold`. `nil` unless
    /// the veto ran in ``VoiceDetectionMode/silero``.
    public var sileroSegmentLikeness: [Float]?
    /// The key words in the order they were first heard.
    public var heardKeyWords: [HeardKeyWord]
    /// All transcript lines received, in order.
    public var transcript: [String]
    /// The text that was read.
    public var text: DuaText
}

/// A reading-proof session: combines the voice gate (how long the person read aloud) and the
/// du'a matcher (which key words a recogniser heard) over time, and reports events for a live UI.
///
/// Pure and synchronous: no threads, clocks or I/O. The caller drives it with three inputs:
/// - audio: ``process(audio:)`` with mono samples at the gate's rate (16 kHz by default), in any
///   chunk size; audio time is counted from the samples;
/// - transcript lines: ``process(transcript:at:)`` with each line a recogniser prints (partial or
///   final; key words accumulate over lines, so a recogniser that restarts loses nothing);
/// - time: the `at:` parameter, in seconds since the session started (by default the audio time
///   so far). Nothing depends on the wall clock, so a recording replays exactly.
///
/// ```swift
/// var proof = try ReadingProof(configuration: .init(text: waking, usesRecognizer: true))
/// for chunk in microphone { for event in proof.process(audio: chunk) { ui.show(event) } }
/// for line in recognizerLines { for event in proof.process(transcript: line) { ui.show(event) } }
/// let result = proof.finish()   // result.match.verdict
/// ```
///
/// Rules (see `DuaMatcher`): with a recogniser, accepted when enough key words are heard, or when
/// voiced for twice the reading time with two key words; without one, accepted when voiced for the
/// reading time. ``ReadingProofEvent/accepted(_:)`` is emitted once, as soon as a rule holds.
public struct ReadingProof: Sendable {
    /// The settings in use.
    public let configuration: ReadingProofConfiguration
    /// The matcher for the configured text.
    public let matcher: DuaMatcher

    private var gate: VoiceActivityGate
    private var neural: SpeechProbabilityGate
    private var veto: SpeechLikenessVeto?
    /// The clock finder over the gate's levels, where the energy gate decides (energy and both).
    private var periodicity: EnvelopePeriodicity?
    private var probabilities: [Float] = []
    private var heard: [HeardKeyWord] = []
    private var transcript: [String] = []
    private var hasAccepted = false
    private var wasVoiced = false
    private var meterFrames: Int
    private let frameSeconds: Double
    private var framesSinceMeter = 0
    private var loudestSinceMeter: Float = -.infinity

    /// Starts a session.
    /// - Parameter configuration: the text, the gate settings, and whether a recogniser runs.
    /// - Throws: `ProofkitError` `.invalidArgument` when the gate settings are out of range.
    public init(configuration: ReadingProofConfiguration = ReadingProofConfiguration()) throws(ProofkitError) {
        self.configuration = configuration
        matcher = DuaMatcher(text: configuration.text, readTwiceFactor: configuration.allowsReadTwice ? 2 : .infinity)
        gate = try VoiceActivityGate(configuration: configuration.gate)
        let frame = configuration.gate.frameDuration.components
        frameSeconds = Double(frame.seconds) + Double(frame.attoseconds) * 1e-18
        let interval = configuration.meterInterval.components
        let intervalSeconds = Double(interval.seconds) + Double(interval.attoseconds) * 1e-18
        meterFrames = max(1, Int(intervalSeconds / frameSeconds + 0.5))
        neural = SpeechProbabilityGate(
            chunkSeconds: Double(Self.sileroChunkSize(sampleRate: configuration.gate.sampleRate))
                / Double(configuration.gate.sampleRate))
        periodicity =
            configuration.voiceDetection == .silero ? nil : EnvelopePeriodicity(frameSeconds: frameSeconds)
        veto =
            configuration.usesVeto ? SpeechLikenessVeto(measuresSegments: configuration.voiceDetection == .silero) : nil
    }

    /// Samples per Silero chunk at `sampleRate`: 512 at 16 kHz, 256 at 8 kHz (32 ms).
    public static func sileroChunkSize(sampleRate: Int) -> Int { sampleRate * 32 / 1000 }

    /// Audio time so far, in seconds (whole frames).
    public var elapsedSeconds: Double { gate.analysedSeconds }

    /// Voiced seconds so far, as the configured ``VoiceDetectionMode`` decides.
    public var voicedSeconds: Double {
        switch configuration.voiceDetection {
        case .energy:
            let voice = energyVoice
            if let veto {
                return VoicedSegments.totalSeconds(VoicedSegments.intersection(voice.kept, veto.keptSegments))
            }
            return voice.clock.isEmpty ? gate.voicedSeconds : VoicedSegments.totalSeconds(voice.kept)
        case .silero:
            guard let veto else { return neural.voicedSeconds }
            return VoicedSegments.totalSeconds(Self.speechLike(neural.segments, by: veto))
        case .both: return VoicedSegments.totalSeconds(VoicedSegments.intersection(energyVoice.kept, neural.segments))
        }
    }

    /// The energy gate's voiced segments so far, split into those it decides with and the clock's:
    /// members of trains (`PeriodicTrains`) and segments inside stretches whose level
    /// repeats on a beat (`EnvelopePeriodicity`). The clock's never count.
    private var energyVoice: (kept: [VoicedSegment], clock: [VoicedSegment]) {
        let (runs, trains) = PeriodicTrains.separate(gate.voicedSegments)
        guard let periodicity else { return (runs, trains) }
        let (kept, periodic) = periodicity.separate(runs)
        return periodic.isEmpty ? (kept, trains) : (kept, (trains + periodic).sorted { $0.start < $1.start })
    }

    /// The segments whose decided frames look like speech on average, each cut to the frames the
    /// veto kept inside it plus `SpeechLikenessVeto.edgePaddingSeconds` either side
    /// (a short, isolated kept stretch at an end is not an edge:
    /// `SpeechLikenessVeto.edgeIsolatedShortestSeconds`); a
    /// segment none of whose frames is decided yet does not count until they are. While
    /// streaming, a segment is judged on the frames decided so far, so until it ends its count can
    /// still come or go.
    private static func speechLike(_ segments: [VoicedSegment], by veto: SpeechLikenessVeto) -> [VoicedSegment] {
        VoicedSegments.trimmedEdges(
            segments.filter { (veto.meanLikeness(over: $0) ?? 0) >= SpeechLikenessVeto.segmentThreshold },
            to: veto.keptSegments, padding: SpeechLikenessVeto.edgePaddingSeconds,
            isolatedGap: SpeechLikenessVeto.edgeIsolatedGapSeconds,
            isolatedShortest: SpeechLikenessVeto.edgeIsolatedShortestSeconds)
    }

    /// The verdict if the session ended now.
    public var current: DuaMatchResult { verdict(voicedSeconds: voicedSeconds) }

    /// The matcher's verdict on the key words heard so far and `voicedSeconds` of voice.
    private func verdict(voicedSeconds: Double) -> DuaMatchResult {
        if configuration.usesRecognizer {
            return matcher.evaluate(heard: heard.map(\.index), voicedSeconds: voicedSeconds)
        }
        return matcher.evaluateVoiceOnly(voicedSeconds: voicedSeconds)
    }

    /// Feeds captured audio (energy mode, or neural modes with no new probabilities).
    /// - Parameter audio: mono samples in -1...1 at the gate's sample rate.
    /// - Returns: level, progress and voice on/off events, then `accepted` if it now holds.
    public mutating func process(audio: [Float]) -> [ReadingProofEvent] {
        process(audio: audio, speechProbabilities: [])
    }

    /// Feeds captured audio with the Silero speech probabilities of the chunks it completes.
    ///
    /// Probabilities are for consecutive chunks of ``sileroChunkSize(sampleRate:)`` samples from
    /// the session's start; feed each chunk's probability no later than the audio that completes
    /// it (the facade's `ReadingProofSession` does this). A gate frame whose chunk has no probability yet uses
    /// the latest one. Ignored in ``VoiceDetectionMode/energy``.
    /// - Parameters:
    ///   - audio: mono samples in -1...1 at the gate's sample rate.
    ///   - speechProbabilities: probabilities (0...1) of the next chunks, in order.
    /// - Returns: level, progress and voice on/off events, then `accepted` if it now holds.
    public mutating func process(audio: [Float], speechProbabilities: [Float]) -> [ReadingProofEvent] {
        let mode = configuration.voiceDetection
        veto?.process(audio)
        let firstNewChunk = neural.chunkCount
        var neuralOn: [Bool] = []
        if mode.usesSilero {
            for probability in speechProbabilities {
                probabilities.append(probability)
                neuralOn.append(neural.process(probability))
            }
        }
        var events: [ReadingProofEvent] = []
        for frame in gate.process(audio) {
            periodicity?.add(frame.levelDecibels)
            loudestSinceMeter = max(loudestSinceMeter, frame.levelDecibels)
            var isVoiced = frame.isVoiced
            if mode.usesSilero {
                let middle = frame.seconds + frameSeconds / 2
                let chunk = Int(middle / neural.chunkSeconds) - firstNewChunk
                let neuralVoiced = neuralOn.isEmpty ? neural.isVoiced : neuralOn[max(0, min(neuralOn.count - 1, chunk))]
                isVoiced = mode == .silero ? neuralVoiced : (neuralVoiced && frame.isVoiced)
            }
            if isVoiced != wasVoiced {
                wasVoiced = isVoiced
                if mode.usesSilero {
                    events.append(
                        isVoiced ? .voiceStarted(seconds: frame.seconds) : .voiceStopped(seconds: frame.seconds))
                } else if isVoiced {
                    // The run started before the decision; report its true start.
                    let open = gate.lastSegment
                    events.append(.voiceStarted(seconds: open?.start ?? frame.seconds))
                } else {
                    let closed = gate.lastSegment
                    events.append(.voiceStopped(seconds: closed?.end ?? frame.seconds))
                }
            }
            framesSinceMeter += 1
            if framesSinceMeter >= meterFrames {
                framesSinceMeter = 0
                events.append(
                    .level(
                        ReadingLevel(
                            seconds: frame.seconds, levelDecibels: loudestSinceMeter,
                            floorDecibels: frame.floorDecibels, thresholdDecibels: frame.thresholdDecibels,
                            isVoiced: isVoiced)))
                loudestSinceMeter = -.infinity
                events.append(.progress(progress))
            }
        }
        checkAccepted(into: &events)
        return events
    }

    /// Feeds one transcript line from a recogniser (partial or final).
    /// - Parameters:
    ///   - line: the text as the recogniser printed it.
    ///   - seconds: when it arrived, in seconds since the session started; default the audio time.
    /// - Returns: a `keyWordHeard` event per new key word, a progress event if any, then `accepted`
    ///   if it now holds.
    public mutating func process(transcript line: String, at seconds: Double? = nil) -> [ReadingProofEvent] {
        transcript.append(line)
        var events: [ReadingProofEvent] = []
        let known = Set(heard.map(\.index))
        for index in matcher.keyWordsHeard(in: line) where !known.contains(index) {
            let hit = HeardKeyWord(
                index: index, word: configuration.text.keyWords[index].word,
                seconds: seconds ?? elapsedSeconds)
            heard.append(hit)
            events.append(.keyWordHeard(hit))
        }
        if !events.isEmpty { events.append(.progress(progress)) }
        checkAccepted(into: &events)
        return events
    }

    /// The recogniser's current best transcript from the lines it printed, for showing what was
    /// heard: a line that repeats the previous one and goes on (an interim guess refined, as
    /// streaming recognisers print them) replaces it, so the text is not shown several times
    /// over; other lines follow each other. Key words still count from every line.
    /// - Parameter lines: the lines in order (``ReadingProofResult/transcript``).
    /// - Returns: the lines that stand, in order.
    public static func currentTranscript(_ lines: [String]) -> [String] {
        var kept: [[Substring]] = []
        var texts: [String] = []
        for line in lines {
            let words = line.split(whereSeparator: \.isWhitespace)
            if words.isEmpty { continue }
            if let last = kept.last, words.count >= last.count, Array(words.prefix(last.count)) == last {
                kept[kept.count - 1] = words
                texts[texts.count - 1] = line
            } else {
                kept.append(words)
                texts.append(line)
            }
        }
        return texts
    }

    /// The final result (the session may still continue afterwards).
    public func finish() -> ReadingProofResult {
        var findings = gate.finish()
        let energySegments = findings.segments
        let (energyVoice, clock) = self.energyVoice
        var kept: [VoicedSegment]?
        var segmentLikeness: [Float]?
        switch configuration.voiceDetection {
        case .energy:
            findings.segments = energyVoice
            if !clock.isEmpty { findings.voicedSeconds = VoicedSegments.totalSeconds(energyVoice) }
            if var veto {
                let speechLike = veto.finish()
                kept = speechLike
                findings.segments = VoicedSegments.intersection(energyVoice, speechLike)
            }
        case .silero:
            findings.segments = neural.segments
            if var veto {
                kept = veto.finish()
                segmentLikeness = findings.segments.map { veto.meanLikeness(over: $0) ?? 0 }
                findings.segments = Self.speechLike(findings.segments, by: veto)
            }
        case .both: findings.segments = VoicedSegments.intersection(energyVoice, neural.segments)
        }
        findings.voicedSeconds =
            configuration.voiceDetection == .energy && kept == nil
            ? findings.voicedSeconds : VoicedSegments.totalSeconds(findings.segments)
        // With the veto, the last 350 ms are decided only now.
        let match = kept == nil ? current : verdict(voicedSeconds: findings.voicedSeconds)
        return ReadingProofResult(
            match: match, gate: findings, speechProbabilities: probabilities,
            decidedBy: configuration.voiceDetection, energySegments: energySegments,
            periodicSegments: configuration.voiceDetection == .silero ? [] : clock,
            sileroSegments: configuration.voiceDetection.usesSilero ? neural.segments : [],
            likeSpeechSegments: kept, sileroSegmentLikeness: segmentLikeness, heardKeyWords: heard,
            transcript: transcript, text: configuration.text)
    }

    /// Seconds of voice this proof needs, from the text's reading time: the read-twice factor
    /// times it when a recogniser is used (the reading time itself when the read-twice rule is
    /// off: then only the key words decide, and this is shown for guidance), else the voice-only
    /// factor times it.
    public var neededSeconds: Double {
        let reading = configuration.text.readingSeconds
        guard configuration.usesRecognizer else { return matcher.voiceOnlyFactor * reading }
        return configuration.allowsReadTwice ? matcher.readTwiceFactor * reading : reading
    }

    private var progress: ReadingProgress {
        ReadingProgress(
            voicedSeconds: voicedSeconds,
            neededSeconds: neededSeconds,
            heardKeyWords: heard.count, requiredKeyWords: configuration.text.requiredKeyWords)
    }

    private mutating func checkAccepted(into events: inout [ReadingProofEvent]) {
        guard !hasAccepted else { return }
        let result = current
        if result.verdict.isAccepted {
            hasAccepted = true
            events.append(.accepted(result))
        }
    }
}
