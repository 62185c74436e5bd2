import Proofkit
import ProofkitCore
internal import ProofkitSystem

/// The du'a texts a command reads (the built-in catalogue, the user's, `--texts FILE`) and the
/// text files and standard input they come from, shared by `dua`, `voice`, `transcribe` and `alarm`.
enum DuaTexts {
    /// The most bytes read from a texts or transcript file, or from standard input: 4 MiB.
    static let textLimitBytes = 4 << 20

    /// The shipped texts, then the user's file, then `--texts FILE`.
    static func loadCatalog(_ arguments: ParsedArguments, io: CommandIO) throws(ProofkitError) -> DuaCatalog {
        var catalog = DuaCatalog.builtIn
        let environment = io.environment
        let userFile = UserFolders.config(environment).map { $0 + "/proofkit/duas.json" }
        if let userFile, let contents = try readTextFile(userFile, required: false) {
            catalog = catalog.merging(try parse(contents, path: userFile))
        }
        if let path = arguments.value("texts"), let contents = try readTextFile(path, required: true) {
            catalog = catalog.merging(try parse(contents, path: path))
        }
        return catalog
    }
    static func find(_ name: String, in catalog: DuaCatalog) throws(ProofkitError) -> DuaText {
        guard let text = catalog.text(named: name) else {
            let names = catalog.texts.map(\.name).joined(separator: ", ")
            throw ProofkitError(.notFound, "no text named '\(name)' (known: \(names))")
        }
        return text
    }
    /// Standard input's text (at most 4 MiB, so `< /dev/zero` cannot grow memory), lines joined
    /// with `separator`.
    /// - Throws: `.decodeFailed` (over 4 MiB, not UTF-8: 65), `.io` (a failed read: 74).
    static func readStandardInput(joinedBy separator: String = " ", what: String = "transcript") throws(ProofkitError)
        -> String
    {
        let bytes = try BoundedFile.read(descriptor: 0, name: "stdin", limit: textLimitBytes, what: what)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ProofkitError(.decodeFailed, "not UTF-8 text", path: "stdin")
        }
        return text.split(whereSeparator: \.isNewline).joined(separator: separator)
    }
    /// The file's text, read with a cap that holds while reading (`BoundedFile`), or
    /// `nil` when the file is optional (`required` false: the user's config file) and missing or
    /// unreadable (an unreadable `$HOME` must not stop a command that does not need it).
    /// - Parameter what: what the file is, for messages ("texts file", "transcript file").
    /// - Throws: `.notFound` (missing and required, or a folder: 66), `.io` (unreadable: 74),
    ///   `.decodeFailed` (not UTF-8, or over 4 MiB: 65).
    static func readTextFile(_ path: String, required: Bool, what: String = "texts file") throws(ProofkitError)
        -> String?
    {
        let bytes: [UInt8]
        do {
            bytes = try BoundedFile.read(path, limit: textLimitBytes, what: what)
        } catch let error where !required && (error.code == .notFound || error.code == .io) {
            return nil
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ProofkitError(.decodeFailed, "not UTF-8 text", path: path)
        }
        return text
    }

    static func parse(_ contents: String, path: String) throws(ProofkitError) -> DuaCatalog {
        do {
            return try DuaCatalog(json: contents)
        } catch {
            throw error.at(path: path)
        }
    }
}
