import Inference
import Proofkit
public import ProofkitCore
internal import ProofkitSystem

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What `proofkit bench` measures: which models at which thread counts, and how.
public struct BenchPlan: Sendable, Equatable {
    /// The models asked for, in order.
    public var models: [BenchModel]
    /// The thread counts, ascending, without repeats.
    public var threads: [Int]
    /// How each configuration is measured.
    public var options: BenchOptions
    /// How memory is attributed (child processes by default in the CLI).
    public var isolation: BenchSettings.Isolation

    /// A plan; `threads` is sorted and deduplicated.
    public init(models: [BenchModel], threads: [Int], options: BenchOptions, isolation: BenchSettings.Isolation) {
        self.models = models
        self.threads = Array(Set(threads)).sorted()
        self.options = options
        self.isolation = isolation
    }

    /// The default thread counts for a machine: 1, 2 and 4 where the machine has that many
    /// online cores (so 1, 2 on a 2-core machine; 1, 2, 4 on a Raspberry Pi 4 or 5).
    public static func defaultThreads(cores: Int) -> [Int] {
        [1, 2, 4].filter { $0 <= max(1, cores) }
    }

    /// Parses a `--threads` value such as `1,2,4`.
    /// - Throws: `.invalidArgument` for anything but positive whole numbers.
    public static func parseThreads(_ text: String) throws(ProofkitError) -> [Int] {
        var result: [Int] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let value = Int(part.trimmingSpaces()), value >= 1, value <= 256 else {
                throw ProofkitError(
                    .invalidArgument, "--threads takes whole numbers from 1 to 256 such as 1,2,4, not '\(text)'")
            }
            result.append(value)
        }
        return Array(Set(result)).sorted()
    }

    /// The configurations to measure and the models skipped (file missing), in order.
    ///
    /// A missing ``BenchModel/clip`` is the usual case (the real MobileCLIP is exported by a user
    /// with internet): it is skipped with a note, and the stand-in is never measured in its place.
    public func jobs() -> (jobs: [BenchJob], skipped: [BenchSkip]) {
        var jobs: [BenchJob] = []
        var skipped: [BenchSkip] = []
        for model in models {
            let path = options.path(of: model)
            guard case .success = POSIX.status(path) else {
                let reason =
                    switch model {
                    case .clip:
                        "the real MobileCLIP-S0 image encoder is not installed (\(path)); export it with "
                            + "Models/export_mobileclip.py on a machine with internet and torch. The test "
                            + "stand-in is not measured as CLIP (ask for --model clip-standin to time the stand-in)."
                    default:
                        "no model file \(path); run the set-up (bash .ci/setup) to make it"
                    }
                skipped.append(BenchSkip(model: model.rawValue, reason: reason))
                continue
            }
            for count in threads { jobs.append(BenchJob(model: model, threads: count)) }
        }
        return (jobs, skipped)
    }
}

/// Runs a plan and assembles the report.
public enum BenchRunner {
    /// Measures every configuration of `plan` with `measure` (in process, or in a child process:
    /// the caller decides), in order.
    /// - Parameters:
    ///   - plan: what to measure.
    ///   - commandLine: recorded in the report.
    ///   - measure: measures one job.
    ///   - progress: called before each job with (index, count, job), and once at the end with
    ///     (count, count, nil).
    /// - Returns: the report.
    /// - Throws: `.runtimeUnavailable` when ONNX Runtime cannot be loaded, and whatever `measure`
    ///   throws.
    public static func run(
        _ plan: BenchPlan, commandLine: [String],
        measure: (BenchJob) throws(ProofkitError) -> BenchResult,
        progress: (Int, Int, BenchJob?) -> Void = { _, _, _ in }
    ) throws(ProofkitError) -> BenchReport {
        let clock = ContinuousClock()
        let start = clock.now
        let timestamp = isoTimestamp(Date())
        let runtime = try OnnxRuntime.load()
        let (jobs, skipped) = plan.jobs()
        var results: [BenchResult] = []
        for (index, job) in jobs.enumerated() {
            progress(index, jobs.count, job)
            results.append(try measure(job))
        }
        progress(jobs.count, jobs.count, nil)
        return BenchReport(
            onnxRuntime: BenchRuntime(version: runtime.version, apiVersion: runtime.apiVersion),
            machine: BenchMachine(MachineInfo.current()), timestamp: timestamp, commandLine: commandLine,
            settings: BenchSettings(
                runs: plan.options.runs, warmup: plan.options.warmup, threads: plan.threads,
                allowsSpinning: plan.options.allowsSpinning, isolation: plan.isolation, image: plan.options.image),
            results: results, skipped: skipped, wallSeconds: InferenceBench.seconds(clock.now - start))
    }

    /// `2025-11-29T17:50:00Z`.
    static func isoTimestamp(_ date: Date) -> String {
        Date.ISO8601FormatStyle().format(date)
    }
}

/// Runs one configuration in a child process of the same binary, so its memory is its own.
public enum BenchChildProcess {
    /// Runs `executable arguments...`, which must print one ``BenchResult`` as JSON on stdout.
    /// - Parameters:
    ///   - executable: the binary (normally this one, `/proc/self/exe`).
    ///   - arguments: its arguments.
    /// - Returns: the child's result.
    /// - Throws: the child's error, rebuilt from its one-line message on stderr with the code its
    ///   exit status maps to (`.internal` when it crashed or printed no result).
    public static func measure(executable: String, arguments: [String]) throws(ProofkitError) -> BenchResult {
        try measureInChild(executable: executable, arguments: arguments)
    }

    /// Called first in a measuring child: it is killed (SIGKILL) when its parent ends, so a
    /// killed bench leaves no child behind (Linux `PR_SET_PDEATHSIG`).
    /// - Throws: `.internal` when the parent is already gone.
    public static func dieWithParent() throws(ProofkitError) {
        guard dieWithParentProcess() else {
            throw ProofkitError(.internal, "the bench that started this child has ended")
        }
    }

    private static func measureInChild(executable: String, arguments: [String]) throws(ProofkitError) -> BenchResult {
        let completed: CapturedChild
        do throws(ChildStartFailure) {
            // SIGTERM/SIGINT/SIGHUP to the bench are passed on to the child; the child also
            // dies with us (``dieWithParent()``), even after SIGKILL.
            completed = try runChildCapturingOutput(executable, arguments: arguments)
        } catch {
            throw ProofkitError(.internal, "cannot start a measuring child process: \(error)", path: executable)
        }
        let text = String(decoding: completed.stdout, as: UTF8.self)
        let errorText = String(decoding: completed.stderr, as: UTF8.self)
        if completed.termination == .exited(0),
            let result = try? JSONDecoder().decode(BenchResult.self, from: Data(text.utf8))
        {
            return result
        }
        var lastLine = errorText.split(separator: "\n").last.map(String.init) ?? ""
        if lastLine.hasPrefix("proofkit bench: ") { lastLine.removeFirst("proofkit bench: ".count) }
        let (status, how) =
            switch completed.termination {
            case .exited(let status): (status, "exited with \(status)")
            case .signalled(let signal): (signal, "was killed by signal \(signal)")
            }
        let code: ProofkitError.Code =
            switch status {
            case 64: .invalidArgument
            case 65: .decodeFailed
            case 66: .notFound
            case 69: .runtimeUnavailable
            case 74: .io
            case 78: .modelInvalid
            default: .internal
            }
        let message = lastLine.isEmpty ? "the measuring child process \(how)" : "child process: \(lastLine)"
        throw ProofkitError(code, message)
    }
}
