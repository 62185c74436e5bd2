import Proofkit
import ProofkitCore

/// `proofkit doctor`: what this proofkit found on this machine, and where.
enum DoctorCommand: Subcommand {
    static let name = "doctor"
    static let summary =
        "say what proofkit found on this machine and where: ONNX Runtime, models (checksums verified), C libraries, audio devices, cameras, the alarm store"
    static let synopsis = "proofkit doctor [--json]"
    static let discussion = """
        Loads ONNX Runtime and the four C libraries the way the commands do, reads every model
        file that the models folder's manifest.json lists and checks its SHA-256, and lists the
        ALSA PCM devices (of PROOFKIT_ALSA_CONFIG when set) and the cameras with their formats and
        sizes (as 'proofkit camera list'); and says where the alarm store is, whether a service
        runs on it, and the room left on its disk (under 16 MiB is called low). Nothing is written.

        Where things are looked for (the first that has them wins):
          models:       $PROOFKIT_MODELS (then only it), <bin>/../share/proofkit/models,
                        Models/generated above the executable, ./Models/generated
          ONNX Runtime: $PROOFKIT_ORT_LIBRARY (then only it), .deps/onnxruntime above the
                        executable, <bin>/../lib/proofkit, the system's libonnxruntime.so.1
        An explicit setting wins over what is installed, so a test or a second model set can be
        chosen without reinstalling. Models/generated and .deps/onnxruntime are used only where
        they are real folders of this user's or root's: one that another user made (in /tmp, say)
        could hold a planted model or library.

        Exit status: 0 when everything was found and verified, 69 when something is missing (a
        library, ONNX Runtime, the models), 78 when a model's checksum does not match.

        JSON (--json): {"version": str, "executable": str|null, "installed_share": str|null,
          "onnxruntime": {"version": str, "library": str}|{"error": str},
          "model_folders": [str], "model_folders_from_environment": bool,
          "models": [{"name": str, "path": str|null,
                      "status": "verified"|"missing"|"mismatch"|"unlisted"|"unreadable"}],
          "libraries": [{"name": str, "soname": str, "package": str, "loaded": bool, "error": str|null}],
          "audio_devices": [str]|{"error": str}, "key_devices": [{"path","name","readable"}], "healthy": bool,
          "alarm_store": {"folder": str, "exists": bool, "service": "running"|"stopped",
                          "free_bytes": int|null},
          "cameras": [as in 'proofkit camera list --json']}

        Examples:
          proofkit doctor
          PROOFKIT_MODELS=/opt/models proofkit doctor --json
        """
    static let options: [OptionSpec] = [
        .flag("json", help: "one JSON object on stdout")
    ]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        let report = InstallationReport(environment: io.environment)
        let cameras = Cameras.list()
        if arguments.has("json") {
            guard case .object(var object) = json(for: report) else { return .failure }
            object["cameras"] = .array(cameras.map(CameraOutput.json))
            io.printJSON(.object(object))
        } else {
            var out = lines(for: report)
            out.insert(contentsOf: CameraOutput.lines(cameras), at: max(0, out.count - 1))
            for line in out { io.print(line) }
        }
        if report.models.contains(where: { $0.status == "mismatch" }) { return .modelInvalid }
        return report.isHealthy ? .success : .unavailable
    }

    static func lines(for report: InstallationReport) -> [String] {
        var out = [
            "proofkit \(ProofkitVersion.string)", "executable: \(report.executable.map(quotedPath) ?? "unknown")",
        ]
        if let share = report.installedShare { out.append("installed data: \(quotedPath(share))") }
        switch report.onnxRuntime {
        case .success(let info): out.append("ONNX Runtime \(info.version): \(quotedPath(info.libraryPath))")
        case .failure(let error): out.append("ONNX Runtime: not available: \(error.message)")
        }
        let from = report.modelFoldersFromEnvironment ? " (from PROOFKIT_MODELS)" : ""
        let folders = report.modelFolders.map(quotedPath).joined(separator: ", ")
        out.append("model folders\(from): \(folders.isEmpty ? "none" : folders)")
        if report.models.isEmpty { out.append("  no models found: run 'bash .ci/setup' or set PROOFKIT_MODELS") }
        for model in report.models {
            out.append("  \(model.name): \(model.status)\(model.path.map { " (\(quotedPath($0)))" } ?? "")")
        }
        out.append("C libraries (loaded on first use):")
        for library in report.libraries {
            out.append(
                "  \(library.name) (\(library.soname)): \(library.failure.map { "not available: \($0)" } ?? "ok")")
        }
        switch report.audioDevices {
        case .success(let names): out.append("ALSA devices: \(names.isEmpty ? "none" : names.joined(separator: ", "))")
        case .failure(let error): out.append("ALSA devices: not available: \(error.message)")
        }
        out.append(
            "keys that can stop a ring (alarm run --input): "
                + (report.keyDevices.isEmpty
                    ? "none (no /dev/input/event*)"
                    : report.keyDevices.map {
                        "\($0.path) \(quotedPath($0.name))\($0.readable ? "" : " (not readable: join the 'input' group)")"
                    }.joined(separator: ", ")))
        out.append(alarmStoreLine(report.alarmStore))
        out.append(
            report.isHealthy ? "everything proofkit needs was found and verified" : "something is missing: see above")
        return out
    }

    /// "alarm store: FOLDER (no store yet | service running | service not running); N GB free on its
    /// disk", with a warning when the disk is nearly full.
    static func alarmStoreLine(_ store: InstallationReport.AlarmStoreSummary) -> String {
        let state =
            !store.exists ? "no store yet" : store.serviceRunning ? "service running" : "service not running"
        guard let free = store.freeBytes else { return "alarm store: \(quotedPath(store.folder)) (\(state))" }
        let room =
            free >= 1_000_000_000
            ? decimalText(Double(free) / 1e9, places: 1) + " GB"
            : decimalText(Double(free) / 1e6, places: free < 10_000_000 ? 1 : 0) + " MB"
        let low =
            free < InstallationReport.AlarmStoreSummary.lowSpace
            ? " (low: on a full disk the service still rings and takes proofs, but saves them only once there is room)"
            : ""
        return "alarm store: \(quotedPath(store.folder)) (\(state)); \(room) free on its disk\(low)"
    }

    /// A path for a terminal line: control characters (an ANSI escape in a folder name) are shown
    /// as `\u{..}` instead of being sent to the terminal.
    static func quotedPath(_ path: String) -> String {
        var out = ""
        for scalar in path.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static func json(for report: InstallationReport) -> JSONValue {
        let runtime: JSONValue
        switch report.onnxRuntime {
        case .success(let info):
            runtime = .object(["version": .string(info.version), "library": .string(info.libraryPath)])
        case .failure(let error): runtime = .object(["error": .string(error.message)])
        }
        let devices: JSONValue
        switch report.audioDevices {
        case .success(let names): devices = .array(names.map { .string($0) })
        case .failure(let error): devices = .object(["error": .string(error.message)])
        }
        return .object([
            "version": .string(ProofkitVersion.string),
            "executable": report.executable.map { .string($0) } ?? .null,
            "installed_share": report.installedShare.map { .string($0) } ?? .null,
            "onnxruntime": runtime,
            "alarm_store": .object([
                "folder": .string(report.alarmStore.folder), "exists": .bool(report.alarmStore.exists),
                "service": .string(report.alarmStore.serviceRunning ? "running" : "stopped"),
                "free_bytes": report.alarmStore.freeBytes.map { .int(Int($0)) } ?? .null,
            ]),
            "model_folders": .array(report.modelFolders.map { .string($0) }),
            "model_folders_from_environment": .bool(report.modelFoldersFromEnvironment),
            "models": .array(
                report.models.map { model in
                    .object([
                        "name": .string(model.name), "path": model.path.map { .string($0) } ?? .null,
                        "status": .string(model.status),
                    ])
                }),
            "libraries": .array(
                report.libraries.map { library in
                    .object([
                        "name": .string(library.name), "soname": .string(library.soname),
                        "package": .string(library.debianPackage), "loaded": .bool(library.failure == nil),
                        "error": library.failure.map { .string($0) } ?? .null,
                    ])
                }),
            "audio_devices": devices,
            "key_devices": .array(
                report.keyDevices.map {
                    .object(["path": .string($0.path), "name": .string($0.name), "readable": .bool($0.readable)])
                }),
            "healthy": .bool(report.isHealthy),
        ])
    }
}
