import Proofkit
import ProofkitCore
internal import ProofkitSystem

/// One `proofkit` verb. Each lives in `Commands/<Verb>Command.swift`.
public protocol Subcommand {
    /// The verb, e.g. `"trim"`.
    static var name: String { get }
    /// One line for `proofkit help`.
    static var summary: String { get }
    /// The synopsis line(s) after `usage:`, e.g. `"proofkit trim INPUT [-o OUTPUT.caf] [options]"`.
    static var synopsis: String { get }
    /// Extra help text after the options: details, JSON schema, examples.
    static var discussion: String { get }
    /// The options the verb accepts (`--help` is added for every verb).
    static var options: [OptionSpec] { get }
    /// Runs the verb.
    /// - Returns: the exit status.
    /// - Throws: ``UsageError`` (exit 64) or `ProofkitError` (mapped by ``ExitStatus/init(for:)``).
    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus
}

/// Every verb, in the order `proofkit help` lists them.
var allCommands: [any Subcommand.Type] {
    [
        DemoCommand.self,
        TrimCommand.self,
        CheckCommand.self,
        PlayCommand.self,
        MatCommand.self,
        VoiceCommand.self,
        DuaCommand.self,
        TranscribeCommand.self,
        SquatCommand.self,
        PoseCommand.self,
        TimesCommand.self,
        PlanCommand.self,
        AlarmCommand.self,
        BenchCommand.self,
        CameraCommand.self,
        DoctorCommand.self,
    ]
}

/// The `proofkit` command line: a pure entry point that returns the exit code.
public enum ProofkitCLI {
    /// Runs `proofkit` with `arguments` (including the program name at index 0).
    /// - Returns: the process exit code; 74 for a command that succeeded but whose results could
    ///   not be written to stdout (a full disk, `/dev/full`; a closed pipe is not a failure).
    public static func run(arguments: [String], io: CommandIO = .standard) -> Int32 {
        let status = dispatch(arguments: arguments, io: io)
        // Results that could not be written (stdout on a full disk or /dev/full) are not a success.
        guard status == ExitStatus.success.rawValue, let failure = standardOutputFailed else {
            return status
        }
        io.printError("proofkit: cannot write the results to standard output (\(failure))")
        return ExitStatus.ioError.rawValue
    }

    static func dispatch(arguments: [String], io: CommandIO) -> Int32 {
        let args = Array(arguments.dropFirst())
        guard let verb = args.first else {
            io.writeOut(topLevelHelp())
            return ExitStatus.success.rawValue
        }
        switch verb {
        case "help", "-h", "--help":
            if args.count > 1 {
                let topic = args[1]
                if topic == "exit-codes" {
                    io.print(ExitStatus.table)
                    return ExitStatus.success.rawValue
                }
                if topic == "man" {
                    io.writeOut(GeneratedDocs.manPage())
                    return ExitStatus.success.rawValue
                }
                if topic == "completion" {
                    guard args.count > 2, let script = GeneratedDocs.completion(for: args[2]) else {
                        io.printError(
                            "proofkit help completion: name a shell: \(GeneratedDocs.shells.joined(separator: ", "))")
                        return ExitStatus.usage.rawValue
                    }
                    io.writeOut(script)
                    return ExitStatus.success.rawValue
                }
                guard let command = command(named: topic) else {
                    io.printError("proofkit: no help topic '\(displayName(topic))'; try 'proofkit help'")
                    return ExitStatus.usage.rawValue
                }
                io.writeOut(help(for: command))
                return ExitStatus.success.rawValue
            }
            io.writeOut(topLevelHelp())
            return ExitStatus.success.rawValue
        case "--version", "version":
            io.print("proofkit \(ProofkitVersion.string)")
            return ExitStatus.success.rawValue
        default:
            break
        }
        guard let command = command(named: verb) else {
            io.printError("proofkit: unknown command '\(displayName(verb))'; try 'proofkit help'")
            return ExitStatus.usage.rawValue
        }
        return execute(command, Array(args.dropFirst()), io: io).rawValue
    }

    /// This process's arguments (program name first) with each one's bytes kept: an argument
    /// that is not UTF-8 (a Latin-1 file name) is held with ProofkitCore's `FilePath` escapes
    /// instead of U+FFFD, so that it opens the file it names (`CommandLine.arguments` would
    /// replace the bytes).
    public static func processArguments() -> [String] { POSIX.arguments() }

    static func command(named name: String) -> (any Subcommand.Type)? {
        allCommands.first { $0.name == name }
    }

    /// Runs `command` on `tokens`, printing a failure as one line that starts with
    /// `proofkit NAME:`, where NAME is `name` (default the command's own: `alarm prove` passes its
    /// own, so its errors read as its own).
    static func execute(_ command: any Subcommand.Type, _ tokens: [String], io: CommandIO, as name: String? = nil)
        -> ExitStatus
    {
        let name = name ?? command.name
        let helpSpec = OptionSpec.flag("help", short: "h", help: "show this help")
        do {
            let parsed = try parseArguments(tokens, options: command.options + [helpSpec])
            if parsed.has("help") {
                io.writeOut(help(for: command))
                return .success
            }
            var io = io
            io.commandName = name
            return try command.run(parsed, io: io)
        } catch let error as UsageError {
            io.printError("proofkit \(name): \(displayText(error.message))")
            io.printError("usage: \(error.usage ?? usageLine(of: command, tokens: tokens))")
            io.printError("See 'proofkit \(command.name) --help'.")
            return .usage
        } catch let error as ProofkitError {
            io.printError("proofkit \(name): \(error.description)")
            return ExitStatus(for: error.code)
        } catch {
            io.printError("proofkit \(name): \(displayText(String(describing: error)))")
            return .failure
        }
    }

    /// The synopsis line for a usage error: for a verb with actions (`alarm add`, `alarm status`),
    /// the line of the action named first on the command line, else the synopsis's first line.
    static func usageLine(of command: any Subcommand.Type, tokens: [String]) -> String {
        let lines = command.synopsis.split(separator: "\n").map { String($0.drop { $0 == " " }) }
        if let action = tokens.first(where: { !$0.hasPrefix("-") }),
            let line = lines.first(where: {
                $0.hasPrefix("proofkit \(command.name) \(action) ") || $0 == "proofkit \(command.name) \(action)"
            })
        {
            return line
        }
        return lines.first ?? ""
    }

    /// The help text for one verb.
    public static func help(for command: any Subcommand.Type) -> String {
        var text = "usage: \(command.synopsis)\n\n\(command.summary)\n\nOptions:\n"
        let all = command.options + [OptionSpec.flag("help", short: "h", help: "show this help")]
        for option in all {
            var left = "  "
            if let short = option.short { left += "-\(short), " }
            left += "--\(option.name)"
            if let value = option.valueName { left += " \(value)" }
            let pad = max(1, 28 - left.count)
            text += left + String(repeating: " ", count: pad) + option.help + "\n"
        }
        if !command.discussion.isEmpty { text += "\n" + command.discussion + "\n" }
        return text
    }

    /// The text of `proofkit help`.
    public static func topLevelHelp() -> String {
        var text = """
            proofkit \(ProofkitVersion.string): on-device proofs for alarms that only stop when you are up.
            Everything runs on this device; no photo, sound or transcript leaves it.

            usage: proofkit <command> [options]

            Commands:

            """
        for command in allCommands {
            // One column for the summaries: two spaces past the longest name.
            let pad = (allCommands.map { $0.name.count }.max() ?? 0) + 2 - command.name.count
            text += "  \(command.name)" + String(repeating: " ", count: pad) + command.summary + "\n"
        }
        text += """

            Every command takes --help, and --json for one JSON object per result on stdout.
            'proofkit help exit-codes' lists the exit codes. 'proofkit --version' prints the version.
            'proofkit help man' prints the manual page; 'proofkit help completion bash|zsh|fish' a
            completion script (both made from this help).

            """
        return text
    }
}
