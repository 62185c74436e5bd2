// swift-tools-version: 6.2
//
// proofkit: on-device proofs for alarms that only stop when you are up.
//
// Dependency direction (one way, enforced in review; `ls Sources` shows the layers):
//   ProofkitCore  <-  engines (VoiceGate, DuaMatching, ImageProof, SquatCounting, PrayerPlanning,
//                             SpeechRecognition, AudioDSP: resampling, fades, mixing, gain)
//   ProofkitCore  <-  ProofkitSystem: the one libc chokepoint (`package` access, after swift-system):
//                     Errno, valueOrErrno, capped reads, mapping, atomic writes, spawn, threads;
//                     POSIX+Calls.swift is its only file that calls libc, the rest is built on it
//   ProofkitCore + ProofkitSystem  <-  adapters (AudioIO, ImageIO, Inference, Storage), each over its own C modules
//   engines + adapters + ProofkitSystem  <-  Proofkit (facade: one entry type per proof, the alarm
//                            service; it re-exports the engines and wraps what callers need of the adapters)
//   Proofkit  <-  ProofkitDemo (+ ProofkitDemoMedia: the demo's JPEG/MP3 files, `.embedInCode`)
//   Proofkit  <-  ProofkitBenchRunner (`proofkit bench`: measures in children of its own binary)
//   Proofkit, ProofkitDemo, ProofkitBenchRunner, ProofkitSystem  <-  ProofkitCLI  <-  ProofkitTool (`proofkit`;
//                            ProofkitSystem too, for SIGPIPE, the environment and _exit)
// The CLI imports Proofkit and ProofkitCore (plus ProofkitDemo, ProofkitBenchRunner and the
// chokepoint ProofkitSystem for its files and signals), never an adapter.
// Engines import no C and do no I/O (never ProofkitSystem), so a phone app can link ProofkitCore + the engines alone.
import PackageDescription

let package = Package(
    name: "proofkit",
    products: [
        .library(name: "ProofkitCore", targets: ["ProofkitCore"]),
        .library(
            name: "ProofkitEngines",
            targets: [
                "VoiceGate", "DuaMatching", "ImageProof", "SquatCounting", "PrayerPlanning", "SpeechRecognition",
                "AudioDSP",
            ]),
        .library(name: "Proofkit", targets: ["Proofkit"]),
        .executable(name: "proofkit", targets: ["ProofkitTool"]),
        .executable(name: "proofkit-bench", targets: ["ProofkitBench"]),
    ],
    targets: [
        // MARK: C modules. libsndfile, libasound, libturbojpeg, libpng and libsqlite3 are compiled against their
        // Debian -dev headers but not linked: each module loads its library on first use (dlopen,
        // through CProofkitShims' proofkit_library), so a command maps only what it uses.
        .target(name: "CSndFile", dependencies: ["CProofkitShims"], path: "CSupport/CSndFile"),
        .target(name: "CALSA", dependencies: ["CProofkitShims"], path: "CSupport/CALSA"),
        .target(name: "CTurboJPEG", dependencies: ["CProofkitShims"], path: "CSupport/CTurboJPEG"),
        .target(name: "CPNG", dependencies: ["CProofkitShims"], path: "CSupport/CPNG"),
        .target(name: "CSQLite", dependencies: ["CProofkitShims"], path: "CSupport/CSQLite"),
        .target(
            name: "COnnxRuntime", path: "CSupport/COnnxRuntime",
            linkerSettings: [.linkedLibrary("dl")]),
        .target(
            name: "CProofkitShims", path: "CSupport/CProofkitShims",
            linkerSettings: [.linkedLibrary("dl")]),

        // MARK: Core values and the pure engines (no C, no I/O).
        .target(name: "ProofkitCore"),
        .target(name: "VoiceGate", dependencies: ["ProofkitCore"]),
        .target(name: "DuaMatching", dependencies: ["ProofkitCore"]),
        .target(name: "ImageProof", dependencies: ["ProofkitCore"]),
        .target(name: "SquatCounting", dependencies: ["ProofkitCore"]),
        .target(name: "PrayerPlanning", dependencies: ["ProofkitCore"]),
        .target(name: "SpeechRecognition", dependencies: ["ProofkitCore"]),
        .target(name: "AudioDSP", dependencies: ["ProofkitCore"]),

        // MARK: The libc chokepoint: every system call (files, processes, threads, sockets) goes through it.
        .target(name: "ProofkitSystem", dependencies: ["ProofkitCore", "CProofkitShims"]),

        // MARK: Adapters, one per capability.
        .target(
            name: "AudioIO", dependencies: ["ProofkitCore", "ProofkitSystem", "CSndFile", "CALSA", "CProofkitShims"]),
        .target(
            name: "ImageIO", dependencies: ["ProofkitCore", "ProofkitSystem", "CTurboJPEG", "CPNG", "CProofkitShims"]),
        .target(name: "Inference", dependencies: ["ProofkitCore", "ProofkitSystem", "COnnxRuntime", "CProofkitShims"]),
        .target(name: "Storage", dependencies: ["ProofkitCore", "ProofkitSystem", "CSQLite", "CProofkitShims"]),

        // MARK: Facade, CLI and executables.
        .target(
            name: "Proofkit",
            dependencies: [
                "ProofkitCore", "VoiceGate", "DuaMatching", "ImageProof", "SquatCounting",
                "PrayerPlanning", "SpeechRecognition", "AudioDSP", "AudioIO", "ImageIO", "Inference", "Storage",
                "ProofkitSystem", "CProofkitShims",
            ]),
        // The demo: its media (embedded in code, no files needed at run time) and its steps.
        .target(name: "ProofkitDemoMedia", resources: [.embedInCode("Media")]),
        .target(
            name: "ProofkitDemo",
            dependencies: ["Proofkit", "ProofkitDemoMedia", "AudioIO", "DuaMatching", "VoiceGate", "ProofkitSystem"]),
        // `proofkit bench`: runs each configuration in a child of the same binary.
        .target(
            name: "ProofkitBenchRunner",
            dependencies: [
                "Proofkit", "ProofkitCore", "ImageProof", "Inference", "ProofkitDemoMedia", "ProofkitSystem",
            ]),
        .target(
            name: "ProofkitCLI", dependencies: ["Proofkit", "ProofkitDemo", "ProofkitBenchRunner", "ProofkitSystem"]),
        .executableTarget(name: "ProofkitTool", dependencies: ["ProofkitCLI", "ProofkitSystem"]),
        .executableTarget(
            name: "ProofkitBench", dependencies: ["Proofkit"], path: "Benchmarks/ProofkitBench"),

        // MARK: Tests.
        // The fixtures are read from the source tree (TestEnvironment.fixtures), not from a bundle.
        .target(
            name: "TestSupport", dependencies: ["ProofkitCore"], path: "Tests/TestSupport", exclude: ["Fixtures"]),
        .testTarget(name: "ProofkitCoreTests", dependencies: ["ProofkitCore", "TestSupport"]),
        .testTarget(name: "VoiceGateTests", dependencies: ["VoiceGate", "TestSupport"]),
        .testTarget(name: "DuaMatchingTests", dependencies: ["DuaMatching", "TestSupport"]),
        .testTarget(name: "ImageProofTests", dependencies: ["ImageProof", "TestSupport"]),
        .testTarget(name: "SquatCountingTests", dependencies: ["SquatCounting", "TestSupport"]),
        .testTarget(name: "PrayerPlanningTests", dependencies: ["PrayerPlanning", "TestSupport"]),
        .testTarget(name: "SpeechRecognitionTests", dependencies: ["SpeechRecognition", "TestSupport"]),
        .testTarget(name: "AudioDSPTests", dependencies: ["AudioDSP", "TestSupport"]),
        .testTarget(name: "AudioIOTests", dependencies: ["AudioIO", "TestSupport"]),
        .testTarget(name: "ImageIOTests", dependencies: ["ImageIO", "TestSupport"]),
        .testTarget(name: "InferenceTests", dependencies: ["Inference", "TestSupport"]),
        .testTarget(name: "StorageTests", dependencies: ["Storage", "TestSupport"]),
        .testTarget(name: "ProofkitSystemTests", dependencies: ["ProofkitSystem", "TestSupport"]),
        .testTarget(
            name: "ProofkitTests",
            dependencies: [
                "Proofkit", "ProofkitDemo", "ProofkitBenchRunner", "AudioDSP", "SpeechRecognition", "ProofkitSystem",
                "TestSupport",
            ]),
        .testTarget(name: "ProofkitCLITests", dependencies: ["ProofkitCLI", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

// Standard settings for every Swift target (after swift-nio's closing loop).
for target in package.targets where target.type != .system && target.type != .binary {
    guard
        !["COnnxRuntime", "CProofkitShims", "CSndFile", "CALSA", "CTurboJPEG", "CPNG", "CSQLite"].contains(target.name)
    else { continue }
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    // Core and engines are pure Swift: hold them to strict memory safety (zero `unsafe`).
    if [
        "ProofkitCore", "VoiceGate", "DuaMatching", "ImageProof", "SquatCounting", "PrayerPlanning",
        "SpeechRecognition",
        "AudioDSP",
    ]
    .contains(target.name) {
        settings.append(.strictMemorySafety())
    }
    target.swiftSettings = settings
}
