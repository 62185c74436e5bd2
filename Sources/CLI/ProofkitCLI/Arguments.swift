/// One option a subcommand accepts.
public struct OptionSpec: Sendable {
    /// Long name without dashes, e.g. `"json"` for `--json`.
    public var name: String
    /// Optional one-letter short name, e.g. `"o"` for `-o`.
    public var short: Character?
    /// `nil` for a flag; otherwise the placeholder shown in help (`"FILE"`), and a value is required.
    public var valueName: String?
    /// May be given more than once (values accumulate).
    public var isRepeatable: Bool
    /// One-line help.
    public var help: String
    /// The values the option takes, when it takes one of a fixed few (`--engine`, `--vad`): the
    /// shell completions offer them. Empty for a free value (a file, a number).
    public var choices: [String] = []
    /// The value may be left out (`--camera` or `--camera /dev/video2`): the next token is its
    /// value unless it starts with "-" (a lone "-", stdin, is a value); left out, the option is
    /// given with an empty value.
    public var valueIsOptional = false

    /// A boolean flag such as `--json`.
    public static func flag(_ name: String, short: Character? = nil, help: String) -> OptionSpec {
        OptionSpec(name: name, short: short, valueName: nil, isRepeatable: false, help: help)
    }

    /// An option that takes a value: `--name VALUE` or `--name=VALUE`.
    /// - Parameter choices: the values it takes when they are a fixed few (completed by the
    ///   shells; each should appear in `help`); empty (the default) for a free value.
    public static func option(
        _ name: String, short: Character? = nil, value: String, repeatable: Bool = false, choices: [String] = [],
        help: String
    ) -> OptionSpec {
        OptionSpec(
            name: name, short: short, valueName: value, isRepeatable: repeatable, help: help, choices: choices)
    }

    /// An option whose value may be left out: `--name`, `--name VALUE` (a next token that does not
    /// start with "-") or `--name=VALUE`. Left out, ``ParsedArguments/value(_:)`` is "".
    public static func optionalValue(_ name: String, value: String, help: String) -> OptionSpec {
        var spec = OptionSpec(name: name, short: nil, valueName: "[\(value)]", isRepeatable: false, help: help)
        spec.valueIsOptional = true
        return spec
    }
}

/// A usage error: shown as one line plus the usage, exit 64.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// The usage line to show with it, when not the command's first synopsis line (an action's own).
    public var usage: String? = nil
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The result of parsing one subcommand's arguments.
public struct ParsedArguments: Sendable, Equatable {
    /// Flags that were given.
    public var flags: Set<String> = []
    /// Values of options, in order given, by long name.
    public var values: [String: [String]] = [:]
    /// Positional arguments, in order (everything after `--` is positional).
    public var positionals: [String] = []
    /// The long names of the options the command declared (what ``parseArguments(_:options:)``
    /// was given). Asking for any other name is a bug in the command, so it traps.
    public let declaredNames: Set<String>

    /// Empty arguments of a command that declares `declaredNames` (long names, without dashes).
    public init(declaredNames: Set<String> = []) {
        self.declaredNames = declaredNames
    }

    /// Whether flag `name` was given. Traps when the command never declared `name`.
    public func has(_ name: String) -> Bool {
        requireDeclared(name)
        return flags.contains(name)
    }

    /// The last value of option `name`, if given. Traps when the command never declared `name`.
    public func value(_ name: String) -> String? {
        requireDeclared(name)
        return values[name]?.last
    }

    /// All values of a repeatable option. Traps when the command never declared `name`.
    public func all(_ name: String) -> [String] {
        requireDeclared(name)
        return values[name] ?? []
    }

    /// Traps (in every build) when `name` is not one of ``declaredNames``: a misspelt name would
    /// otherwise read as "not given" forever.
    private func requireDeclared(_ name: String) {
        precondition(declaredNames.contains(name), "option '--\(name)' was never declared by this command")
    }

    /// The value of `name` parsed as a number, or `nil` when absent.
    /// - Throws: ``UsageError`` when present but not a number.
    public func double(_ name: String) throws(UsageError) -> Double? {
        guard let text = value(name) else { return nil }
        guard let number = Double(text), number.isFinite else {
            throw UsageError("--\(name) needs a number, got '\(text)'")
        }
        return number
    }

    /// The value of `name` parsed as an integer, or `nil` when absent.
    /// - Throws: ``UsageError`` when present but not an integer.
    public func int(_ name: String) throws(UsageError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text) else {
            throw UsageError("--\(name) needs a whole number, got '\(text)'")
        }
        return number
    }

    /// The most ONNX Runtime intra-op threads a command takes: 256 (as `proofkit bench`). More
    /// made ONNX Runtime start that many threads: `transcribe --threads 100000` took 4 GiB and did
    /// not end.
    public static let maximumThreads = 256

    /// `--threads N`, ONNX Runtime's intra-op threads: `default` when absent.
    /// - Parameter allowsZero: whether 0 (ONNX Runtime's choice, one per core) is allowed.
    /// - Throws: ``UsageError`` for anything but a whole number from 0 (or 1) to
    ///   ``maximumThreads``.
    public func threads(default: Int, allowsZero: Bool) throws(UsageError) -> Int {
        guard let threads = try int("threads") else { return `default` }
        let lowest = allowsZero ? 0 : 1
        guard threads >= lowest && threads <= Self.maximumThreads else {
            throw UsageError("--threads must be from \(lowest) to \(Self.maximumThreads), not \(threads)")
        }
        return threads
    }

    /// A duration such as `29`, `29s`, `1.5s`, `500ms`, `10m`, `2h` or `1m30s` (``parseDuration(_:)``),
    /// in seconds, or `nil` when absent.
    /// - Throws: ``UsageError`` when malformed.
    public func seconds(_ name: String) throws(UsageError) -> Double? {
        guard let text = value(name) else { return nil }
        guard let seconds = parseDuration(text) else {
            throw UsageError("--\(name) needs a duration such as 29s, 500ms, 10m or 1m30s, got '\(text)'")
        }
        return seconds
    }

    /// A percentage option, 1...100 (a trailing `%` allowed), or `nil` when absent.
    /// - Throws: ``UsageError`` naming the option for anything else.
    public func percent(_ name: String) throws(UsageError) -> Double? {
        guard let text = value(name) else { return nil }
        let digits = text.hasSuffix("%") ? String(text.dropLast()) : text
        guard let number = Double(digits), number.isFinite, (1...100).contains(number) else {
            throw UsageError("--\(name) must be a percentage from 1 to 100, got '\(text)'")
        }
        return number
    }

    /// Exactly `count` positionals, or a usage error naming what is missing or extra.
    public func requirePositionals(_ count: Int, names: String) throws(UsageError) -> [String] {
        if positionals.count < count { throw UsageError("missing \(names)") }
        if positionals.count > count {
            throw UsageError("unexpected argument '\(positionals[count])'")
        }
        return positionals
    }
}

/// Parses a duration into seconds: a bare number of seconds (`29`, `1.5`), or one or more
/// numbers each with a unit, largest unit first and each unit once: `29s`, `1.5s`, `500ms`,
/// `10m`, `2h`, `1m30s`, `1h2m`, `1h30m15s`, `2s500ms`. The one parser of every duration option.
/// - Returns: the seconds, or `nil` if malformed, negative or not finite.
public func parseDuration(_ text: String) -> Double? {
    if let value = Double(text) { return value.isFinite && value >= 0 ? value : nil }
    let units: [(suffix: String, scale: Double)] = [("h", 3600), ("m", 60), ("s", 1), ("ms", 0.001)]
    var rest = Substring(text)
    var total = 0.0
    var nextUnit = 0  // units must come in this order, each at most once
    while !rest.isEmpty {
        let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        guard !number.isEmpty, let value = Double(number), value.isFinite else { return nil }
        rest = rest.dropFirst(number.count)
        let letters = rest.prefix { $0.isASCII && $0.isLetter }
        guard let unit = units.indices.first(where: { units[$0].suffix == letters }), unit >= nextUnit else {
            return nil
        }
        total += value * units[unit].scale
        nextUnit = unit + 1
        rest = rest.dropFirst(letters.count)
    }
    return total.isFinite && nextUnit > 0 ? total : nil
}

/// Parses a subcommand's arguments (without the program name and verb) against its options.
///
/// Accepts `--name value`, `--name=value`, `-x value`, flags, and `--` (the rest is positional).
/// A lone `-` is positional (stdin). A token like `-5` or `-0.12` is positional when no short
/// option of that name exists. Unknown options are errors, never ignored.
/// - Throws: ``UsageError``.
public func parseArguments(_ tokens: [String], options: [OptionSpec]) throws(UsageError)
    -> ParsedArguments
{
    var result = ParsedArguments(declaredNames: Set(options.map(\.name)))
    var index = 0
    func spec(long: String) -> OptionSpec? { options.first { $0.name == long } }
    func spec(short: Character) -> OptionSpec? { options.first { $0.short == short } }

    func record(_ spec: OptionSpec, inline: String?, display: String) throws(UsageError) {
        guard spec.valueName != nil else {
            if inline != nil { throw UsageError("\(display) does not take a value") }
            result.flags.insert(spec.name)
            return
        }
        let value: String
        if let inline {
            value = inline
        } else if spec.valueIsOptional {
            let next = index + 1 < tokens.count ? tokens[index + 1] : nil
            if let next, !next.isEmpty, !next.hasPrefix("-") || next == "-" {
                index += 1
                value = next
            } else {
                value = ""
            }
        } else {
            index += 1
            guard index < tokens.count else { throw UsageError("\(display) needs a value") }
            value = tokens[index]
        }
        if !spec.isRepeatable, result.values[spec.name] != nil {
            // The last one wins, as most tools do; repeated single options are allowed.
            result.values[spec.name] = [value]
        } else {
            result.values[spec.name, default: []].append(value)
        }
    }

    while index < tokens.count {
        let token = tokens[index]
        if token == "--" {
            result.positionals.append(contentsOf: tokens[(index + 1)...])
            break
        } else if token.hasPrefix("--") {
            let body = token.dropFirst(2)
            let name: String
            let inline: String?
            if let eq = body.firstIndex(of: "=") {
                name = String(body[..<eq])
                inline = String(body[body.index(after: eq)...])
            } else {
                name = String(body)
                inline = nil
            }
            guard let spec = spec(long: name) else { throw UsageError("unknown option '--\(name)'") }
            try record(spec, inline: inline, display: "--\(name)")
        } else if token.hasPrefix("-"), token.count >= 2 {
            let letter = token[token.index(after: token.startIndex)]
            if let spec = spec(short: letter) {
                let rest = token.dropFirst(2)
                let inline: String? = rest.isEmpty ? nil : String(rest.hasPrefix("=") ? rest.dropFirst() : rest)
                try record(spec, inline: inline, display: "-\(letter)")
            } else if Double(token) != nil {
                result.positionals.append(token)
            } else {
                throw UsageError("unknown option '\(token)'")
            }
        } else {
            result.positionals.append(token)
        }
        index += 1
    }
    return result
}
