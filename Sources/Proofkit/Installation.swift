import AudioIO
import ImageIO
import Inference
public import ProofkitCore
internal import ProofkitSystem
import Storage
import VideoIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What this proofkit found on this machine and where: the report of `proofkit doctor`.
///
/// Making it loads ONNX Runtime and the four C libraries (each on first use, as the commands
/// would), reads every model file the models folder's `manifest.json` lists and checks its
/// SHA-256, and lists the ALSA devices. Nothing is written.
public struct InstallationReport: Sendable {
    /// One model file and whether its digest is the one expected.
    public struct Model: Sendable, Equatable {
        /// The file name, e.g. `"efficientnet_lite0_int8.onnx"`.
        public var name: String
        /// Its path, or `nil` when it is listed but missing.
        public var path: String?
        /// `"verified"`, `"missing"`, `"mismatch"` (damaged or replaced), `"unlisted"` (no digest
        /// to check against) or `"unreadable"`.
        public var status: String
    }

    /// The running executable.
    public var executable: String?
    /// `<bin>/../share/proofkit` when this is an installed tree.
    public var installedShare: String?
    /// The ONNX Runtime release and library path, or why it cannot be loaded.
    public var onnxRuntime: Result<OnnxRuntimeInfoSummary, ProofkitError>
    /// The models folders searched, in order.
    public var modelFolders: [String]
    /// Whether the folders came from `PROOFKIT_MODELS`.
    public var modelFoldersFromEnvironment: Bool
    /// The model files of the first folder that has a `manifest.json` (or the committed list).
    public var models: [Model]
    /// The C libraries loaded on first use.
    public var libraries: [CLibraryStatus]
    /// The ALSA PCM devices (names), or why they cannot be listed.
    public var audioDevices: Result<[String], ProofkitError>
    /// The Linux input devices whose keys can stop a ring (`alarm run --input`): path, name (from
    /// sysfs) and whether this user can read it.
    public var keyDevices: [(path: String, name: String, readable: Bool)]
    /// The alarm store as `proofkit alarm` finds it (`$PROOFKIT_ALARM_DIR`...).
    public var alarmStore: AlarmStoreSummary

    /// Where the alarm store is, whether a service runs on it, and the room left on its disk.
    public struct AlarmStoreSummary: Sendable {
        /// The store's folder.
        public var folder: String
        /// Whether it holds a store (`alarms.sqlite3`).
        public var exists: Bool
        /// Whether an alarm service answers on its control socket.
        public var serviceRunning: Bool
        /// The bytes free on its disk (of the nearest folder above it that exists), or `nil`.
        public var freeBytes: Int64?
        /// Below this many bytes free, 16 MiB, doctor warns: a full disk keeps the service from
        /// recording rings and proofs (it still rings).
        public static let lowSpace: Int64 = 16 << 20
    }

    /// Looks at this machine.
    /// - Parameter environment: the process environment (`PROOFKIT_MODELS`,
    ///   `PROOFKIT_ORT_LIBRARY`, `PROOFKIT_ALSA_CONFIG`).
    public init(environment: [String: String]) {
        executable = ModelStore.currentExecutablePath()
        installedShare = installedShareFolder(executablePath: executable)
        onnxRuntime = Result { () throws(ProofkitError) in
            let info = try OnnxRuntime.load()
            return OnnxRuntimeInfoSummary(version: info.version, libraryPath: info.libraryPath)
        }
        let store = ModelStore(environment: environment)
        modelFolders = store.folders
        modelFoldersFromEnvironment = store.isFromEnvironment
        models = Self.checkModels(in: store.folders)
        libraries =
            AudioLibraries.probe() + ImageLibraries.probe() + StorageLibraries.probe() + VideoLibraries.probe()
        audioDevices = Result { () throws(ProofkitError) in
            let configuration = try ALSAConfiguration.fromEnvironment(environment)
            return try AudioDevice.all(configuration: configuration).map(\.name)
        }
        alarmStore = Self.lookAtAlarmStore(environment: environment)
        keyDevices = POSIX.folderEntries("/dev/input").map { FilePath.string(fromBytes: $0) }
            .filter { $0.hasPrefix("event") }.sorted().map { entry in
                let name = (try? BoundedFile.read("/sys/class/input/\(entry)/device/name", limit: 256, what: "name"))
                    .map { String(decoding: $0, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? "" }
                let readable: Bool
                if case .success(let fd) = POSIX.open("/dev/input/" + entry, [.readOnly, .nonBlocking]) {
                    POSIX.closeDescriptor(fd)
                    readable = true
                } else {
                    readable = false
                }
                return ("/dev/input/" + entry, name ?? "unknown", readable)
            }
    }

    static func lookAtAlarmStore(environment: [String: String]) -> AlarmStoreSummary {
        let folder = AlarmStore.folder(explicit: nil, environment: environment)
        let exists: Bool
        if case .success(let info) = POSIX.status(folder + "/" + AlarmStore.databaseName) {
            exists = info.isRegular
        } else {
            exists = false
        }
        let running =
            exists
            && (try? AlarmControl.send("ping", socketPath: folder + "/" + AlarmStore.socketName))?.hasPrefix("ok")
                == true
        // The store may not be made yet: the disk is that of the nearest folder above it that exists.
        var probe = folder.isEmpty ? "." : folder
        var free = try? POSIX.freeBytes(probe).get()
        while free == nil, probe != "/", probe != "." {
            probe = probe.lastIndex(of: "/").map { $0 == probe.startIndex ? "/" : String(probe[..<$0]) } ?? "."
            free = try? POSIX.freeBytes(probe).get()
        }
        return AlarmStoreSummary(folder: folder, exists: exists, serviceRunning: running, freeBytes: free)
    }

    /// Whether everything proofkit's commands need was found and verified.
    public var isHealthy: Bool {
        guard case .success = onnxRuntime else { return false }
        return !models.isEmpty && models.allSatisfy { $0.status == "verified" }
            && libraries.allSatisfy { $0.failure == nil }
    }

    /// The files of the first folder with a manifest, each read and hashed.
    static func checkModels(in folders: [String]) -> [Model] {
        for folder in folders where FileKind(atPath: folder + "/manifest.json") != nil {
            let manifest: ModelsManifest?
            do { manifest = try ModelsManifest.load(besideFileAt: folder + "/manifest.json") } catch {
                return [Model(name: "manifest.json", path: folder + "/manifest.json", status: "unreadable")]
            }
            let names = (manifest?.entries.keys).map { Array($0) } ?? []
            return names.sorted().map { name in
                let path = folder + "/" + name
                guard FileKind(atPath: path) == .other else { return Model(name: name, path: nil, status: "missing") }
                guard let expected = ModelStore.expectedSHA256(ofFileAt: path, manifest: manifest) else {
                    return Model(name: name, path: path, status: "unlisted")
                }
                guard let digest = try? ModelFile.sha256(ofFileAt: path) else {
                    return Model(name: name, path: path, status: "unreadable")
                }
                return Model(name: name, path: path, status: digest == expected.lowercased() ? "verified" : "mismatch")
            }
        }
        return []
    }
}

/// The ONNX Runtime that ``InstallationReport`` found.
public struct OnnxRuntimeInfoSummary: Sendable, Equatable {
    /// The release, e.g. `"1.32.0"`.
    public var version: String
    /// The file it was loaded from.
    public var libraryPath: String
}
