public import ProofkitCore

/// One key word of a ``DuaText``: how it is written in the text, and the normalised stems any of
/// which counts as hearing it.
public struct KeyWord: Sendable, Equatable {
    /// The word as written in the text (with harakat), for display.
    public var word: String
    /// Normalised stems (see ``ArabicNormalizer``); hearing any one of them counts. Never empty.
    public var stems: [String]

    /// Creates a key word. Stems are normalised here, so they may be written with harakat.
    public init(word: String, stems: [String]) {
        self.word = word
        self.stems = stems.map(ArabicNormalizer.normalize).filter { !$0.isEmpty }
    }
}

/// A text to read aloud for the reading proof: a du'a or an ayah, with its key words.
public struct DuaText: Sendable, Equatable {
    /// A short unique name used on the command line, e.g. `"waking"`: lowercase ASCII letters,
    /// digits, `-` and `_`.
    public var name: String
    /// A human title, e.g. "Du'a on waking".
    public var title: String
    /// The full text with harakat, for display. It is never compared with a transcript.
    public var text: String
    /// Where the text comes from, e.g. "Sahih al-Bukhari 6312", or `nil`.
    public var source: String?
    /// The key words the matcher listens for.
    public var keyWords: [KeyWord]
    /// How many different key words must be heard, 1...keyWords.count.
    public var requiredKeyWords: Int
    /// How long a calm reading takes.
    public var readingDuration: Duration
    /// Whether the key words were picked from the text by ``KeyWordPicker`` (the entry had no
    /// `key_words`). Default `false`.
    public var keyWordsArePicked: Bool
    /// Whether ``readingDuration`` was estimated from the text (``estimatedReadingSeconds(of:)``:
    /// the entry had no `reading_seconds`). Default `false`.
    public var readingIsEstimated: Bool

    /// Creates a text.
    /// - Throws: `ProofkitError` `.decodeFailed` when a field is out of range (see ``validate()``).
    public init(
        name: String, title: String, text: String, source: String? = nil, keyWords: [KeyWord],
        requiredKeyWords: Int, readingDuration: Duration, keyWordsArePicked: Bool = false,
        readingIsEstimated: Bool = false
    ) throws(ProofkitError) {
        self.readingIsEstimated = readingIsEstimated
        self.name = name
        self.title = title
        self.text = text
        self.source = source
        self.keyWords = keyWords
        self.requiredKeyWords = requiredKeyWords
        self.readingDuration = readingDuration
        self.keyWordsArePicked = keyWordsArePicked
        try validate()
    }

    /// Arabic letters a calm reading says per second, for ``estimatedReadingSeconds(of:)``: 5.5,
    /// between the shipped texts' own figures (4.8 for al-Fatiha to 6.7 for the waking du'a).
    public static let lettersPerSecond = 5.5

    /// How long a calm reading of `text` takes, estimated from its Arabic letters (harakat, marks
    /// and notes in parentheses not counted) at ``lettersPerSecond``, rounded up to the half
    /// second; 0.7 s a word for a text with no Arabic letter. At least 1 s, at most 3600 s.
    /// - Parameter text: the text as written.
    /// - Returns: seconds.
    public static func estimatedReadingSeconds(of text: String) -> Double {
        var letters = 0
        var words = 0
        var depth = 0
        var inWord = false
        for scalar in text.unicodeScalars {
            if scalar == "(" { depth += 1 }
            if scalar == ")" { depth = max(0, depth - 1) }
            let isSpace = scalar.properties.isWhitespace
            if depth == 0 && !isSpace && !inWord { words += 1 }
            inWord = !isSpace && depth == 0
            guard depth == 0 else { continue }
            let value = scalar.value
            if (0x0621...0x063A).contains(value) || (0x0641...0x064A).contains(value)
                || (0x0671...0x06D3).contains(value)
            {
                letters += 1
            }
        }
        let seconds = letters > 0 ? Double(letters) / lettersPerSecond : Double(words) * 0.7
        return min(3600, max(1, (seconds * 2).rounded(.up) / 2))
    }

    /// The reading time in seconds.
    public var readingSeconds: Double {
        let parts = readingDuration.components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }

    /// Checks the fields.
    /// - Throws: `ProofkitError` `.decodeFailed` naming the text and the problem.
    public func validate() throws(ProofkitError) {
        func bad(_ message: String) -> ProofkitError {
            ProofkitError(.decodeFailed, "text '\(name)': \(message)")
        }
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-_")
        guard !name.isEmpty, name.count <= 64, name.allSatisfy({ allowed.contains($0) }) else {
            throw bad("the name must be 1-64 lowercase letters, digits, '-' or '_'")
        }
        guard !keyWords.isEmpty else { throw bad("it needs at least one key word") }
        for keyWord in keyWords where keyWord.stems.isEmpty {
            throw bad("key word '\(keyWord.word)' has no Arabic stem")
        }
        guard (1...keyWords.count).contains(requiredKeyWords) else {
            throw bad("required key words must be 1...\(keyWords.count), got \(requiredKeyWords)")
        }
        guard readingSeconds > 0, readingSeconds <= 3600 else {
            throw bad("the reading time must be more than 0 and at most 3600 s")
        }
    }
}

/// A set of ``DuaText``s: the shipped ones, plus any from the user's JSON file.
///
/// ## The JSON format (`duas.json`)
/// ```json
/// {
///   "texts": [
///     {
///       "name": "waking",
///       "title": "Du'a on waking",
///       "source": "Sahih al-Bukhari 6312",
///       "text": "الْحَمْدُ لِلَّهِ الَّذِي أَحْيَانَا بَعْدَ مَا أَمَاتَنَا وَإِلَيْهِ النُّشُورُ",
///       "key_words": [
///         {"word": "الْحَمْدُ", "stems": ["حمد"]},
///         "النشور"
///       ],
///       "required": 4,
///       "reading_seconds": 6
///     }
///   ]
/// }
/// ```
/// - `name` (required): lowercase letters, digits, `-`, `_`; a user text with a shipped text's
///   name replaces it.
/// - `text` (required): the full text, for display only; it is never compared with a transcript.
/// - `key_words` (optional): when omitted, ``KeyWordPicker`` picks them from the text (its 5
///   longest distinct uncommon words, 4 of 5 needed). Otherwise each either an object (`word` as written, `stems`: any of these
///   heard counts) or a plain string (the word is its own stem). Stems are normalised when loaded
///   (harakat stripped, letter forms unified), and should be written without the article ال or
///   attached و/ب/ل: those are stripped from what is heard. A stem of 4 letters or more is also
///   found inside merged words (بعدمااماتنا).
/// - `required` (optional, default: all key words, or the picker's count when it picked them): how
///   many different key words must be heard.
/// - `reading_seconds` (optional): how long a calm reading takes, in seconds (0 to 3600). When
///   omitted it is estimated from the text (``DuaText/estimatedReadingSeconds(of:)``: its Arabic
///   letters at 5.5 a second, rounded up to the half second).
/// - `title`, `source` (optional).
public struct DuaCatalog: Sendable, Equatable {
    /// The texts, in order.
    public var texts: [DuaText]

    /// Creates a catalogue.
    public init(texts: [DuaText]) { self.texts = texts }

    /// The texts that ship with proofkit (parsed from ``builtInJSON``).
    public static let builtIn: DuaCatalog = {
        do {
            return try DuaCatalog(json: builtInJSON)
        } catch {
            preconditionFailure("the built-in du'a texts are invalid: \(error)")
        }
    }()

    /// The default text's name: the waking du'a.
    public static let defaultName = "waking"

    /// The text named `name`, or `nil`.
    public func text(named name: String) -> DuaText? { texts.first { $0.name == name } }

    /// This catalogue with `other`'s texts added; a text with the same name is replaced in place.
    public func merging(_ other: DuaCatalog) -> DuaCatalog {
        var result = texts
        for text in other.texts {
            if let index = result.firstIndex(where: { $0.name == text.name }) {
                result[index] = text
            } else {
                result.append(text)
            }
        }
        return DuaCatalog(texts: result)
    }

    /// Parses the JSON format above.
    /// - Throws: `ProofkitError` `.decodeFailed` naming the text and field at fault.
    public init(json: String) throws(ProofkitError) {
        let root = try JSONReader.parse(json)
        guard case .array(let items)? = root["texts"] else {
            throw ProofkitError(.decodeFailed, "expected an object with a \"texts\" array")
        }
        var texts: [DuaText] = []
        var names = Set<String>()
        for (position, item) in items.enumerated() {
            let label = "texts[\(position)]"
            func bad(_ message: String) -> ProofkitError {
                ProofkitError(.decodeFailed, "\(label): \(message)")
            }
            func string(_ key: String, required: Bool) throws(ProofkitError) -> String? {
                switch item[key] {
                case .string(let value)?: return value
                case nil, .null?: if required { throw bad("missing \"\(key)\"") } else { return nil }
                default: throw bad("\"\(key)\" must be a string")
                }
            }
            guard case .object = item else { throw bad("must be an object") }
            guard let name = try string("name", required: true),
                let text = try string("text", required: true)
            else { throw bad("missing \"name\" or \"text\"") }
            var picked: (keyWords: [KeyWord], required: Int)?
            let rawKeyWords: [JSONNode]
            switch item["key_words"] {
            case .array(let values)?: rawKeyWords = values
            case nil, .null?:
                rawKeyWords = []
                picked = KeyWordPicker.pick(from: text)
                guard !picked!.keyWords.isEmpty else { throw bad("the text has no Arabic word to pick key words from") }
            default: throw bad("\"key_words\" must be an array")
            }
            var keyWords: [KeyWord] = picked?.keyWords ?? []
            for raw in rawKeyWords {
                switch raw {
                case .string(let word):
                    keyWords.append(KeyWord(word: word, stems: [word]))
                case .object:
                    guard case .string(let word)? = raw["word"] else { throw bad("a key word needs a \"word\"") }
                    var stems: [String] = []
                    switch raw["stems"] {
                    case .array(let values)?:
                        for value in values {
                            guard case .string(let stem) = value else { throw bad("stems must be strings") }
                            stems.append(stem)
                        }
                    case nil: stems = [word]
                    default: throw bad("\"stems\" must be an array of strings")
                    }
                    keyWords.append(KeyWord(word: word, stems: stems))
                default: throw bad("a key word must be a string or an object")
                }
            }
            var required = picked?.required ?? keyWords.count
            switch item["required"] {
            case .number(let value)?:
                guard value == Double(Int(value)) else { throw bad("\"required\" must be a whole number") }
                required = Int(value)
            case nil: break
            default: throw bad("\"required\" must be a number")
            }
            let seconds: Double
            switch item["reading_seconds"] {
            case .number(let value)?:
                guard value > 0, value <= 3600 else { throw bad("\"reading_seconds\" must be in (0, 3600]") }
                seconds = value
            case nil, .null?: seconds = DuaText.estimatedReadingSeconds(of: text)
            default: throw bad("\"reading_seconds\" must be a number")
            }
            let dua = try DuaText(
                name: name, title: try string("title", required: false) ?? name, text: text,
                source: try string("source", required: false), keyWords: keyWords,
                requiredKeyWords: required,
                readingDuration: .milliseconds(Int64(seconds * 1000)), keyWordsArePicked: picked != nil,
                readingIsEstimated: item["reading_seconds"] == nil || item["reading_seconds"] == .null)
            guard names.insert(name).inserted else { throw bad("the name '\(name)' is used twice") }
            texts.append(dua)
        }
        self.texts = texts
    }

    /// The shipped texts, in the JSON format above (embedded: an engine reads no files).
    public static let builtInJSON: String = """
        {
          "texts": [
            {
              "name": "waking",
              "title": "Du'a on waking",
              "source": "Sahih al-Bukhari 6312",
              "text": "الْحَمْدُ لِلَّهِ الَّذِي أَحْيَانَا بَعْدَ مَا أَمَاتَنَا وَإِلَيْهِ النُّشُورُ",
              "key_words": [
                {"word": "الْحَمْدُ", "stems": ["حمد"]},
                {"word": "أَحْيَانَا", "stems": ["احيا"]},
                {"word": "أَمَاتَنَا", "stems": ["امات"]},
                {"word": "وَإِلَيْهِ", "stems": ["اليه"]},
                {"word": "النُّشُورُ", "stems": ["نشور"]}
              ],
              "required": 4,
              "reading_seconds": 6
            },
            {
              "name": "sleeping",
              "title": "Du'a before sleeping",
              "source": "Sahih al-Bukhari 6324",
              "text": "بِاسْمِكَ اللَّهُمَّ أَمُوتُ وَأَحْيَا",
              "key_words": [
                {"word": "بِاسْمِكَ", "stems": ["اسمك"]},
                {"word": "اللَّهُمَّ", "stems": ["اللهم"]},
                {"word": "أَمُوتُ", "stems": ["اموت"]},
                {"word": "وَأَحْيَا", "stems": ["احيا"]}
              ],
              "required": 3,
              "reading_seconds": 3
            },
            {
              "name": "kursi",
              "title": "Ayat al-Kursi, first line",
              "source": "Quran 2:255",
              "text": "اللَّهُ لَا إِلَٰهَ إِلَّا هُوَ الْحَيُّ الْقَيُّومُ ۚ لَا تَأْخُذُهُ سِنَةٌ وَلَا نَوْمٌ",
              "key_words": [
                {"word": "الْحَيُّ", "stems": ["الحي"]},
                {"word": "الْقَيُّومُ", "stems": ["قيوم"]},
                {"word": "تَأْخُذُهُ", "stems": ["تاخذه"]},
                {"word": "سِنَةٌ", "stems": ["سنه"]},
                {"word": "نَوْمٌ", "stems": ["نوم"]}
              ],
              "required": 4,
              "reading_seconds": 8
            },
            {
              "name": "fatiha",
              "title": "Al-Fatiha",
              "source": "Quran 1:1-7",
              "text": "بِسْمِ اللَّهِ الرَّحْمَٰنِ الرَّحِيمِ ۝ الْحَمْدُ لِلَّهِ رَبِّ الْعَالَمِينَ ۝ الرَّحْمَٰنِ الرَّحِيمِ ۝ مَالِكِ يَوْمِ الدِّينِ ۝ إِيَّاكَ نَعْبُدُ وَإِيَّاكَ نَسْتَعِينُ ۝ اهْدِنَا الصِّرَاطَ الْمُسْتَقِيمَ ۝ صِرَاطَ الَّذِينَ أَنْعَمْتَ عَلَيْهِمْ غَيْرِ الْمَغْضُوبِ عَلَيْهِمْ وَلَا الضَّالِّينَ",
              "key_words": [
                {"word": "الْعَالَمِينَ", "stems": ["عالمين"]},
                {"word": "مَالِكِ", "stems": ["مالك", "ملك"]},
                {"word": "نَعْبُدُ", "stems": ["نعبد"]},
                {"word": "نَسْتَعِينُ", "stems": ["نستعين"]},
                {"word": "الصِّرَاطَ", "stems": ["صراط"]},
                {"word": "الْمُسْتَقِيمَ", "stems": ["مستقيم"]},
                {"word": "الْمَغْضُوبِ", "stems": ["مغضوب"]},
                {"word": "الضَّالِّينَ", "stems": ["ضالين", "ظالين"]}
              ],
              "required": 6,
              "reading_seconds": 30
            }
          ]
        }
        """
}
