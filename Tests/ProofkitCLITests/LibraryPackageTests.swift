import Foundation
import Synchronization
import TestSupport
import Testing

// Issue 34, as an app developer: a package of its own, in a temporary folder, that depends on
// proofkit by path, built with `swift build` and run.
// - The README's `import ProofkitEngines` program (extracted from README.md, so the README shows
//   what runs): one import for every engine; it counts the squats of a recorded set read as pose
//   JSON Lines from stdin with SquatCounting's public PoseLineDecoder.
// - An app that names the models folder and the ONNX Runtime library itself, run with an empty
//   environment (`env -i`) from a folder where no search could find either: it judges a photo.
// Both are executables of one scratch package, built once by `swift build` (the engines compile
// once for both): `EnginesApp` depends on the `ProofkitEngines` product alone, `FacadeApp` on
// `Proofkit`; each target links only what its product brings.

/// An app that gives the models folder and the ONNX Runtime library explicitly:
/// `FacadeApp MODELS LIBRARY PHOTO`.
private let facadeApp = """
    import Proofkit

    let arguments = CommandLine.arguments
    let store = try ModelStore(folder: arguments[1], onnxRuntimeLibrary: arguments[2])
    var judge = try PhotoJudge(options: PhotoJudgeOptions(), store: store)
    let photo = try judge.judge(contentsOf: arguments[3])
    print("photo:", photo.judgement.verdict.isAccepted, photo.judgement.decidedBy)
    let vad = try SileroVoiceDetector(modelPath: try store.locate(SileroVoiceDetector.modelFileName))
    print("vad chunk:", vad.chunkSize)
    """

private let models = TestEnvironment.packageRoot.path + "/Models/generated"
private let runtimeFolder = TestEnvironment.packageRoot.path + "/.deps/onnxruntime"

@Suite("the library from another package (by path)", .serialized, .offThePool)
struct LibraryPackageTests {
    /// The README's program under "With the `ProofkitEngines` product alone".
    static func readmeEnginesProgram() throws -> String {
        let readme = try String(
            contentsOf: TestEnvironment.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = readme.components(separatedBy: "```swift\n").dropFirst().map {
            $0.components(separatedBy: "\n```").first ?? ""
        }
        guard let program = blocks.first(where: { $0.hasPrefix("import ProofkitEngines") }) else {
            throw CocoaError(.fileReadCorruptFile)
        }
        return program
    }

    /// The scratch package: in a temporary folder removed when the test process exits, two executables
    /// (`EnginesApp`: `source` of the README, on `ProofkitEngines`; `FacadeApp`: ``facadeApp``,
    /// on `Proofkit`) depending on proofkit by path, built once with `swift build`. (A package
    /// found by path is named after its folder: `proofkit` in a clone, the worktree's name
    /// elsewhere.)
    /// - Returns: the folder of the built executables (`.build/debug`).
    static func buildApps(enginesSource: String) throws -> String {
        try builtApps.withLock { built in
            if let built { return try built.get() }
            let result = Result { try makeAndBuild(enginesSource: enginesSource) }
            built = result
            return try result.get()
        }
    }

    private static let builtApps = Mutex<Result<String, any Error>?>(nil)

    private static func makeAndBuild(enginesSource: String) throws -> String {
        let folder = try TestFolder.makeForProcess("proofkit-library-app")
        let package = TestEnvironment.packageRoot.lastPathComponent
        let manifest = """
            // swift-tools-version: 6.2
            import PackageDescription

            let package = Package(
                name: "ScratchApp",
                platforms: [.macOS(.v13), .iOS(.v16)],
                dependencies: [.package(path: "\(TestEnvironment.packageRoot.path)")],
                targets: [
                    .executableTarget(name: "EnginesApp", dependencies: [.product(name: "ProofkitEngines", package: "\(package)")]),
                    .executableTarget(name: "FacadeApp", dependencies: [.product(name: "Proofkit", package: "\(package)")]),
                ]
            )
            """
        try manifest.write(toFile: folder + "/Package.swift", atomically: true, encoding: .utf8)
        for (target, source) in [("EnginesApp", enginesSource), ("FacadeApp", facadeApp)] {
            try FileManager.default.createDirectory(
                atPath: folder + "/Sources/\(target)", withIntermediateDirectories: true)
            try source.write(toFile: folder + "/Sources/\(target)/main.swift", atomically: true, encoding: .utf8)
        }
        let result = try runProcess("/usr/bin/env", ["swift", "build"], currentDirectory: folder)
        try #require(result.status == 0, "swift build:\n\(result.stdout)\n\(result.stderr)")
        return folder + "/.build/debug"
    }

    @Test(
        "`import ProofkitEngines` alone: the README's program builds and counts a recorded set's squats",
        .enabled(if: TestEnvironment.hasTool("swift"), "needs the Swift toolchain"), .timeLimit(.minutes(30)))
    func enginesAlone() throws {
        let program = try Self.readmeEnginesProgram()
        let imports = program.split(separator: "\n").filter { $0.hasPrefix("import ") }
        #expect(imports == ["import ProofkitEngines  // every pure engine and ProofkitCore's values"])
        do {
            let binary = try Self.buildApps(enginesSource: program) + "/EnginesApp"
            // A recorded set of 5 squats (the manifest's true count), 297 frames.
            let poses = try Data(
                contentsOf: TestEnvironment.fixtures.appendingPathComponent(
                    "squat/bwr_190925_philippe_set1_squat.jsonl"))
            let result = try runProcess(binary, [], stdin: poses)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == "reading: true\nsquats: 5\n", "\(result.stdout)")
            // A bad line ends the program with the decoder's error, naming the line.
            var damaged = poses
            damaged.append(contentsOf: Array(#"{"t": 1, "keypoints": {}}"#.utf8) + [0x0A])
            let bad = try runProcess(binary, [], stdin: damaged)
            #expect(bad.status != 0)
            #expect(bad.stderr.contains("line 298: time goes backwards"), "\(bad.stderr)")
        }
    }

    @Test(
        "models folder and ONNX Runtime library given explicitly, with an empty environment: a photo is judged",
        .enabled(if: TestEnvironment.hasTool("swift"), "needs the Swift toolchain"),
        .enabled(
            if: FileManager.default.fileExists(atPath: models + "/efficientnet_lite0_int8.onnx")
                && ((try? FileManager.default.contentsOfDirectory(atPath: runtimeFolder)) ?? []).contains {
                    $0.hasPrefix("libonnxruntime.so.")
                },
            "needs the models and ONNX Runtime (bash .ci/setup)"),
        .timeLimit(.minutes(30)))
    func explicitModelsAndRuntime() throws {
        do {
            let binary = try Self.buildApps(enginesSource: try Self.readmeEnginesProgram()) + "/FacadeApp"
            let library = try #require(
                try FileManager.default.contentsOfDirectory(atPath: runtimeFolder).filter {
                    $0.hasPrefix("libonnxruntime.so.")
                }.sorted().last)
            let photo = ImageFixtures.path("demo_mat.jpg")
            // No PROOFKIT_MODELS, no PROOFKIT_ORT_LIBRARY, no HOME: and the executable lives in a
            // temporary folder, so the usual searches (above the executable) cannot find either.
            let result = try runProcess(
                "/usr/bin/env", ["-i", binary, models, runtimeFolder + "/" + library, photo], currentDirectory: "/")
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.hasPrefix("photo: true "), "\(result.stdout)")
            #expect(result.stdout.hasSuffix("\nvad chunk: 512\n"), "\(result.stdout)")
            // The library given is the only one tried: a missing one is named, and nothing else is.
            let missing = try runProcess(
                "/usr/bin/env", ["-i", binary, models, "/nonexistent/libonnxruntime.so.1", photo], currentDirectory: "/"
            )
            #expect(missing.status != 0)
            #expect(missing.stderr.contains("/nonexistent/libonnxruntime.so.1"), "\(missing.stderr)")
        }
    }
}
