import Foundation
import Inference
import Proofkit
import ProofkitBenchRunner
import ProofkitCore
import TestSupport
import Testing

/// `proofkit bench`'s measuring facade: statistics, the comparison maths, the JSON schema, and
/// real (tiny) runs on the models set-up installs.
@Suite("Bench")
struct BenchTests {
    static let modelsFolder = TestEnvironment.packageRoot.appendingPathComponent("Models/generated").path
    static let hasModels =
        OnnxRuntime.isAvailable
        && FileManager.default.fileExists(atPath: modelsFolder + "/silero_vad.onnx")
        && FileManager.default.fileExists(atPath: modelsFolder + "/efficientnet_lite0_int8.onnx")

    // MARK: Statistics

    @Test(
        "percentiles are nearest-rank: 1...100 ms gives p50 50, p90 90, p99 99; mean and sample stddev as numpy computes them"
    )
    func nearestRank() {
        let samples = (1...100).map { Double($0) / 1000 }.shuffled()
        let statistics = LatencyStatistics(samples)
        #expect(statistics.min == 0.001 && statistics.max == 0.1)
        #expect(statistics.p50 == 0.05 && statistics.p90 == 0.09 && statistics.p99 == 0.099)
        #expect(isApproximatelyEqual(statistics.mean, 0.0505))
        // numpy.std(np.arange(1, 101) / 1000, ddof=1) = 0.029011491975882016
        #expect(isApproximatelyEqual(statistics.standardDeviation, 0.029011491975882016, relativeTolerance: 1e-12))
        #expect(statistics.isNoisy)  // (90 - 50) / 50 = 0.8: a spread this wide is flagged
    }

    @Test("the spread flag: p90 more than 25 % above the median is noisy")
    func noisy() {
        let quiet = LatencyStatistics(Array(repeating: 0.010, count: 90) + Array(repeating: 0.012, count: 10))
        #expect(isApproximatelyEqual(quiet.relativeSpread, 0))
        #expect(!quiet.isNoisy)
        let busy = LatencyStatistics(Array(repeating: 0.010, count: 80) + Array(repeating: 0.020, count: 20))
        #expect(isApproximatelyEqual(busy.relativeSpread, 1.0))
        #expect(busy.isNoisy)
        let result = Self.result(
            model: "lite0", threads: 1, samples: Array(repeating: 0.010, count: 80) + Array(repeating: 0.020, count: 20)
        )
        #expect(result.isNoisy && isApproximatelyEqual(result.relativeSpread, 1.0))
        #expect(!Self.result(model: "lite0", threads: 1, samples: [0.010, 0.011]).isNoisy)
    }

    @Test("throughput is runs over the summed run time; Silero's real-time factor is 32 ms of audio per run")
    func throughput() {
        let samples = [0.002, 0.004, 0.002, 0.004]  // 4 runs in 12 ms
        let photo = Self.result(model: "lite0", threads: 2, samples: samples)
        #expect(isApproximatelyEqual(photo.throughputPerSecond, 4 / 0.012))
        #expect(photo.realTimeFactor == nil)
        let silero = BenchResult(
            model: "silero", modelFile: "silero_vad.onnx", modelBytes: 1, threads: 1, runtimeLoadSeconds: 0,
            loadSeconds: 0.03, samples: [0.0001, 0.0001], unit: "chunks",
            audioSecondsPerRun: BenchModel.silero.audioSecondsPerRun, memory: Self.memory, photo: nil, photoNote: nil)
        #expect(isApproximatelyEqual(silero.throughputPerSecond, 10_000))
        #expect(isApproximatelyEqual(silero.realTimeFactor ?? 0, 320))  // 0.032 s every 0.1 ms
    }

    // MARK: Plans and models

    @Test("default threads are 1, 2, 4 up to the cores; --threads lists are parsed and checked")
    func threads() throws {
        #expect(BenchPlan.defaultThreads(cores: 1) == [1])
        #expect(BenchPlan.defaultThreads(cores: 2) == [1, 2])
        #expect(BenchPlan.defaultThreads(cores: 4) == [1, 2, 4])
        #expect(BenchPlan.defaultThreads(cores: 64) == [1, 2, 4])
        #expect(try BenchPlan.parseThreads("4,1, 2,1") == [1, 2, 4])
        for bad in ["", "0", "1,,2", "two", "-1", "1000"] {
            #expect(throws: ProofkitError.self, "\(bad)") { try BenchPlan.parseThreads(bad) }
        }
    }

    @Test("--model: all is lite0, lite0-fp32, clip, silero (never the stand-in); lists keep order without repeats")
    func models() throws {
        #expect(try BenchModel.parseList("all") == [.lite0, .lite0FP32, .clip, .silero])
        #expect(try BenchModel.parseList("silero,lite0,silero") == [.silero, .lite0])
        #expect(try BenchModel.parseList("clip-standin") == [.clipStandin])
        let error = #expect(throws: ProofkitError.self) { try BenchModel.parseList("resnet") }
        #expect(error?.message.contains("lite0-fp32") == true)
    }

    @Test("a missing real MobileCLIP is skipped with the export note, and the stand-in is not measured in its place")
    func clipSkipped() throws {
        try withTemporaryFolder("proofkit-bench-test") { folder in
            _ = FileManager.default.createFile(atPath: folder + "/clip_standin.onnx", contents: Data([1]))
            _ = FileManager.default.createFile(atPath: folder + "/silero_vad.onnx", contents: Data([1]))
            let plan = BenchPlan(
                models: BenchModel.all, threads: [2, 1], options: BenchOptions(modelsFolder: folder),
                isolation: .inProcess)
            let (jobs, skipped) = plan.jobs()
            #expect(jobs == [BenchJob(model: .silero, threads: 1), BenchJob(model: .silero, threads: 2)])
            #expect(skipped.map(\.model) == ["lite0", "lite0-fp32", "clip"])
            let clip = try #require(skipped.first { $0.model == "clip" })
            #expect(clip.reason.contains("export_mobileclip.py"))
            #expect(clip.reason.contains("stand-in is not measured as CLIP"))
        }
    }

    @Test("a job is written MODEL:THREADS for the child process and read back")
    func jobSpec() throws {
        let job = BenchJob(model: .lite0FP32, threads: 4)
        #expect(job.description == "lite0-fp32:4")
        #expect(try BenchJob(parsing: job.description) == job)
        for bad in ["lite0", "lite0:0", "nope:1", "lite0:x", "lite0:1:2"] {
            #expect(throws: ProofkitError.self, "\(bad)") { try BenchJob(parsing: bad) }
        }
    }

    // MARK: Comparison maths

    @Test("compare: B/A per metric, missing rows give no ratio, and the geometric mean of the p50 ratios")
    func comparison() throws {
        let a = Self.report(results: [
            Self.result(model: "lite0", threads: 1, samples: [0.010, 0.010, 0.010]),
            Self.result(model: "lite0", threads: 2, samples: [0.006, 0.006, 0.006]),
            Self.result(model: "silero", threads: 1, samples: [0.0002]),
        ])
        let b = Self.report(results: [
            Self.result(model: "lite0", threads: 1, samples: [0.020, 0.020, 0.020], peak: 200 * 1_048_576),
            Self.result(model: "lite0", threads: 2, samples: [0.003, 0.003, 0.003]),
            Self.result(model: "lite0", threads: 4, samples: [0.002]),
        ])
        let comparison = BenchComparison(a, b)
        #expect(
            comparison.rows.map { "\($0.model) x\($0.threads)" } == ["lite0 x1", "lite0 x2", "silero x1", "lite0 x4"])
        let one = comparison.rows[0]
        #expect(one.cells[.p50]?.ratio == 2)
        #expect(isApproximatelyEqual(one.cells[.throughput]?.ratio ?? 0, 0.5))
        #expect(one.cells[.peakResident]?.ratio == 2)  // 200 MiB against 100 MiB
        #expect(one.cells[.photo]?.ratio == nil)  // neither has a photo figure
        #expect(comparison.rows[1].cells[.p50]?.ratio == 0.5)
        #expect(comparison.rows[2].cells[.p50]?.b == nil && comparison.rows[2].cells[.p50]?.ratio == nil)
        #expect(comparison.rows[3].cells[.p50]?.a == nil)
        // 2 and 0.5: geometric mean 1.
        #expect(isApproximatelyEqual(try #require(comparison.geometricMeanLatencyRatio), 1.0))

        let table = comparison.table(nameA: "laptop.json", nameB: "pi5.json")
        #expect(table.contains("A: laptop.json: Test CPU, 2 cores, x86_64"))
        #expect(table.contains("B: pi5.json:"))
        let row = try #require(table.split(separator: "\n").first { $0.hasPrefix("lite0 ") && $0.contains(" 1 ") })
        #expect(row.contains("10.0") && row.contains("20.0") && row.contains("2.00x"))
        #expect(table.contains("geometric mean of B/A over 2 rows: 1.00x"))
        #expect(!table.contains("photo ms"))  // neither report has a photo figure: no empty columns
    }

    // MARK: JSON schema

    @Test("the JSON has every documented field (absent values as null), schema_version 1, and reads back equal")
    func schema() throws {
        let report = Self.report(results: [Self.result(model: "lite0", threads: 1, samples: [0.01, 0.02])])
        let text = report.encoded()
        #expect(!text.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(
            Set(object.keys) == [
                "schema_version", "proofkit_version", "onnxruntime", "machine", "timestamp", "command_line", "settings",
                "results", "skipped", "noisy", "wall_s",
            ])
        #expect(object["schema_version"] as? Int == 1)
        let machine = try #require(object["machine"] as? [String: Any])
        #expect(
            Set(machine.keys) == [
                "cpu_model", "cores", "architecture", "kernel", "os", "memory_bytes", "cpu_max_mhz", "cpu_governor",
                "load_average",
            ])
        #expect((machine["load_average"] as? [Double])?.count == 3)
        let settings = try #require(object["settings"] as? [String: Any])
        #expect(Set(settings.keys) == ["runs", "warmup", "threads", "spinning", "isolation", "image"])
        #expect(settings["image"] is NSNull)
        let results = try #require(object["results"] as? [[String: Any]])
        let result = try #require(results.first)
        #expect(
            Set(result.keys) == [
                "model", "model_file", "model_bytes", "threads", "runtime_load_s", "load_s", "latency_s", "samples_s",
                "throughput_per_s", "unit", "real_time_factor", "memory", "photo", "photo_note", "noisy",
                "relative_spread",
            ])
        #expect(result["photo"] is NSNull && result["real_time_factor"] is NSNull)
        let latency = try #require(result["latency_s"] as? [String: Any])
        #expect(Set(latency.keys) == ["count", "min", "p50", "p90", "p99", "max", "mean", "stddev"])
        let memory = try #require(result["memory"] as? [String: Any])
        #expect(Set(memory.keys) == ["rss_before_load_bytes", "rss_after_load_bytes", "peak_rss_bytes", "isolation"])
        #expect(try BenchReport.decode(text) == report)
    }

    @Test("reading a report: another schema version, a non-report and a missing field are refused clearly")
    func decodeErrors() throws {
        let wrongVersion = #expect(throws: ProofkitError.self) { try BenchReport.decode(#"{"schema_version":2}"#) }
        #expect(wrongVersion?.code == .unsupportedFormat)
        #expect(wrongVersion?.message.contains("schema_version 2") == true)
        let garbage = #expect(throws: ProofkitError.self) { try BenchReport.decode("not json") }
        #expect(garbage?.code == .decodeFailed)
        var object = try #require(
            try JSONSerialization.jsonObject(with: Data(Self.report(results: []).encoded().utf8)) as? [String: Any])
        object.removeValue(forKey: "machine")
        let text = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        let missing = #expect(throws: ProofkitError.self) { try BenchReport.decode(text) }
        #expect(missing?.code == .decodeFailed)
        #expect(missing?.message.contains("machine") == true)
    }

    // MARK: Real runs

    @Test(
        "a tiny real run of Silero (3 runs): sane latencies, load time, memory and real-time factor",
        .enabled(if: hasModels, "needs ONNX Runtime and the models (bash .ci/setup)"))
    func realSilero() throws {
        var progress: [Int] = []
        let result = try InferenceBench.measure(
            BenchJob(model: .silero, threads: 1),
            options: BenchOptions(runs: 3, warmup: 1, modelsFolder: Self.modelsFolder),
            isolation: .inProcess
        ) { done, total in
            #expect(total == 3)
            progress.append(done)
        }
        #expect(progress == [1, 2, 3])
        #expect(result.model == "silero" && result.threads == 1 && result.unit == "chunks")
        #expect(result.modelBytes == 2_327_524)
        #expect(result.samples.count == 3 && result.latency.count == 3)
        let l = result.latency
        #expect(l.min > 0 && l.min <= l.p50 && l.p50 <= l.p90 && l.p90 <= l.p99 && l.p99 <= l.max)
        #expect(l.max < 0.5, "one 32 ms chunk took \(l.max) s")
        #expect(result.loadSeconds > 0 && result.loadSeconds < 10)
        #expect(try #require(result.realTimeFactor) > 1)
        let m = result.memory
        #expect(m.isolation == .inProcess)
        #expect(m.residentBeforeLoadBytes > 0 && m.peakResidentBytes + Self.rssSlack >= m.residentAfterLoadBytes)
        #expect(result.photo == nil && result.photoNote == nil)
    }

    @Test(
        "a tiny real run of Lite0 int8 and fp32 at 1 thread: both classify, int8 loads a smaller file",
        .enabled(if: hasModels, "needs ONNX Runtime and the models (bash .ci/setup)"))
    func realLite0() throws {
        let options = BenchOptions(runs: 3, warmup: 1, modelsFolder: Self.modelsFolder)
        let int8 = try InferenceBench.measure(
            BenchJob(model: .lite0, threads: 1), options: options, isolation: .inProcess)
        let fp32 = try InferenceBench.measure(
            BenchJob(model: .lite0FP32, threads: 1), options: options, isolation: .inProcess)
        #expect(int8.modelBytes < fp32.modelBytes / 3)
        for result in [int8, fp32] {
            #expect(result.unit == "images" && result.realTimeFactor == nil)
            #expect(result.latency.min > 0 && result.latency.max < 5)
            #expect(isApproximatelyEqual(result.throughputPerSecond, 3 / result.samples.reduce(0, +)))
            #expect(result.photoNote?.contains("--image") == true)
            // In a shared test process, freed pages of other tests may be reused, so the peak
            // need not grow here; the child-process test checks the growth.
            #expect(result.memory.peakResidentBytes + Self.rssSlack >= result.memory.residentBeforeLoadBytes)
        }
    }

    @Test(
        "with a photo, Lite0 int8 judges it end to end as proofkit mat does: steps, total and a verdict",
        .enabled(if: hasModels, "needs ONNX Runtime and the models (bash .ci/setup)"))
    func realPhoto() throws {
        let photo = TestEnvironment.fixture("images/large.jpg")
        let options = BenchOptions(runs: 3, warmup: 1, modelsFolder: Self.modelsFolder, image: photo, photoRuns: 3)
        let result = try InferenceBench.measure(
            BenchJob(model: .lite0, threads: 1), options: options, isolation: .inProcess)
        let figure = try #require(result.photo)
        #expect(result.photoNote == nil)
        #expect(figure.file == photo && figure.total.count == 3)
        #expect(figure.firstSeconds > 0 && figure.total.min > 0)
        #expect(figure.decodeSeconds > 0 && figure.preprocessSeconds > 0 && figure.inferenceSeconds > 0)
        // Each step's median is at most the whole judgement's largest time.
        #expect(figure.decodeSeconds + figure.preprocessSeconds + figure.inferenceSeconds <= figure.total.max * 1.5)
        #expect(["accepted", "rejected"].contains(figure.verdict))
        #expect(figure.score >= 0 && figure.score <= 1)
        #expect(figure.peakResidentBytes + Self.rssSlack >= result.memory.residentBeforeLoadBytes)
        // The CLIP stand-in (not a `proofkit mat` engine) goes through PhotoProof with its prompts.
        let standin = try InferenceBench.measure(
            BenchJob(model: .clipStandin, threads: 1), options: options, isolation: .inProcess)
        #expect(try #require(standin.photo).total.count == 3)
        // Silero is not a photo model: no photo figure and no note.
        let silero = try InferenceBench.measure(
            BenchJob(model: .silero, threads: 1), options: options, isolation: .inProcess)
        #expect(silero.photo == nil && silero.photoNote == nil)
    }

    @Test(
        "the runner measures a plan in order, records the machine, ORT and the command line",
        .enabled(if: hasModels, "needs ONNX Runtime and the models (bash .ci/setup)"))
    func runner() throws {
        let plan = BenchPlan(
            models: [.silero, .clip], threads: [2, 1],
            options: BenchOptions(runs: 3, warmup: 0, modelsFolder: Self.modelsFolder), isolation: .inProcess)
        var seen: [String] = []
        let report = try BenchRunner.run(
            plan, commandLine: ["proofkit", "bench", "--model", "silero,clip"],
            measure: { (job) throws(ProofkitError) in
                try InferenceBench.measure(job, options: plan.options, isolation: .inProcess)
            },
            progress: { index, count, job in seen.append("\(index)/\(count) \(job?.description ?? "end")") })
        #expect(seen == ["0/2 silero:1", "1/2 silero:2", "2/2 end"])
        #expect(report.results.map(\.key) == ["silero x1", "silero x2"])
        #expect(report.onnxRuntime?.version == (try OnnxRuntime.load().version))
        #expect(report.machine.cores == MachineInfo.current().cores)
        #expect(report.commandLine == ["proofkit", "bench", "--model", "silero,clip"])
        #expect(report.settings.threads == [1, 2] && report.settings.isolation == .inProcess)
        #expect(report.timestamp.hasSuffix("Z") && report.timestamp.count == 20)
        if !FileManager.default.fileExists(atPath: Self.modelsFolder + "/mobileclip_s0_image.onnx") {
            #expect(report.skipped.map(\.model) == ["clip"])
        }
        #expect(report.wallSeconds > 0)
    }

    // MARK: Helpers

    /// The kernel's RSS counters are kept per thread and synced lazily (up to 64 pages a thread),
    /// so in a busy multi-threaded test process two readings can be out of order by that much.
    static let rssSlack = 4 * 1_048_576

    static let memory = BenchMemory(
        residentBeforeLoadBytes: 40 * 1_048_576, residentAfterLoadBytes: 60 * 1_048_576,
        peakResidentBytes: 100 * 1_048_576, isolation: .childProcess)

    static func result(model: String, threads: Int, samples: [Double], peak: Int = 100 * 1_048_576) -> BenchResult {
        var memory = memory
        memory.peakResidentBytes = peak
        return BenchResult(
            model: model, modelFile: "\(model).onnx", modelBytes: 1000, threads: threads, runtimeLoadSeconds: 0.02,
            loadSeconds: 0.05, samples: samples, unit: "images", audioSecondsPerRun: nil, memory: memory, photo: nil,
            photoNote: "no photo: give --image PHOTO.jpg")
    }

    static func report(results: [BenchResult]) -> BenchReport {
        var info = MachineInfo.current()
        info.cpuModel = "Test CPU"
        info.cores = 2
        info.architecture = "x86_64"
        return BenchReport(
            onnxRuntime: BenchRuntime(version: "1.32.0", apiVersion: 15), machine: BenchMachine(info),
            timestamp: "2025-01-01T00:00:00Z", commandLine: ["proofkit", "bench"],
            settings: BenchSettings(
                runs: 3, warmup: 1, threads: [1, 2], allowsSpinning: false, isolation: .childProcess, image: nil),
            results: results, skipped: [BenchSkip(model: "clip", reason: "not installed")], wallSeconds: 1.5)
    }
}
