public import ProofkitCore
internal import ProofkitSystem
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The process-wide ONNX Runtime: the library, loaded at run time, and its one environment.
///
/// An app can name the library itself with ``load(libraryPath:)`` (no search, no environment).
/// Otherwise the library is looked for, in this order:
/// 1. the path in the environment variable `PROOFKIT_ORT_LIBRARY` (``libraryEnvironmentVariable``),
///    when it is set: then only that path is tried;
/// 2. the copy that set-up installs: `.deps/onnxruntime/libonnxruntime.so.*` in the folder of the
///    executable or the nearest folder above it that has one (the newest version there wins),
///    where `.deps` and `.deps/onnxruntime` are real folders (not links) owned by the user running
///    proofkit or by root: one that another user made, in /tmp say, could hold a planted library;
/// 3. an installed copy beside the executable: `<executable's folder>/../lib/proofkit/libonnxruntime.so.*`;
/// 4. the system's `libonnxruntime.so.1`, found the usual `ld.so` way.
///
/// The library must provide C API version ``pinnedAPIVersion`` (ONNX Runtime 1.15 or newer).
/// It is loaded once, the first time something needs it, and its environment is created then
/// (ORT's own logging is limited to fatal messages: proofkit reports every failure itself).
/// Neither is ever released: ORT's environment must outlive every session, and unloading a C++
/// runtime at exit is not safe.
public enum OnnxRuntime {
    /// `PROOFKIT_ORT_LIBRARY`: the path of `libonnxruntime.so` to use instead of the usual search.
    public static let libraryEnvironmentVariable = "PROOFKIT_ORT_LIBRARY"

    /// The ONNX Runtime C API version proofkit asks for (15: ONNX Runtime 1.15 or newer).
    public static var pinnedAPIVersion: Int { OrtCalls.pinnedAPIVersion }

    /// The oldest ONNX Runtime release proofkit accepts, e.g. `"1.15"`.
    public static var minimumVersion: String { "1.\(pinnedAPIVersion)" }

    /// Loads the runtime if needed and describes it.
    /// - Returns: the library's version and path.
    /// - Throws: `.runtimeUnavailable` when no usable library was found; the message lists every
    ///   path tried with the reason, and how to fix it.
    public static func load() throws(ProofkitError) -> OnnxRuntimeInfo {
        try shared.get().info
    }

    /// Whether the runtime loads (it is loaded by asking).
    public static var isAvailable: Bool {
        if case .success = shared { return true }
        return false
    }

    /// Loads ONNX Runtime from `libraryPath` alone: no search, and ``libraryEnvironmentVariable``
    /// is not read (for an app that ships its own copy, or keeps it where it chooses).
    ///
    /// The runtime is process-wide and never unloaded, so call this before anything in the process
    /// uses ONNX Runtime (opening a model, ``load()``). Once a library is loaded, this only
    /// confirms that it is the same file; after a search that found nothing, it loads.
    /// - Parameter libraryPath: the path of a `libonnxruntime.so` file, ONNX Runtime
    ///   ``minimumVersion`` or newer.
    /// - Returns: the library's version and path.
    /// - Throws: `.runtimeUnavailable` when that file cannot be loaded, is not ONNX Runtime or is
    ///   too old (the message says which); `.invalidArgument` when the process already uses ONNX
    ///   Runtime from another file.
    @discardableResult
    public static func load(libraryPath: String) throws(ProofkitError) -> OnnxRuntimeInfo {
        let result = state.withLock { state -> Result<OrtRuntime, ProofkitError> in
            if case .success(let runtime) = state {
                guard sameFile(runtime.info.libraryPath, libraryPath) else {
                    return .failure(
                        ProofkitError(
                            .invalidArgument,
                            "ONNX Runtime is already loaded from \(runtime.info.libraryPath), not \(libraryPath): "
                                + "choose the library before the first model is opened (one runtime a process)"))
                }
                return .success(runtime)
            }
            let loaded = OrtRuntime.load(from: [RuntimeLibraryCandidate(path: libraryPath, source: .explicit)])
            if case .success = loaded { state = loaded }
            return loaded
        }
        return try result.get().info
    }

    /// Whether two library paths name the same file (symbolic links followed).
    static func sameFile(_ a: String, _ b: String) -> Bool {
        a == b
            || URL(fileURLWithPath: a).resolvingSymlinksInPath().path
                == URL(fileURLWithPath: b).resolvingSymlinksInPath().path
    }

    /// The loaded runtime, or why none loaded; `nil` before the first use.
    private static let state = Mutex<Result<OrtRuntime, ProofkitError>?>(nil)

    /// The process-wide runtime: the one ``load(libraryPath:)`` loaded, else the search's (see
    /// ``OnnxRuntime``), made on first use and kept for the life of the process.
    static var shared: Result<OrtRuntime, ProofkitError> {
        state.withLock { state in
            if let state { return state }
            let candidates = libraryCandidates(
                environment: POSIX.environment(), executablePath: POSIX.executablePath())
            let loaded = OrtRuntime.load(from: candidates)
            state = loaded
            return loaded
        }
    }

    /// Where the library is looked for, in order (see ``OnnxRuntime``).
    /// - Parameters:
    ///   - environment: the process environment (for ``libraryEnvironmentVariable``).
    ///   - executablePath: the running executable, whose folder anchors the search for the copy
    ///     set-up installs; `nil` skips those places.
    /// - Returns: the candidate paths with where each came from. Only existing files are listed
    ///   for the set-up and installed copies; the environment's and the system's are always listed.
    public static func libraryCandidates(environment: [String: String], executablePath: String?)
        -> [RuntimeLibraryCandidate]
    {
        if let explicit = environment[libraryEnvironmentVariable], !explicit.isEmpty {
            return [RuntimeLibraryCandidate(path: explicit, source: .environment)]
        }
        var candidates: [RuntimeLibraryCandidate] = []
        if let executablePath {
            let folder = URL(fileURLWithPath: executablePath).deletingLastPathComponent().standardizedFileURL
            var directory = folder
            while true {
                let deps = directory.appendingPathComponent(".deps/onnxruntime").path
                if POSIX.isOwnFolder(deps, components: 2), let newest = newestLibrary(in: deps) {
                    candidates.append(RuntimeLibraryCandidate(path: newest, source: .setUpCopy))
                    break
                }
                let parent = directory.deletingLastPathComponent()
                if parent.path == directory.path { break }
                directory = parent
            }
            let installed = folder.deletingLastPathComponent().appendingPathComponent("lib/proofkit").path
            if let newest = newestLibrary(in: installed) {
                candidates.append(RuntimeLibraryCandidate(path: newest, source: .installedCopy))
            }
        }
        candidates.append(RuntimeLibraryCandidate(path: "libonnxruntime.so.1", source: .system))
        return candidates
    }

    /// The file `libonnxruntime.so.<version>` in `folder` with the highest version, if any.
    static func newestLibrary(in folder: String) -> String? {
        let prefix = "libonnxruntime.so."
        let names = POSIX.folderEntries(folder).map(FilePath.string(fromBytes:))
        let versioned = names.compactMap { name -> (name: String, version: [Int])? in
            guard name.hasPrefix(prefix) else { return nil }
            let parts = name.dropFirst(prefix.count).split(separator: ".").map { Int($0) }
            guard !parts.isEmpty, !parts.contains(nil) else { return nil }
            return (name, parts.compactMap { $0 })
        }
        guard
            let newest = versioned.max(by: { $0.version.lexicographicallyPrecedes($1.version) })
        else { return nil }
        return folder + "/" + newest.name
    }

}

/// A place where ``OnnxRuntime`` looks for the library.
public struct RuntimeLibraryCandidate: Sendable, Hashable, CustomStringConvertible {
    /// Where a candidate path comes from.
    public enum Source: String, Sendable, Hashable {
        /// The `PROOFKIT_ORT_LIBRARY` environment variable.
        case environment
        /// Given by the program: ``OnnxRuntime/load(libraryPath:)``.
        case explicit
        /// `.deps/onnxruntime/` of the project, which set-up fills.
        case setUpCopy
        /// `<executable's folder>/../lib/proofkit/`.
        case installedCopy
        /// The system's `libonnxruntime.so.1` (ld.so search path).
        case system
    }

    /// A file path, or a bare soname for ``Source/system``.
    public let path: String
    /// Where the path comes from.
    public let source: Source

    public init(path: String, source: Source) {
        self.path = path
        self.source = source
    }

    /// E.g. `/x/libonnxruntime.so.1.32.0 (from PROOFKIT_ORT_LIBRARY)`.
    public var description: String {
        switch source {
        case .environment: "\(path) (from \(OnnxRuntime.libraryEnvironmentVariable))"
        case .explicit: "\(path) (given to OnnxRuntime.load(libraryPath:))"
        case .setUpCopy: "\(path) (set-up's copy)"
        case .installedCopy: "\(path) (installed copy)"
        case .system: "\(path) (system library search)"
        }
    }
}

/// Which ONNX Runtime library proofkit uses.
public struct OnnxRuntimeInfo: Sendable, Hashable {
    /// The library's release, e.g. `"1.32.0"`.
    public let version: String
    /// The path it was loaded from (a bare soname when found by the system search).
    public let libraryPath: String
    /// The C API version proofkit uses (``OnnxRuntime/pinnedAPIVersion``).
    public let apiVersion: Int
}

/// The loaded library and its environment. Immutable; never released.
///
/// `@unchecked Sendable`: all fields are immutable, and ORT's environment and default allocator
/// are documented as thread-safe.
final class OrtRuntime: @unchecked Sendable {
    let calls: OrtCalls
    let environment: OpaquePointer
    let allocator: OpaquePointer
    let info: OnnxRuntimeInfo

    /// ORT's own log level: fatal only (4). ORT would otherwise print warnings and a second,
    /// coloured copy of each error to stderr; proofkit reports every failure itself, with ORT's
    /// message, in one line.
    static let logLevel: Int32 = 4

    private init(calls: OrtCalls, environment: OpaquePointer, allocator: OpaquePointer, info: OnnxRuntimeInfo) {
        self.calls = calls
        self.environment = environment
        self.allocator = allocator
        self.info = info
    }

    /// Loads the first usable candidate and creates the environment.
    static func load(from candidates: [RuntimeLibraryCandidate]) -> Result<OrtRuntime, ProofkitError> {
        let found: (calls: OrtCalls, version: String, candidate: RuntimeLibraryCandidate)
        switch firstUsableLibrary(in: candidates) {
        case .success(let library): found = library
        case .failure(let error): return .failure(error)
        }
        do throws(ProofkitError) {
            let environment = try found.calls.createEnvironment(logLevel: logLevel, logID: "proofkit")
            let allocator = try found.calls.defaultAllocator()
            let info = OnnxRuntimeInfo(
                version: found.version, libraryPath: found.candidate.path, apiVersion: OrtCalls.pinnedAPIVersion)
            return .success(
                OrtRuntime(calls: found.calls, environment: environment, allocator: allocator, info: info))
        } catch {
            var failure = error
            failure.code = .runtimeUnavailable
            return .failure(failure)
        }
    }

    /// Tries each candidate in order; the first that is ONNX Runtime with the pinned API wins.
    /// - Returns: the library, or `.runtimeUnavailable` listing every path tried with its reason
    ///   and how to fix it.
    static func firstUsableLibrary(in candidates: [RuntimeLibraryCandidate])
        -> Result<(calls: OrtCalls, version: String, candidate: RuntimeLibraryCandidate), ProofkitError>
    {
        var tried: [String] = []
        for candidate in candidates {
            switch OrtCalls.load(path: candidate.path) {
            case .loaded(let calls, let version):
                return .success((calls, version, candidate))
            case .tooOld(let version):
                tried.append(
                    "\(candidate): ONNX Runtime \(version.isEmpty ? "(unknown version)" : version) is too old")
            case .notOnnxRuntime(let detail):
                tried.append("\(candidate): not ONNX Runtime (no OrtGetApiBase\(detail.isEmpty ? "" : ": \(detail)"))")
            case .notLoadable(let detail):
                tried.append("\(candidate): \(detail.isEmpty ? "cannot be loaded" : detail)")
            }
        }
        let message =
            "ONNX Runtime \(OnnxRuntime.minimumVersion) or newer (C API \(OrtCalls.pinnedAPIVersion)) was not found. "
            + "Tried: " + tried.joined(separator: "; ") + ". "
            + "To fix it, run the set-up (`bash .ci/setup`), which installs the pinned copy, or set "
            + "\(OnnxRuntime.libraryEnvironmentVariable) to the path of a libonnxruntime.so "
            + "(\(OnnxRuntime.minimumVersion) or newer)."
        return .failure(ProofkitError(.runtimeUnavailable, message, operation: "dlopen"))
    }
}
