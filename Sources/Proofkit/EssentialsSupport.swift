// Small stand-ins for the few APIs of the full Foundation that proofkit used and that
// FoundationEssentials does not have (`ObjCBool` with `FileManager.fileExists(atPath:isDirectory:)`,
// `JSONSerialization`, `trimmingCharacters(in:)`, `padding(toLength:withPad:startingAt:)`): the
// `proofkit` binary links FoundationEssentials only, which saves CoreFoundation's start-up work
// (about 0.35 ms of CPU and 4 MiB of resident memory for every command). `package` so that
// ProofkitCLI shares them.

package import ProofkitCore
internal import ProofkitSystem

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// MARK: Files

/// What is at a path, following symbolic links (as `FileManager.fileExists(atPath:isDirectory:)`).
package enum FileKind: Sendable, Equatable {
    /// A folder.
    case folder
    /// Anything else that exists (a file, a device, a pipe...).
    case other

    /// What is at `path`, or `nil` when nothing is (or it cannot be reached).
    /// Calls `stat` (``POSIX/status(_:)``).
    package init?(atPath path: String) {
        guard case .success(let info) = POSIX.status(path) else { return nil }
        self = info.isDirectory ? .folder : .other
    }
}

// MARK: Text

extension Unicode.Scalar {
    /// Foundation's `CharacterSet.whitespaces`: the space separators (Unicode category Zs) and tab.
    var isFoundationWhitespace: Bool {
        value == 0x09 || properties.generalCategory == .spaceSeparator
    }

    /// Foundation's `CharacterSet.whitespacesAndNewlines`: ``isFoundationWhitespace`` plus
    /// U+000A...U+000D, U+0085, U+2028 and U+2029.
    var isFoundationWhitespaceOrNewline: Bool {
        isFoundationWhitespace || (0x0A...0x0D).contains(value) || value == 0x85 || value == 0x2028 || value == 0x2029
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (Foundation's
    /// `trimmingCharacters(in: .whitespaces)`).
    package func trimmingSpaces() -> String { trimmingScalars(where: \.isFoundationWhitespace) }

    /// The text without leading and trailing spaces, tabs and line breaks (Foundation's
    /// `trimmingCharacters(in: .whitespacesAndNewlines)`).
    package func trimmingSpacesAndNewlines() -> String { trimmingScalars(where: \.isFoundationWhitespaceOrNewline) }

    private func trimmingScalars(where isTrimmed: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isTrimmed($0) }),
            let last = scalars.lastIndex(where: { !isTrimmed($0) })
        else { return "" }
        var result = ""
        result.unicodeScalars.append(contentsOf: scalars[first...last])
        return result
    }

    /// The text cut or padded with spaces at the end to `length` characters (Foundation's
    /// `padding(toLength: length, withPad: " ", startingAt: 0)` for the ASCII text it is used on).
    package func padded(toLength length: Int) -> String {
        count >= length ? String(prefix(length)) : String(self) + String(repeating: " ", count: length - count)
    }
}

// MARK: JSON

extension JSONNode {
    /// Reads one JSON document (ProofkitCore's ``ProofkitCore/JSONReader``, strict JSON) for the
    /// files whose members are looked at one by one: the models manifest, the prompt embeddings,
    /// `proofkit plan`'s state file. `nil` when `bytes` is not JSON.
    package init?(bytes: some Sequence<UInt8>) {
        guard let node = try? JSONReader.parse(bytes: Array(bytes)) else { return nil }
        self = node
    }
}

/// The folder of the file at `executable` and every folder above it, nearest first.
func foldersUpward(from executable: String) -> [URL] {
    var folders: [URL] = []
    var folder = URL(fileURLWithPath: executable).deletingLastPathComponent().standardizedFileURL
    while true {
        folders.append(folder)
        let parent = folder.deletingLastPathComponent()
        if parent.path == folder.path { return folders }
        folder = parent
    }
}

/// The data folder of an installed proofkit: `<executable's folder>/../share/proofkit`, where
/// `.ci/install` and the Debian package put the models (`models/`) and the demo's recordings
/// (`demo/`); `nil` when the executable is not in such a tree.
/// - Parameter executablePath: the running executable (default: this process's).
package func installedShareFolder(executablePath: String? = ModelStore.currentExecutablePath()) -> String? {
    guard let executablePath else { return nil }
    let folder = URL(fileURLWithPath: executablePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("share/proofkit").standardizedFileURL.path
    return FileKind(atPath: folder) == .folder ? folder : nil
}

/// Where a file that the build tree keeps at `relative` lives in an installed tree:
/// `Models/generated/X` is `<share>/models/X`, `Tests/TestSupport/Fixtures/X` is `<share>/demo/X`.
func installedPath(for relative: String, share: String) -> String? {
    let mapping = [(ModelStore.relativeFolder + "/", "models/"), ("Tests/TestSupport/Fixtures/", "demo/")]
    for (prefix, installed) in mapping where relative.hasPrefix(prefix) {
        return share + "/" + installed + relative.dropFirst(prefix.count)
    }
    return nil
}

/// `relative` in an installed tree's data folder (see ``installedShareFolder(executablePath:)``),
/// else in the running executable's folder or the nearest folder above it, else in the current
/// folder; `nil` when it is in none of them.
package func locateNearExecutable(_ relative: String) -> String? {
    if let share = installedShareFolder(), let installed = installedPath(for: relative, share: share),
        FileKind(atPath: installed) != nil
    {
        return installed
    }
    for folder in ModelStore.currentExecutablePath().map(foldersUpward(from:)) ?? [] {
        let candidate = folder.appendingPathComponent(relative).path
        if FileKind(atPath: candidate) != nil { return candidate }
    }
    return FileKind(atPath: relative) != nil ? relative : nil
}
