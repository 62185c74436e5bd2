public import ProofkitCore

/// A text as the span scoring reads it: its spoken words in order, each as it is scored (as
/// written, harakat dropped) and as it is aligned (its letters normalised the way recognisers
/// differ: alef forms, ى/ي, ة/ه unified). Built by the caller (the facade uses DuaMatching's
/// `ArabicNormalizer.spokenWords`), so this engine holds no language rules.
public struct SpokenText: Sendable, Equatable {
    /// The words as they are scored (e.g. "بحمده").
    public var words: [String]
    /// Each word's normalised letters, for the alignment (same count as ``words``).
    public var letters: [[Unicode.Scalar]]

    /// Makes a text; `letters` must have one entry per word.
    public init(words: [String], letters: [[Unicode.Scalar]]) {
        precondition(words.count == letters.count, "one letters entry per word")
        self.words = words
        self.letters = letters
    }

    /// Letters of all words.
    public var letterCount: Int { letters.reduce(0) { $0 + $1.count } }
}

/// Where a transcript sits in a text: the words of the text that an edit-distance alignment of
/// the transcript's letters covers.
public struct TextSpan: Sendable, Equatable {
    /// First word of the span (index into ``SpokenText/words``).
    public var firstWord: Int
    /// One past the last word.
    public var endWord: Int
    /// Letter edits (substitutions, insertions, deletions) between the transcript and the span.
    public var edits: Int
    /// Letters in the transcript.
    public var transcriptLetters: Int

    /// Makes a span (words `firstWord..<endWord`).
    public init(firstWord: Int, endWord: Int, edits: Int, transcriptLetters: Int) {
        self.firstWord = firstWord
        self.endWord = endWord
        self.edits = edits
        self.transcriptLetters = transcriptLetters
    }
}

/// The alignment behind span scoring. Pure.
public enum TextSpanAligner {
    /// Aligns all of `transcript` to the contiguous stretch of `text`'s letters (word breaks
    /// ignored on both sides: recognisers merge and split words) with the fewest edits
    /// (semi-global edit distance: the text's letters before and after the stretch are free).
    /// - Parameters:
    ///   - transcript: the transcript's normalised letters, without spaces.
    ///   - text: the text's words' normalised letters.
    /// - Returns: the words the stretch touches and the edits; `nil` when either side is empty.
    ///   Ties go to the earliest end.
    /// - Complexity: O(transcript × text letters) time, O(text letters) memory.
    public static func align(transcript: [Unicode.Scalar], text: [[Unicode.Scalar]]) -> TextSpan? {
        var letters: [Unicode.Scalar] = []
        var owner: [Int] = []
        for (index, word) in text.enumerated() {
            letters += word
            owner += [Int](repeating: index, count: word.count)
        }
        let n = letters.count
        guard !transcript.isEmpty, n > 0 else { return nil }
        // cost[j]: fewest edits aligning the transcript so far and ending after text letter j;
        // start[j]: where in the text that alignment starts.
        var cost = [Int](repeating: 0, count: n + 1)
        var start = Array(0...n)
        var nextCost = cost
        var nextStart = start
        for letter in transcript {
            nextCost[0] = cost[0] + 1
            nextStart[0] = start[0]
            for j in 1...n {
                var best = cost[j - 1] + (letters[j - 1] == letter ? 0 : 1)
                var from = start[j - 1]
                if cost[j] + 1 < best {
                    best = cost[j] + 1
                    from = start[j]
                }
                if nextCost[j - 1] + 1 < best {
                    best = nextCost[j - 1] + 1
                    from = nextStart[j - 1]
                }
                nextCost[j] = best
                nextStart[j] = from
            }
            swap(&cost, &nextCost)
            swap(&start, &nextStart)
        }
        var end = 0
        for j in 1...n where cost[j] < cost[end] || (cost[j] == cost[end] && end == 0) { end = j }
        let first = start[end]
        guard end > first else {
            // Every transcript letter was an insertion: no text letter is covered.
            return TextSpan(
                firstWord: owner[min(first, n - 1)], endWord: owner[min(first, n - 1)], edits: cost[end],
                transcriptLetters: transcript.count)
        }
        return TextSpan(
            firstWord: owner[first], endWord: owner[end - 1] + 1, edits: cost[end], transcriptLetters: transcript.count)
    }
}

/// One window's part of a span score.
public struct SpanPart: Sendable, Equatable {
    /// Where the transcript of the window sits in the text.
    public var span: TextSpan
    /// The forced score of those words (then `<|endoftext|>`) in the window.
    public var text: ForcedScore
    /// The forced score of the window's own greedy transcript (then `<|endoftext|>`).
    public var transcript: ForcedScore

    /// Makes a part.
    public init(span: TextSpan, text: ForcedScore, transcript: ForcedScore) {
        self.span = span
        self.text = text
        self.transcript = transcript
    }
}

/// A text's span forced score over a whole reading: for each window the model wrote something
/// in, the words of the text its transcript aligns to (``TextSpanAligner``), scored in that
/// window beside the transcript itself. Windows where the model wrote nothing are left out.
public struct SpanScore: Sendable, Equatable {
    /// The windows' parts, in order.
    public var parts: [SpanPart]
    /// Words in the text.
    public var wordCount: Int

    /// Makes a score from its parts.
    public init(parts: [SpanPart], wordCount: Int) {
        self.parts = parts
        self.wordCount = wordCount
    }

    /// All parts' text scores as one (tokens and log-probabilities in order; its mean is the
    /// token-weighted mean), or `nil` without parts.
    public var text: ForcedScore? {
        guard !parts.isEmpty else { return nil }
        return ForcedScore(
            tokens: parts.flatMap(\.text.tokens), logProbabilities: parts.flatMap(\.text.logProbabilities),
            windowStartSeconds: parts[0].text.windowStartSeconds)
    }

    /// All parts' transcript scores as one, or `nil` without parts.
    public var transcript: ForcedScore? {
        guard !parts.isEmpty else { return nil }
        return ForcedScore(
            tokens: parts.flatMap(\.transcript.tokens), logProbabilities: parts.flatMap(\.transcript.logProbabilities),
            windowStartSeconds: parts[0].transcript.windowStartSeconds)
    }

    /// Distinct words of the text the parts' spans cover.
    public var coveredWords: Int {
        var covered = Set<Int>()
        for part in parts { covered.formUnion(part.span.firstWord..<part.span.endWord) }
        return covered.count
    }

    /// ``coveredWords`` over ``wordCount`` (0 for an empty text).
    public var coverage: Double { wordCount == 0 ? 0 : Double(coveredWords) / Double(wordCount) }

    /// The parts of `self` then those of `other` (the live path scores each 30 s of voice on its
    /// own and joins them).
    public func appending(_ other: SpanScore) -> SpanScore {
        SpanScore(parts: parts + other.parts, wordCount: max(wordCount, other.wordCount))
    }
}

extension WhisperTranscriber {
    /// Span forced scores of several texts over one reading, each window encoded once: per
    /// window with a transcript, the words of each text that the transcript aligns to are scored
    /// (one decoder pass over the prompt, `" " + words` and `<|endoftext|>`), and so is the
    /// transcript's own tokens. A text's narration that was not read (or a part of a long text in
    /// another window) then does not count against it.
    /// - Parameters:
    ///   - texts: the texts (``SpokenText``).
    ///   - features: the spectrogram ``transcribe(features:)`` was given.
    ///   - transcription: that transcription.
    ///   - letters: a transcript's normalised letters without spaces (the same normalisation as
    ///     the texts' ``SpokenText/letters``).
    /// - Returns: one score per text; a text with no words has no parts.
    /// - Throws: the model's errors; `.invalidArgument` over the length limit.
    public func spanScores(
        texts: [SpokenText], features: LogMelSpectrogram, transcription: Transcription,
        letters: (String) -> [Unicode.Scalar]
    ) throws(ProofkitError) -> [SpanScore] {
        // The last window first: it is the one the transcription left encoded, which a model may
        // keep (``WhisperStepModel/encode(melWindow:)`` of the same window again). Each window's
        // scores depend on that window alone; the parts are put back in window order below.
        var partsByWindow: [[(text: Int, part: SpanPart)]] = []
        for window in transcription.windows.reversed() {
            guard let heard = spannable(window, features: features, letters: letters) else { continue }
            try model.encode(melWindow: features.window(startingAt: Int((window.startSeconds * 100).rounded())))
            partsByWindow.append(try spanParts(window, heard: heard, texts: texts))
        }
        var parts = [[SpanPart]](repeating: [], count: texts.count)
        for found in partsByWindow.reversed() {
            for (i, part) in found { parts[i].append(part) }
        }
        return zip(parts, texts).map { SpanScore(parts: $0, wordCount: $1.words.count) }
    }

    /// Transcribes a spectrogram and scores texts by spans in one pass: each window's span parts
    /// are scored right after the window is decoded, while the model still holds its encoding, so
    /// no window is encoded twice. The same results as ``transcribe(features:)`` then
    /// ``spanScores(texts:features:transcription:letters:)`` (a window's scores depend on that
    /// window alone).
    /// - Parameters: as ``spanScores(texts:features:transcription:letters:)``, less the transcription.
    /// - Returns: the transcription and one score per text.
    /// - Throws: as ``transcribe(features:)`` and the model's errors.
    public func transcribeScoringSpans(
        texts: [SpokenText], features: LogMelSpectrogram, letters: (String) -> [Unicode.Scalar]
    ) throws(ProofkitError) -> (transcription: Transcription, spans: [SpanScore]) {
        var parts = [[SpanPart]](repeating: [], count: texts.count)
        let transcription = try transcribe(features: features) { (window: WindowTranscript) throws(ProofkitError) in
            guard let heard = spannable(window, features: features, letters: letters) else { return }
            for (i, part) in try spanParts(window, heard: heard, texts: texts) { parts[i].append(part) }
        }
        return (transcription, zip(parts, texts).map { SpanScore(parts: $0, wordCount: $1.words.count) })
    }

    /// A window's normalised letters when its transcript can be span-scored (some tokens and
    /// letters, room for them in the decoder, a start within the spectrogram); else `nil`.
    private func spannable(
        _ window: WindowTranscript, features: LogMelSpectrogram, letters: (String) -> [Unicode.Scalar]
    ) -> [Unicode.Scalar]? {
        guard !window.tokens.isEmpty else { return nil }
        let heard = letters(window.text)
        guard !heard.isEmpty, prompt.count + window.tokens.count + 1 <= model.maxPositions else { return nil }
        guard Int((window.startSeconds * 100).rounded()) < max(features.contentFrames, 1) else { return nil }
        return heard
    }

    /// The span parts of `window` (which the model holds encoded) for each text its transcript
    /// aligns to: the text's words there, and the transcript itself, scored once.
    private func spanParts(_ window: WindowTranscript, heard: [Unicode.Scalar], texts: [SpokenText])
        throws(ProofkitError) -> [(text: Int, part: SpanPart)]
    {
        var reference: ForcedScore?
        var found: [(text: Int, part: SpanPart)] = []
        for (i, text) in texts.enumerated() {
            guard let span = TextSpanAligner.align(transcript: heard, text: text.letters),
                span.endWord > span.firstWord
            else { continue }
            let words = text.words[span.firstWord..<span.endWord].joined(separator: " ")
            let tokens = tokenizer.encode(" " + words) + [endOfText]
            guard prompt.count + tokens.count <= model.maxPositions else { continue }
            if reference == nil {
                reference = try forcedScore(tokens: window.tokens + [endOfText], windowStart: window.startSeconds)
            }
            let score = try forcedScore(tokens: tokens, windowStart: window.startSeconds)
            found.append((i, SpanPart(span: span, text: score, transcript: reference!)))
        }
        return found
    }
}
