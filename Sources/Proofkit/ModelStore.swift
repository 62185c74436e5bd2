import Inference
public import ProofkitCore
internal import ProofkitSystem

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where the models are (the photo models, Silero VAD, Whisper and BlazePose), and the digests
/// they must have, with the ONNX Runtime library that runs them.
///
/// The folder is looked for, in this order:
/// 1. the folder in the environment variable `PROOFKIT_MODELS` (``environmentVariable``), when set:
///    then only that folder is used;
/// 2. `../share/proofkit/models` beside the running executable's folder, where `.ci/install` and
///    the Debian package put them (an installed `bin/proofkit` finds its own models);
/// 3. `Models/generated` in the folder of the running executable or the nearest folder above it
///    that has one with the file (a build inside the package finds the package's models);
/// 4. `Models/generated` under the current folder.
///
/// In steps 3 and 4, `Models` and `Models/generated` must each be a real folder (not a symbolic
/// link) owned by the user running proofkit or by root: run from a shared folder such as /tmp,
/// another user could otherwise plant a model there, with the `manifest.json` that vouches for it.
///
/// The SHA-256 a file must have comes from the folder's `manifest.json` (written by
/// `Models/build.sh` from the files it made; the int8 model's bytes differ between CPU
/// architectures), else from the digests committed in `Models/models.sha256`, which are compiled
/// into proofkit (``committedSHA256``). A file with neither is refused.
public struct ModelStore: Sendable, Equatable {
    /// `PROOFKIT_MODELS`: a folder to use instead of the usual search.
    public static let environmentVariable = "PROOFKIT_MODELS"
    /// The models folder relative to the package root.
    public static let relativeFolder = "Models/generated"

    /// The digests of `Models/models.sha256` (the files on every machine, the int8 model on
    /// x86_64; `mat_head.json` is `Models/mat_head.json`, copied by the build). A test checks
    /// that this table equals the committed file.
    public static let committedSHA256: [String: String] = [
        "clip_standin.onnx": "f57b5c5a96bfcc816139990a90e31056c7846355ce98be2797f90eb4326a67d1",
        "clip_standin_prompts.json": "ad128a3c5aef3db52c0973626f271ad1c9d15441be6d08fbf00aa4c9aee66958",
        "efficientnet_lite0_fp32.onnx": "fd1def0b110b35a9894858ce29eec14d5c1d0c1b0747e4047c2d9c3fe7cf2db2",
        "efficientnet_lite0_int8.onnx": "3bf010746fe776457c58a6f91081c42e032c329a6c6c96ef3ed42dea242b4d86",
        "imagenet_classes.txt": "4eb3da435cf544e4a6f390f62c84cb9c9bb68cf8b14e97f8a063452382e5efd2",
        "mat_head.json": "a4bb3bae9abd70e5eb593ccf199e731f2303f1563bb5bf9e691a061752f1585d",
        "pose_detection.onnx": "7e348b499b931d85c76f05d322cedc9bb8b8eccd9a3b487c3d38183605e5ac87",
        "pose_landmark_full.onnx": "a934f4e9e5fb25e4ec9a6fca08b3f7cf353caef9683adcc0832106f12fec9ad2",
        "pose_pipeline.json": "2afbb6a2dd2827ffa5d56180f48d53068e53ee5e59d9584f940a82fbcd4c9789",
        "silero_vad.onnx": "1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3",
    ]

    /// The folders searched, in order (see the type's documentation).
    public let folders: [String]
    /// Whether the folder came from ``environmentVariable``.
    public let isFromEnvironment: Bool
    /// The ONNX Runtime library given to ``init(folder:onnxRuntimeLibrary:)``; `nil` when the
    /// runtime is found by its usual search (`PROOFKIT_ORT_LIBRARY`, set-up's copy, the system's).
    public let onnxRuntimeLibrary: String?
    /// The per-user cache of optimised models, from the environment the store was made from
    /// (`XDG_CACHE_HOME`, `HOME`: ``init(environment:executablePath:currentDirectory:)``), so
    /// nothing reads the process's environment on the side; `nil` for an explicit folder.
    let optimizedModelCache: String?

    /// The search for this process.
    /// - Parameters:
    ///   - environment: the process environment (for ``environmentVariable``).
    ///   - executablePath: the running executable (default `/proc/self/exe`); `nil` skips step 2.
    ///   - currentDirectory: the current folder (`nil`, the default: the process's).
    public init(
        environment: [String: String], executablePath: String? = ModelStore.currentExecutablePath(),
        currentDirectory: String? = nil
    ) {
        let currentDirectory = currentDirectory ?? POSIX.currentFolder() ?? "."
        optimizedModelCache = OptimizedModelCache.folder(environment: environment)
        if let explicit = environment[Self.environmentVariable], !explicit.isEmpty {
            folders = [explicit]
            isFromEnvironment = true
            onnxRuntimeLibrary = nil
            return
        }
        var found: [String] = []
        if let share = installedShareFolder(executablePath: executablePath),
            FileKind(atPath: share + "/models") == .folder
        {
            found.append(share + "/models")
        }
        for folder in executablePath.map(foldersUpward(from:)) ?? [] {
            let candidate = folder.appendingPathComponent(Self.relativeFolder).path
            if POSIX.isOwnFolder(candidate, components: 2) { found.append(candidate) }
        }
        let local = URL(fileURLWithPath: currentDirectory).appendingPathComponent(Self.relativeFolder)
            .standardizedFileURL.path
        if !found.contains(local), POSIX.isOwnFolder(local, components: 2) { found.append(local) }
        folders = found
        isFromEnvironment = false
        onnxRuntimeLibrary = nil
    }

    /// The models in `folder` alone, with no search and no environment: for an app that keeps its
    /// models where it chooses (the CLI's default is ``init(environment:executablePath:currentDirectory:)``).
    /// - Parameter folder: the folder of the model files (and, optionally, their `manifest.json`).
    public init(folder: String) {
        folders = [folder]
        isFromEnvironment = false
        onnxRuntimeLibrary = nil
        optimizedModelCache = nil
    }

    /// The models in `folder` alone, run by the ONNX Runtime library at `onnxRuntimeLibrary`:
    /// nothing is searched and no environment variable is read, for an app that ships both.
    ///
    /// The library is loaded now. ONNX Runtime is process-wide and never unloaded, so make this
    /// store before anything else in the process opens a model; every ``PhotoJudge``,
    /// ``PoseEstimator``, ``WhisperRecognizer`` and ``SileroVoiceDetector`` then runs on it.
    /// - Parameters:
    ///   - folder: the folder of the model files (and, optionally, their `manifest.json`).
    ///   - onnxRuntimeLibrary: the path of a `libonnxruntime.so` file, ONNX Runtime 1.15 or newer.
    /// - Throws: `.runtimeUnavailable` (exit 69) when that file cannot be loaded, is not ONNX
    ///   Runtime or is too old; `.invalidArgument` when the process already runs ONNX Runtime
    ///   from another file.
    public init(folder: String, onnxRuntimeLibrary: String) throws(ProofkitError) {
        try OnnxRuntime.load(libraryPath: onnxRuntimeLibrary)
        folders = [folder]
        isFromEnvironment = false
        self.onnxRuntimeLibrary = onnxRuntimeLibrary
        optimizedModelCache = nil
    }

    /// The path of `name` in the first folder that has it.
    /// - Throws: `.runtimeUnavailable` (exit 69) naming the folders tried and how to make the file.
    public func locate(_ name: String) throws(ProofkitError) -> String {
        for folder in folders {
            let path = folder + "/" + name
            if FileKind(atPath: path) == .other {
                return path
            }
        }
        throw ProofkitError(
            .runtimeUnavailable, "\(name) is not installed: \(Self.howToMake(name)) (\(triedText))")
    }

    /// The folders tried, for messages.
    var triedText: String {
        let list = folders.joined(separator: ", ")
        if folders.isEmpty {
            return "found no models folder beside proofkit, nor a \(Self.relativeFolder) of this user's here"
        }
        return "looked in " + (isFromEnvironment ? "\(Self.environmentVariable)=\(list)" : list)
    }

    /// How a user makes a missing model file.
    static func howToMake(_ name: String) -> String {
        if name.hasPrefix("mobileclip") {
            return "MobileCLIP is not shipped; export it on a machine with internet and torch with "
                + "'python Models/export_mobileclip.py --checkpoint mobileclip_s0.pt --out-dir Models/generated' "
                + "(see that script's help), or use --engine lite0"
        }
        return
            "run 'bash .ci/setup' in the proofkit folder to build the models, or set \(environmentVariable) to a folder that has them"
    }

    /// The SHA-256 that the file at `path` must have: its folder's `manifest.json` entry, else
    /// the committed digest; `nil` when neither lists it.
    /// - Throws: `.modelInvalid` when the folder's `manifest.json` exists but is malformed.
    public static func expectedSHA256(ofFileAt path: String) throws(ProofkitError) -> String? {
        expectedSHA256(ofFileAt: path, manifest: try ModelsManifest.load(besideFileAt: path))
    }

    /// The SHA-256 that the file at `path` must have, from an already read manifest of its
    /// folder (`nil`: the folder has none), else the committed digest; `nil` when neither lists it.
    public static func expectedSHA256(ofFileAt path: String, manifest: ModelsManifest?) -> String? {
        let name = URL(fileURLWithPath: path).lastPathComponent
        return manifest?.entries[name]?.sha256 ?? committedSHA256[name]
    }

    /// The ONNX Runtime-format copy of the engine's model that `Models/build.sh` made on this
    /// machine, when it may stand in for the `.onnx`: it is beside `modelPath`, and the folder's
    /// `manifest.json` (`manifest`, read once by the caller) lists it with a SHA-256, the `.onnx`
    /// it was optimised from (`source_sha256` equal to `modelSHA256`), the CPU it was optimised for
    /// (`cpu`, equal to ``cpuFingerprint``) and the ONNX Runtime release that saved it
    /// (`onnxruntime`). A model optimised at ONNX Runtime's level "all" may hold layouts for one
    /// CPU's instructions, so a folder copied from another machine, or left from an older `.onnx`,
    /// gives `nil` (the `.onnx` is used).
    /// - Returns: the file, its expected SHA-256 and the runtime release that saved it; `nil` when
    ///   there is none that fits (never an error: the `.onnx` is the fallback).
    public static func optimizedModel(
        for engine: PhotoEngine, modelPath: String, modelSHA256: String, manifest: ModelsManifest?
    ) -> OptimizedPhotoModel? {
        guard let name = engine.optimizedModelFile, let entry = manifest?.entries[name],
            let digest = entry.sha256, let source = entry.sourceSHA256, let cpu = entry.cpu,
            let runtime = entry.onnxRuntime, source == modelSHA256.lowercased(), cpu == cpuFingerprint
        else { return nil }
        let path = URL(fileURLWithPath: modelPath).deletingLastPathComponent().appendingPathComponent(name).path
        guard FileKind(atPath: path) == .other else { return nil }
        return OptimizedPhotoModel(path: path, sha256: digest, runtimeVersion: runtime)
    }

    /// This CPU, as `Models/build.sh` records it for the models it optimises:
    /// `<uname -m>-<first 16 hex digits of the SHA-256 of the first "flags" (x86) or "Features"
    /// (ARM) line of /proc/cpuinfo, its words joined by single spaces>`, e.g.
    /// `x86_64-597739b0b7aedd11`.
    public static let cpuFingerprint: String = {
        let machine = POSIX.systemName().machine  // `uname -m`, e.g. x86_64 or aarch64
        let cpuinfo = readTextFile("/proc/cpuinfo") ?? ""
        let line = MachineInfo.value(of: "flags", in: cpuinfo) ?? MachineInfo.value(of: "Features", in: cpuinfo) ?? ""
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
        let digest = SHA256.hexDigest(of: Array(words.utf8))
        return "\(machine)-\(digest.prefix(16))"
    }()

    /// The running executable (`/proc/self/exe`), or `argv[0]` when that cannot be read.
    public static func currentExecutablePath() -> String? {
        POSIX.executablePath()
    }
}

/// A photo model saved in ONNX Runtime's format for this machine (see
/// ``ModelStore/optimizedModel(for:modelPath:modelSHA256:manifest:)``).
public struct OptimizedPhotoModel: Sendable, Equatable {
    /// The `.ort` file.
    public var path: String
    /// The SHA-256 it must have (from `manifest.json`), lowercase hex.
    public var sha256: String
    /// The ONNX Runtime release that saved it, e.g. `"1.32.0"`.
    public var runtimeVersion: String
}

/// A models folder's `manifest.json` (written by `Models/build.sh`), read once: for each file it
/// made, its SHA-256 and, for an ONNX Runtime-format model, what it was made from and for.
public struct ModelsManifest: Sendable, Equatable {
    /// One file's entry. Digests are lowercase hex; absent fields are `nil`.
    public struct Entry: Sendable, Equatable {
        /// `sha256`: the file's digest.
        public var sha256: String?
        /// `source_sha256`: the digest of the `.onnx` an `.ort` file was optimised from.
        public var sourceSHA256: String?
        /// `cpu`: the ``ModelStore/cpuFingerprint`` of the machine it was optimised on.
        public var cpu: String?
        /// `onnxruntime`: the ONNX Runtime release that saved it.
        public var onnxRuntime: String?
    }

    /// The manifest file.
    public let path: String
    /// The entries by file name.
    public let entries: [String: Entry]

    /// Reads the `manifest.json` in the folder of the file at `path`.
    /// - Returns: `nil` when the folder has no manifest.
    /// - Throws: `.modelInvalid` (naming the manifest) when it exists but cannot be read or is
    ///   not a proofkit models manifest.
    public static func load(besideFileAt path: String) throws(ProofkitError) -> ModelsManifest? {
        let manifest = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("manifest.json")
            .path
        guard FileKind(atPath: manifest) != nil else { return nil }
        // Read by its bytes (a models folder whose name is not UTF-8 included), at most 64 MiB.
        guard let data = try? POSIX.readWhole(manifest, limit: 64 << 20), let json = JSONNode(bytes: data),
            json["format"]?.string == "proofkit-models-manifest", let files = json["files"]?.members
        else {
            throw ProofkitError(
                .modelInvalid, "not a proofkit models manifest; rebuild with 'bash .ci/setup'", path: manifest)
        }
        var entries: [String: Entry] = [:]
        for (name, value) in files {
            for key in ["sha256", "source_sha256"] {
                guard let field = value[key] else { continue }
                guard let digest = field.string, digest.count == 64, digest.allSatisfy(\.isHexDigit) else {
                    let shown = field.string.map { "\($0.count) characters" } ?? "not a string"
                    throw ProofkitError(
                        .modelInvalid,
                        "\"\(displayText(String(name.prefix(80))))\": \"\(key)\" is not 64 hex digits (\(shown)); rebuild with 'bash .ci/setup'",
                        path: manifest)
                }
            }
            entries[name] = Entry(
                sha256: value["sha256"]?.string?.lowercased(),
                sourceSHA256: value["source_sha256"]?.string?.lowercased(),
                cpu: value["cpu"]?.string, onnxRuntime: value["onnxruntime"]?.string)
        }
        return ModelsManifest(path: manifest, entries: entries)
    }
}
