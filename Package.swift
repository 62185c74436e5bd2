// swift-tools-version: 6.2
//
// proofkit: on-device proofs for alarms that only stop when you are up.
//
// `ls Sources` shows the layers; each imports only the layers above it in this list:
//   Sources/Core/ProofkitCore          values shared by every layer (errors, units, JSON)
//   Sources/Engines/<Engine>           the pure decisions: VoiceGate, DuaMatching, ImageProof, SquatCounting,
//                                      PrayerPlanning, AlarmScheduling, ReadingRules, SpeechRecognition,
//                                      AudioDSP, PoseEstimation (no C, no I/O, no clock); an engine may build
//                                      on the engines it names in `engineGraph`
//   Sources/System/ProofkitSystem      the one libc chokepoint (`package` access, after swift-system);
//                                      POSIX+Calls.swift is its only file that calls libc
//   Sources/Adapters/<Adapter>         AudioIO, ImageIO, Inference, Storage, Camera, VideoIO: each over its own
//                                      C modules (CSupport/), loaded on first use
//   Sources/Proofkit                   the facade: one entry type per proof and the alarm service; it
//                                      re-exports the engines and wraps what callers need of the adapters
//   Sources/CLI/<Target>               the `proofkit` command: ProofkitCLI (parse, call the facade, print),
//                                      ProofkitTool (main), ProofkitDemo (+ ProofkitDemoMedia), ProofkitBenchRunner
// Engines never import ProofkitSystem or a C module, so a phone app can link ProofkitCore + the engines alone.
import PackageDescription

/// The pure engines (Sources/Engines/NAME), each on ProofkitCore and the engines it names: AlarmScheduling
/// plans and rings the chains of PrayerPlanning's times; ReadingRules decides a reading proof from
/// VoiceGate's voiced time, DuaMatching's words and SpeechRecognition's forced score.
let engineGraph: [(name: String, on: [String])] = [
    ("VoiceGate", []), ("DuaMatching", []), ("ImageProof", []), ("SquatCounting", []), ("PrayerPlanning", []),
    ("SpeechRecognition", []), ("AudioDSP", []), ("PoseEstimation", []),
    ("AlarmScheduling", ["PrayerPlanning"]), ("ReadingRules", ["VoiceGate", "DuaMatching", "SpeechRecognition"]),
]
let engines = engineGraph.map(\.name)
/// The C modules (CSupport/NAME) of the libraries loaded on first use, through CProofkitShims.
let loadedLibraries = [
    "CSndFile", "CALSA", "CTurboJPEG", "CPNG", "CSQLite", "CAVUtil", "CAVCodec", "CAVFormat", "CSwScale",
]
/// The C modules of kernel interfaces: headers only, no library to load (V4L2 is ioctls on a device node).
let headerModules = ["CV4L2"]
/// Every C module: the loaded libraries, ONNX Runtime's API (declared by us), the kernel headers and the shims.
let cModules = loadedLibraries + ["COnnxRuntime", "CProofkitShims"] + headerModules
/// The adapters (Sources/Adapters/NAME) and the C modules each one wraps.
let adapters: [(name: String, c: [String])] = [
    ("AudioIO", ["CSndFile", "CALSA"]), ("ImageIO", ["CTurboJPEG", "CPNG"]), ("Inference", ["COnnxRuntime"]),
    ("Storage", ["CSQLite"]), ("Camera", ["CV4L2"]), ("VideoIO", ["CAVUtil", "CAVCodec", "CAVFormat", "CSwScale"]),
]

/// A target in `Sources/LAYER/NAME`.
func target(_ name: String, in layer: String, dependencies: [Target.Dependency] = []) -> Target {
    .target(name: name, dependencies: dependencies, path: "Sources/\(layer)/\(name)")
}

// MARK: C modules. libsndfile, libasound, libturbojpeg, libpng, libsqlite3 and FFmpeg's libavutil, libavcodec,
// libavformat and libswscale are compiled against their Debian -dev headers but not linked: each module loads its
// library on first use (dlopen, through CProofkitShims' proofkit_library), so a command maps only what it uses.
let cTargets: [Target] =
    loadedLibraries.map { .target(name: $0, dependencies: ["CProofkitShims"], path: "CSupport/\($0)") } + [
        .target(name: "COnnxRuntime", path: "CSupport/COnnxRuntime", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "CProofkitShims", path: "CSupport/CProofkitShims", linkerSettings: [.linkedLibrary("dl")]),
    ] + headerModules.map { .systemLibrary(name: $0, path: "CSupport/\($0)") }

// MARK: Core values and the pure engines (no C, no I/O).
let coreTargets: [Target] =
    [target("ProofkitCore", in: "Core")]
    + engineGraph.map { engine in
        target(engine.name, in: "Engines", dependencies: (["ProofkitCore"] + engine.on).map { .target(name: $0) })
    }
    // The one import of the `ProofkitEngines` product: re-exports ProofkitCore and every engine, no code of its own.
    + [target("ProofkitEngines", in: "Engines", dependencies: (["ProofkitCore"] + engines).map { .target(name: $0) })]

// MARK: The libc chokepoint (every system call: files, processes, threads, sockets) and the adapters over it.
let systemTargets: [Target] =
    [target("ProofkitSystem", in: "System", dependencies: ["ProofkitCore", "CProofkitShims"])]
    + adapters.map { adapter in
        let dependencies = ["ProofkitCore", "ProofkitSystem", "CProofkitShims"] + adapter.c
        return target(adapter.name, in: "Adapters", dependencies: dependencies.map { .target(name: $0) })
    }

// MARK: The facade, the command and the executables.
/// The release executables link the Swift runtime and Foundation statically (start-up, and no
/// toolchain needed to run them: see .ci/build-release). Only the link asks for it, so the modules
/// are compiled once for the executables and the tests (Swift Testing has no static copy). The
/// static FoundationInternationalization needs ICU's and the collections' archives named.
let staticRuntime: [LinkerSetting] = [
    .unsafeFlags(
        ["-static-stdlib", "-l_FoundationICU", "-l_FoundationCollections", "-l_FoundationCShims"],
        .when(platforms: [.linux], configuration: .release))
]
let facadeDependencies =
    ["ProofkitCore", "ProofkitEngines", "ProofkitSystem", "CProofkitShims"] + engines + adapters.map(\.name)
let productTargets: [Target] = [
    .target(name: "Proofkit", dependencies: facadeDependencies.map { .target(name: $0) }),
    // The demo: its media (embedded in code as base64 text, see EmbeddedMedia.swift: no files needed
    // at run time) and its steps.
    .target(
        name: "ProofkitDemoMedia", dependencies: ["ProofkitCore"], path: "Sources/CLI/ProofkitDemoMedia",
        exclude: ["Media"]),
    target(
        "ProofkitDemo", in: "CLI",
        dependencies: ["Proofkit", "ProofkitDemoMedia", "AudioIO", "DuaMatching", "VoiceGate", "ProofkitSystem"]),
    // `proofkit bench`: runs each configuration in a child of the same binary.
    target(
        "ProofkitBenchRunner", in: "CLI",
        dependencies: ["Proofkit", "ProofkitCore", "ImageProof", "Inference", "ProofkitDemoMedia", "ProofkitSystem"]),
    target(
        "ProofkitCLI", in: "CLI", dependencies: ["Proofkit", "ProofkitDemo", "ProofkitBenchRunner", "ProofkitSystem"]),
    .executableTarget(
        name: "ProofkitTool", dependencies: ["ProofkitCLI", "ProofkitSystem"], path: "Sources/CLI/ProofkitTool",
        linkerSettings: staticRuntime),
    .executableTarget(
        name: "ProofkitBench", dependencies: ["Proofkit"], path: "Benchmarks/ProofkitBench",
        // It imports Foundation itself, whose static archive needs CoreFoundation's named.
        linkerSettings: staticRuntime + [
            .linkedLibrary("CoreFoundation", .when(platforms: [.linux], configuration: .release))
        ]),
]

// MARK: Tests: one target per module. The fixtures are read from the source tree
// (TestEnvironment.fixtures), not from a bundle.
let testTargets: [Target] =
    [
        .target(
            name: "TestSupport", dependencies: ["ProofkitCore", "ProofkitSystem"], path: "Tests/TestSupport",
            exclude: ["Fixtures", "FakeCamera"]),
        .testTarget(name: "ProofkitCoreTests", dependencies: ["ProofkitCore", "TestSupport"]),
        .testTarget(name: "ProofkitSystemTests", dependencies: ["ProofkitSystem", "TestSupport"]),
        .testTarget(
            name: "ProofkitTests",
            dependencies: [
                "Proofkit", "ProofkitDemo", "ProofkitDemoMedia", "ProofkitBenchRunner", "AudioDSP", "SpeechRecognition",
                "ProofkitSystem", "TestSupport",
            ]),
        // The command's end-to-end tests, in two targets that compile side by side: the alarm
        // service (with its hands-free listening and cameras) and the reading proof's commands
        // (voice, transcribe) in one, every other command in the other.
        .testTarget(name: "ProofkitCLITests", dependencies: ["ProofkitCLI", "TestSupport"]),
        .testTarget(name: "AlarmReadingCLITests", dependencies: ["ProofkitCLI", "TestSupport"]),
    ]
    + (engines + adapters.map(\.name)).map {
        .testTarget(name: "\($0)Tests", dependencies: [.target(name: $0), "TestSupport"])
    }

let package = Package(
    name: "proofkit",
    // The engines use Duration and the string algorithms of Swift 5.7's runtime (iOS 16, macOS 13);
    // Linux has no such floor.
    platforms: [.iOS(.v16), .macOS(.v13)],
    products: [
        .library(name: "ProofkitCore", targets: ["ProofkitCore"]),
        .library(name: "ProofkitEngines", targets: ["ProofkitEngines"]),
        .library(name: "Proofkit", targets: ["Proofkit"]),
        .executable(name: "proofkit", targets: ["ProofkitTool"]),
        .executable(name: "proofkit-bench", targets: ["ProofkitBench"]),
    ],
    targets: cTargets + coreTargets + systemTargets + productTargets + testTargets,
    swiftLanguageModes: [.v6]
)

// Standard settings for every Swift target (after swift-nio's closing loop).
for target in package.targets where target.type != .system && target.type != .binary {
    guard !cModules.contains(target.name) else { continue }
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    // Core and engines are pure Swift: hold them to strict memory safety (zero `unsafe`).
    if (["ProofkitCore", "ProofkitEngines"] + engines).contains(target.name) {
        settings.append(.strictMemorySafety())
    }
    // Test targets are compiled unoptimised: their time goes to the code under test (optimised)
    // and the `proofkit` children they run. The tests are built on the shipped build's compile
    // (.ci/build-release --tests), so after the set-up only they are compiled: all of them in about
    // 100 s on 2 cores, against 126-136 s optimised.
    if target.type == .test {
        settings.append(.unsafeFlags(["-Onone"]))
    }
    target.swiftSettings = settings
}
