import AudioIO
import DuaMatching
import Proofkit
public import ProofkitCore
internal import ProofkitSystem
public import VoiceGate

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The reading-proof part of `proofkit demo`: espeak-ng reads the waking du'a in Arabic twice,
/// the speech is mixed into a real room-noise recording, the mix is written as a WAV file, and
/// the reading proof runs on it twice: with a transcript (as a recogniser would give) and in the
/// voice-only fallback (no recogniser).
///
/// ```swift
/// let outcome = try ReadingProofDemo.run(environment: ["PATH": "/usr/bin:/bin"])
/// if let reason = outcome.skippedReason { print("reading proof skipped: \(reason)") }
/// else { print(outcome.withTranscript!.verdict, outcome.voiceOnly!.voicedSeconds) }
/// ```
public enum ReadingProofDemo {
    /// The transcript given to the proof: the du'a as a recogniser writes it (no harakat, words
    /// merged the way recognisers merge them).
    public static let transcript = "الحمدلله الذي احيانا بعدما اماتنا واليه النشور"

    /// The room-noise fixture looked for when none is given: a real air conditioner (CC0), see
    /// `Tests/TestSupport/Fixtures/README.md`.
    public static let defaultRoomNoise = "Tests/TestSupport/Fixtures/noise_ac_16k.wav"

    /// One run of the proof on the demo recording.
    public struct Run: Sendable, Equatable {
        /// `"accepted"` or `"rejected"`.
        public var verdict: String
        /// The rule that decided (`keyWords`, `readTwice`, `voiceOnly`).
        public var rule: String
        /// Why it was rejected, or `nil`.
        public var reason: String?
        /// Key words heard (as written in the text).
        public var heardKeyWords: [String]
        /// Voiced seconds the gate found.
        public var voicedSeconds: Double
        /// Voiced seconds the rule needed.
        public var neededSeconds: Double
        /// The voiced segments, in seconds.
        public var segments: [VoicedSegment]
    }

    /// What the demo did.
    public struct Outcome: Sendable {
        /// Why the demo was skipped (espeak-ng or the room noise missing), or `nil` when it ran.
        public var skippedReason: String?
        /// The recording's length, in seconds.
        public var recordingSeconds: Double
        /// Where the speech was placed in the recording: the two readings, in seconds.
        public var speechRegions: [VoicedSegment]
        /// The room noise's RMS level in the mix, in dBFS (-50).
        public var roomLevelDecibels: Double
        /// The speech's RMS level in the mix, in dBFS (-32: soft dawn speech).
        public var speechLevelDecibels: Double
        /// The noise floor the gate ended on, in dBFS.
        public var finalFloorDecibels: Double
        /// The proof with ``transcript`` (recogniser rules).
        public var withTranscript: Run?
        /// The voice-only fallback (no recogniser).
        public var voiceOnly: Run?
        /// The recording, when `keepRecordingAt` was given.
        public var recordingPath: String?

        static func skipped(_ reason: String) -> Outcome {
            Outcome(
                skippedReason: reason, recordingSeconds: 0, speechRegions: [], roomLevelDecibels: 0,
                speechLevelDecibels: 0, finalFloorDecibels: 0)
        }
    }

    /// Makes the recording and runs the proof on it.
    /// - Parameters:
    ///   - roomNoisePath: a room-noise recording (any format the reader reads); default
    ///     ``defaultRoomNoise`` found above the executable's folder or in the current folder.
    ///   - keepRecordingAt: where to write the mix (16-bit WAV, atomically); default a temporary
    ///     file that is removed.
    ///   - environment: the environment whose `PATH` finds espeak-ng (the caller's: nothing is read
    ///     on the side).
    /// - Returns: the outcome; ``Outcome/skippedReason`` says why when espeak-ng or the room noise
    ///   is missing (not an error: the demo goes on without this part).
    /// - Throws: `ProofkitError` when espeak-ng fails, a file cannot be read or written.
    public static func run(
        roomNoisePath: String? = nil, keepRecordingAt: String? = nil,
        environment: [String: String]
    ) throws(ProofkitError) -> Outcome {
        guard let espeak = findExecutable("espeak-ng", environment: environment) else {
            return .skipped("espeak-ng is not installed (apt install espeak-ng): no Arabic speech to test with")
        }
        guard let noisePath = roomNoisePath ?? locateNearExecutable(defaultRoomNoise) else {
            return .skipped("the room-noise recording \(defaultRoomNoise) was not found")
        }
        let temporary = try TemporaryFolder(prefix: "proofkit-demo")
        let folder = temporary.path
        defer { temporary.remove() }

        // 1. Speech: espeak-ng reads the du'a (with harakat) in Arabic.
        let waking = DuaCatalog.builtIn.text(named: "waking")!
        let speechPath = folder + "/speech.wav"
        guard
            let espeakRun = runChildDiscardingOutput(
                espeak, arguments: ["-v", "ar", "-s", "130", "-w", speechPath, waking.text])
        else {
            throw ProofkitError(.runtimeUnavailable, "cannot run espeak-ng", path: espeak)
        }
        guard espeakRun == .exited(0) else {
            let status =
                switch espeakRun {
                case .exited(let code), .signalled(let code): code
                }
            throw ProofkitError(.runtimeUnavailable, "espeak-ng failed (status \(status))", path: espeak)
        }
        let rate = 16_000
        var speech: [Float] = []
        try ReadingProofRecording.forEachMonoChunk(path: speechPath, sampleRate: rate) { speech += $0 }
        var noise: [Float] = []
        try ReadingProofRecording.forEachMonoChunk(path: noisePath, sampleRate: rate) { noise += $0 }
        guard !speech.isEmpty, noise.count >= rate / 2 else {
            return .skipped("the speech or the room noise is empty")
        }

        // 2. The mix: 1.5 s of room, a reading, 1.5 s pause, a second reading, 1.5 s of room.
        let roomLevel = -50.0
        let speechLevel = -32.0
        let speechGain = Float(Decibels.toAmplitude(speechLevel - rmsDecibels(speech)))
        let noiseGain = Float(Decibels.toAmplitude(roomLevel - rmsDecibels(noise)))
        let pause = rate * 3 / 2
        let total = pause + speech.count + pause + speech.count + pause
        var mix = [Float](repeating: 0, count: total)
        for i in 0..<total { mix[i] = noise[i % noise.count] * noiseGain }
        var regions: [VoicedSegment] = []
        for start in [pause, pause + speech.count + pause] {
            for (i, x) in speech.enumerated() { mix[start + i] += x * speechGain }
            regions.append(
                VoicedSegment(start: Double(start) / Double(rate), end: Double(start + speech.count) / Double(rate)))
        }
        let recording = keepRecordingAt ?? folder + "/reading.wav"
        var writer = try AudioFileWriter(path: recording, container: .wav, sampleRate: rate, channels: 1)
        try writer.write(mix)
        try writer.commit()

        // 3. The proof, with a transcript and voice-only.
        func proof(recognizer: Bool) throws(ProofkitError) -> (Run, Float) {
            let configuration = ReadingProofConfiguration(text: waking, usesRecognizer: recognizer)
            let outcome = try ReadingProofRecording.run(
                path: recording, configuration: configuration, sileroModelPath: nil,
                transcript: recognizer ? [transcript] : [])
            let match = outcome.result.match
            var reason: String?
            if case .rejected(let why) = match.verdict { reason = why.detail }
            let run = Run(
                verdict: match.verdict.isAccepted ? "accepted" : "rejected", rule: match.rule.rawValue,
                reason: reason, heardKeyWords: outcome.result.heardKeyWords.map(\.word),
                voicedSeconds: outcome.result.gate.voicedSeconds, neededSeconds: outcome.neededSeconds,
                segments: outcome.result.gate.segments)
            return (run, outcome.result.gate.finalFloorDecibels)
        }
        let (withTranscript, floor) = try proof(recognizer: true)
        let (voiceOnly, _) = try proof(recognizer: false)
        return Outcome(
            skippedReason: nil, recordingSeconds: Double(total) / Double(rate), speechRegions: regions,
            roomLevelDecibels: roomLevel, speechLevelDecibels: speechLevel, finalFloorDecibels: Double(floor),
            withTranscript: withTranscript, voiceOnly: voiceOnly, recordingPath: keepRecordingAt)
    }

    static func rmsDecibels(_ samples: [Float]) -> Double {
        var total = 0.0
        for x in samples { total += Double(x) * Double(x) }
        return Decibels.fromPower(max(total / Double(max(1, samples.count)), 1e-20))
    }

    static func findExecutable(_ name: String, environment: [String: String]) -> String? {
        let path = environment["PATH"] ?? "/usr/bin:/bin"
        for folder in path.split(separator: ":") where POSIX.isExecutableFile("\(folder)/\(name)") {
            return "\(folder)/\(name)"
        }
        return nil
    }
}
