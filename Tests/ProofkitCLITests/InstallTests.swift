import Foundation
import TestSupport
import Testing

private let hasBinary = TestEnvironment.hasProofkitBinary
private let root = TestEnvironment.packageRoot.path
private let releaseBinary = root + "/.build/release/proofkit"
/// `.ci/setup` has run: the release binary, the models and ONNX Runtime are there to install.
private let hasSetUp =
    FileManager.default.isExecutableFile(atPath: releaseBinary)
    && FileManager.default.fileExists(atPath: root + "/Models/generated/manifest.json")
    && ((try? FileManager.default.contentsOfDirectory(atPath: root + "/.deps/onnxruntime")) ?? []).contains {
        $0.hasPrefix("libonnxruntime.so.")
    }

/// The manual page and the completions are generated from the same declarations as `--help`.
@Suite("man page and completions", .enabled(if: hasBinary), .offThePool)
struct GeneratedDocsTests {
    /// Every verb of `proofkit help` and every option of its `--help`.
    func commandsAndOptions() throws -> [(verb: String, options: [String])] {
        let top = try TestEnvironment.runProofkit(["help"])
        let verbs = top.stdout.split(separator: "\n", omittingEmptySubsequences: false).drop(while: {
            $0 != "Commands:"
        }).dropFirst()
            .prefix(while: { !$0.isEmpty }).compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(verbs.count >= 12 && verbs.contains("trim") && verbs.contains("doctor"), "\(top.stdout)")
        return try verbs.map { verb in
            let help = try TestEnvironment.runProofkit([verb, "--help"])
            #expect(help.status == 0)
            let options = help.stdout.split(separator: "\n").drop(while: { $0 != "Options:" }).dropFirst()
                .prefix(while: { $0.hasPrefix("  ") }).compactMap { line in
                    // The option's own name: the first `--` word (its help text may name others).
                    line.split(separator: " ").first { $0.hasPrefix("--") }.map(String.init)
                }
            #expect(options.contains("--help"))
            return (verb, options)
        }
    }

    @Test(
        "man -l renders the page without warnings, and it names every command and option of --help",
        .enabled(if: TestEnvironment.hasTool("man"), "man is not installed"))
    func manPage() throws {
        try withTemporaryFolder { folder in
            let page = try TestEnvironment.runProofkit(["help", "man"])
            #expect(page.status == 0)
            #expect(page.stdout.hasPrefix(".TH PROOFKIT 1 "))
            try page.stdout.write(toFile: folder + "/proofkit.1", atomically: true, encoding: .utf8)
            let rendered = try runProcess(
                "/usr/bin/env", ["man", "--warnings", "-E", "UTF-8", "-l", folder + "/proofkit.1"],
                environment: ["MANWIDTH": "100", "MANPAGER": "cat", "PAGER": "cat", "LC_ALL": "C.UTF-8"])
            #expect(rendered.status == 0, "\(rendered.stderr)")
            #expect(rendered.stderr.isEmpty, "man warned: \(rendered.stderr)")
            // Rendered text uses plain hyphens; lines may wrap, so compare word by word.
            let text = rendered.stdout.replacingOccurrences(of: "\u{2010}", with: "-")
            for (verb, options) in try commandsAndOptions() {
                #expect(text.contains("proofkit \(verb)"), "the man page lacks the command \(verb)")
                for option in options {
                    #expect(text.contains(option), "the man page lacks \(verb) \(option)")
                }
            }
            #expect(text.contains("EXIT STATUS") && text.contains("78"))
        }
    }

    /// What bash's completion offers for the words typed so far (the last one being completed).
    func bashCompletions(_ words: [String]) throws -> [String] {
        return try withTemporaryFolder { folder in
            let script = try TestEnvironment.runProofkit(["help", "completion", "bash"])
            #expect(script.status == 0)
            try script.stdout.write(toFile: folder + "/proofkit.bash", atomically: true, encoding: .utf8)
            let quoted = words.map { "'\($0)'" }.joined(separator: " ")
            let program = """
                source '\(folder)/proofkit.bash'
                COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1)
                _proofkit
                printf '%s\\n' "${COMPREPLY[@]}"
                """
            let result = try runProcess("/bin/bash", ["--norc", "-c", program], currentDirectory: folder)
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.split(separator: "\n").map(String.init)
        }
    }

    @Test("bash completes commands, sub-verbs and options")
    func bash() throws {
        #expect(try bashCompletions(["proofkit", "tri"]) == ["trim"])
        #expect(Set(try bashCompletions(["proofkit", "tr"])) == ["trim", "transcribe"])
        #expect(Set(try bashCompletions(["proofkit", "d"])) == ["demo", "dua", "doctor"])
        #expect(Set(try bashCompletions(["proofkit", "dua", ""])) == ["list", "show", "check"])
        #expect(Set(try bashCompletions(["proofkit", "trim", "--no"])) == ["--normalize"])
        #expect(try bashCompletions(["proofkit", "mat", "--eng"]) == ["--engine"])
        // After an option that takes a file, completion is left to bash's file names.
        #expect(try bashCompletions(["proofkit", "trim", "-o", ""]).isEmpty)
    }

    @Test("zsh and fish scripts name every command and option; an unknown shell is a usage error")
    func zshAndFish() throws {
        let zsh = try TestEnvironment.runProofkit(["help", "completion", "zsh"])
        let fish = try TestEnvironment.runProofkit(["help", "completion", "fish"])
        #expect(zsh.stdout.hasPrefix("#compdef proofkit"))
        for (verb, options) in try commandsAndOptions() {
            #expect(zsh.stdout.contains("'\(verb):") && zsh.stdout.contains("        \(verb))"))
            #expect(fish.stdout.contains("-a \(verb) -d "))
            for option in options {
                #expect(zsh.stdout.contains(option), "zsh lacks \(verb) \(option)")
                #expect(fish.stdout.contains("-l \(option.dropFirst(2))"), "fish lacks \(verb) \(option)")
            }
        }
        if TestEnvironment.hasTool("zsh") {
            try withTemporaryFolder { folder in
                try zsh.stdout.write(toFile: folder + "/_proofkit", atomically: true, encoding: .utf8)
                let parsed = try runProcess("/usr/bin/env", ["zsh", "-n", folder + "/_proofkit"])
                #expect(parsed.status == 0, "\(parsed.stderr)")
            }
        }
        if TestEnvironment.hasTool("fish") {
            try withTemporaryFolder { folder in
                try fish.stdout.write(toFile: folder + "/proofkit.fish", atomically: true, encoding: .utf8)
                let complete = { (line: String) throws -> String in
                    try runProcess(
                        "/usr/bin/env",
                        ["fish", "--no-config", "-c", "source \(folder)/proofkit.fish; complete -C'\(line)'"],
                        currentDirectory: folder
                    ).stdout
                }
                #expect(try complete("proofkit tri").hasPrefix("trim\t"))
                #expect(try complete("proofkit trim --no").hasPrefix("--normalize\t"))
                let duaWords = Set(
                    try complete("proofkit dua ").split(separator: "\n").map {
                        $0.split(separator: "\t").first.map(String.init) ?? ""
                    })
                #expect(duaWords.isSuperset(of: ["list", "show", "check"]), "\(duaWords)")
            }
        }
        let unknown = try TestEnvironment.runProofkit(["help", "completion", "tcsh"])
        #expect(unknown.status == 64 && unknown.stderr.contains("bash, zsh, fish"))
    }

    // MARK: Issue 34

    @Test("bash: help completion offers the shells; option values are completed from their declarations")
    func bashValues() throws {
        #expect(Set(try bashCompletions(["proofkit", "help", "completion", ""])) == ["bash", "zsh", "fish"])
        #expect(try bashCompletions(["proofkit", "help", "completion", "z"]) == ["zsh"])
        #expect(Set(try bashCompletions(["proofkit", "help", "ex"])) == ["exit-codes"])
        #expect(Set(try bashCompletions(["proofkit", "mat", "--engine", ""])) == ["lite0", "lite0-fp32", "clip"])
        #expect(Set(try bashCompletions(["proofkit", "mat", "--rule", ""])) == ["class-or-head", "class"])
        #expect(Set(try bashCompletions(["proofkit", "voice", "--vad", ""])) == ["energy", "silero", "both"])
        #expect(try bashCompletions(["proofkit", "times", "--method", "ms"]) == ["msc"])
        #expect(try bashCompletions(["proofkit", "plan", "--madhab", "h"]) == ["hanafi"])
        // A free value (a file) is still left to bash's file names.
        #expect(try bashCompletions(["proofkit", "mat", "--enrol", ""]).isEmpty)
    }

    @Test("zsh and fish complete option values and help completion's shells; fish says no 'see below'")
    func zshAndFishValues() throws {
        let zsh = try TestEnvironment.runProofkit(["help", "completion", "zsh"]).stdout
        #expect(
            zsh.contains("--engine[lite0 (int8, default), lite0-fp32 or clip]:NAME:(lite0 lite0-fp32 clip)'"), "\(zsh)")
        #expect(zsh.contains(":MODE:(energy silero both)'"))
        #expect(zsh.contains("_values 'shell' bash zsh fish"))
        #expect(!zsh.contains("see below"))
        let fish = try TestEnvironment.runProofkit(["help", "completion", "fish"]).stdout
        #expect(!fish.contains("see below"), "fish shows help with nothing below it")
        try #require(TestEnvironment.hasTool("fish"), "fish is installed by .ci/setup")
        try withTemporaryFolder { folder in
            try fish.write(toFile: folder + "/proofkit.fish", atomically: true, encoding: .utf8)
            func words(_ line: String) throws -> Set<String> {
                let out = try runProcess(
                    "/usr/bin/env",
                    ["fish", "--no-config", "-c", "source \(folder)/proofkit.fish; complete -C'\(line)'"],
                    currentDirectory: folder
                ).stdout
                return Set(out.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") })
            }
            #expect(try words("proofkit mat --engine ") == ["lite0", "lite0-fp32", "clip"])
            #expect(try words("proofkit voice --vad ") == ["energy", "silero", "both"])
            #expect(try words("proofkit help completion ") == ["bash", "zsh", "fish"])
            #expect(try words("proofkit times --method ").isSuperset(of: ["mwl", "isna", "msc", "custom"]))
        }
    }

    @Test("every choice a completion offers is accepted by its command")
    func choicesAreAccepted() throws {
        let place = ["--lat", "51.5", "--lon", "-0.13", "--tz", "Europe/London", "--days", "1"]
        for option in ["method", "madhab", "high-lat", "polar", "rounding", "shafaq"] {
            let spec = try #require(try PrayerOptionsProbe.choices(option))
            for choice in spec {
                var extra: [String] = []
                if choice == "custom" { extra = ["--fajr-angle", "18", "--isha-angle", "17"] }
                let result = try TestEnvironment.runProofkit(["times"] + place + ["--\(option)", choice] + extra)
                #expect(result.status == 0, "times --\(option) \(choice): \(result.stderr)")
            }
        }
    }

    @Test("the man page and the README name PROOFKIT_ALARM_DIR, XDG_STATE_HOME, XDG_CACHE_HOME and duas.json")
    func environmentDocumented() throws {
        let page = try TestEnvironment.runProofkit(["help", "man"]).stdout
        let readme = try String(
            contentsOf: TestEnvironment.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let environment =
            try #require(readme.components(separatedBy: "## Environment").dropFirst().first)
            .components(separatedBy: "\n## ").first ?? ""
        for name in [
            "PROOFKIT_ALARM_DIR", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", ".config/proofkit/duas.json",
        ] {
            #expect(page.contains(name), "the man page lacks \(name)")
            #expect(environment.contains(name), "the README's Environment table lacks \(name)")
        }
    }

    @Test("--help lines the summaries up in one column, transcribe's too")
    func helpAligned() throws {
        let help = try TestEnvironment.runProofkit(["--help"]).stdout
        let rows = help.split(separator: "\n").filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }
        let columns = Set(
            rows.compactMap { row -> Int? in
                let name = row.dropFirst(2).prefix { $0 != " " }
                let rest = row.dropFirst(2 + name.count)
                return 2 + name.count + rest.prefix { $0 == " " }.count
            })
        #expect(rows.contains { $0.hasPrefix("  transcribe ") })
        #expect(columns.count == 1, "summaries start at columns \(columns.sorted())")
    }
}

/// The choices `times` declares for an option, read from its completion script (the same
/// declarations as --help).
private enum PrayerOptionsProbe {
    static func choices(_ option: String) throws -> [String]? {
        let fish = try TestEnvironment.runProofkit(["help", "completion", "fish"]).stdout
        let line = fish.split(separator: "\n").first {
            $0.contains("'__fish_seen_subcommand_from times' -l \(option) ")
        }
        guard let line, let start = line.range(of: " -a '") else { return nil }
        return line[start.upperBound...].prefix { $0 != "'" }.split(separator: " ").map(String.init)
    }
}

/// `.ci/install` and `.ci/package`: an installed tree works from any folder with an empty
/// environment, and the .deb unpacks into one.
@Suite("install and package", .enabled(if: hasSetUp), .serialized, .offThePool)
struct InstallEndToEndTests {
    /// Runs an installed binary with nothing in the environment but PATH, from `folder`.
    func runInstalled(_ binary: String, _ arguments: [String], in folder: String) throws -> ProcessResult {
        try runProcess("/usr/bin/env", ["-i", "PATH=/usr/bin:/bin", binary] + arguments, currentDirectory: folder)
    }

    func checkTree(prefix: String) throws {
        let binary = prefix + "/bin/proofkit"
        try withTemporaryFolder { elsewhere in
            let doctor = try runInstalled(binary, ["doctor", "--json"], in: elsewhere)
            #expect(doctor.status == 0, "\(doctor.stdout) \(doctor.stderr)")
            let report = try #require(try JSONSerialization.jsonObject(with: doctor.stdoutData) as? [String: Any])
            #expect((report["model_folders"] as? [String])?.first == prefix + "/share/proofkit/models")
            #expect(
                ((report["onnxruntime"] as? [String: Any])?["library"] as? String)?.hasPrefix(prefix + "/lib/proofkit/")
                    == true)
            let models = try #require(report["models"] as? [[String: Any]])
            #expect(models.count >= 5 && models.allSatisfy { $0["status"] as? String == "verified" })

            let photo = TestEnvironment.fixture("images/demo_mat.jpg")
            let mat = try runInstalled(binary, ["mat", "--json", photo], in: elsewhere)
            #expect(mat.status == 0, "\(mat.stderr)")
            #expect(mat.stdout.contains("\"verdict\":\"accepted\""), "\(mat.stdout)")
            let voice = try runInstalled(
                binary, ["voice", TestEnvironment.fixture("speech_ar_quran_16k.wav"), "--json"], in: elsewhere)
            #expect(voice.status == 0, "\(voice.stderr)")
            let demo = try runInstalled(binary, ["demo"], in: elsewhere)
            #expect(demo.status == 0, "\(demo.stderr)")
            #expect(
                demo.stdout.contains("check: accepted") && demo.stdout.contains("accepted (score 0."), "\(demo.stdout)")
            #expect(!demo.stdout.contains("skipped: the room-noise"), "\(demo.stdout)")
            // The man page and completions are where man and the shells look.
            for file in [
                "share/man/man1/proofkit.1.gz", "share/bash-completion/completions/proofkit",
                "share/zsh/vendor-completions/_proofkit", "share/fish/vendor_completions.d/proofkit.fish",
                "share/doc/proofkit/THIRD_PARTY_NOTICES.md", "share/doc/proofkit/onnxruntime/LICENSE",
            ] {
                #expect(FileManager.default.fileExists(atPath: prefix + "/" + file), "missing \(file)")
            }
            // The alarm service's systemd user unit runs the installed binary.
            let unit =
                (try? String(contentsOfFile: prefix + "/lib/systemd/user/proofkit-alarm.service", encoding: .utf8))
                ?? ""
            #expect(unit.contains("/bin/proofkit alarm run\n") && unit.contains("Restart=always"), "\(unit)")
        }
    }

    /// On a CPU other than the one that built it, an installed tree makes its own `.ort` on first
    /// use, in the user's cache, and uses it from then on. (The other CPU is simulated by changing
    /// the `cpu` that the installed manifest records for the build's `.ort` files.)
    func checkOptimizedModelCache(prefix: String) throws {
        let manifestPath = prefix + "/share/proofkit/models/manifest.json"
        let manifest = try String(contentsOfFile: manifestPath, encoding: .utf8)
        let otherCPU = manifest.replacingOccurrences(
            of: #""cpu": *"[^"]*""#, with: #""cpu": "aarch64-0000000000000000""#, options: .regularExpression)
        #expect(otherCPU != manifest, "the manifest records no cpu for the .ort files")
        try otherCPU.write(toFile: manifestPath, atomically: true, encoding: .utf8)
        try withTemporaryFolder { cache in
            let photo = TestEnvironment.fixture("images/demo_mat.jpg")
            func judge() throws -> String {
                let result = try runProcess(
                    "/usr/bin/env",
                    [
                        "-i", "PATH=/usr/bin:/bin", "XDG_CACHE_HOME=" + cache, prefix + "/bin/proofkit", "mat",
                        "--verbose",
                        photo,
                    ])
                #expect(result.status == 0, "\(result.stderr)")
                #expect(result.stdout.contains(": accepted"), "\(result.stdout)")
                return result.stdout
            }
            let first = try judge()
            #expect(
                first.contains("model: " + prefix + "/share/proofkit/models/efficientnet_lite0_int8.onnx"), "\(first)")
            let made = try FileManager.default.contentsOfDirectory(atPath: cache + "/proofkit/ort")
            #expect(
                made.filter { $0.hasSuffix(".ort") }.count == 1 && made.filter { $0.hasSuffix(".ort.json") }.count == 1,
                "\(made)")
            #expect(!made.contains { $0.contains(".tmp-") })
            let second = try judge()
            #expect(second.contains("model: " + cache + "/proofkit/ort/efficientnet_lite0_int8-"), "\(second)")
            // A damaged cached copy is never used: it is dropped, the .onnx judges, and a new copy is made.
            let cached = cache + "/proofkit/ort/" + (made.first { $0.hasSuffix(".ort") } ?? "")
            var bytes = try Data(contentsOf: URL(fileURLWithPath: cached))
            bytes[bytes.count / 2] ^= 0xFF
            try bytes.write(to: URL(fileURLWithPath: cached))
            let damaged = try runProcess(
                "/usr/bin/env",
                ["-i", "PATH=/usr/bin:/bin", "XDG_CACHE_HOME=" + cache, prefix + "/bin/proofkit", "mat", photo])
            #expect(damaged.status == 0 && damaged.stdout.contains(": accepted"), "\(damaged.stdout) \(damaged.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: cached)) != bytes, "the damaged copy was not replaced")
            #expect(try judge().contains("model: " + cache + "/proofkit/ort/efficientnet_lite0_int8-"))
            try manifest.write(toFile: manifestPath, atomically: true, encoding: .utf8)
        }
    }

    @Test("bash .ci/install --prefix DIR: mat, voice, demo and doctor work from any folder with env -i")
    func prefixInstall() throws {
        try withTemporaryFolder { prefix in
            let install = try runProcess("/bin/bash", [root + "/.ci/install", "--prefix", prefix])
            #expect(install.status == 0, "\(install.stderr)")
            try checkTree(prefix: prefix)
            try checkOptimizedModelCache(prefix: prefix)
            // A relative prefix is refused, not installed somewhere surprising.
            let relative = try runProcess("/bin/bash", [root + "/.ci/install", "--prefix", "relative/dir"])
            #expect(relative.status == 64 && relative.stderr.contains("absolute"))
        }
    }

    @Test(
        "bash .ci/package: a .deb with its dependencies that unpacks (dpkg -x) into a working tree",
        .enabled(if: TestEnvironment.hasTool("dpkg-deb"), "dpkg-deb is not installed"))
    func debianPackage() throws {
        try withTemporaryFolder { folder in
            let build = try runProcess(
                "/bin/bash", [root + "/.ci/package", "--out", folder], environment: ["PROOFKIT_DEB_COMPRESSION": "gzip"]
            )
            #expect(build.status == 0, "\(build.stderr)")
            let deb = build.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(deb.hasSuffix(".deb") && FileManager.default.fileExists(atPath: deb))
            let fields = try runProcess("/usr/bin/dpkg-deb", ["--field", deb])
            #expect(fields.stdout.contains("Package: proofkit"))
            for library in [
                "libsndfile1", "libasound2", "libturbojpeg0", "libpng16-16", "libsqlite3-0", "libavformat59",
                "libavcodec59", "libavutil57", "libswscale6",
            ] {
                #expect(fields.stdout.contains(library), "Depends lacks \(library): \(fields.stdout)")
            }
            let contents = try runProcess("/usr/bin/dpkg-deb", ["--contents", deb])
            #expect(
                contents.stdout.contains("./usr/bin/proofkit")
                    && contents.stdout.contains("./usr/share/doc/proofkit/copyright"))
            let scratch = folder + "/root"
            let unpacked = try runProcess("/usr/bin/dpkg", ["-x", deb, scratch])
            #expect(unpacked.status == 0, "\(unpacked.stderr)")
            try checkTree(prefix: scratch + "/usr")
        }
    }
}

private let hasModels = FileManager.default.fileExists(atPath: root + "/Models/generated/manifest.json")

/// `proofkit doctor`: what was found, verified by reading the models again.
@Suite("proofkit doctor", .enabled(if: hasBinary && hasModels), .offThePool)
struct DoctorTests {
    @Test("in the build tree everything is found and verified; a damaged model is exit 78, no ONNX Runtime exit 69")
    func doctor() throws {
        let healthy = try TestEnvironment.runProofkit(["doctor", "--json"])
        #expect(healthy.status == 0, "\(healthy.stdout)")
        let report = try #require(try JSONSerialization.jsonObject(with: healthy.stdoutData) as? [String: Any])
        #expect(report["healthy"] as? Bool == true)
        let libraries = try #require(report["libraries"] as? [[String: Any]])
        #expect(
            libraries.map { $0["soname"] as? String } == [
                "libsndfile.so.1", "libasound.so.2", "libturbojpeg.so.0", "libpng16.so.16", "libsqlite3.so.0",
                "libavutil.so.57", "libavcodec.so.59", "libavformat.so.59", "libswscale.so.6",
            ])
        let models = try #require(report["models"] as? [[String: Any]])
        #expect(
            models.contains {
                $0["name"] as? String == "efficientnet_lite0_int8.onnx" && $0["status"] as? String == "verified"
            })

        // A copy of the models with one byte of the class names changed.
        try withTemporaryFolder { folder in
            for name in ["manifest.json", "imagenet_classes.txt", "silero_vad.onnx"] {
                try FileManager.default.copyItem(
                    atPath: root + "/Models/generated/" + name, toPath: folder + "/" + name)
            }
            var names = try Data(contentsOf: URL(fileURLWithPath: folder + "/imagenet_classes.txt"))
            names[10] ^= 0x20
            try names.write(to: URL(fileURLWithPath: folder + "/imagenet_classes.txt"))
            let damaged = try TestEnvironment.runProofkit(["doctor"], environment: ["PROOFKIT_MODELS": folder])
            #expect(damaged.status == 78)
            #expect(damaged.stdout.contains("imagenet_classes.txt: mismatch"), "\(damaged.stdout)")
            #expect(damaged.stdout.contains("silero_vad.onnx: verified"))
            #expect(damaged.stdout.contains("efficientnet_lite0_int8.onnx: missing"))
            #expect(damaged.stdout.contains("model folders (from PROOFKIT_MODELS): \(folder)"))

            let noRuntime = try TestEnvironment.runProofkit(
                ["doctor"], environment: ["PROOFKIT_ORT_LIBRARY": folder + "/none.so"])
            #expect(noRuntime.status == 69)
            #expect(noRuntime.stdout.contains("ONNX Runtime: not available: "), "\(noRuntime.stdout)")
        }
    }
}
