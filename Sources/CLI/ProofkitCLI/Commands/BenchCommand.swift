import Proofkit
import ProofkitBenchRunner
import ProofkitCore
internal import ProofkitSystem

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `proofkit bench`: inference figures that people can compare across boards, and `--compare`.
enum BenchCommand: Subcommand {
    static let name = "bench"
    static let summary = "inference benchmarks to compare boards, models and thread counts"
    static let synopsis = """
        proofkit bench [--model lite0|lite0-fp32|clip|clip-standin|silero|whisper|pose|all] [--threads 1,2,4] [--runs N] [--warmup N] [--image PHOTO] [--json] [--plot bench.svg]
               proofkit bench --compare A.json B.json [--json]
        """
    static let discussion = """
        For each model and thread count (ONNX Runtime intra-op threads, spinning off as proofkit
        runs in use): the model load (session creation from the file), the latency of one run
        (min, p50, p90, p99, max over --runs timed runs after --warmup untimed ones), the
        throughput, the peak resident memory, and for photo models the end-to-end time of one
        photo (read + DCT-scaled decode, preprocess, inference, verdict: 'proofkit mat' with its
        defaults, model loaded once) on --image PHOTO, or on the demo's embedded mat picture
        (a 640x480 JPEG, named "demo_mat.jpg (embedded demo photo)" in the report). The machine (CPU,
        cores, architecture, kernel, OS), the ONNX Runtime and proofkit versions, the time and the
        command line are recorded, so two runs can be compared honestly.

        Models (files in --models DIR, else $PROOFKIT_MODELS, else Models/generated found from the
        executable's folder upwards or the current folder): lite0 (EfficientNet-Lite0 int8, the
        default photo model), lite0-fp32, clip (the real MobileCLIP-S0 image encoder, which a user
        exports with Models/export_mobileclip.py; skipped with a note when absent), silero (Silero
        VAD, one 32 ms chunk per run; its throughput is in chunks/s and it has a real-time
        factor). 'all' is lite0, lite0-fp32, clip, silero. clip-standin times the small test
        stand-in, only when named: its figures say nothing about MobileCLIP.
        whisper (only when named) is the built-in recogniser, Whisper base as the set-up installs it
        (whisper_base_encoder.onnx + whisper_base_decoder.onnx, loaded and SHA-256-checked as
        'proofkit transcribe' loads them): one run encodes one 30 s window (the latency columns are
        the encoder's time per 30 s window), then feeds the prompt and 32 single tokens, each
        timed: the decoder's time per token (p50 and p90 on a line below the table; JSON
        "decoder_token_s"). A transcript costs about one encoder run per 30 s plus one decoder
        step per token (Arabic speech: about 4 tokens per second of speech). With whisper,
        --runs defaults to 10 and --warmup to 1.
        pose (only when named) is body pose as 'proofkit pose' runs it (pose_detection.onnx +
        pose_landmark_full.onnx, SHA-256-checked): one run is one frame of --image PHOTO (else a
        fixed 640x480 pattern), the detector then the landmark model, both always run (on the
        letterboxed frame when nobody is found) and timed apart: the latency columns are the
        detector's time per frame, the landmark model's is on a line below the table (JSON
        "landmark_model_s"). A tracked video frame runs only the landmark model.
        Default threads: 1, 2 and 4, those not above the machine's cores.

        Measurement: a monotonic clock; inputs made before timing (a fixed pattern of the shape
        used in real life: one 224x224 photo, one 576-sample audio chunk); only the run itself is
        timed (no I/O); every sample is kept. A result whose p90 is more than 25 % above its
        median is marked noisy (the machine was busy) and a warning goes to stderr.
        Memory: by default each (model, threads) runs in a child process of this binary, so its
        peak RSS (VmHWM) is its own: runtime + model + buffers; rss_before_load_bytes is the
        process with ONNX Runtime loaded and no model. --in-process measures all in this process
        instead, resetting the peak mark before each (then earlier models' leftovers count).

        Output: a table on stdout; a progress bar on stderr when it is a terminal. --plot FILE
        writes an SVG with the latency distribution (CDF) per model and thread count.

        --json prints one object (schema_version 1; times in seconds, sizes in bytes):
          {"schema_version":1, "proofkit_version", "timestamp" (ISO-8601 UTC), "command_line":[..],
           "onnxruntime":{"version","api_version"}|null,
           "machine":{"cpu_model","cores","architecture","kernel","os","memory_bytes",
                      "cpu_max_mhz"|null,"cpu_governor"|null,"load_average":[1m,5m,15m] at the start},
           "settings":{"runs","warmup","threads":[..],"spinning","isolation":"child-process"|"in-process","image"|null},
           "results":[{"model","model_file","model_bytes","threads","runtime_load_s","load_s",
             "latency_s":{"count","min","p50","p90","p99","max","mean","stddev"},
             "samples_s":[..], "throughput_per_s", "unit":"images"|"chunks",
             "real_time_factor"|null (silero: audio seconds per second),
             "memory":{"rss_before_load_bytes","rss_after_load_bytes","peak_rss_bytes","isolation"},
             "photo":{"file","first_s","total_s":{latency fields},"decode_p50_s","preprocess_p50_s",
                      "inference_p50_s","verdict","score","peak_rss_bytes"}|null,
             "photo_note"|null, "noisy", "relative_spread",
             "decoder_token_s":{latency fields} (whisper only),
             "landmark_model_s":{latency fields} (pose only)}],
           "skipped":[{"model","reason"}], "noisy", "wall_s"}

        A measuring child dies with the bench: SIGTERM, SIGINT and SIGHUP are passed on to it,
        and it is killed when its parent ends (PR_SET_PDEATHSIG), even after SIGKILL.

        --compare A.json B.json (each at most 16 MiB, exit 65 past it) reads two such reports (from any machines) and prints a table of
        p50, p90, throughput, load, peak memory and photo time for each model and thread count,
        with B/A ratios (below 1: B is faster or smaller), and the geometric mean of the p50
        ratios. With --json: {"a","b","rows":[{"model","threads","<metric>":{"a","b","ratio"}}],
        "geometric_mean_p50_ratio"}.

        Examples:
          proofkit bench
          proofkit bench --model all --json > pi5.json
          proofkit bench --model lite0 --threads 1,4 --runs 300 --image mat.jpg --plot bench.svg
          proofkit bench --model whisper --threads 2,4
          proofkit bench --compare laptop.json pi5.json
        """
    static let options: [OptionSpec] = [
        .option("model", value: "M", help: "lite0, lite0-fp32, clip, clip-standin, silero, whisper, pose or all [all]"),
        .option("threads", value: "LIST", help: "intra-op thread counts, e.g. 1,2,4 [1,2,4 up to the cores]"),
        .option("runs", value: "N", help: "timed runs per model and thread count [100; 10 with whisper]"),
        .option("warmup", value: "N", help: "untimed runs first [10; 1 with whisper]"),
        .option("image", value: "PHOTO", help: "photo for the end-to-end time [the demo's mat photo]"),
        .option("models", value: "DIR", help: "folder of the model files [$PROOFKIT_MODELS, Models/generated]"),
        .flag("spinning", help: "let ORT's idle threads spin (off by default, as in use)"),
        .flag("in-process", help: "measure everything in this process (no child processes)"),
        .flag("json", help: "one JSON object on stdout (schema below)"),
        .option("plot", value: "FILE", help: "write an SVG of the latency distributions"),
        .flag("compare", help: "compare two reports: proofkit bench --compare A.json B.json"),
        .option("child", value: "MODEL:THREADS", help: "internal: measure one configuration, print its JSON"),
    ]

    /// What the arguments ask for.
    enum Request: Equatable {
        case measure(BenchPlan, json: Bool, plot: String?)
        case compare(String, String, json: Bool)
        case child(BenchJob, BenchOptions)
    }

    /// Turns parsed arguments into a request (pure, for tests).
    /// - Parameters:
    ///   - arguments: the parsed arguments.
    ///   - cores: the machine's cores (for the default thread counts).
    ///   - modelsFolder: the default models folder.
    /// - Throws: ``UsageError``.
    static func request(_ arguments: ParsedArguments, cores: Int, modelsFolder: String) throws(UsageError) -> Request {
        let json = arguments.has("json")
        if arguments.has("compare") {
            let files = try arguments.requirePositionals(2, names: "the two reports: --compare A.json B.json")
            for other in [
                "model", "threads", "runs", "warmup", "image", "models", "plot", "child", "spinning", "in-process",
            ]
            where arguments.value(other) != nil || arguments.has(other) {
                throw UsageError("--compare takes only the two reports (and --json), not --\(other)")
            }
            return .compare(files[0], files[1], json: json)
        }
        _ = try arguments.requirePositionals(0, names: "")
        // Whisper takes about a second per run: fewer runs by default when it is measured.
        let slow =
            arguments.value("model").map {
                $0.split(separator: ",").contains { String($0).trimmingSpaces() == "whisper" }
            } ?? false
        let runs = try arguments.int("runs") ?? (slow ? 10 : 100)
        let warmup = try arguments.int("warmup") ?? (slow ? 1 : 10)
        guard runs >= 1 && runs <= 1_000_000 else { throw UsageError("--runs must be from 1 to 1000000") }
        guard warmup >= 0 && warmup <= 1_000_000 else { throw UsageError("--warmup must be 0 or more") }
        let options = BenchOptions(
            runs: runs, warmup: warmup, allowsSpinning: arguments.has("spinning"),
            modelsFolder: arguments.value("models") ?? modelsFolder, image: arguments.value("image"))
        if let spec = arguments.value("child") {
            do {
                return .child(try BenchJob(parsing: spec), options)
            } catch {
                throw UsageError("--child: \(error.message)")
            }
        }
        let models: [BenchModel]
        let threads: [Int]
        do {
            models = try BenchModel.parseList(arguments.value("model") ?? "all")
            threads =
                try arguments.value("threads").map { text throws(ProofkitError) in try BenchPlan.parseThreads(text) }
                ?? BenchPlan.defaultThreads(cores: cores)
        } catch {
            throw UsageError(error.message)
        }
        let plan = BenchPlan(
            models: models, threads: threads, options: options,
            isolation: arguments.has("in-process") ? .inProcess : .childProcess)
        return .measure(plan, json: json, plot: arguments.value("plot"))
    }

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        // Only the cores here (for the default thread counts): the full machine description is
        // read once, for the report, and not at all by a child or a comparison.
        let request = try request(
            arguments, cores: MachineInfo.onlineCores,
            modelsFolder: ModelStore(environment: io.environment).folders.first ?? ModelStore.relativeFolder)
        switch request {
        case .child(let job, let options):
            // One configuration in this (child) process; the parent reads the JSON. It dies
            // with the parent (a killed bench leaves no child at 100% CPU).
            try BenchChildProcess.dieWithParent()
            let result = try InferenceBench.measure(job, options: options, isolation: .childProcess)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            io.writeOut(String(decoding: try encoder.encode(result), as: UTF8.self) + "\n")
            return .success
        case .compare(let first, let second, let json):
            return try compare(first, second, json: json, io: io)
        case .measure(var plan, let json, let plot):
            if let plot { try checkWritable(plot) }
            if let image = plan.options.image, case .failure = POSIX.status(image) {
                throw ProofkitError(.notFound, "no such photo", path: image)
            }
            // Without --image, photo models judge the demo photo (embedded; written to a
            // temporary file for the run, named by its label in the report).
            var demoPhoto: (path: String, folder: TemporaryFolder)?
            if plan.options.image == nil, plan.models.contains(where: \.isPhotoModel) {
                demoPhoto = try BenchDemoPhoto.writeTemporaryFile()
                plan.options.image = demoPhoto?.path
            }
            defer { demoPhoto?.folder.remove() }
            var report = try measure(plan, arguments: arguments, io: io)
            if demoPhoto != nil {
                report.settings.image = BenchDemoPhoto.label
                for index in report.results.indices where report.results[index].photo != nil {
                    report.results[index].photo?.file = BenchDemoPhoto.label
                }
            }
            if report.results.isEmpty {
                let reasons = report.skipped.map { "\($0.model): \($0.reason)" }.joined(separator: "; ")
                throw ProofkitError(.notFound, "nothing to measure: \(reasons)")
            }
            for result in report.results where result.isNoisy {
                io.printError(
                    "proofkit bench: \(result.key): wide spread (p90 \(percent(result.relativeSpread)) above the median): the machine was noisy; re-run when it is quiet"
                )
            }
            if let plot { try writeFileAtomically(Self.plot(report), to: plot) }
            if json {
                io.writeOut(report.encoded() + "\n")
            } else {
                io.writeOut(table(report))
            }
            return .success
        }
    }

    /// Measures the plan, each configuration in a child process (or in this one).
    static func measure(_ plan: BenchPlan, arguments: ParsedArguments, io: CommandIO) throws(ProofkitError)
        -> BenchReport
    {
        var bar = ProgressBar(io: io, label: "bench", total: max(1, plan.jobs().jobs.count * plan.options.runs))
        let commandLine =
            CommandLine.arguments.count > 1 && CommandLine.arguments[1] == name
            ? CommandLine.arguments : ["proofkit", name] + reconstruct(arguments)
        let executable = POSIX.linkTarget("/proc/self/exe").map(FilePath.string(fromBytes:)) ?? ""
        let childIsPossible = plan.isolation == .childProcess && executable.hasSuffix("/proofkit")
        var plan = plan
        if plan.isolation == .childProcess && !childIsPossible { plan.isolation = .inProcess }
        var completed = 0
        let report = try BenchRunner.run(
            plan, commandLine: commandLine,
            measure: { (job) throws(ProofkitError) -> BenchResult in
                defer { completed += plan.options.runs }
                if plan.isolation == .childProcess {
                    return try BenchChildProcess.measure(
                        executable: executable, arguments: childArguments(job, plan.options))
                }
                let base = completed
                let total = max(1, plan.jobs().jobs.count * plan.options.runs)
                var shown = -1
                return try InferenceBench.measure(job, options: plan.options, isolation: .inProcess) { done, _ in
                    // Redraw only when the percentage moves: little I/O between timed runs.
                    let percent = (base + done) * 100 / total
                    guard percent != shown else { return }
                    shown = percent
                    bar.update(base + done, detail: "\(job.model.rawValue) x\(job.threads)")
                }
            },
            progress: { index, count, job in
                if let job {
                    bar.update(
                        index * plan.options.runs,
                        detail: "\(job.model.rawValue) x\(job.threads) (\(index + 1)/\(count))")
                }
            })
        bar.finish()
        return report
    }

    /// The arguments of the child that measures `job`.
    static func childArguments(_ job: BenchJob, _ options: BenchOptions) -> [String] {
        var arguments = [
            name, "--child", job.description, "--runs", String(options.runs), "--warmup", String(options.warmup),
            "--models", options.modelsFolder,
        ]
        if options.allowsSpinning { arguments.append("--spinning") }
        if let image = options.image { arguments += ["--image", image] }
        return arguments
    }

    /// The options as tokens, when the real command line is not this verb's (in-process tests).
    static func reconstruct(_ arguments: ParsedArguments) -> [String] {
        var tokens: [String] = []
        for flag in arguments.flags.sorted() { tokens.append("--\(flag)") }
        for (key, values) in arguments.values.sorted(by: { $0.key < $1.key }) {
            for value in values { tokens += ["--\(key)", value] }
        }
        return tokens + arguments.positionals
    }

    static func checkWritable(_ path: String) throws(ProofkitError) {
        let folder = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        guard case .success = POSIX.checkWritable(folder.isEmpty ? "/" : folder) else {
            throw ProofkitError(.io, "cannot write the plot: the folder is missing or not writable", path: path)
        }
    }

    // MARK: Text output

    static func table(_ report: BenchReport) -> String {
        let m = report.machine
        var text =
            "proofkit \(report.proofkitVersion) bench, ONNX Runtime \(report.onnxRuntime?.version ?? "?"), \(report.timestamp)\n"
        text += "machine: \(m.cpuModel), \(m.cores) cores, \(m.architecture), kernel \(m.kernel), \(m.operatingSystem)"
        if let mhz = m.cpuMaxMHz { text += ", up to \(mhz) MHz" }
        if let governor = m.cpuGovernor { text += ", governor \(governor)" }
        text += "; load average \(m.loadAverage.map { fixedDigits($0, 2) }.joined(separator: " "))\n"
        text +=
            "runs: \(report.settings.runs) timed after \(report.settings.warmup) warm-up; spinning \(report.settings.allowsSpinning ? "on" : "off"); memory: \(report.settings.isolation.rawValue)\n\n"
        let header = [
            "model", "threads", "load ms", "min ms", "p50 ms", "p90 ms", "p99 ms", "max ms", "per s", "peak MiB",
            "photo ms", "",
        ]
        var rows: [[String]] = []
        for r in report.results {
            let l = r.latency
            rows.append([
                r.model, String(r.threads), ms(r.loadSeconds), ms(l.min), ms(l.p50), ms(l.p90), ms(l.p99), ms(l.max),
                number(r.throughputPerSecond) + (r.unit == "chunks" ? " chunks" : ""),
                number(Double(r.memory.peakResidentBytes) / 1_048_576),
                r.photo.map { ms($0.total.p50) } ?? "-", r.isNoisy ? "noisy" : "",
            ])
        }
        text += aligned([header] + rows)
        for r in report.results {
            if let factor = r.realTimeFactor {
                text += "\(r.key): \(number(factor))x real time (one run = 32 ms of audio)\n"
            }
            if let token = r.decoderToken {
                text +=
                    "\(r.key): encoder \(ms(r.latency.p50)) ms per 30 s window (p50); decoder \(ms(token.p50)) ms per token (p50, p90 \(ms(token.p90)) ms, \(token.count) steps)\n"
            }
            if let landmarks = r.landmarkModel {
                text +=
                    "\(r.key): detector \(ms(r.latency.p50)) ms per frame (p50, p90 \(ms(r.latency.p90)) ms); landmark model \(ms(landmarks.p50)) ms (p50, p90 \(ms(landmarks.p90)) ms); \(ms(r.latency.p50 + landmarks.p50)) ms a frame with the detector, \(ms(landmarks.p50)) ms tracked\n"
            }
            if let photo = r.photo {
                text +=
                    "\(r.key): photo \(photo.file): decode \(ms(photo.decodeSeconds)) ms, preprocess \(ms(photo.preprocessSeconds)) ms, inference \(ms(photo.inferenceSeconds)) ms, \(photo.verdict) (score \(fixedDigits(photo.score, 3)))\n"
            }
        }
        let notes = Set(report.results.compactMap(\.photoNote))
        for note in notes.sorted() { text += "photo: \(note)\n" }
        for skip in report.skipped { text += "skipped \(skip.model): \(skip.reason)\n" }
        text += "total \(fixedDigits(report.wallSeconds, 1)) s\n"
        return text
    }

    static func aligned(_ rows: [[String]]) -> String {
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { index, cell in
                let pad = String(repeating: " ", count: widths[index] - cell.count)
                return index == 0 ? cell + pad : pad + cell
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }.joined(separator: "\n") + "\n\n"
    }

    static func ms(_ seconds: Double) -> String { number(seconds * 1000) }

    static func number(_ value: Double) -> String {
        let magnitude = abs(value)
        return fixedDigits(value, magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : magnitude >= 1 ? 2 : 3)
    }

    static func percent(_ fraction: Double) -> String { fixedDigits(fraction * 100, 0) + " %" }

    static func fixedDigits(_ value: Double, _ places: Int) -> String { decimalText(value, places: places) }

    // MARK: Plot

    /// One panel per model (latencies differ by orders of magnitude between models), with one CDF
    /// line per thread count: x = latency (ms), y = fraction of runs at or below it.
    static func plot(_ report: BenchReport) -> String {
        var models: [String] = []
        for r in report.results where !models.contains(r.model) { models.append(r.model) }
        let panelHeight = 320
        let width = 960
        var panels: [String] = []
        for model in models {
            var plot = SVGPlot(
                title:
                    "\(model): latency distribution (\(report.machine.cpuModel), ONNX Runtime \(report.onnxRuntime?.version ?? "?"))",
                xLabel: "latency of one run (ms)", yLabel: "fraction of runs", width: width, height: panelHeight)
            for r in report.results where r.model == model {
                plot.addLine(
                    cdf(r.samples),
                    label: "\(r.threads) thread\(r.threads == 1 ? "" : "s") (p50 \(ms(r.latency.p50)) ms)")
            }
            plot.addHorizontalLine(y: 0.5, label: "median", color: "#999999")
            panels.append(plot.render())
        }
        if panels.isEmpty {
            panels.append(SVGPlot(title: "no results", xLabel: "latency (ms)", yLabel: "fraction of runs").render())
        }
        var svg =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(width)\" height=\(quoted(panelHeight * panels.count)) viewBox=\"0 0 \(width) \(panelHeight * panels.count)\">\n"
        for (index, panel) in panels.enumerated() {
            svg += "<g transform=\"translate(0 \(index * panelHeight))\">\n\(panel)\n</g>\n"
        }
        return svg + "</svg>\n"
    }

    static func quoted(_ value: Int) -> String { "\"\(value)\"" }

    /// The empirical CDF of `samples` (seconds) as points in ms: a step at each sorted sample.
    static func cdf(_ samples: [Double]) -> [(x: Double, y: Double)] {
        let sorted = samples.sorted()
        let n = Double(sorted.count)
        var points: [(x: Double, y: Double)] = []
        for (index, value) in sorted.enumerated() {
            points.append((value * 1000, Double(index) / n))
            points.append((value * 1000, Double(index + 1) / n))
        }
        return points
    }

    // MARK: Compare

    static func compare(_ first: String, _ second: String, json: Bool, io: CommandIO) throws -> ExitStatus {
        let a = try load(first)
        let b = try load(second)
        let comparison = BenchComparison(a, b)
        if json {
            var rows: [JSONValue] = []
            for row in comparison.rows {
                var object: [String: JSONValue] = ["model": .string(row.model), "threads": .int(row.threads)]
                for (metric, cell) in row.cells {
                    object[metric.rawValue] = .object([
                        "a": cell.a.map(JSONValue.number) ?? .null, "b": cell.b.map(JSONValue.number) ?? .null,
                        "ratio": cell.ratio.map(JSONValue.number) ?? .null,
                    ])
                }
                rows.append(.object(object))
            }
            io.printJSON(
                .object([
                    "a": .string(first), "b": .string(second), "rows": .array(rows),
                    "geometric_mean_p50_ratio": comparison.geometricMeanLatencyRatio.map(JSONValue.number) ?? .null,
                ]))
        } else {
            io.writeOut(comparison.table(nameA: first, nameB: second))
        }
        return .success
    }

    static func load(_ path: String) throws(ProofkitError) -> BenchReport {
        // At most 16 MiB, counted while reading (a report is a few KiB; /proc files say size 0).
        let data = try BoundedFile.read(path, limit: 16 << 20, what: "bench report")
        // `proofkit bench --json > file` writes one line of JSON.
        let text = String(decoding: data, as: UTF8.self)
        do {
            return try BenchReport.decode(text.trimmingSpacesAndNewlines())
        } catch {
            throw error.at(path: path)
        }
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
