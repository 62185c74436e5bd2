import Proofkit
import ProofkitCore

/// The manual page and the shell completions, generated from the same declarations as `--help`
/// (every verb's synopsis, summary, options and discussion), so that they cannot drift from it.
/// `proofkit help man` and `proofkit help completion bash|zsh|fish` print them; `.ci/install`
/// and `.ci/package` install their output.
public enum GeneratedDocs {
    /// The shells ``completion(for:)`` knows.
    public static let shells = ["bash", "zsh", "fish"]

    /// The options of `command` as `--help` lists them (with `--help` itself).
    static func options(of command: any Subcommand.Type) -> [OptionSpec] {
        command.options + [OptionSpec.flag("help", short: "h", help: "show this help")]
    }

    /// The sub-verbs a command's synopsis names (`proofkit dua list|show|check`, or one synopsis
    /// line per sub-verb), in order; empty for a verb without any.
    static func subverbs(of command: any Subcommand.Type) -> [String] {
        var found: [String] = []
        for line in command.synopsis.split(separator: "\n") {
            let words = line.split(separator: " ")
            guard words.count >= 3, words[0] == "proofkit", words[1] == command.name else { continue }
            for word in words[2].split(separator: "|") {
                let text = String(word)
                guard let first = text.unicodeScalars.first, ("a"..."z").contains(first),
                    text.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || $0 == "-" }),
                    !found.contains(text)
                else { continue }
                found.append(text)
            }
        }
        return found
    }

    // MARK: - The manual page

    /// The manual page, `proofkit(1)`, in man(7) roff.
    /// - Parameter date: the date shown in the page footer, e.g. `"2026-12"`.
    public static func manPage(date: String = "2026-12") -> String {
        var out = """
            .TH PROOFKIT 1 "\(date)" "proofkit \(ProofkitVersion.string)" "User Commands"
            .SH NAME
            proofkit \\- on-device proofs for alarms that only stop when you are up
            .SH SYNOPSIS
            .B proofkit
            .I command
            .RI [ options ]
            .br
            .B proofkit help
            .RI [ command | exit-codes | man | completion\\ SHELL ]
            .SH DESCRIPTION
            proofkit turns a recitation into an alarm sound, plans alarm chains by prayer times, and
            checks the proofs that stop an alarm: a photo of a prayer mat, a du'a read aloud, squats
            counted from body-pose keypoints.
            Everything runs on this device: no photo, sound or transcript leaves it, and proofkit
            opens no network socket.
            Every command takes
            .B \\-\\-help
            (the same text as this page), and
            .B \\-\\-json
            for one JSON object per result on standard output; diagnostics go to standard error.
            .SH COMMANDS

            """
        for command in allCommands {
            out += ".SS \(roffQuoted("proofkit " + command.name))\n"
            out += escapedLine(command.summary) + "\n"
            out += ".PP\n.B Usage:\n.nf\n.RS 4\n"
            for line in command.synopsis.split(separator: "\n") {
                out += escapedLine(line.trimmingLeadingSpaces) + "\n"
            }
            out += ".RE\n.fi\n"
            for option in options(of: command) {
                out += ".TP\n.B " + optionLabel(option, roff: true) + "\n" + escapedLine(option.help) + "\n"
            }
            if !command.discussion.isEmpty {
                out += ".PP\n.nf\n.RS 4\n"
                for line in command.discussion.split(separator: "\n", omittingEmptySubsequences: false) {
                    out += escapedLine(String(line)) + "\n"
                }
                out += ".RE\n.fi\n"
            }
        }
        out += ".SH EXIT STATUS\n.nf\n"
        for line in ExitStatus.table.split(separator: "\n").dropFirst() {
            out += escapedLine(line.trimmingLeadingSpaces) + "\n"
        }
        out += ".fi\n"
        out += """
            .SH ENVIRONMENT
            .TP
            .B PROOFKIT_MODELS
            The folder of model files, instead of the usual search
            (\\fI<bin>/../share/proofkit/models\\fR, then \\fIModels/generated\\fR above the executable).
            .TP
            .B PROOFKIT_ORT_LIBRARY
            The ONNX Runtime library to load (only that file).
            .TP
            .B PROOFKIT_SILERO_MODEL
            The Silero VAD model for the voice gate.
            .TP
            .B PROOFKIT_ALSA_CONFIG
            An ALSA configuration file to open devices from instead of the machine's (a virtual
            microphone or speaker through ALSA's file plugin; see the README).
            .TP
            .B PROOFKIT_ALARM_DIR
            The alarm store folder of \\fBproofkit alarm\\fR (\\fB\\-\\-store\\fR wins over it).
            .TP
            .B XDG_STATE_HOME
            The alarm store is \\fI$XDG_STATE_HOME/proofkit\\fR when \\fBPROOFKIT_ALARM_DIR\\fR is not
            set (default \\fI~/.local/state/proofkit\\fR).
            .TP
            .B XDG_CACHE_HOME
            ONNX Runtime's copy of a photo model optimised for this CPU is kept in
            \\fI$XDG_CACHE_HOME/proofkit/ort\\fR (default \\fI~/.cache/proofkit/ort\\fR).
            .TP
            .B XDG_CONFIG_HOME
            The user's du'a texts are read from \\fI$XDG_CONFIG_HOME/proofkit/duas.json\\fR
            (default \\fI~/.config/proofkit/duas.json\\fR).
            .SH FILES
            .TP
            .I ~/.config/proofkit/duas.json
            The user's own du'a texts (or \\fI$XDG_CONFIG_HOME/proofkit/duas.json\\fR), added to the
            shipped ones; \\fBproofkit dua \\-\\-help\\fR gives the format.
            .TP
            .I ~/.local/state/proofkit
            The alarm store (alarms.sqlite3, the sounds, the log), unless \\fBPROOFKIT_ALARM_DIR\\fR,
            \\fBXDG_STATE_HOME\\fR or \\fB\\-\\-store\\fR says otherwise.
            .TP
            .I <prefix>/share/proofkit/models
            The models, their manifest.json with SHA\\-256 digests, checked before every load.
            .TP
            .I <prefix>/lib/proofkit
            The ONNX Runtime library proofkit loads.
            .SH SEE ALSO
            .BR sox (1),
            .BR aplay (1),
            .BR arecord (1)

            """
        return out
    }

    /// `--name VALUE` / `-n, --name VALUE`, with roff's dashes when `roff`.
    static func optionLabel(_ option: OptionSpec, roff: Bool) -> String {
        let dash = roff ? "\\-" : "-"
        var label = ""
        if let short = option.short { label += "\(dash)\(short), " }
        label += "\(dash)\(dash)\(roff ? option.name.replacingDashes : option.name)"
        if let value = option.valueName { label += roff ? " \\fI\(escapedText(value))\\fR" : " \(value)" }
        return label
    }

    /// One line of text for roff: backslashes doubled, dashes as `\-`, and a line that would
    /// start with a control character (`.` or `'`) protected with `\&`.
    static func escapedLine(_ line: some StringProtocol) -> String {
        let text = escapedText(line)
        return text.hasPrefix(".") || text.hasPrefix("'") ? "\\&" + text : text
    }

    static func escapedText(_ text: some StringProtocol) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            default: out.append(character)
            }
        }
        return out
    }

    static func roffQuoted(_ text: String) -> String { "\"" + escapedText(text) + "\"" }

    // MARK: - Completions

    /// The completion script for `shell` (`bash`, `zsh` or `fish`), or `nil` for another shell.
    public static func completion(for shell: String) -> String? {
        switch shell {
        case "bash": bashCompletion()
        case "zsh": zshCompletion()
        case "fish": fishCompletion()
        default: nil
        }
    }

    static var topLevelWords: [String] { allCommands.map { $0.name } + ["help"] }

    static func bashCompletion() -> String {
        var out = """
            # bash completion for proofkit (generated by 'proofkit help completion bash')
            _proofkit() {
                local cur prev verb options valued subverbs values=""
                cur="${COMP_WORDS[COMP_CWORD]}"
                prev="${COMP_WORDS[COMP_CWORD-1]}"
                if [ "$COMP_CWORD" -eq 1 ]; then
                    COMPREPLY=($(compgen -W "\(topLevelWords.joined(separator: " ")) --help --version" -- "$cur"))
                    return
                fi
                verb="${COMP_WORDS[1]}"
                case "$verb" in

            """
        for command in allCommands {
            let all = options(of: command)
            let words = all.flatMap { option in ["--" + option.name] + (option.short.map { ["-\($0)"] } ?? []) }
            let valued = all.filter { $0.valueName != nil }
                .flatMap { option in ["--" + option.name] + (option.short.map { ["-\($0)"] } ?? []) }
            out += "        \(command.name)) options=\"\(words.joined(separator: " "))\"; "
            out += "valued=\"\(valued.joined(separator: " "))\"; "
            out += "subverbs=\"\(subverbs(of: command).joined(separator: " "))\""
            let chosen = all.filter { !$0.choices.isEmpty }
            if !chosen.isEmpty {
                out += "\n            case \"$prev\" in"
                for option in chosen {
                    let names = ["--" + option.name] + (option.short.map { ["-\($0)"] } ?? [])
                    out += " \(names.joined(separator: "|"))) values=\"\(option.choices.joined(separator: " "))\" ;;"
                }
                out += " esac"
            }
            out += " ;;\n"
        }
        out += """
                    help)
                        if [ "$COMP_CWORD" -eq 2 ]; then
                            COMPREPLY=($(compgen -W "\(allCommands.map { $0.name }.joined(separator: " ")) exit-codes man completion" -- "$cur"))
                        elif [ "$COMP_CWORD" -eq 3 ] && [ "${COMP_WORDS[2]}" = completion ]; then
                            COMPREPLY=($(compgen -W "\(shells.joined(separator: " "))" -- "$cur"))
                        fi
                        return ;;
                    *) return ;;
                esac
                # After an option that takes one of a few values: those values.
                if [ -n "$values" ]; then
                    COMPREPLY=($(compgen -W "$values" -- "$cur"))
                    return
                fi
                # After an option that takes another value: leave it to the default (file names).
                local word
                for word in $valued; do
                    if [ "$prev" = "$word" ]; then return; fi
                done
                if [[ "$cur" == -* ]]; then
                    COMPREPLY=($(compgen -W "$options" -- "$cur"))
                elif [ "$COMP_CWORD" -eq 2 ] && [ -n "$subverbs" ]; then
                    COMPREPLY=($(compgen -W "$subverbs" -- "$cur"))
                fi
            }
            complete -o bashdefault -o default -F _proofkit proofkit

            """
        return out
    }

    /// Help text made safe for zsh's `_arguments` and `_describe` specs inside single quotes.
    static func zshText(_ text: String) -> String {
        String(
            text.map { character -> Character in
                switch character {
                case "'": "\u{2019}"
                case "[": "("
                case "]": ")"
                case ":": ";"
                default: character
                }
            })
    }

    static func zshCompletion() -> String {
        var out = """
            #compdef proofkit
            # zsh completion for proofkit (generated by 'proofkit help completion zsh')
            _proofkit() {
                local -a verbs
                verbs=(

            """
        for command in allCommands {
            out += "        '\(command.name):\(zshText(command.summary))'\n"
        }
        out += """
                    'help:show help for a command, the exit codes, the man page or a completion script'
                )
                if (( CURRENT == 2 )); then
                    _describe 'command' verbs
                    return
                fi
                case $words[2] in

            """
        for command in allCommands {
            out += "        \(command.name))\n            _arguments -s \\\n"
            for option in options(of: command) {
                let help = zshText(completionText(option.help))
                let action = option.choices.isEmpty ? "_files" : "(\(option.choices.joined(separator: " ")))"
                let value = option.valueName.map { ":\(zshText($0)):\(action)" } ?? ""
                let repeatable = option.isRepeatable ? "*" : ""
                if let short = option.short {
                    out +=
                        "                '(-\(short) --\(option.name))'{-\(short),--\(option.name)}'[\(help)]\(value)' \\\n"
                } else {
                    out += "                '\(repeatable)--\(option.name)[\(help)]\(value)' \\\n"
                }
            }
            let subs = subverbs(of: command)
            if subs.isEmpty {
                out += "                '*:file:_files'\n"
            } else {
                out += "                '1:subcommand:(\(subs.joined(separator: " ")))' '*:file:_files'\n"
            }
            out += "            ;;\n"
        }
        out += """
                    help)
                        if (( CURRENT == 3 )); then
                            _values 'topic' \(allCommands.map { $0.name }.joined(separator: " ")) exit-codes man completion
                        elif (( CURRENT == 4 )) && [[ $words[3] == completion ]]; then
                            _values 'shell' \(shells.joined(separator: " "))
                        fi
                        ;;
                esac
            }
            _proofkit "$@"

            """
        return out
    }

    /// An option's help as a completion shows it, beside the option alone: "see below" (which
    /// points into the `--help` page) is left out.
    static func completionText(_ help: String) -> String {
        help.replacing("; see below", with: "").replacing(" (see below)", with: "")
    }

    /// Help text inside single quotes for fish.
    static func fishText(_ text: String) -> String {
        text.replacing("\\", with: "\\\\").replacing("'", with: "\\'")
    }

    static func fishCompletion() -> String {
        var out = """
            # fish completion for proofkit (generated by 'proofkit help completion fish')
            complete -c proofkit -f
            complete -c proofkit -n __fish_use_subcommand -a help -d 'show help for a command, the exit codes, the man page or a completion script'
            complete -c proofkit -n '__fish_seen_subcommand_from help; and not __fish_seen_subcommand_from completion' -a '\(allCommands.map { $0.name }.joined(separator: " ")) exit-codes man completion'
            complete -c proofkit -n '__fish_seen_subcommand_from help; and __fish_seen_subcommand_from completion' -a '\(shells.joined(separator: " "))'

            """
        for command in allCommands {
            let seen = "'__fish_seen_subcommand_from \(command.name)'"
            out +=
                "complete -c proofkit -n __fish_use_subcommand -a \(command.name) -d '\(fishText(command.summary))'\n"
            for option in options(of: command) {
                var line = "complete -c proofkit -n \(seen) -l \(option.name)"
                if let short = option.short { line += " -s \(short)" }
                if option.valueName != nil {
                    line += option.choices.isEmpty ? " -r -F" : " -r -f -a '\(option.choices.joined(separator: " "))'"
                }
                line += " -d '\(fishText(completionText(option.help)))'"
                out += line + "\n"
            }
            let subs = subverbs(of: command)
            if !subs.isEmpty {
                out += "complete -c proofkit -n \(seen) -a '\(subs.joined(separator: " "))'\n"
            }
            out += "complete -c proofkit -n \(seen) -F\n"
        }
        return out
    }
}

extension StringProtocol {
    fileprivate var trimmingLeadingSpaces: String {
        String(drop(while: { $0 == " " }))
    }
}

extension String {
    fileprivate var replacingDashes: String {
        replacing("-", with: "\\-")
    }
}
