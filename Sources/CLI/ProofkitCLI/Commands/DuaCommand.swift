import Proofkit
import ProofkitCore
internal import ProofkitSystem

/// `proofkit dua`: list, show and check the texts of the reading proof.
enum DuaCommand: Subcommand {
    static let name = "dua"
    static let summary = "list, show and check the du'a texts of the reading proof"
    static let synopsis = """
        proofkit dua list [--texts FILE] [--json]
               proofkit dua show NAME [--texts FILE] [--json]
               proofkit dua check TRANSCRIPT [--text NAME] [--texts FILE] [--voiced-seconds S] [--strict] [--json]
        """
    static let discussion = """
        Texts: the shipped texts (waking, sleeping, kursi, fatiha), then the user's file
        $XDG_CONFIG_HOME/proofkit/duas.json (or ~/.config/proofkit/duas.json) when it exists, then
        --texts FILE. A later text with the same name replaces an earlier one.

        The file format:
          {"texts": [{"name": "waking", "title": "Du'a on waking", "source": "Sahih al-Bukhari 6312",
                      "text": "الْحَمْدُ لِلَّهِ ...",
                      "key_words": [{"word": "الْحَمْدُ", "stems": ["حمد"]}, "النشور", ...],
                      "required": 4, "reading_seconds": 6}]}
          name: lowercase letters, digits, - and _. key_words: objects (word as written; stems, any
          of which heard counts) or plain strings. Stems are normalised on load (harakat stripped,
          letter forms unified); write them without ال and attached و/ب/ل. required defaults to
          all key words. reading_seconds, how long a calm reading takes (0 to 3600), may be left
          out: it is then estimated from the text, its Arabic letters (harakat and notes in
          parentheses not counted) at 5.5 a second, rounded up to the half second ('dua show'
          says so). It sets the voiced time a reading needs.
          key_words may be left out: proofkit then picks them from the text ('dua show' says so):
          its 5 longest distinct words (stems without attached و/ف/ب/ل/ك, ال and a leading ا, cut
          to 5 letters) that are not common words (الله, اللهم, رب, من, في, على, الذي, ...), leaving out
          notes in parentheses; all but one must be heard when there are 4 or 5 (4 of 5, 3 of 4),
          all when fewer.

        check: TRANSCRIPT is what a recogniser wrote ('-' reads stdin). It is normalised and
        searched for the text's key words (merged words, attached و/ال/ب/ل, Uthmani and Persian
        spellings are handled; each key word counts once). Accepted when enough key words are
        heard, or, with --voiced-seconds, when voice lasted twice the reading time and two key
        words were heard. A rejection exits 0, or 2 with --strict. TRANSCRIPT '-' reads stdin, and
        --texts FILE is read whole; either is refused past 4 MiB (exit 65, counted while reading,
        so /dev/zero or a /proc file cannot grow memory). An unreadable user config file
        ($XDG_CONFIG_HOME or ~/.config/proofkit/duas.json) is skipped.

        JSON (--json), one object per result:
          list:  {"name","title","source","key_words":[WORD...],"required","reading_seconds"} per text
          show:  {"name","title","source","text","key_words":[{"word","stems":[...]}],"required","reading_seconds",
                  "reading_seconds_estimated":BOOL,"key_words_picked":BOOL,"key_words_rule":STRING|null}
          check: {"text":NAME,"key_words":[{"word","heard":BOOL}],"heard":[WORD...],"heard_count",
                  "required","verdict":"accepted"|"rejected","rule":"keyWords"|"readTwice",
                  "reason":STRING|null,"voiced_seconds":NUMBER|null}

        Examples:
          proofkit dua list
          proofkit dua show waking
          proofkit dua check "الحمدلله الذي احيانا بعدما اماتنا واليه النشور"
          proofkit dua check "الحمد لله" --voiced-seconds 14 --json
          echo "الحمد لله رب العالمين" | proofkit dua check - --text fatiha --strict
        """
    static let options: [OptionSpec] = [
        .option("text", value: "NAME", help: "the text to check against (default: waking)"),
        .option("texts", value: "FILE", help: "a JSON file of extra texts (see below)"),
        .option("voiced-seconds", value: "S", help: "seconds read aloud, for the read-twice rule"),
        .flag("strict", help: "exit 2 when the check is rejected"),
        .flag("json", help: "one JSON object per result on stdout"),
    ]

    /// Runs the action: `list`, `show NAME` or `check TRANSCRIPT`.
    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        guard let action = arguments.positionals.first else {
            throw UsageError("missing an action: list, show NAME or check TRANSCRIPT")
        }
        switch action {
        case "list": return try list(arguments, io: io)
        case "show": return try show(arguments, io: io)
        case "check": return try check(arguments, io: io)
        default:
            throw UsageError("unknown action '\(action)': use list, show NAME or check TRANSCRIPT")
        }
    }

    /// `dua list`: each text of the catalog, one line (or one JSON object) a text.
    static func list(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        _ = try arguments.requirePositionals(1, names: "")
        let catalog = try DuaTexts.loadCatalog(arguments, io: io)
        for text in catalog.texts {
            if arguments.has("json") {
                io.printJSON([
                    "name": .string(text.name), "title": .string(text.title), "source": JSONValue(text.source),
                    "key_words": .array(text.keyWords.map { .string($0.word) }),
                    "required": .int(text.requiredKeyWords),
                    "reading_seconds": .rounded(text.readingSeconds, places: 3),
                ])
            } else {
                let pad = String(repeating: " ", count: max(1, 10 - text.name.count))
                io.print(
                    "\(text.name)\(pad)\(text.title) (\(text.keyWords.count) key words, \(text.requiredKeyWords) needed, \(seconds(text.readingSeconds)) s)"
                )
            }
        }
        return .success
    }

    /// `dua show NAME`: the text, its key words with their stems and its reading time.
    static func show(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        let name = try arguments.requirePositionals(2, names: "the NAME of a text")[1]
        let text = try DuaTexts.find(name, in: try DuaTexts.loadCatalog(arguments, io: io))
        if arguments.has("json") {
            io.printJSON([
                "name": .string(text.name), "title": .string(text.title), "source": JSONValue(text.source),
                "text": .string(text.text),
                "key_words": .array(
                    text.keyWords.map {
                        ["word": .string($0.word), "stems": .array($0.stems.map(JSONValue.string))]
                    }),
                "required": .int(text.requiredKeyWords),
                "reading_seconds": .rounded(text.readingSeconds, places: 3),
                "reading_seconds_estimated": .bool(text.readingIsEstimated),
                "key_words_picked": .bool(text.keyWordsArePicked),
                "key_words_rule": JSONValue(text.keyWordsArePicked ? KeyWordPicker.ruleDescription : nil),
            ])
        } else {
            io.print("\(text.title)" + (text.source.map { " (\($0))" } ?? ""))
            io.print(text.text)
            if text.keyWordsArePicked { io.print(KeyWordPicker.ruleDescription) }
            io.print("key words (\(text.requiredKeyWords) of \(text.keyWords.count) needed):")
            for keyWord in text.keyWords {
                io.print("  \(keyWord.word)  [\(keyWord.stems.joined(separator: ", "))]")
            }
            io.print(
                "reading time: \(seconds(text.readingSeconds)) s"
                    + (text.readingIsEstimated
                        ? " (estimated from the text: its Arabic letters at 5.5 a second)" : ""))
        }
        return .success
    }

    /// `dua check TRANSCRIPT` (`-`: stdin): the key words heard in it and the verdict.
    static func check(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        var transcript = try arguments.requirePositionals(2, names: "the TRANSCRIPT to check")[1]
        if transcript == "-" { transcript = try DuaTexts.readStandardInput() }
        let voiced = try arguments.double("voiced-seconds")
        if let voiced, voiced < 0 { throw UsageError("--voiced-seconds must be at least 0") }
        let catalog = try DuaTexts.loadCatalog(arguments, io: io)
        let text = try DuaTexts.find(arguments.value("text") ?? DuaCatalog.defaultName, in: catalog)
        let result = DuaMatcher(text: text).evaluate(transcript: transcript, voicedSeconds: voiced)
        if arguments.has("json") {
            io.printJSON(checkJSON(result, text: text, voiced: voiced))
        } else {
            printCheck(result, text: text, io: io)
        }
        return result.verdict.isAccepted || !arguments.has("strict") ? .success : .rejected
    }

    /// The `--json` object of a check: each key word and whether it was heard, the verdict and its rule.
    static func checkJSON(_ result: DuaMatchResult, text: DuaText, voiced: Double?) -> JSONValue {
        let heard = Set(result.heard)
        var reason: String?
        if case .rejected(let why) = result.verdict { reason = why.detail }
        return [
            "text": .string(text.name),
            "key_words": .array(
                text.keyWords.indices.map {
                    ["word": .string(text.keyWords[$0].word), "heard": .bool(heard.contains($0))]
                }),
            "heard": .array(result.heard.map { .string(text.keyWords[$0].word) }),
            "heard_count": .int(result.heard.count), "required": .int(result.required),
            "verdict": .string(result.verdict.name), "rule": .string(result.rule.rawValue),
            "reason": JSONValue(reason), "voiced_seconds": JSONValue(voiced),
        ]
    }

    /// A check as text: the count heard, each key word ticked or not, then the verdict.
    static func printCheck(_ result: DuaMatchResult, text: DuaText, io: CommandIO) {
        let heard = Set(result.heard)
        io.print(
            "\(text.title): heard \(result.heard.count) of \(text.keyWords.count) key words (\(result.required) needed)"
        )
        for index in text.keyWords.indices {
            io.print("  \(heard.contains(index) ? "[x]" : "[ ]") \(text.keyWords[index].word)")
        }
        switch result.verdict {
        case .accepted:
            io.print("accepted" + (result.rule == .readTwice ? " (read twice)" : ""))
        case .rejected(let why):
            io.print("rejected: \(why.detail)")
        }
    }

    static func seconds(_ value: Double) -> String {
        value == Double(Int(value)) ? String(Int(value)) : String(Double(Int(value * 10 + 0.5)) / 10)
    }
}
