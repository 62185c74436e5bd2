import Inference
import ProofkitCore
internal import ProofkitSystem

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// ONNX Runtime-format copies of the photo models, made on first use by an installed proofkit.
///
/// The models build saves each Lite0 model in ONNX Runtime's format, optimised for the CPU it runs
/// on (``ModelStore/optimizedModel(for:modelPath:modelSHA256:manifest:)``). An installed tree
/// (`.ci/install`, the Debian package) may run on another CPU than the one that built it; there the
/// build's `.ort` does not fit and proofkit would create every session from the `.onnx`, about
/// twice as slowly. So an installed proofkit makes the `.ort` for this machine once, the first
/// time it loads the `.onnx`, into `$XDG_CACHE_HOME/proofkit/ort` (default `~/.cache/proofkit/ort`),
/// with a small JSON record beside it: its SHA-256, the `.onnx` it came from, this CPU and the
/// ONNX Runtime release. A later run uses it only when all four match, and checks its SHA-256 like
/// any model's. The cache is best effort: when it cannot be written nothing fails and the `.onnx`
/// is used. A build tree never writes it (its own build makes the `.ort`).
enum OptimizedModelCache {
    /// Whether the model at `modelPath` is an installed tree's (`<prefix>/share/proofkit/models`
    /// beside the running executable's `bin/`): only those use the cache.
    static func isUsed(forModelAt modelPath: String) -> Bool {
        guard let share = installedShareFolder() else { return false }
        return modelPath.hasPrefix(share + "/models/")
    }

    /// The cache folder, or `nil` when there is no home to put it in.
    static func folder(environment: [String: String]) -> String? {
        UserFolders.cache(environment).map { $0 + "/proofkit/ort" }
    }

    /// The cached file's name: the model's `.ort` name with the source digest, CPU and runtime in
    /// it, so that models, machines and releases never share a file.
    static func fileName(for engine: PhotoEngine, modelSHA256: String, runtime: String) -> String? {
        guard let name = engine.optimizedModelFile else { return nil }
        let stem = name.hasSuffix(".ort") ? String(name.dropLast(4)) : name
        return "\(stem)-\(modelSHA256.prefix(16))-\(ModelStore.cpuFingerprint)-ort\(runtime).ort"
    }

    /// The cached `.ort` for this model, CPU and runtime, when there is one whose record fits.
    static func lookup(for engine: PhotoEngine, modelSHA256: String, in folder: String) -> OptimizedPhotoModel? {
        guard let runtime = try? OnnxRuntime.load().version,
            let name = fileName(for: engine, modelSHA256: modelSHA256, runtime: runtime)
        else { return nil }
        let path = folder + "/" + name
        guard let data = try? POSIX.readWhole(path + ".json", limit: 4095),
            let record = JSONNode(bytes: data), let digest = record["sha256"]?.string,
            record["source_sha256"]?.string == modelSHA256.lowercased(),
            record["cpu"]?.string == ModelStore.cpuFingerprint, record["onnxruntime"]?.string == runtime,
            FileKind(atPath: path) == .other
        else { return nil }
        return OptimizedPhotoModel(path: path, sha256: digest, runtimeVersion: runtime)
    }

    /// Makes the `.ort` of an `.onnx` already read and checked (`bytes`), for this machine: a
    /// session at optimisation level "all" saves it under a temporary name, which is renamed into
    /// place once its SHA-256 is known; then the record is written (also renamed into place).
    /// - Returns: whether the cache now has it. Never throws: a cache that cannot be written
    ///   leaves the `.onnx` in use.
    @discardableResult
    static func store(for engine: PhotoEngine, bytes: [UInt8], modelSHA256: String, in folder: String) -> Bool {
        guard let runtime = try? OnnxRuntime.load().version,
            let name = fileName(for: engine, modelSHA256: modelSHA256, runtime: runtime),
            makeFolders(folder)
        else { return false }
        let path = folder + "/" + name
        let temporary = "\(path).tmp-\(POSIX.processID)"
        defer { POSIX.remove(temporary) }
        do {
            let session = try InferenceSession(
                bytes: bytes, options: InferenceSession.Options(graphOptimization: .all, optimizedModelPath: temporary))
            session.close()
            let digest = try ModelFile.sha256(ofFileAt: temporary)
            guard POSIX.moveAtomically(temporary, onto: path) == nil else { return false }
            let record =
                "{\"format\":\"proofkit-ort-cache\",\"sha256\":\"\(digest)\",\"source_sha256\":\"\(modelSHA256.lowercased())\","
                + "\"cpu\":\"\(ModelStore.cpuFingerprint)\",\"onnxruntime\":\"\(runtime)\"}\n"
            return (try? AtomicFile.write(Array(record.utf8), to: path + ".json")) != nil
        } catch {
            return false
        }
    }

    /// Removes a cached copy (and its record) that could not be used.
    static func discard(_ cached: OptimizedPhotoModel) {
        POSIX.remove(cached.path + ".json")
        POSIX.remove(cached.path)
    }

    /// Creates `folder` and the folders above it (mode 0700: a cache is the user's own).
    static func makeFolders(_ folder: String) -> Bool {
        if FileKind(atPath: folder) == .folder { return true }
        var prefix = ""
        for part in folder.split(separator: "/") {
            prefix += "/" + part
            if FileKind(atPath: prefix) == nil, case .failure(let failure) = POSIX.makeFolder(prefix, mode: 0o700),
                failure.code != Errno.exists.code
            {
                return false
            }
        }
        return FileKind(atPath: folder) == .folder
    }
}
