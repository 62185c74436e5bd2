import DuaMatching
import Proofkit
public import ProofkitCore
import ProofkitDemoMedia
internal import ProofkitSystem

/// The recogniser part of `proofkit demo`'s reading step: the built-in recogniser (Whisper base)
/// transcribes a real recording proofkit ships, the embedded adhan (``DemoMedia/recitationTitle``,
/// public domain), and the du'a matcher judges what it heard as the waking du'a. The adhan is not
/// the du'a, so the honest answer is a rejection: the demo shows real speech heard, and the
/// matcher's no. (proofkit ships no recording of a du'a: none with a licence to ship was found.)
///
/// ```swift
/// let run = try RecognizerDemo.run(environment: env)
/// if let reason = run.skippedReason { print("skipped: \(reason)") } else { print(run.transcript, run.verdict) }
/// ```
public enum RecognizerDemo {
    /// What the recogniser heard and what the matcher said.
    public struct Run: Sendable, Equatable {
        /// Why it did not run (the recogniser is not installed), or `nil`.
        public var skippedReason: String?
        /// The recording, described.
        public var recording: String
        /// What the recogniser wrote.
        public var transcript: String
        /// `"accepted"` or `"rejected"`, as the waking du'a.
        public var verdict: String
        /// The matcher's reason when rejected, else `nil`.
        public var reason: String?
        /// The du'a's key words found in the transcript.
        public var heardKeyWords: [String]
        /// Key words needed.
        public var requiredKeyWords: Int
        /// Seconds the recogniser took, load included.
        public var seconds: Double
    }

    /// Transcribes the embedded adhan and judges the transcript as the waking du'a.
    /// - Parameter environment: where the models and ONNX Runtime are looked for (`PROOFKIT_MODELS`,
    ///   `PROOFKIT_ORT_LIBRARY`), as the CLI passes it.
    /// - Returns: the run; ``Run/skippedReason`` says why when the recogniser is not installed.
    /// - Throws: `.io` when the recording cannot be written to a temporary folder; the
    ///   recogniser's errors for a damaged model (`.modelInvalid`).
    public static func run(environment: [String: String]) throws(ProofkitError) -> Run {
        let waking = DuaCatalog.builtIn.text(named: DuaCatalog.defaultName)!
        var run = Run(
            skippedReason: nil, recording: DemoMedia.recitationTitle, transcript: "", verdict: "rejected",
            reason: nil, heardKeyWords: [], requiredKeyWords: waking.requiredKeyWords, seconds: 0)
        let store = ModelStore(environment: environment)
        do throws(ProofkitError) {
            try WhisperRecognizer.checkInstalled(store: store)
        } catch {
            run.skippedReason = "the recogniser is not installed (\(error.message))"
            return run
        }
        let clock = ContinuousClock()
        let start = clock.now
        let folder = try TemporaryFolder(prefix: "proofkit-demo")
        defer { folder.remove() }
        let path = try folder.write(DemoMedia.recitationMP3, named: "adhan.mp3")
        let audio = try WhisperRecognizer.readMono16k(path: path, maxSeconds: 30).samples
        let recognizer = try WhisperRecognizer(store: store)
        run.transcript = try recognizer.transcribe(samples: audio).text
        run.seconds = (clock.now - start).seconds
        let match = DuaMatcher(text: waking).evaluate(transcript: run.transcript)
        run.verdict = match.verdict.isAccepted ? "accepted" : "rejected"
        if case .rejected(let reason) = match.verdict { run.reason = reason.detail }
        run.heardKeyWords = match.heardWords
        return run
    }
}
