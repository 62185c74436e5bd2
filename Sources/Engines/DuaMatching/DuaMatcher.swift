public import ProofkitCore

/// How a reading-proof verdict was reached.
public enum DuaRule: String, Sendable, Equatable {
    /// Enough different key words were heard.
    case keyWords
    /// Read aloud for twice the reading time, with at least two key words heard.
    case readTwice
    /// No recogniser: voiced seconds against the reading time.
    case voiceOnly
    /// The built-in recogniser found the whole text about as likely as its own transcript (its
    /// forced score, `ForcedScoreRule` in SpeechRecognition), though too few key words were
    /// heard.
    case forcedScore
}

/// The matcher's answer for one transcript (or the union of several).
public struct DuaMatchResult: Sendable, Equatable {
    /// Accepted (score: key words heard, or voiced seconds for the voice-only rule) or rejected
    /// (kind `incomplete`, with a sentence saying what is missing).
    public var verdict: Verdict
    /// The rule that accepted, or the main rule that was tried when rejected.
    public var rule: DuaRule
    /// Indices into ``DuaText/keyWords`` of the key words heard, ascending.
    public var heard: [Int]
    /// The key words heard, as written in the text (``KeyWord/word``), in the order of ``heard``.
    public var heardWords: [String] = []
    /// How many different key words must be heard.
    public var required: Int
    /// The voiced seconds the verdict used, if any.
    public var voicedSeconds: Double?
}

/// Finds a ``DuaText``'s key words in recogniser transcripts and judges the reading.
///
/// ## Matching
/// The transcript is normalised (``ArabicNormalizer``) and split into words. Each word yields
/// candidate forms: itself and the word with attached particles stripped (و ف ب ل ك, the article
/// ال, and their combinations وال بال لل ...). A key word is heard when one of its stems begins a
/// candidate form (so النشور, والنشور and بالنشور all hear نشور, but محمد does not hear حمد), or,
/// for stems of 4 letters or more, appears anywhere inside a word (merged words such as
/// بعدمااماتنا), or, for stems of 5 letters or more, begins a candidate form but for one letter
/// (recognisers swap letters that sound alike: صبحان for سبحان). Each key word counts once however often it is heard. The full text is never
/// compared: recognisers drop, merge and respell too much.
///
/// ## Verdict
/// 1. At least ``DuaText/requiredKeyWords`` different key words heard: accepted.
/// 2. The read-twice rule: voiced for at least twice ``DuaText/readingDuration`` and at least two
///    key words heard: accepted.
/// 3. The voice-only fallback (no recogniser at all): voiced seconds at least the reading time
///    times ``voiceOnlyFactor``: accepted.
/// Otherwise rejected with kind `incomplete`.
public struct DuaMatcher: Sendable {
    /// The text listened for.
    public let text: DuaText
    /// For the voice-only rule, how many reading times of voice are needed. Default 1.
    public var voiceOnlyFactor: Double
    /// For the read-twice rule, how many reading times of voice are needed. Default 2;
    /// `.infinity` turns the rule off.
    public var readTwiceFactor: Double
    /// For the read-twice rule, how many key words are needed. Default 2.
    public var readTwiceKeyWords: Int

    private let stems: [[(scalars: [Unicode.Scalar], keyWord: Int)]]

    /// Creates a matcher for `text` with the documented defaults.
    public init(text: DuaText, voiceOnlyFactor: Double = 1, readTwiceFactor: Double = 2, readTwiceKeyWords: Int = 2) {
        self.text = text
        self.voiceOnlyFactor = voiceOnlyFactor
        self.readTwiceFactor = readTwiceFactor
        self.readTwiceKeyWords = readTwiceKeyWords
        stems = text.keyWords.enumerated().map { index, keyWord in
            keyWord.stems.map { (Array($0.unicodeScalars), index) }
        }
    }

    /// The particles stripped from the front of a heard word, longest first.
    static let prefixes: [[Unicode.Scalar]] = [
        "وبال", "فبال", "وكال", "وال", "فال", "بال", "كال", "ولل", "لل", "ال", "و", "ف", "ب", "ل", "ك",
    ].map { Array($0.unicodeScalars) }

    /// The indices of the key words heard in `transcript`, ascending.
    /// - Parameter transcript: recogniser output, any script mix (normalised here).
    public func keyWordsHeard(in transcript: String) -> [Int] {
        var heard = [Bool](repeating: false, count: text.keyWords.count)
        for word in ArabicNormalizer.normalizedWords(transcript) {
            let scalars = Array(word.unicodeScalars)
            let forms = Self.forms(of: scalars)
            for group in stems {
                for stem in group where !heard[stem.keyWord] {
                    if forms.contains(where: { $0.starts(with: stem.scalars) })
                        || (stem.scalars.count >= 4 && Self.contains(scalars, stem.scalars))
                        || (stem.scalars.count >= 5
                            && forms.contains(where: { Self.startsNearly($0, with: stem.scalars) }))
                    {
                        heard[stem.keyWord] = true
                    }
                }
            }
        }
        return heard.indices.filter { heard[$0] }
    }

    /// The word itself and the word with up to two layers of particles stripped (each leaving at
    /// least two letters).
    static func forms(of word: [Unicode.Scalar]) -> [ArraySlice<Unicode.Scalar>] {
        var forms: [ArraySlice<Unicode.Scalar>] = [word[...]]
        var frontier: [ArraySlice<Unicode.Scalar>] = [word[...]]
        for _ in 0..<2 {
            var next: [ArraySlice<Unicode.Scalar>] = []
            for form in frontier {
                for prefix in prefixes where form.count >= prefix.count + 2 && form.starts(with: prefix) {
                    next.append(form.dropFirst(prefix.count))
                }
            }
            forms += next
            frontier = next
        }
        return forms
    }

    /// Whether `form` begins with `stem` but for at most one letter (recognisers swap letters
    /// that sound alike: صبحان for سبحان, ملاعكه for ملايكه).
    static func startsNearly(_ form: ArraySlice<Unicode.Scalar>, with stem: [Unicode.Scalar]) -> Bool {
        guard form.count >= stem.count else { return false }
        var differences = 0
        for (a, b) in zip(form, stem) where a != b {
            differences += 1
            if differences > 1 { return false }
        }
        return true
    }

    static func contains(_ haystack: [Unicode.Scalar], _ needle: [Unicode.Scalar]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        for start in 0...(haystack.count - needle.count)
        where haystack[start] == needle[0] && haystack[start..<start + needle.count].elementsEqual(needle) {
            return true
        }
        return false
    }

    /// Judges a transcript, with the voiced seconds when the voice gate ran.
    /// - Parameters:
    ///   - transcript: everything the recogniser wrote (lines may be joined with spaces).
    ///   - voicedSeconds: voiced time from the voice gate, or `nil` (no read-twice rule).
    public func evaluate(transcript: String, voicedSeconds: Double? = nil) -> DuaMatchResult {
        evaluate(heard: keyWordsHeard(in: transcript), voicedSeconds: voicedSeconds)
    }

    /// Judges a set of key words already heard (e.g. the union over a live session).
    /// - Parameters:
    ///   - heard: indices into ``DuaText/keyWords`` (duplicates and out-of-range ignored).
    ///   - voicedSeconds: voiced time from the voice gate, or `nil`.
    public func evaluate(heard: [Int], voicedSeconds: Double?) -> DuaMatchResult {
        let unique = Set(heard.filter { text.keyWords.indices.contains($0) }).sorted()
        let words = unique.map { text.keyWords[$0].word }
        let count = unique.count
        let required = text.requiredKeyWords
        if count >= required {
            return DuaMatchResult(
                verdict: .accepted(score: Double(count)), rule: .keyWords, heard: unique, heardWords: words,
                required: required, voicedSeconds: voicedSeconds)
        }
        let needed = readTwiceFactor * text.readingSeconds
        if let voicedSeconds, voicedSeconds >= needed, count >= readTwiceKeyWords {
            return DuaMatchResult(
                verdict: .accepted(score: Double(count)), rule: .readTwice, heard: unique, heardWords: words,
                required: required, voicedSeconds: voicedSeconds)
        }
        var detail = "heard \(count) of \(text.keyWords.count) key words (\(required) needed)"
        if let voicedSeconds, needed.isFinite {
            detail +=
                "; read aloud for \(Self.format(voicedSeconds)) s (\(Self.format(needed)) s with \(readTwiceKeyWords) key words also counts)"
        }
        return DuaMatchResult(
            verdict: .rejected(reason: RejectionReason(.incomplete, detail)), rule: .keyWords,
            heard: unique, heardWords: words, required: required, voicedSeconds: voicedSeconds)
    }

    /// The voice-only fallback, for when there is no recogniser: voiced seconds against the
    /// reading time times ``voiceOnlyFactor``.
    /// - Parameter voicedSeconds: voiced time from the voice gate.
    public func evaluateVoiceOnly(voicedSeconds: Double) -> DuaMatchResult {
        let needed = voiceOnlyFactor * text.readingSeconds
        let verdict: Verdict =
            voicedSeconds >= needed
            ? .accepted(score: voicedSeconds)
            : .rejected(
                reason: RejectionReason(
                    .incomplete, "read aloud for \(Self.format(voicedSeconds)) s of the \(Self.format(needed)) s needed"
                ))
        return DuaMatchResult(
            verdict: verdict, rule: .voiceOnly, heard: [], required: text.requiredKeyWords,
            voicedSeconds: voicedSeconds)
    }

    /// One decimal place, without Foundation.
    static func format(_ seconds: Double) -> String {
        let tenths = Int(seconds * 10 + (seconds >= 0 ? 0.5 : -0.5))
        let sign = tenths < 0 ? "-" : ""
        let magnitude = abs(tenths)
        return "\(sign)\(magnitude / 10).\(magnitude % 10)"
    }
}
