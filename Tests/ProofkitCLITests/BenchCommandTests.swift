import Foundation
import Inference
import Proofkit
import ProofkitBenchRunner
import ProofkitCore
import TestSupport
import Testing

@testable import ProofkitCLI

/// `proofkit bench`: argument parsing in process, `--compare` on real reports, and a real run of
/// the built binary (child processes, JSON, plot).
@Suite("proofkit bench", .offThePool)
struct BenchCommandTests {
    static let modelsFolder = TestEnvironment.packageRoot.appendingPathComponent("Models/generated").path
    static let hasModels =
        OnnxRuntime.isAvailable && FileManager.default.fileExists(atPath: modelsFolder + "/silero_vad.onnx")

    func parse(_ tokens: [String], cores: Int = 2) throws -> BenchCommand.Request {
        let parsed = try parseArguments(tokens, options: BenchCommand.options)
        return try BenchCommand.request(parsed, cores: cores, modelsFolder: "M")
    }

    func run(_ arguments: [String]) -> (status: Int32, out: String, err: String) {
        let captured = CapturedIO()
        let status = ProofkitCLI.run(arguments: ["proofkit", "bench"] + arguments, io: captured.io)
        return (status, captured.stdout, captured.stderr)
    }

    // MARK: Parsing

    @Test("defaults: all models, threads 1,2,4 up to the cores, 100 runs after 10 warm-ups, child processes")
    func defaults() throws {
        guard case .measure(let plan, let json, let plot) = try parse([], cores: 2) else {
            Issue.record("not a measure request")
            return
        }
        #expect(plan.models == [.lite0, .lite0FP32, .clip, .silero])
        #expect(plan.threads == [1, 2])
        #expect(plan.options == BenchOptions(runs: 100, warmup: 10, modelsFolder: "M"))
        #expect(plan.isolation == .childProcess)
        #expect(!json && plot == nil)
        guard case .measure(let four, _, _) = try parse([], cores: 4) else {
            Issue.record("not a measurement")
            return
        }
        #expect(four.threads == [1, 2, 4])
    }

    @Test("every option, in both --x v and --x=v forms")
    func options() throws {
        let request = try parse([
            "--model=lite0-fp32", "--threads", "4,1", "--runs=7", "--warmup", "0", "--image", "p.jpg", "--models=D",
            "--spinning", "--in-process", "--json", "--plot", "b.svg",
        ])
        guard case .measure(let plan, let json, let plot) = request else {
            Issue.record("not a measure request")
            return
        }
        #expect(plan.models == [.lite0FP32] && plan.threads == [1, 4])
        #expect(
            plan.options == BenchOptions(runs: 7, warmup: 0, allowsSpinning: true, modelsFolder: "D", image: "p.jpg"))
        #expect(plan.isolation == .inProcess && json && plot == "b.svg")
    }

    @Test("--compare takes exactly two reports; --child takes MODEL:THREADS")
    func compareAndChild() throws {
        #expect(try parse(["--compare", "a.json", "b.json", "--json"]) == .compare("a.json", "b.json", json: true))
        #expect(
            try parse(["--child", "silero:2", "--runs", "3"])
                == .child(BenchJob(model: .silero, threads: 2), BenchOptions(runs: 3, modelsFolder: "M")))
    }

    @Test(
        "usage errors exit 64 with one line naming the problem",
        arguments: [
            (["--model", "resnet"], "unknown model 'resnet'"),
            (["--threads", "0"], "--threads"),
            (["--threads", "a,b"], "--threads"),
            (["--runs", "0"], "--runs"),
            (["--runs", "many"], "--runs needs a whole number"),
            (["--warmup", "-1"], "--warmup"),
            (["--compare", "a.json"], "missing the two reports"),
            (["--compare", "a.json", "b.json", "--model", "lite0"], "--compare takes only"),
            (["--compare", "a.json", "b.json", "--in-process"], "not --in-process"),
            (["--child", "lite0"], "--child"),
            (["extra"], "unexpected argument 'extra'"),
            (["--bogus"], "--bogus"),
        ])
    func usageErrors(arguments: [String], message: String) {
        let (status, out, err) = run(arguments)
        #expect(status == 64)
        #expect(out.isEmpty)
        #expect(err.contains(message), "\(err)")
        #expect(err.hasPrefix("proofkit bench: "))
    }

    @Test("--help documents the JSON schema version and the fields")
    func help() {
        let (status, out, _) = run(["--help"])
        #expect(status == 0)
        for field in [
            "schema_version", "latency_s", "peak_rss_bytes", "throughput_per_s", "--compare", "child-process",
        ] {
            #expect(out.contains(field), "help misses \(field)")
        }
    }

    // MARK: Compare

    @Test("--compare prints both machines and B/A ratios; --json gives the ratio per metric")
    func compare() throws {
        try withTemporaryFolder { folder in
            func report(_ p50: Double, cpu: String) -> String {
                var info = MachineInfo.current()
                info.cpuModel = cpu
                let memory = BenchMemory(
                    residentBeforeLoadBytes: 1, residentAfterLoadBytes: 2, peakResidentBytes: 64 * 1_048_576,
                    isolation: .childProcess)
                let result = BenchResult(
                    model: "lite0", modelFile: "efficientnet_lite0_int8.onnx", modelBytes: 5, threads: 1,
                    runtimeLoadSeconds: 0, loadSeconds: 0.04, samples: [p50, p50, p50], unit: "images",
                    audioSecondsPerRun: nil, memory: memory, photo: nil, photoNote: nil)
                return BenchReport(
                    onnxRuntime: BenchRuntime(version: "1.32.0", apiVersion: 15), machine: BenchMachine(info),
                    timestamp: "2025-01-01T00:00:00Z", commandLine: ["proofkit", "bench"],
                    settings: BenchSettings(
                        runs: 3, warmup: 0, threads: [1], allowsSpinning: false, isolation: .childProcess, image: nil),
                    results: [result], skipped: [], wallSeconds: 1
                ).encoded()
            }
            try report(0.004, cpu: "Laptop CPU").write(toFile: folder + "/a.json", atomically: true, encoding: .utf8)
            try report(0.016, cpu: "Cortex-A76").write(toFile: folder + "/b.json", atomically: true, encoding: .utf8)
            let (status, out, err) = run(["--compare", folder + "/a.json", folder + "/b.json"])
            #expect(status == 0 && err.isEmpty)
            #expect(out.contains("Laptop CPU") && out.contains("Cortex-A76"))
            #expect(out.contains("4.00x"))
            let json = run(["--compare", folder + "/a.json", folder + "/b.json", "--json"])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
            let rows = try #require(object["rows"] as? [[String: Any]])
            let p50 = try #require(rows.first?["p50_s"] as? [String: Any])
            #expect(isApproximatelyEqual(try #require(p50["ratio"] as? Double), 4))
            #expect(isApproximatelyEqual(try #require(object["geometric_mean_p50_ratio"] as? Double), 4))
        }
    }

    @Test("--compare: a missing report exits 66, a file that is not a report 65, naming the file")
    func compareErrors() throws {
        try withTemporaryFolder { folder in
            try "hello".write(toFile: folder + "/junk.json", atomically: true, encoding: .utf8)
            let missing = run(["--compare", folder + "/none.json", folder + "/junk.json"])
            #expect(missing.status == 66 && missing.err.contains("none.json"))
            let junk = run(["--compare", folder + "/junk.json", folder + "/junk.json"])
            #expect(junk.status == 65 && junk.err.contains("junk.json"))
            #expect(junk.err.split(separator: "\n").count == 1)
        }
    }

    @Test("a missing photo exits 66 before measuring, and a plot in a missing folder exits 74")
    func badPaths() {
        let photo = run(["--model", "silero", "--image", "/nonexistent/photo.jpg"])
        #expect(photo.status == 66 && photo.err.contains("/nonexistent/photo.jpg"))
        let plot = run(["--model", "silero", "--plot", "/nonexistent/folder/b.svg"])
        #expect(plot.status == 74 && plot.err.contains("b.svg"))
    }

    @Test(
        "no model file to measure exits 66 naming the reason; no ONNX Runtime exits 69",
        .enabled(if: TestEnvironment.hasProofkitBinary, "needs the built proofkit (swift build --build-tests)"))
    func unavailable() throws {
        try withTemporaryFolder { folder in
            let none = try runProcess(TestEnvironment.proofkitBinary, ["bench", "--model", "clip", "--models", folder])
            #expect(none.status == 66)
            #expect(none.stdout.isEmpty)
            #expect(none.stderr.contains("nothing to measure") && none.stderr.contains("export_mobileclip.py"))
            let noRuntime = try runProcess(
                TestEnvironment.proofkitBinary, ["bench", "--model", "silero"],
                environment: ["PROOFKIT_ORT_LIBRARY": folder + "/libonnxruntime.so.1"])
            #expect(noRuntime.status == 69)
            #expect(noRuntime.stderr.contains("PROOFKIT_ORT_LIBRARY"))
            #expect(noRuntime.stderr.split(separator: "\n").count == 1)
        }
    }

    // MARK: Real runs

    @Test(
        "in process: Silero at 1 and 2 threads gives a table and a plot with one CDF per thread count",
        .enabled(if: hasModels, "needs ONNX Runtime and the models (bash .ci/setup)"))
    func inProcessRun() throws {
        try withTemporaryFolder { folder in
            let plot = folder + "/bench.svg"
            let (status, out, _) = run([
                "--model", "silero", "--threads", "1,2", "--runs", "5", "--warmup", "1", "--models", Self.modelsFolder,
                "--in-process", "--plot", plot,
            ])
            #expect(status == 0)
            #expect(out.contains("ONNX Runtime"))
            #expect(out.split(separator: "\n").filter { $0.hasPrefix("silero ") && $0.contains(" chunks") }.count == 2)
            #expect(out.contains("x real time"))
            let svg = try String(contentsOfFile: plot, encoding: .utf8)
            #expect(svg.hasPrefix("<svg") && svg.hasSuffix("</svg>\n"))
            #expect(svg.contains("1 thread (p50") && svg.contains("2 threads (p50"))
            #expect(svg.components(separatedBy: "<polyline").count - 1 >= 2)
        }
    }

    @Test(
        "without --image a photo model judges the embedded demo photo, named by its label",
        .enabled(if: hasModels, "needs ONNX Runtime and the models (bash .ci/setup)"))
    func demoPhoto() throws {
        let (status, out, _) = run([
            "--model", "lite0", "--threads", "1", "--runs", "3", "--warmup", "1", "--models", Self.modelsFolder,
            "--in-process", "--json",
        ])
        #expect(status == 0)
        let report = try BenchReport.decode(out.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(report.settings.image == BenchDemoPhoto.label)
        let photo = try #require(report.results.first?.photo)
        #expect(photo.file == BenchDemoPhoto.label)
        // The demo's picture is a prayer mat, and proofkit mat accepts it.
        #expect(photo.verdict == "accepted")
        #expect(photo.total.count == 10 && photo.total.p50 > 0)
    }

    @Test(
        "the built binary measures each configuration in a child process and prints one JSON report",
        .enabled(if: hasModels && TestEnvironment.hasProofkitBinary, "needs the models and the built proofkit"))
    func childProcesses() throws {
        let result = try runProcess(
            TestEnvironment.proofkitBinary,
            [
                "bench", "--model", "silero,clip", "--threads", "1", "--runs", "3", "--warmup", "1", "--json",
                "--models", Self.modelsFolder,
            ])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 1)
        let report = try BenchReport.decode(String(lines[0]))
        #expect(report.settings.isolation == .childProcess)
        let silero = try #require(report.results.first)
        #expect(report.results.count == 1 && silero.model == "silero")
        #expect(silero.memory.isolation == .childProcess)
        // A child is a fresh process: it loaded ONNX Runtime itself.
        #expect(silero.runtimeLoadSeconds > 0)
        #expect(silero.memory.peakResidentBytes >= silero.memory.residentAfterLoadBytes)
        // In its own process, loading and running the model adds to what the runtime alone holds.
        #expect(silero.memory.peakResidentBytes > silero.memory.residentBeforeLoadBytes)
        #expect(report.commandLine.first?.hasSuffix("proofkit") == true && report.commandLine.contains("--json"))
        if !FileManager.default.fileExists(atPath: Self.modelsFolder + "/mobileclip_s0_image.onnx") {
            #expect(report.skipped.first?.model == "clip")
        }
    }

    static let hasWhisper =
        OnnxRuntime.isAvailable && FileManager.default.fileExists(atPath: modelsFolder + "/whisper_base_decoder.onnx")

    @Test("--model whisper: 10 runs after 1 warm-up by default; other models keep 100 and 10")
    func whisperDefaults() throws {
        guard case .measure(let plan, _, _) = try parse(["--model", "whisper"]) else {
            Issue.record("not a measurement")
            return
        }
        #expect(plan.models == [.whisper] && plan.options.runs == 10 && plan.options.warmup == 1)
        guard case .measure(let given, _, _) = try parse(["--model", "silero,whisper", "--runs", "3", "--warmup", "0"])
        else {
            Issue.record("not a measurement")
            return
        }
        #expect(given.options.runs == 3 && given.options.warmup == 0)
        guard case .measure(let all, _, _) = try parse([]) else {
            Issue.record("not a measurement")
            return
        }
        #expect(!all.models.contains(.whisper) && all.options.runs == 100)
    }

    @Test(
        "--model whisper (real model, child process): the encoder's time per 30 s window and the decoder's time per token",
        .enabled(
            if: hasWhisper && TestEnvironment.hasProofkitBinary,
            "needs the Whisper models (bash .ci/setup) and the built proofkit"))
    func whisperRun() throws {
        let result = try runProcess(
            TestEnvironment.proofkitBinary,
            [
                "bench", "--model", "whisper", "--threads", "2", "--runs", "2", "--warmup", "0", "--json", "--models",
                Self.modelsFolder,
            ])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try BenchReport.decode(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        let whisper = try #require(report.results.first)
        #expect(whisper.model == "whisper" && whisper.unit == "windows" && whisper.threads == 2)
        #expect(whisper.modelFile == "whisper_base_encoder.onnx + whisper_base_decoder.onnx")
        #expect(whisper.latency.count == 2 && whisper.latency.min > 0)
        let token = try #require(whisper.decoderToken)
        #expect(token.count == 2 * BenchModel.whisperDecoderSteps)
        // One decoder step (one token) is far cheaper than encoding a 30 s window.
        #expect(token.p50 < whisper.latency.p50)
        #expect(whisper.photo == nil && whisper.realTimeFactor == nil)
        // Both graphs' bytes, from the folder's own files.
        let encoder =
            try FileManager.default.attributesOfItem(atPath: Self.modelsFolder + "/whisper_base_encoder.onnx")[.size]
            as! Int
        let decoder =
            try FileManager.default.attributesOfItem(atPath: Self.modelsFolder + "/whisper_base_decoder.onnx")[.size]
            as! Int
        #expect(whisper.modelBytes == encoder + decoder)
        #expect(whisper.memory.peakResidentBytes > whisper.memory.residentBeforeLoadBytes)
        // The text table has the encoder/decoder line.
        let text = try runProcess(
            TestEnvironment.proofkitBinary,
            [
                "bench", "--model", "whisper", "--threads", "1", "--runs", "1", "--warmup", "0", "--models",
                Self.modelsFolder,
            ])
        #expect(text.status == 0)
        #expect(text.stdout.contains("ms per 30 s window (p50); decoder") && text.stdout.contains("ms per token"))
    }

    @Test(
        "--model pose (real models, child process): the detector's and the landmark model's time per frame",
        .enabled(
            if: OnnxRuntime.isAvailable && PoseFixtures.hasModels && PoseFixtures.hasPhotos
                && TestEnvironment.hasProofkitBinary,
            "needs the pose models (bash .ci/setup), .deps/wheels and the built proofkit"))
    func poseRun() throws {
        guard case .measure(let all, _, _) = try parse([]) else {
            Issue.record("not a measurement")
            return
        }
        #expect(!all.models.contains(.pose))
        try withTemporaryFolder { folder in
            let photo = try PoseFixtures.extractPhoto("astronaut", into: folder)
            let result = try runProcess(
                TestEnvironment.proofkitBinary,
                [
                    "bench", "--model", "pose", "--threads", "1", "--runs", "3", "--warmup", "1", "--json", "--image",
                    photo,
                    "--models", Self.modelsFolder,
                ])
            #expect(result.status == 0, "\(result.stderr)")
            let report = try BenchReport.decode(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            let pose = try #require(report.results.first)
            #expect(pose.model == "pose" && pose.unit == "frames" && pose.threads == 1)
            #expect(pose.modelFile == "pose_detection.onnx + pose_landmark_full.onnx")
            #expect(pose.latency.count == 3 && pose.latency.min > 0)
            let landmarks = try #require(pose.landmarkModel)
            #expect(landmarks.count == 3 && landmarks.min > 0)
            #expect(pose.photo == nil && pose.decoderToken == nil && pose.realTimeFactor == nil)
            var bytes = 0
            for name in ["pose_detection.onnx", "pose_landmark_full.onnx"] {
                bytes += try FileManager.default.attributesOfItem(atPath: Self.modelsFolder + "/" + name)[.size] as! Int
            }
            #expect(pose.modelBytes == bytes)
            #expect(pose.memory.peakResidentBytes > pose.memory.residentBeforeLoadBytes)
            // Without --image, a fixed pattern (nobody): both models still run; the text has the line.
            let text = try runProcess(
                TestEnvironment.proofkitBinary,
                [
                    "bench", "--model", "pose", "--threads", "1", "--runs", "2", "--warmup", "0", "--models",
                    Self.modelsFolder,
                ])
            #expect(text.status == 0, "\(text.stderr)")
            #expect(text.stdout.contains("pose x1: detector") && text.stdout.contains("ms tracked"))
        }
    }

    @Test("--help names the whisper model and its figures")
    func whisperHelp() {
        let (status, out, _) = run(["--help"])
        #expect(status == 0)
        #expect(out.contains("whisper") && out.contains("decoder_token_s") && out.contains("per 30 s window"))
    }
}
