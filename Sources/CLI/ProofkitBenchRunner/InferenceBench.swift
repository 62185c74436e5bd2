import Inference
public import Proofkit
public import ProofkitCore
internal import ProofkitSystem
import SpeechRecognition
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
// libm only (sin); system calls go through ProofkitSystem.
#if canImport(Glibc)
    import Glibc
#endif

/// One configuration to measure: a model at a thread count.
public struct BenchJob: Sendable, Hashable, CustomStringConvertible {
    /// The model.
    public var model: BenchModel
    /// ORT intra-op threads (1 or more).
    public var threads: Int

    public init(model: BenchModel, threads: Int) {
        self.model = model
        self.threads = threads
    }

    /// `lite0:2`: how a job is written on a child's command line.
    public var description: String { "\(model.rawValue):\(threads)" }

    /// Reads ``description``'s form.
    /// - Throws: `.invalidArgument` when malformed.
    public init(parsing text: String) throws(ProofkitError) {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let model = BenchModel(rawValue: String(parts[0])), let threads = Int(parts[1]),
            threads >= 1
        else {
            throw ProofkitError(.invalidArgument, "'\(text)' is not MODEL:THREADS")
        }
        self.init(model: model, threads: threads)
    }
}

/// How each configuration is measured.
public struct BenchOptions: Sendable, Equatable {
    /// Timed runs (default 100: enough for a stable p90, and a p99 that is the 99th of 100).
    public var runs: Int
    /// Untimed runs first (default 10), so caches, the allocator and ORT's first-run work are warm.
    public var warmup: Int
    /// Whether ORT's idle threads spin (default `false`, like proofkit in use).
    public var allowsSpinning: Bool
    /// The folder holding the models (see ``ModelStore``).
    public var modelsFolder: String
    /// The photo for the end-to-end figure, or `nil` for none.
    public var image: String?
    /// Repetitions of the photo end to end (default 10, after one untimed-for-the-stats first run).
    public var photoRuns: Int

    /// - Parameters:
    ///   - runs: timed runs, at least 1 (default 100).
    ///   - warmup: warm-up runs, 0 or more (default 10).
    ///   - allowsSpinning: default `false`.
    ///   - modelsFolder: default `Models/generated`.
    ///   - image: default none.
    ///   - photoRuns: default 10.
    public init(
        runs: Int = 100, warmup: Int = 10, allowsSpinning: Bool = false,
        modelsFolder: String = ModelStore.relativeFolder, image: String? = nil, photoRuns: Int = 10
    ) {
        self.runs = runs
        self.warmup = warmup
        self.allowsSpinning = allowsSpinning
        self.modelsFolder = modelsFolder
        self.image = image
        self.photoRuns = photoRuns
    }

    /// The path of `model`'s file.
    public func path(of model: BenchModel) -> String { modelsFolder + "/" + model.fileName }
}

/// Measures inference the careful way: a monotonic clock (`ContinuousClock`), inputs made before
/// timing, warm-up runs, only `InferenceSession.run` inside the timed region (no I/O, no
/// allocation of inputs), every sample kept.
public enum InferenceBench {
    /// Measures one configuration in this process.
    /// - Parameters:
    ///   - job: the model and thread count.
    ///   - options: runs, warm-up, models folder, photo.
    ///   - isolation: how memory is attributed. With ``BenchSettings/Isolation/inProcess`` the
    ///     kernel's peak RSS mark is reset first (`/proc/self/clear_refs`), so the peak covers this
    ///     configuration only (plus whatever earlier ones left allocated).
    ///   - progress: called after each timed run with (done, total), outside the timed region.
    /// - Returns: the figures.
    /// - Throws: `.notFound` (no model file), `.runtimeUnavailable`, `.modelInvalid`, and the
    ///   photo pipeline's errors for the photo (`.decodeFailed`, ...).
    ///
    /// Measurements in one process run one at a time (callers on other threads wait).
    public static func measure(
        _ job: BenchJob, options: BenchOptions, isolation: BenchSettings.Isolation,
        progress: ((Int, Int) -> Void)? = nil
    ) throws(ProofkitError) -> BenchResult {
        // One measurement at a time per process: two at once would share the cores, and one's
        // reset of the peak-RSS mark would cut into the other's figure.
        try exclusive.withLock { _ throws(ProofkitError) -> BenchResult in
            try measureAlone(job, options: options, isolation: isolation, progress: progress)
        }
    }

    /// Serialises ``measure(_:options:isolation:progress:)`` within the process.
    private static let exclusive = Mutex(())

    private static func measureAlone(
        _ job: BenchJob, options: BenchOptions, isolation: BenchSettings.Isolation,
        progress: ((Int, Int) -> Void)?
    ) throws(ProofkitError) -> BenchResult {
        precondition(options.runs >= 1 && options.warmup >= 0 && job.threads >= 1, "bad bench options")
        if job.model == .whisper {
            return try measureWhisper(job, options: options, isolation: isolation, progress: progress)
        }
        if job.model == .pose {
            return try measurePose(job, options: options, isolation: isolation, progress: progress)
        }
        let clock = ContinuousClock()
        let path = options.path(of: job.model)
        guard case .success = POSIX.status(path) else {
            throw ProofkitError(.notFound, "no model file (set-up makes it: bash .ci/setup)", path: path)
        }
        let modelBytes = fileBytes(path)

        let runtimeStart = clock.now
        _ = try OnnxRuntime.load()
        let runtimeLoad = seconds(clock.now - runtimeStart)

        if isolation == .inProcess { resetPeakResident() }
        let before = ResourceUsage.residentBytes()
        let loadStart = clock.now
        var session = try InferenceSession(
            contentsOf: path,
            options: InferenceSession.Options(intraOpThreads: job.threads, allowsSpinning: options.allowsSpinning))
        let load = seconds(clock.now - loadStart)
        let afterLoad = ResourceUsage.residentBytes()

        let feeds: [String: any TensorInput]
        do throws(ProofkitError) {
            feeds = try job.model.feeds(for: session.inputs).mapValues { $0 as any TensorInput }
        } catch {
            throw error.at(path: path)
        }
        let requested = job.model.requestedOutputs(of: session.outputs)

        for _ in 0..<options.warmup {
            blackHole(try session.run(feeds, outputs: requested))
        }
        var samples: [Double] = []
        samples.reserveCapacity(options.runs)
        for index in 0..<options.runs {
            let start = clock.now
            let outputs = try session.run(feeds, outputs: requested)
            let end = clock.now
            blackHole(outputs)
            samples.append(seconds(end - start))
            progress?(index + 1, options.runs)
        }
        let peak = ResourceUsage.peakResidentBytes()
        session.close()

        var photo: BenchPhoto?
        var photoNote: String?
        if job.model.isPhotoModel {
            if let image = options.image {
                photo = try BenchPhotoRun.measure(job, photo: image, options: options)
                if photo == nil { photoNote = BenchPhotoRun.unavailableNote(job.model) }
            } else {
                photoNote = "no photo: give --image PHOTO.jpg"
            }
        }
        return BenchResult(
            model: job.model.rawValue, modelFile: job.model.fileName, modelBytes: modelBytes, threads: job.threads,
            runtimeLoadSeconds: runtimeLoad, loadSeconds: load, samples: samples, unit: job.model.unit,
            audioSecondsPerRun: job.model.audioSecondsPerRun,
            memory: BenchMemory(
                residentBeforeLoadBytes: before, residentAfterLoadBytes: afterLoad, peakResidentBytes: peak,
                isolation: isolation),
            photo: photo, photoNote: photoNote)
    }

    /// Whisper base: the recogniser loaded as `proofkit transcribe` loads it (both graphs checked
    /// against the manifest's SHA-256); each run encodes one 30 s window of a fixed log-mel pattern
    /// (the encoder's time does not depend on the values), then feeds the 4-token prompt (untimed)
    /// and ``BenchModel/whisperDecoderSteps`` single tokens (each timed: the decoder's time per
    /// token with a cache of 4 to 35 positions). Warm-up runs do the same untimed.
    private static func measureWhisper(
        _ job: BenchJob, options: BenchOptions, isolation: BenchSettings.Isolation,
        progress: ((Int, Int) -> Void)?
    ) throws(ProofkitError) -> BenchResult {
        let bins = WhisperFeatures.melBins
        let frames = WhisperFeatures.windowFrames
        var window = [Float](repeating: 0, count: bins * frames)
        for bin in 0..<bins {
            for frame in 0..<frames {
                let phase = Double(frame) * 0.031 + Double(bin) * 0.7
                window[bin * frames + frame] = Float(0.5 * sin(phase) - 0.2)
            }
        }
        let prompt = [50258, 50272, 50359, 50363]  // <|startoftranscript|><|ar|><|transcribe|><|notimestamps|>
        let clock = ContinuousClock()
        var (result, decoderSamples) = try measureFacade(
            job, options: options, isolation: isolation,
            files: [WhisperModelFiles.encoder, WhisperModelFiles.decoder], progress: progress,
            load: { (store) throws(ProofkitError) in try WhisperRecognizer(store: store, threads: job.threads) },
            run: { (recognizer) throws(ProofkitError) in
                guard let model = recognizer.transcriber.model as? OnnxWhisperModel else {
                    throw ProofkitError(.internal, "the Whisper recogniser is not the ONNX Runtime model")
                }
                // Each run times the encoder itself, not the reuse of the same window's encoding.
                model.forgetEncodedWindow()
                let start = clock.now
                try model.encode(melWindow: window)
                let encoded = clock.now
                blackHole(try model.logits(appending: prompt))
                var stepTimes: [Double] = []
                for step in 0..<BenchModel.whisperDecoderSteps {
                    let stepStart = clock.now
                    let rows = try model.logits(appending: [1_000 + step])  // ordinary text tokens
                    let stepEnd = clock.now
                    blackHole(rows)
                    stepTimes.append(seconds(stepEnd - stepStart))
                }
                return (seconds(encoded - start), stepTimes)
            })
        result.decoderToken = LatencyStatistics(decoderSamples)
        return result
    }

    /// BlazePose: the estimator loaded as `proofkit pose` loads it (both graphs and the pipeline
    /// file checked against their SHA-256); each run is one frame of `--image` (decoded as `pose`
    /// decodes it, once), or of a fixed 640x480 pattern: the detector, then the landmark model,
    /// each timed (``PoseEstimator/modelTimings(on:)``; the crops and decoding are not timed).
    private static func measurePose(
        _ job: BenchJob, options: BenchOptions, isolation: BenchSettings.Isolation,
        progress: ((Int, Int) -> Void)?
    ) throws(ProofkitError) -> BenchResult {
        var image: RGBImage?
        if options.image == nil {
            var pixels = [UInt8](repeating: 0, count: 640 * 480 * 3)
            for index in pixels.indices {
                pixels[index] = UInt8(
                    127.5 + 127 * sin(Double(index % 1_931) * 0.011) * cos(Double(index / 1_920) * 0.03))
            }
            image = RGBImage(width: 640, height: 480, pixels: pixels)
        }
        var (result, landmarkSamples) = try measureFacade(
            job, options: options, isolation: isolation, files: [PoseModelFiles.detector, PoseModelFiles.landmarks],
            progress: progress,
            load: { (store) throws(ProofkitError) in try PoseEstimator(store: store, threads: job.threads) },
            run: { (estimator) throws(ProofkitError) in
                let frame: RGBImage
                if let image {
                    frame = image
                } else {
                    frame = try estimator.decode(photoAt: options.image ?? "")
                    image = frame
                }
                let timings = try estimator.modelTimings(on: frame)
                return (timings.detector, [timings.landmarks])
            })
        result.landmarkModel = LatencyStatistics(landmarkSamples)
        return result
    }

    /// A model measured through its facade (several files, loaded and SHA-256-checked as the
    /// command that uses it loads them): ONNX Runtime loaded first, the facade loaded from
    /// `options.modelsFolder` (timed as the load), then `run` called for the warm-up and the
    /// timed runs; each run times its own parts and returns its main figure (the result's
    /// latency samples) and any other figures (returned, for the caller's own field).
    private static func measureFacade<Model>(
        _ job: BenchJob, options: BenchOptions, isolation: BenchSettings.Isolation, files: [String],
        progress: ((Int, Int) -> Void)?, load: (ModelStore) throws(ProofkitError) -> Model,
        run: (Model) throws(ProofkitError) -> (main: Double, other: [Double])
    ) throws(ProofkitError) -> (result: BenchResult, other: [Double]) {
        let clock = ContinuousClock()
        let path = options.path(of: job.model)
        guard case .success = POSIX.status(path) else {
            throw ProofkitError(.notFound, "no model file (set-up makes it: bash .ci/setup)", path: path)
        }
        let modelBytes = files.reduce(0) { $0 + fileBytes(options.modelsFolder + "/" + $1) }
        let runtimeStart = clock.now
        _ = try OnnxRuntime.load()
        let runtimeLoad = seconds(clock.now - runtimeStart)

        if isolation == .inProcess { resetPeakResident() }
        let before = ResourceUsage.residentBytes()
        let loadStart = clock.now
        let store = ModelStore(
            environment: [ModelStore.environmentVariable: options.modelsFolder], executablePath: nil)
        let model = try load(store)
        let loaded = seconds(clock.now - loadStart)
        let afterLoad = ResourceUsage.residentBytes()
        var samples: [Double] = []
        var other: [Double] = []
        for index in 0..<(options.warmup + options.runs) {
            let figures = try run(model)
            if index >= options.warmup {
                samples.append(figures.main)
                other += figures.other
                progress?(index - options.warmup + 1, options.runs)
            }
        }
        let peak = ResourceUsage.peakResidentBytes()
        withExtendedLifetime(model) {}
        let result = BenchResult(
            model: job.model.rawValue, modelFile: files.joined(separator: " + "), modelBytes: modelBytes,
            threads: job.threads, runtimeLoadSeconds: runtimeLoad, loadSeconds: loaded, samples: samples,
            unit: job.model.unit, audioSecondsPerRun: nil,
            memory: BenchMemory(
                residentBeforeLoadBytes: before, residentAfterLoadBytes: afterLoad, peakResidentBytes: peak,
                isolation: isolation),
            photo: nil, photoNote: nil)
        return (result, other)
    }

    /// A file's size in bytes (`stat`), 0 when it cannot be read. (`FileManager`'s `.size`
    /// attribute did not cast to `Int` here, so every report said 0.)
    static func fileBytes(_ path: String) -> Int {
        (try? POSIX.status(path).get()).map { Int($0.size) } ?? 0
    }

    /// A `Duration` in seconds.
    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        // Whole nanoseconds (the clock's resolution), so the JSON prints short decimals.
        return Double(parts.seconds) + Double(parts.attoseconds / 1_000_000_000) / 1e9
    }

    /// Resets the kernel's peak-RSS mark (VmHWM) to the current RSS: writes `5` to
    /// `/proc/self/clear_refs` (Linux 4.0+). Best effort: returns whether it worked.
    @discardableResult
    static func resetPeakResident() -> Bool {
        guard case .success(let fd) = POSIX.open("/proc/self/clear_refs", .writeOnly) else { return false }
        defer { POSIX.closeDescriptor(fd) }
        return POSIX.writeAll(fd, Array("5".utf8)) == nil
    }
}

/// Keeps a value alive so the optimiser cannot drop the work that produced it.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
