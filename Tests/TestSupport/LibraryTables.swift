import Foundation
public import ProofkitCore

/// What a table of C function pointers (a library loaded on first use) holds.
public struct FunctionTable {
    /// The field names, in declaration order (the functions the table declares).
    public var names: [String]
    /// The fields that hold NULL (functions that did not resolve).
    public var unresolved: [String]

    /// Reads `table`'s fields by reflection.
    public init(_ table: Any) {
        var names: [String] = []
        var unresolved: [String] = []
        for child in Mirror(reflecting: table).children {
            let name = child.label ?? "?"
            names.append(name)
            let value = Mirror(reflecting: child.value)
            if value.displayStyle == .optional && value.children.isEmpty { unresolved.append(name) }
        }
        self.names = names
        self.unresolved = unresolved
    }

    /// The names that `source` (a `+Calls.swift` file of the package, relative to its root)
    /// never calls as `<receiver>.<name>(`.
    public func notCalled(in source: String, receiver: String) throws -> [String] {
        let text = try String(
            contentsOf: TestEnvironment.packageRoot.appendingPathComponent(source), encoding: .utf8)
        return names.filter { !text.contains("\(receiver).\($0)(") }
    }
}

/// A load of a library that must fail (a file that is not installed, or one that lacks a
/// function), and what its error must say.
public struct FailingLibraryLoad: Sendable, CustomStringConvertible {
    /// dlerror's reason when the file does not exist.
    public static let notInstalled = "cannot open shared object file: No such file or directory"

    /// The file to load instead of the library's own.
    public var soname: String
    /// Text that dlerror's reason must contain.
    public var reason: String
    /// The Debian package the message must name.
    public var package: String
    /// Loads the library from the given soname (a `soname:` entry point of an adapter).
    public var load: @Sendable (String) throws(ProofkitError) -> Void

    public init(
        soname: String, reason: String = notInstalled, package: String,
        load: @escaping @Sendable (String) throws(ProofkitError) -> Void
    ) {
        self.soname = soname
        self.reason = reason
        self.package = package
        self.load = load
    }

    public var description: String { soname }

    /// Runs the load, which must fail, and checks the error: the code `.runtimeUnavailable`
    /// (exit 69), the operation `dlopen`, and one line that starts with the soname, carries
    /// dlerror's reason and names the Debian package to install.
    /// - Returns: the problems found, each with the message (empty when all is right).
    public func problems() -> [String] {
        let error: ProofkitError
        do {
            try load(soname)
            return ["\(soname) loaded; it should have failed"]
        } catch let thrown {
            error = thrown
        }
        let message = error.message
        var problems: [String] = []
        if error.code != .runtimeUnavailable { problems.append("code is \(error.code)") }
        if error.operation != "dlopen" { problems.append("operation is \(error.operation ?? "nil")") }
        if !message.hasPrefix("\(soname) cannot be loaded: ") { problems.append("does not start with the soname") }
        if !message.contains(reason) { problems.append("lacks dlerror's reason '\(reason)'") }
        if !message.contains("install the Debian package \(package) ") {
            problems.append("lacks the package \(package)")
        }
        if message.contains("\n") { problems.append("is not one line") }
        return problems.map { "\($0): \(message)" }
    }
}
