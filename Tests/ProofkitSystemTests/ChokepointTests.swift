import Foundation
import TestSupport
import Testing

// The house rules of issue 19 that `ls Sources` cannot show, read from the source tree itself:
// one file of libc system calls (ProofkitSystem's POSIX+Calls.swift, after swift-system's
// Syscalls.swift), libm only elsewhere, and no Swift source file over 40 KB.

@Suite("The libc chokepoint and source sizes")
struct ChokepointTests {
    static let root = TestEnvironment.packageRoot

    /// The one file that imports Glibc/Darwin (and CProofkitShims) for system calls.
    static let chokepoint = "Sources/System/ProofkitSystem/POSIX+Calls.swift"

    /// Targets that may import Glibc for libm (sin, log10, ...): the pure engines and
    /// ProofkitCore, which do no I/O (they do not depend on ProofkitSystem; issue 19 allows them
    /// libm instead of hand-written maths).
    static let libmTargets: Set<String> = [
        "ProofkitCore", "VoiceGate", "DuaMatching", "ImageProof", "SquatCounting", "PrayerPlanning", "AlarmScheduling",
        "ReadingRules",
        "SpeechRecognition", "AudioDSP", "PoseEstimation",
    ]

    /// Other files that import Glibc for libm only, each with its reason.
    static let libmFiles: [String: String] = [
        "Sources/CLI/ProofkitBenchRunner/BenchComparison.swift": "log and exp for the geometric mean of ratios",
        "Sources/CLI/ProofkitBenchRunner/BenchModel.swift": "sin and cos for the fixed benchmark inputs",
        "Sources/CLI/ProofkitBenchRunner/InferenceBench.swift": "sin for the fixed Whisper decoder input",
    ]

    /// Adapter targets whose `NAME+Calls.swift` is the chokepoint of their own C library and may
    /// import Glibc for the errno values that library returns (ALSA's `-EPIPE`).
    static let adapterTargets: Set<String> = ["AudioIO", "ImageIO", "Inference", "Storage"]

    /// libc functions that are system work (files, processes, time, memory, the environment),
    /// which a libm-only file must not call.
    static let systemFunctions = [
        "getenv", "setenv", "isatty", "usleep", "nanosleep", "clock_gettime", "sysconf", "getrusage",
        "malloc_trim", "kill", "signal", "stat", "lstat", "fstat", "mmap", "munmap", "fopen", "fwrite",
        "fputs", "fflush", "_exit", "exit", "pthread_create", "posix_spawn", "socket", "unlink", "rename",
        "mkdir", "readlink", "getpid", "uname", "dup2", "fcntl", "poll", "pread", "pwrite", "lseek",
    ]

    /// Every Swift file under `folder` (relative to the package root), with its text and size.
    static func swiftFiles(under folder: String) throws -> [(path: String, text: String, bytes: Int)] {
        let base = root.appendingPathComponent(folder)
        guard let names = FileManager.default.enumerator(atPath: base.path) else { return [] }
        var files: [(path: String, text: String, bytes: Int)] = []
        for case let name as String in names where name.hasSuffix(".swift") {
            let data = try Data(contentsOf: base.appendingPathComponent(name))
            files.append(("\(folder)/\(name)", String(decoding: data, as: UTF8.self), data.count))
        }
        return files.sorted { $0.path < $1.path }
    }

    /// The modules that `text` imports (any access level or attribute), read in one pass.
    static func importedModules(_ text: String) -> Set<String> {
        var modules: Set<String> = []
        for line in text.split(separator: "\n") where line.contains("import ") {
            let words = line.split(separator: " ")
            guard let index = words.firstIndex(of: "import"), index + 1 < words.count else { continue }
            let before = words[..<index].allSatisfy {
                $0.hasPrefix("@") || ["public", "package", "internal", "private", "fileprivate"].contains($0)
            }
            if before { modules.insert(String(words[index + 1])) }
        }
        return modules
    }

    /// Whether `text` has an `import` of one of `modules` (any access level or attribute).
    static func imports(_ text: String, _ modules: [String]) -> Bool {
        !importedModules(text).isDisjoint(with: modules)
    }

    /// The layer folders of `Sources/` that hold one folder per target (`Sources/Proofkit` is a target itself).
    static let layers: Set<String> = ["Core", "Engines", "System", "Adapters", "CLI"]

    /// The target of a path `Sources/LAYER/TARGET/...` (or `Sources/Proofkit/...`).
    static func target(of path: String) -> String {
        let parts = path.split(separator: "/")
        return String(layers.contains(String(parts[1])) ? parts[2] : parts[1])
    }

    /// The project's own modules: every target folder under `Sources/` and every C module under `CSupport/`.
    static func ownModules() throws -> Set<String> {
        var modules: Set<String> = ["Proofkit"]
        for layer in Self.layers {
            modules.formUnion(
                try FileManager.default.contentsOfDirectory(
                    atPath: root.appendingPathComponent("Sources/\(layer)").path))
        }
        modules.formUnion(
            try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("CSupport").path))
        return modules
    }

    /// The project's modules that `text` imports.
    static func ownImports(_ text: String, _ modules: Set<String>) -> Set<String> {
        importedModules(text).intersection(modules)
    }

    /// The engines that build on other engines, and those they name (Package.swift's `engineGraph`).
    /// Every other engine imports ProofkitCore alone.
    static let enginesOnEngines: [String: Set<String>] = [
        "AlarmScheduling": ["PrayerPlanning"], "ReadingRules": ["VoiceGate", "DuaMatching", "SpeechRecognition"],
    ]

    /// The names in the folder `path` (relative to the package root).
    static func entries(_ path: String) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(path).path))
    }

    @Test("`ls Sources` shows the layers, and each layer imports only the layers above it")
    func layersImportUpwards() throws {
        #expect(try Self.entries("Sources") == Self.layers.union(["Proofkit"]))
        let modules = try Self.ownModules()
        let adapters = try Self.entries("Sources/Adapters")
        let cModules = try Self.entries("CSupport")
        #expect(try Self.entries("Sources/Engines").count >= 7 && adapters.count >= 4)
        // What each layer may import of the project's own modules (beyond itself).
        let allowed: [String: Set<String>] = [
            "Sources/Core": [],
            "Sources/Engines": ["ProofkitCore"],
            "Sources/System": ["ProofkitCore", "CProofkitShims"],
            "Sources/Adapters": cModules.union(["ProofkitCore", "ProofkitSystem"]),
            "Sources/Proofkit": modules.subtracting(try Self.entries("Sources/CLI")),
        ]
        var checked = 0
        for (folder, permitted) in allowed {
            for file in try Self.swiftFiles(under: folder) {
                checked += 1
                let own = Self.target(of: file.path)
                // The `ProofkitEngines` umbrella only re-exports ProofkitCore and the engines.
                let umbrella = own == "ProofkitEngines" ? try Self.entries("Sources/Engines") : []
                let named = folder == "Sources/Engines" ? Self.enginesOnEngines[own, default: []] : []
                let extra = Self.ownImports(file.text, modules).subtracting(permitted).subtracting([own])
                    .subtracting(umbrella).subtracting(named)
                #expect(extra.isEmpty, "\(file.path) imports \(extra.sorted()), which its layer may not")
            }
        }
        #expect(checked > 100)
        // The command's own code reaches adapters and C only through the facade.
        for folder in ["Sources/CLI/ProofkitCLI", "Sources/CLI/ProofkitTool"] {
            for file in try Self.swiftFiles(under: folder) {
                let reached = Self.ownImports(file.text, adapters.union(cModules))
                #expect(reached.isEmpty, "\(file.path) imports \(reached.sorted()): go through Proofkit")
            }
        }
    }

    @Test("an engine builds on another only where Package.swift's engineGraph names it, never on itself in a loop")
    func engineGraphIsNamed() throws {
        let manifest = String(
            decoding: try Data(contentsOf: Self.root.appendingPathComponent("Package.swift")), as: UTF8.self)
        // The entries `("NAME", ["A", "B"])` of `engineGraph`, read from the manifest's text.
        let start = try #require(manifest.range(of: "let engineGraph"))
        let end = try #require(manifest.range(of: "]\n", range: start.upperBound..<manifest.endIndex))
        var graph: [String: Set<String>] = [:]
        for entry in manifest[start.upperBound..<end.upperBound].split(separator: "(").dropFirst(2) {
            let names = entry.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter {
                $0.offset % 2 == 1
            }.map { String($0.element) }
            guard let name = names.first else { continue }
            graph[name] = Set(names.dropFirst())
        }
        #expect(Set(graph.keys) == (try Self.entries("Sources/Engines")).subtracting(["ProofkitEngines"]))
        #expect(graph.filter { !$0.value.isEmpty } == Self.enginesOnEngines)
        // No engine reaches itself through the engines it builds on.
        for name in graph.keys {
            var seen: Set<String> = []
            var next = graph[name, default: []]
            while let engine = next.popFirst() {
                #expect(engine != name, "\(name) builds on itself through \(engine)")
                if seen.insert(engine).inserted { next.formUnion(graph[engine, default: []]) }
            }
        }
    }

    @Test("in ProofkitSystem only POSIX+Calls.swift imports Glibc, Darwin or CProofkitShims")
    func oneFileInTheChokepoint() throws {
        let files = try Self.swiftFiles(under: "Sources/System/ProofkitSystem")
        #expect(files.count > 1)
        let importing = files.filter { Self.imports($0.text, ["Glibc", "Darwin", "CProofkitShims"]) }.map(\.path)
        #expect(importing == [Self.chokepoint])
        for file in files where file.path != Self.chokepoint {
            #expect(!Self.imports(file.text, ["Foundation", "FoundationEssentials"]), "\(file.path)")
        }
    }

    @Test("there is one POSIX+Calls file, and outside it Glibc is imported only for libm or by a C adapter")
    func libcOnlyThroughTheChokepoint() throws {
        let files = try Self.swiftFiles(under: "Sources")
        #expect(files.filter { $0.path.hasSuffix("/POSIX+Calls.swift") }.map(\.path) == [Self.chokepoint])
        var libmOnly: [(path: String, text: String, bytes: Int)] = []
        for file in files where file.path != Self.chokepoint && Self.imports(file.text, ["Glibc", "Darwin"]) {
            let target = Self.target(of: file.path)
            if Self.adapterTargets.contains(target) && file.path.hasSuffix("+Calls.swift") { continue }
            #expect(
                Self.libmTargets.contains(target) || Self.libmFiles[file.path] != nil,
                "\(file.path) imports Glibc: call libc through ProofkitSystem's POSIX+Calls.swift instead")
            libmOnly.append(file)
        }
        #expect(!libmOnly.isEmpty)
        for path in Self.libmFiles.keys {
            #expect(libmOnly.contains { $0.path == path }, "\(path) is allowed libm but no longer imports Glibc")
        }
        for file in libmOnly {
            for line in file.text.split(separator: "\n") where !line.contains("func ") && !line.contains("//") {
                for name in Self.systemFunctions {
                    guard let range = line.range(of: "\(name)(") else { continue }
                    let previous =
                        range.lowerBound == line.startIndex ? " " : line[line.index(before: range.lowerBound)]
                    #expect(
                        previous == "." || previous.isLetter || previous.isNumber || previous == "_",
                        "\(file.path) imports Glibc for libm but calls \(name): \(line)")
                }
            }
        }
    }

    @Test("the camera's V4L2 requests are made in one file, V4L2+Calls.swift, through the chokepoint")
    func v4l2InOneFile() throws {
        let files = try Self.swiftFiles(under: "Sources")
        let importing = files.filter { Self.imports($0.text, ["CV4L2"]) }.map(\.path)
        #expect(importing == ["Sources/Adapters/Camera/V4L2+Calls.swift"])
        let calls = try #require(files.first { $0.path == "Sources/Adapters/Camera/V4L2+Calls.swift" })
        // Every request goes through POSIX.control (ioctl) or POSIX.mapDevice (mmap); no libc here.
        #expect(!Self.imports(calls.text, ["Glibc", "Darwin", "CProofkitShims"]))
        #expect(calls.text.contains("POSIX.control(") && calls.text.contains("POSIX.mapDevice("))
    }

    @Test("no Swift source file is over 40 KB, but data that a script writes (named on line 1) may be 320 KB")
    func sourceSizes() throws {
        var count = 0
        var generated = 0
        for folder in ["Sources", "Tests", "Benchmarks"] {
            for file in try Self.swiftFiles(under: folder) {
                count += 1
                let first = file.text.prefix { $0 != "\n" }
                guard first.hasPrefix("// Generated by "),
                    let script = first.dropFirst("// Generated by ".count).split(separator: " ").first
                else {
                    #expect(file.bytes <= 40_000, "\(file.path) is \(file.bytes) bytes")
                    continue
                }
                generated += 1
                let scriptPath = Self.root.appendingPathComponent(String(script)).path
                #expect(FileManager.default.fileExists(atPath: scriptPath), "\(file.path): no script \(script)")
                #expect(file.bytes <= 320_000, "\(file.path) is \(file.bytes) bytes")
            }
        }
        #expect(count > 100)
        #expect(generated == 2, "the veto's weights and the demo's media")
    }

    @Test(
        "one error type: the library's public errors are ProofkitError (and the JSON parser's position), the CLI's UsageError"
    )
    func oneErrorType() throws {
        var declared: [String: String] = [:]  // type -> file
        for file in try Self.swiftFiles(under: "Sources") {
            for line in file.text.split(separator: "\n") {
                let words = line.split(whereSeparator: { $0 == " " || $0 == ":" || $0 == "," || $0 == "{" })
                guard words.first == "public", words.count >= 4,
                    ["struct", "enum", "class", "actor"].contains(words[1]),
                    words.dropFirst(3).contains("Error")
                else { continue }
                declared[String(words[2])] = file.path
            }
        }
        // JSONSyntaxError is where a JSON text breaks, worded by its caller into a ProofkitError;
        // UsageError is the CLI's bad command line (exit 64).
        #expect(Set(declared.keys) == ["ProofkitError", "JSONSyntaxError", "UsageError"], "\(declared)")
        #expect(declared["UsageError"]?.contains("Sources/CLI/") == true)
    }

    /// Files below the command whose functions may throw untyped, each with its reason.
    static let untypedThrows: [String: String] = [
        "Sources/Proofkit/PoseLines.swift": "passes on what its caller's line handler throws (it stops a read)",
        "Sources/Proofkit/PoseVideoLines.swift": "passes on what its caller's frame handler throws",
    ]

    @Test("typed throws below the command: core, engines, adapters and the facade (the alarm too) throw ProofkitError")
    func typedThrows() throws {
        var untyped: [String] = []
        var checked = 0
        for folder in ["Sources/Core", "Sources/Engines", "Sources/Adapters", "Sources/Proofkit"] {
            for file in try Self.swiftFiles(under: folder) where Self.untypedThrows[file.path] == nil {
                checked += 1
                for (number, line) in file.text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false)[0]
                    var rest = code[...]
                    while let range = rest.range(of: "throws") {
                        let before =
                            range.lowerBound == code.startIndex ? " " : code[code.index(before: range.lowerBound)]
                        let after = range.upperBound == code.endIndex ? " " : code[range.upperBound]
                        if !before.isLetter && after != "(" && !after.isLetter {
                            untyped.append("\(file.path):\(number + 1)")
                        }
                        rest = code[range.upperBound...]
                    }
                }
            }
        }
        #expect(checked > 100)
        #expect(untyped.isEmpty, "untyped throws: \(untyped)")
        for path in Self.untypedThrows.keys {
            let file = try #require(try Self.swiftFiles(under: "Sources/Proofkit").first { $0.path == path })
            #expect(file.text.contains(") throws"), "\(path) is allowed untyped throws but has none")
        }
    }

    @Test("no FileManager in Sources: file-system work goes through ProofkitSystem's chokepoint")
    func noFileManager() throws {
        var users: [String] = []
        for file in try Self.swiftFiles(under: "Sources") {
            let code = file.text.split(separator: "\n").filter {
                !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//")
            }
            if code.contains(where: { $0.contains("FileManager") }) { users.append(file.path) }
        }
        #expect(users.isEmpty, "\(users)")
    }
}
