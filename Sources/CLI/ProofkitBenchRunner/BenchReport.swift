public import Proofkit
public import ProofkitCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The result of `proofkit bench`: one object, written as JSON with ``BenchReport/schemaVersion``.
///
/// Every time is in seconds and every size in bytes. Keys are snake_case in JSON. Fields are only
/// ever added within one schema version; a removed or renamed field bumps it.
public struct BenchReport: Sendable, Codable, Equatable {
    /// The JSON schema version this code writes (and the only one ``decode(_:)`` accepts).
    public static let schemaVersion = 1

    /// The schema version of this report.
    public var schemaVersion: Int
    /// proofkit's version, e.g. `"0.1.0"`.
    public var proofkitVersion: String
    /// The ONNX Runtime in use.
    public var onnxRuntime: BenchRuntime?
    /// The machine the figures come from.
    public var machine: BenchMachine
    /// When the run started, ISO-8601 UTC (e.g. `2025-11-29T17:50:00Z`).
    public var timestamp: String
    /// The command line, as typed (program name first).
    public var commandLine: [String]
    /// The settings of the run.
    public var settings: BenchSettings
    /// One entry per (model, thread count), in the order measured.
    public var results: [BenchResult]
    /// Models that were asked for but not measured, with the reason.
    public var skipped: [BenchSkip]
    /// Whether any result's spread was wide (see ``BenchResult/isNoisy``).
    public var isNoisy: Bool
    /// Wall time of the whole run.
    public var wallSeconds: Double

    /// Assembles a report; ``isNoisy`` is derived from the results.
    public init(
        schemaVersion: Int = BenchReport.schemaVersion, proofkitVersion: String = ProofkitVersion.string,
        onnxRuntime: BenchRuntime?, machine: BenchMachine, timestamp: String, commandLine: [String],
        settings: BenchSettings, results: [BenchResult], skipped: [BenchSkip], wallSeconds: Double
    ) {
        self.schemaVersion = schemaVersion
        self.proofkitVersion = proofkitVersion
        self.onnxRuntime = onnxRuntime
        self.machine = machine
        self.timestamp = timestamp
        self.commandLine = commandLine
        self.settings = settings
        self.results = results
        self.skipped = skipped
        self.isNoisy = results.contains { $0.isNoisy }
        self.wallSeconds = wallSeconds
    }

    enum CodingKeys: String, CodingKey {
        case schemaVersion = "schema_version"
        case proofkitVersion = "proofkit_version"
        case onnxRuntime = "onnxruntime"
        case machine, timestamp
        case commandLine = "command_line"
        case settings, results, skipped
        case isNoisy = "noisy"
        case wallSeconds = "wall_s"
    }

    // Written by hand so that absent values appear as `null` (a stable set of keys).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(schemaVersion, forKey: .schemaVersion)
        try container.encode(proofkitVersion, forKey: .proofkitVersion)
        try container.encode(onnxRuntime, forKey: .onnxRuntime)
        try container.encode(machine, forKey: .machine)
        try container.encode(timestamp, forKey: .timestamp)
        try container.encode(commandLine, forKey: .commandLine)
        try container.encode(settings, forKey: .settings)
        try container.encode(results, forKey: .results)
        try container.encode(skipped, forKey: .skipped)
        try container.encode(isNoisy, forKey: .isNoisy)
        try container.encode(wallSeconds, forKey: .wallSeconds)
    }

    /// The report as one line of JSON with sorted keys.
    public func encoded() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain structs of strings and finite numbers cannot fail.
        let data = (try? encoder.encode(self)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// Reads a report written by ``encoded()`` (by this or another machine).
    /// - Throws: `.decodeFailed` when the text is not such a report, or `.unsupportedFormat` for
    ///   another schema version.
    public static func decode(_ text: String) throws(ProofkitError) -> BenchReport {
        let data = Data(text.utf8)
        struct Version: Decodable {
            var schemaVersion: Int?
            enum CodingKeys: String, CodingKey { case schemaVersion = "schema_version" }
        }
        guard let version = try? JSONDecoder().decode(Version.self, from: data) else {
            throw ProofkitError(.decodeFailed, "not a JSON object (expected the output of `proofkit bench --json`)")
        }
        guard version.schemaVersion == schemaVersion else {
            throw ProofkitError(
                .unsupportedFormat,
                "schema_version \(version.schemaVersion.map(String.init) ?? "missing"), this proofkit reads \(schemaVersion)"
            )
        }
        do {
            return try JSONDecoder().decode(BenchReport.self, from: data)
        } catch {
            throw ProofkitError(.decodeFailed, "not a proofkit bench report: \(Self.describe(error))")
        }
    }

    static func describe(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .keyNotFound(let key, let context)?:
            let path = (context.codingPath.map(\.stringValue) + [key.stringValue]).joined(separator: ".")
            return "missing field \(path)"
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?, .dataCorrupted(let context)?:
            return "bad field \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        default:
            return "\(error)"
        }
    }
}

/// The ONNX Runtime library a report was measured with.
public struct BenchRuntime: Sendable, Codable, Equatable {
    /// Its release, e.g. `"1.32.0"`.
    public var version: String
    /// The C API version proofkit asked for.
    public var apiVersion: Int
    /// - Parameters:
    ///   - version: the library's release.
    ///   - apiVersion: the C API version in use.
    public init(version: String, apiVersion: Int) {
        self.version = version
        self.apiVersion = apiVersion
    }
    enum CodingKeys: String, CodingKey {
        case version
        case apiVersion = "api_version"
    }
}

/// ``MachineInfo`` in a report.
public struct BenchMachine: Sendable, Codable, Equatable {
    /// CPU model (e.g. "Raspberry Pi 5 Model B Rev 1.0" on a Pi).
    public var cpuModel: String
    /// Online logical cores.
    public var cores: Int
    /// `uname -m`, e.g. `aarch64`.
    public var architecture: String
    /// `uname -r`.
    public var kernel: String
    /// `/etc/os-release` PRETTY_NAME (`os` in JSON).
    public var operatingSystem: String
    /// Total memory in bytes.
    public var memoryBytes: Int
    /// The highest CPU clock in MHz (`cpufreq/cpuinfo_max_freq` of CPU 0), or `nil` when the
    /// kernel does not say (virtual machines).
    public var cpuMaxMHz: Int?
    /// The CPU frequency governor of CPU 0 (e.g. `ondemand`, `performance`), or `nil`.
    public var cpuGovernor: String?
    /// The load average over 1, 5 and 15 minutes when the run started: a busy machine gives
    /// slower and noisier figures.
    public var loadAverage: [Double]

    /// The report's copy of `info`, plus the clock, governor and load average read now.
    public init(_ info: MachineInfo) {
        cpuModel = info.cpuModel
        cores = info.cores
        architecture = info.architecture
        kernel = info.kernel
        operatingSystem = info.operatingSystem
        memoryBytes = info.memoryBytes
        let cpufreq = "/sys/devices/system/cpu/cpu0/cpufreq/"
        cpuMaxMHz = readTextFile(cpufreq + "cpuinfo_max_freq").flatMap { Int($0.trimmingSpacesAndNewlines()) }
            .map { $0 / 1000 }
        cpuGovernor = readTextFile(cpufreq + "scaling_governor").map { $0.trimmingSpacesAndNewlines() }
            .flatMap { $0.isEmpty ? nil : $0 }
        loadAverage = (readTextFile("/proc/loadavg") ?? "").split(separator: " ").prefix(3).compactMap { Double($0) }
    }
    enum CodingKeys: String, CodingKey {
        case cpuModel = "cpu_model"
        case cores, architecture, kernel
        case operatingSystem = "os"
        case memoryBytes = "memory_bytes"
        case cpuMaxMHz = "cpu_max_mhz"
        case cpuGovernor = "cpu_governor"
        case loadAverage = "load_average"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(cpuModel, forKey: .cpuModel)
        try container.encode(cores, forKey: .cores)
        try container.encode(architecture, forKey: .architecture)
        try container.encode(kernel, forKey: .kernel)
        try container.encode(operatingSystem, forKey: .operatingSystem)
        try container.encode(memoryBytes, forKey: .memoryBytes)
        try container.encode(cpuMaxMHz, forKey: .cpuMaxMHz)
        try container.encode(cpuGovernor, forKey: .cpuGovernor)
        try container.encode(loadAverage, forKey: .loadAverage)
    }
}

/// How a run was set up.
public struct BenchSettings: Sendable, Codable, Equatable {
    /// How memory was attributed to each configuration.
    public enum Isolation: String, Sendable, Codable {
        /// Each (model, threads) ran in its own child process of the same binary: its peak RSS
        /// is that configuration's alone (runtime + model + buffers).
        case childProcess = "child-process"
        /// All configurations ran in this process; before each, the kernel's peak RSS mark was
        /// reset (`/proc/self/clear_refs`), so each peak is the process's RSS at its worst during
        /// that configuration, including what earlier ones left allocated.
        case inProcess = "in-process"
    }

    /// Timed runs per configuration.
    public var runs: Int
    /// Untimed warm-up runs per configuration.
    public var warmup: Int
    /// The thread counts measured (ORT intra-op threads).
    public var threads: [Int]
    /// Whether ORT's idle threads spin (proofkit's default is off).
    public var allowsSpinning: Bool
    /// How memory was attributed.
    public var isolation: Isolation
    /// The photo used for the end-to-end time (as given), or `nil`.
    public var image: String?

    /// The settings as recorded (see each property).
    public init(runs: Int, warmup: Int, threads: [Int], allowsSpinning: Bool, isolation: Isolation, image: String?) {
        self.runs = runs
        self.warmup = warmup
        self.threads = threads
        self.allowsSpinning = allowsSpinning
        self.isolation = isolation
        self.image = image
    }
    enum CodingKeys: String, CodingKey {
        case runs, warmup, threads
        case allowsSpinning = "spinning"
        case isolation, image
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(runs, forKey: .runs)
        try container.encode(warmup, forKey: .warmup)
        try container.encode(threads, forKey: .threads)
        try container.encode(allowsSpinning, forKey: .allowsSpinning)
        try container.encode(isolation, forKey: .isolation)
        try container.encode(image, forKey: .image)
    }
}

/// A model that was not measured.
public struct BenchSkip: Sendable, Codable, Equatable {
    /// The model's `--model` name.
    public var model: String
    /// Why it was not measured, and how to fix that.
    public var reason: String
    /// A skipped model and why.
    public init(model: String, reason: String) {
        self.model = model
        self.reason = reason
    }
}

/// ``LatencyStatistics`` in a report (seconds): the same value, encoded with `stddev` for
/// ``LatencyStatistics/standardDeviation``.
public typealias BenchLatency = LatencyStatistics

/// Memory of one configuration (bytes; from `/proc/self/status` of the measuring process).
public struct BenchMemory: Sendable, Codable, Equatable {
    /// Resident set size after ONNX Runtime was loaded, before the model (VmRSS).
    public var residentBeforeLoadBytes: Int
    /// Resident set size right after the session was created.
    public var residentAfterLoadBytes: Int
    /// Peak resident set size while loading and running the model (VmHWM).
    public var peakResidentBytes: Int
    /// How the figures were attributed (see ``BenchSettings/Isolation``).
    public var isolation: BenchSettings.Isolation

    /// The peak growth over the baseline: what loading and running this model added.
    public var modelPeakBytes: Int { max(0, peakResidentBytes - residentBeforeLoadBytes) }

    /// The figures as measured (bytes).
    public init(
        residentBeforeLoadBytes: Int, residentAfterLoadBytes: Int, peakResidentBytes: Int,
        isolation: BenchSettings.Isolation
    ) {
        self.residentBeforeLoadBytes = residentBeforeLoadBytes
        self.residentAfterLoadBytes = residentAfterLoadBytes
        self.peakResidentBytes = peakResidentBytes
        self.isolation = isolation
    }
    enum CodingKeys: String, CodingKey {
        case residentBeforeLoadBytes = "rss_before_load_bytes"
        case residentAfterLoadBytes = "rss_after_load_bytes"
        case peakResidentBytes = "peak_rss_bytes"
        case isolation
    }
}

/// One photo judged end to end (read + decode, preprocess, inference, verdict) with a session that
/// is already loaded and warm.
public struct BenchPhoto: Sendable, Codable, Equatable {
    /// The photo (as given).
    public var file: String
    /// The first judgement right after the model's timed runs (file cache warm, first decode).
    public var firstSeconds: Double
    /// Whole judgement (read, decode, preprocess, inference, verdict) over the repeated runs.
    public var total: BenchLatency
    /// Median of the decode step (reading included).
    public var decodeSeconds: Double
    /// Median of the preprocessing step.
    public var preprocessSeconds: Double
    /// Median of the inference step.
    public var inferenceSeconds: Double
    /// The verdict of the photo: `"accepted"` or `"rejected"`.
    public var verdict: String
    /// The photo's score.
    public var score: Double
    /// Peak resident set size after the photo runs (VmHWM).
    public var peakResidentBytes: Int

    /// The figures as measured (seconds, bytes).
    public init(
        file: String, firstSeconds: Double, total: BenchLatency, decodeSeconds: Double, preprocessSeconds: Double,
        inferenceSeconds: Double, verdict: String, score: Double, peakResidentBytes: Int
    ) {
        self.file = file
        self.firstSeconds = firstSeconds
        self.total = total
        self.decodeSeconds = decodeSeconds
        self.preprocessSeconds = preprocessSeconds
        self.inferenceSeconds = inferenceSeconds
        self.verdict = verdict
        self.score = score
        self.peakResidentBytes = peakResidentBytes
    }
    enum CodingKeys: String, CodingKey {
        case file
        case firstSeconds = "first_s"
        case total = "total_s"
        case decodeSeconds = "decode_p50_s"
        case preprocessSeconds = "preprocess_p50_s"
        case inferenceSeconds = "inference_p50_s"
        case verdict, score
        case peakResidentBytes = "peak_rss_bytes"
    }
}

/// The figures of one model at one thread count.
public struct BenchResult: Sendable, Codable, Equatable {
    /// The model's name as `--model` spells it (`lite0`, `lite0-fp32`, `clip`, `clip-standin`, `silero`).
    public var model: String
    /// The model's file name.
    public var modelFile: String
    /// The model file's size.
    public var modelBytes: Int
    /// ORT intra-op threads.
    public var threads: Int
    /// Loading ONNX Runtime and creating its environment, when this process did it for this
    /// configuration (child processes, or the first configuration in process); else 0.
    public var runtimeLoadSeconds: Double
    /// Creating the session from the file (reading the file included): the first one in the
    /// process, what a user waits for.
    public var loadSeconds: Double
    /// Latency of one run (`InferenceSession.run` with prepared inputs) after the warm-up.
    public var latency: BenchLatency
    /// Every timed run, in order (seconds).
    public var samples: [Double]
    /// Runs per second over the timed runs (count / sum of the samples).
    public var throughputPerSecond: Double
    /// What one run processes: `"images"` or `"chunks"` (Silero, 32 ms of audio each).
    public var unit: String
    /// Seconds of audio processed per second of run time (Silero only).
    public var realTimeFactor: Double?
    /// Memory figures.
    public var memory: BenchMemory
    /// The photo end to end, for photo models when a photo was available.
    public var photo: BenchPhoto?
    /// Why there is no photo figure, when there is none for a photo model.
    public var photoNote: String?
    /// Whether the spread was wide (p90 more than 25 % above the median): the machine was busy.
    public var isNoisy: Bool
    /// `(p90 - p50) / p50`.
    public var relativeSpread: Double
    /// Whisper only: the time of one decoder step (one new token, with the self-attention cache
    /// and the window's cross-attention keys), over every timed step of every run; `nil` for
    /// other models. (``latency`` is then the encoder's time per 30 s window.)
    public var decoderToken: BenchLatency?
    /// Pose only: the landmark model's time per frame; `nil` for other models. (``latency`` is
    /// then the detector's time per frame.)
    public var landmarkModel: BenchLatency?

    /// Builds a result from the raw samples: the statistics, throughput (runs over the summed
    /// run time), real-time factor (`audioSecondsPerRun` x throughput, for audio models) and the
    /// noise flag are derived here.
    public init(
        model: String, modelFile: String, modelBytes: Int, threads: Int, runtimeLoadSeconds: Double,
        loadSeconds: Double, samples: [Double], unit: String, audioSecondsPerRun: Double?, memory: BenchMemory,
        photo: BenchPhoto?, photoNote: String?
    ) {
        let statistics = LatencyStatistics(samples)
        self.model = model
        self.modelFile = modelFile
        self.modelBytes = modelBytes
        self.threads = threads
        self.runtimeLoadSeconds = runtimeLoadSeconds
        self.loadSeconds = loadSeconds
        self.latency = statistics
        self.samples = samples
        let total = samples.reduce(0, +)
        let throughput = total > 0 ? Double(samples.count) / total : 0
        self.throughputPerSecond = throughput
        self.unit = unit
        self.realTimeFactor = audioSecondsPerRun.map { $0 * throughput }
        self.memory = memory
        self.photo = photo
        self.photoNote = photoNote
        self.isNoisy = statistics.isNoisy
        self.relativeSpread = statistics.relativeSpread
    }

    enum CodingKeys: String, CodingKey {
        case model
        case modelFile = "model_file"
        case modelBytes = "model_bytes"
        case threads
        case runtimeLoadSeconds = "runtime_load_s"
        case loadSeconds = "load_s"
        case latency = "latency_s"
        case samples = "samples_s"
        case throughputPerSecond = "throughput_per_s"
        case unit
        case realTimeFactor = "real_time_factor"
        case memory, photo
        case photoNote = "photo_note"
        case isNoisy = "noisy"
        case relativeSpread = "relative_spread"
        case decoderToken = "decoder_token_s"
        case landmarkModel = "landmark_model_s"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(model, forKey: .model)
        try container.encode(modelFile, forKey: .modelFile)
        try container.encode(modelBytes, forKey: .modelBytes)
        try container.encode(threads, forKey: .threads)
        try container.encode(runtimeLoadSeconds, forKey: .runtimeLoadSeconds)
        try container.encode(loadSeconds, forKey: .loadSeconds)
        try container.encode(latency, forKey: .latency)
        try container.encode(samples, forKey: .samples)
        try container.encode(throughputPerSecond, forKey: .throughputPerSecond)
        try container.encode(unit, forKey: .unit)
        try container.encode(realTimeFactor, forKey: .realTimeFactor)
        try container.encode(memory, forKey: .memory)
        try container.encode(photo, forKey: .photo)
        try container.encode(photoNote, forKey: .photoNote)
        try container.encode(isNoisy, forKey: .isNoisy)
        try container.encode(relativeSpread, forKey: .relativeSpread)
        try container.encodeIfPresent(decoderToken, forKey: .decoderToken)
        try container.encodeIfPresent(landmarkModel, forKey: .landmarkModel)
    }

    /// The key two reports are matched on: model and thread count.
    public var key: String { "\(model) x\(threads)" }
}
