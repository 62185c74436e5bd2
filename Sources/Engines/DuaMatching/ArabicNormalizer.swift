/// Normalises Arabic text the way speech recognisers differ, so that key words can be compared.
///
/// Recognisers drop harakat, merge short words and swap letter forms. The normaliser:
/// - strips harakat and other combining marks (U+064B–U+065F), Quranic annotation marks
///   (U+0610–U+061A, U+06D6–U+06ED, U+08D3–U+08FF), the dagger alef (U+0670) and tatweel (U+0640);
/// - unifies alef forms (أ إ آ ٱ and wavy-hamza alefs to ا), ى to ي, ة to ه, ؤ to و, ئ to ي;
/// - maps Persian ی and ک (and Urdu ہ ۃ) to their Arabic forms, and the ligature ﷲ to الله;
/// - turns everything else (punctuation, digits of any script, Latin letters, symbols) into word
///   breaks, and joins the words with single spaces.
///
/// Pure and allocation-light; no Foundation.
public enum ArabicNormalizer {
    /// The normalised text: Arabic letters only, words separated by one space, no leading or
    /// trailing space. Empty when the input has no Arabic letters.
    /// - Parameter text: any text (a transcript, a du'a with full harakat, Uthmani script).
    public static func normalize(_ text: String) -> String {
        normalizedWords(text).joined(separator: " ")
    }

    /// The text as a recogniser writes it: harakat, Quranic marks, tatweel and the brackets
    /// ( ) ﴿ ﴾ removed, letters kept as written (hamza forms, ة and ى stay), runs of spaces made
    /// one. For scoring a text against speech (Whisper writes no harakat).
    /// - Parameter text: the text as written.
    public static func withoutMarks(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var lastWasSpace = true
        for scalar in text.unicodeScalars {
            if case .drop = classify(scalar) { continue }
            if ["(", ")", "\u{FD3E}", "\u{FD3F}"].contains(scalar) { continue }
            if scalar.properties.isWhitespace {
                if !lastWasSpace { out.append(" ") }
                lastWasSpace = true
                continue
            }
            out.append(scalar)
            lastWasSpace = false
        }
        while out.last == " " { out.removeLast() }
        return String(out)
    }

    /// The words of a text as a reader says them, for scoring the text against speech: runs of
    /// letters as written (harakat, Quranic marks and tatweel dropped; hamza forms, ة and ى kept),
    /// everything else (punctuation, brackets, digits, markup, ﷺ) a word break, and a lone "و"
    /// joined to the word after it (Arabic writes it attached; texts files sometimes do not).
    /// - Parameter text: the text as written in a texts file.
    /// - Returns: the words as written and, for each, its normalised letters (as
    ///   ``normalize(_:)`` writes them); both empty when the text has no Arabic letters.
    public static func spokenWords(_ text: String) -> (written: [String], normalized: [String]) {
        var written: [String] = []
        var normalized: [String] = []
        var word = String.UnicodeScalarView()
        var letters = String.UnicodeScalarView()
        func flush() {
            guard !word.isEmpty else { return }
            written.append(String(word))
            normalized.append(String(letters))
            word = String.UnicodeScalarView()
            letters = String.UnicodeScalarView()
        }
        for scalar in text.unicodeScalars {
            switch classify(scalar) {
            case .drop: continue
            case .letter(let mapped):
                word.append(scalar)
                letters.append(mapped)
            case .ligatureAllah:
                word.append(contentsOf: "الله".unicodeScalars)
                letters.append(contentsOf: "الله".unicodeScalars)
            case .separator: flush()
            }
        }
        flush()
        var index = 0
        while index < written.count {
            if normalized[index] == "و", index + 1 < written.count {
                written[index + 1] = written[index] + written[index + 1]
                normalized[index + 1] = normalized[index] + normalized[index + 1]
                written.remove(at: index)
                normalized.remove(at: index)
            } else {
                index += 1
            }
        }
        return (written, normalized)
    }

    /// The normalised words of `text` (see ``normalize(_:)``).
    public static func normalizedWords(_ text: String) -> [String] {
        var words: [String] = []
        var current = String.UnicodeScalarView()
        func flush() {
            if !current.isEmpty {
                words.append(String(current))
                current = String.UnicodeScalarView()
            }
        }
        for scalar in text.unicodeScalars {
            switch classify(scalar) {
            case .drop: continue
            case .letter(let mapped): current.append(mapped)
            case .ligatureAllah: current.append(contentsOf: "الله".unicodeScalars)
            case .separator: flush()
            }
        }
        flush()
        return words
    }

    enum Class {
        case drop
        case letter(Unicode.Scalar)
        case ligatureAllah
        case separator
    }

    static func classify(_ scalar: Unicode.Scalar) -> Class {
        let v = scalar.value
        switch v {
        // Combining marks: harakat, tanwin, shadda, sukun, maddah/hamza above and below, ...
        case 0x064B...0x065F, 0x0670, 0x0640: return .drop
        // Quranic annotation signs and small high letters.
        case 0x0610...0x061A, 0x06D6...0x06ED, 0x08D3...0x08FF: return .drop
        // Zero-width joiners and marks that recognisers leave in.
        case 0x200C, 0x200D, 0x200E, 0x200F, 0xFEFF: return .drop
        // Alef forms.
        case 0x0622, 0x0623, 0x0625, 0x0671, 0x0672, 0x0673, 0x0675: return .letter("\u{0627}")
        case 0x0649, 0x0626, 0x06CC, 0x06D0, 0x06D2: return .letter("\u{064A}")  // ى ئ ی ې ے -> ي
        case 0x0629, 0x06C3, 0x06C1, 0x06BE, 0x06D5: return .letter("\u{0647}")  // ة ۃ ہ ھ ە -> ه
        case 0x0624: return .letter("\u{0648}")  // ؤ -> و
        case 0x06A9, 0x06AA: return .letter("\u{0643}")  // ک ڪ -> ك
        case 0xFDF2: return .ligatureAllah
        // Arabic letters (hamza, alef ... yeh).
        case 0x0621...0x063A, 0x0641...0x064A: return .letter(scalar)
        // Other Arabic-script letters (Persian پ چ ژ گ, ...): keep as they are.
        case 0x0674...0x06D3: return .letter(scalar)
        default: return .separator
        }
    }
}
