/// Picks a text's key words from the text itself, for entries of a texts file without
/// `key_words` (so a user can add any du'a or ayah).
///
/// The rule (stated by `proofkit dua show`):
/// 1. the text's words outside parentheses (the notes of Hisnul Muslim, such as "(three
///    times)", are often not read; a text that is all in parentheses is taken whole),
///    normalised (``ArabicNormalizer``);
/// 2. each word's stem: the attached particles (و ف ب ل ك and the article ال, as ``DuaMatcher``
///    strips them from what is heard) removed while at least 3 letters remain, a leading alef
///    removed while at least 4 remain (recognisers often drop it: جعلني for اجعلني), then cut to
///    its first ``maxStemLetters`` letters (recognisers often change a word's ending);
/// 3. words that are a common function word or a name of God said in almost every du'a
///    (``commonWords``: الله, اللهم, رب, من, في, على, الذي, ...), by themselves or with their
///    particles stripped (فإن, وبك), and stems shorter than 3 letters are left out, and each stem
///    counts once;
/// 4. the ``count`` longest stems (ties: the earlier word) are the key words, in text order;
/// 5. all but one of them must be heard when there are 4 or 5 (4 of 5, 3 of 4: a recogniser
///    often mishears one word), all of them when there are fewer.
/// A text with no word left (all common words) keeps its longest word, so it always has one.
public enum KeyWordPicker {
    /// Key words picked per text. 5.
    public static let count = 5
    /// The least fraction that must be heard: 0.75 (4 of 5, 3 of 4, 3 of 3, 2 of 2, 1 of 1).
    public static let requiredFraction = 0.75
    /// Longest stem kept, in letters. 5.
    public static let maxStemLetters = 5
    /// Stems never picked (normalised, without particles): function words, pronouns with
    /// prepositions, and the names of God that open most du'as.
    public static let commonWords: Set<String> = [
        "الله", "اللهم", "له", "لله", "رب", "ربي", "ربنا", "الاه", "اله", "من", "في", "علي", "الي",
        "عن", "ما", "لا", "ان", "او", "ثم", "قد", "لم", "لن", "هو", "هي", "هم", "انت", "انا", "نحن",
        "كل", "يا", "الذي", "التي", "الذين", "هذا", "هذه", "ذلك", "تلك", "كما", "اذا", "به", "بك",
        "بي", "لك", "لي", "لنا", "منك", "مني", "منه", "عليك", "عليه", "علينا", "فيه", "اليك", "اليه",
        "عند", "الا", "انه", "انك", "اني", "بعد", "قبل", "مع", "حتي", "غير", "بين", "ها", "كم", "نا",
        "لها", "لهم", "بها", "بهم", "فيها", "عليها", "منها", "عليهم", "منهم", "اليها", "كان", "ليس",
        "اما", "لما", "بما", "مما", "انما", "كذلك", "هنا", "ذا",
    ]

    /// The rule in one sentence, for `proofkit dua show`.
    public static let ruleDescription =
        "key words picked from the text: its \(count) longest distinct words (stems without attached و/ف/ب/ل/ك, ال and a leading ا, cut to \(maxStemLetters) letters) that are not common words (الله, اللهم, رب, من, في, على, الذي, ...), outside parentheses; all but one of them must be heard when there are 4 or 5 (4 of 5), all when fewer"

    /// The key words of `text` and how many must be heard.
    /// - Parameter text: the text as written (harakat, punctuation and notes in parentheses are
    ///   fine).
    /// - Returns: the key words in text order (empty only when the text has no Arabic word) and
    ///   the number required (at least 1).
    public static func pick(from text: String) -> (keyWords: [KeyWord], required: Int) {
        var candidates: [(stem: String, word: String, position: Int)] = []
        var seen = Set<String>()
        var fallback: (stem: String, word: String)?
        var written = writtenWords(outsideParentheses: text)
        if !written.contains(where: { !ArabicNormalizer.normalize($0).isEmpty }) {
            // The whole text is in parentheses (a reference such as "(قل هو الله أحد...)"): use it.
            written = writtenWords(outsideParentheses: text.filter { $0 != "(" && $0 != ")" })
        }
        for (position, written) in written.enumerated() {
            let normalized = ArabicNormalizer.normalize(written)
            guard !normalized.isEmpty else { continue }
            let stem = stemOf(normalized)
            if fallback == nil || stem.count > fallback!.stem.count { fallback = (stem, written) }
            guard stem.count >= 3, !isCommon(normalized), seen.insert(stem).inserted else { continue }
            candidates.append((stem, written, position))
        }
        if candidates.isEmpty, let fallback {
            candidates = [(fallback.stem, fallback.word, 0)]
        }
        let chosen = candidates.enumerated()
            .sorted { a, b in
                a.element.stem.count != b.element.stem.count
                    ? a.element.stem.count > b.element.stem.count : a.offset < b.offset
            }
            .prefix(count)
            .sorted { $0.offset < $1.offset }
            .map { KeyWord(word: $0.element.word, stems: [$0.element.stem]) }
        let required = max(1, chosen.count >= 4 ? chosen.count - 1 : chosen.count)
        return (chosen, chosen.isEmpty ? 1 : required)
    }

    /// Whether a normalised word is a common word, itself or with its particles stripped
    /// (فإن, وبك, لها: the particle may leave only 2 letters here).
    static func isCommon(_ word: String) -> Bool {
        DuaMatcher.forms(of: Array(word.unicodeScalars)).contains { form in
            var view = String.UnicodeScalarView()
            view.append(contentsOf: form)
            return commonWords.contains(String(view))
        }
    }

    /// The stem of a normalised word: particles stripped while at least 3 letters remain, then
    /// cut to ``maxStemLetters``.
    static func stemOf(_ word: String) -> String {
        var scalars = Array(word.unicodeScalars)
        var stripped = true
        var layers = 0
        while stripped && layers < 2 {
            stripped = false
            for prefix in DuaMatcher.prefixes where scalars.count >= prefix.count + 3 && scalars.starts(with: prefix) {
                scalars.removeFirst(prefix.count)
                stripped = true
                layers += 1
                break
            }
        }
        // A leading alef (hamzat al-wasl or qat': اجعلني, اغفر) is often not written by a
        // recogniser; without it, a stem of 4 letters or more is found inside either spelling.
        if scalars.first == "\u{0627}" && scalars.count >= 5 { scalars.removeFirst() }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars.prefix(maxStemLetters))
        return String(view)
    }

    /// The text's words as written (split at whitespace), leaving out what is inside ( ).
    static func writtenWords(outsideParentheses text: String) -> [String] {
        var words: [String] = []
        var current = ""
        var depth = 0
        for character in text {
            if character == "(" { depth += 1 }
            if depth == 0 && !character.isWhitespace && character != ")" {
                current.append(character)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
            if character == ")" { depth = max(0, depth - 1) }
        }
        if !current.isEmpty { words.append(current) }
        return words.map { word in
            String(
                word.unicodeScalars.filter {
                    !["،", ",", ".", "؛", ":", "!", "؟", "?", "﴿", "﴾", "\""].contains(Character($0))
                }.map(Character.init))
        }
    }
}
