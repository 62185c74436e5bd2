import Foundation

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

/// Checks the one line that a library that cannot be loaded becomes.
/// - Returns: the problems found (empty when the message names `soname`, carries `reason`,
///   names the Debian `package`, and is one line).
public func libraryFailureProblems(_ message: String, soname: String, reason: String, package: String)
    -> [String]
{
    var problems: [String] = []
    if !message.hasPrefix("\(soname) cannot be loaded: ") { problems.append("does not start with the soname") }
    if !message.contains(reason) { problems.append("lacks dlerror's reason '\(reason)'") }
    if !message.contains("install the Debian package \(package) ") { problems.append("lacks the package \(package)") }
    if message.contains("\n") { problems.append("is not one line") }
    return problems
}
