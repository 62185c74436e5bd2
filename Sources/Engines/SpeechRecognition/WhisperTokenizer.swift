public import ProofkitCore

/// Whisper's byte-level BPE tokenizer, read from a Hugging Face `tokenizer.json` (GPT-2's scheme):
/// text is split GPT-2's way (contractions, runs of letters, of digits, of other symbols, each
/// with one leading space, and whitespace), each piece's UTF-8 bytes are mapped to printable
/// characters (GPT-2's byte-to-unicode table), merged pair by pair, and looked up in the
/// vocabulary. The merge order is tiktoken's (Whisper's own tokenizer): the adjacent pair whose
/// merged token has the lowest id merges first. In a BPE vocabulary the ids are the merge ranks
/// (merge `i` of `model.merges` makes token 257 + `i`), and this rule also covers the first merge
/// (`Ġ t`, id 256), which the `tokenizer.json` that ships with the CTranslate2 model leaves out of
/// its merges list.
///
/// ```swift
/// let tokenizer = try WhisperTokenizer(json: bytesOfTokenizerJSON)
/// let ids = tokenizer.encode(" الحمد لله")
/// tokenizer.decode(ids)              // " الحمد لله"
/// tokenizer.specialID("<|ar|>")      // 50272
/// ```
///
/// Pure: the caller reads the file (an engine does no I/O).
public struct WhisperTokenizer: Sendable {
    /// Token string (in the byte-to-unicode alphabet) → id.
    private let vocabulary: [String: Int]
    /// id → token string, for ids below ``firstSpecialID``.
    private let tokens: [String]
    /// Added (special) tokens: content → id, e.g. `"<|endoftext|>"` → 50257.
    public let specialTokens: [String: Int]
    /// The lowest id of a special token (`<|endoftext|>`, 50257 for the multilingual models);
    /// ids from here on are never text (Whisper's timestamps come after the added tokens).
    public let firstSpecialID: Int

    /// Parses `tokenizer.json`.
    /// - Parameter json: the file's bytes (UTF-8 JSON).
    /// - Throws: `ProofkitError` `.decodeFailed` when it is not JSON, `.modelInvalid` when it is
    ///   not a byte-level BPE tokenizer (no `model.vocab`, `model.merges` or `added_tokens`).
    public init(json: [UInt8]) throws(ProofkitError) {
        let root = try JSONReader.parse(bytes: json)
        guard let model = root["model"], model["type"]?.string == "BPE",
            let vocabMembers = model["vocab"]?.members, model["merges"]?.array != nil,
            let added = root["added_tokens"]?.array
        else {
            throw ProofkitError(
                .modelInvalid,
                "not a byte-level BPE tokenizer.json (model.type BPE with vocab, merges and added_tokens)")
        }
        var vocabulary: [String: Int] = [:]
        vocabulary.reserveCapacity(vocabMembers.count)
        var maxID = 0
        for (token, value) in vocabMembers {
            guard let id = value.integer, id >= 0 else {
                throw ProofkitError(.modelInvalid, "tokenizer.json: the id of '\(token)' is not a whole number")
            }
            vocabulary[token] = id
            maxID = max(maxID, id)
        }
        var specials: [String: Int] = [:]
        for token in added {
            guard let content = token["content"]?.string, let id = token["id"]?.integer else {
                throw ProofkitError(.modelInvalid, "tokenizer.json: an added token without content or id")
            }
            specials[content] = id
        }
        let firstSpecial = specials.values.min() ?? (maxID + 1)
        var tokens = [String](repeating: "", count: firstSpecial)
        for (token, id) in vocabulary where id < firstSpecial { tokens[id] = token }
        self.vocabulary = vocabulary
        self.tokens = tokens
        specialTokens = specials
        firstSpecialID = firstSpecial
    }

    /// The id of a special token such as `"<|startoftranscript|>"` or `"<|ar|>"`, or `nil`.
    public func specialID(_ content: String) -> Int? { specialTokens[content] }

    /// The text tokens of `text` (no special tokens are recognised in it). Whisper's transcripts
    /// start with a space, so pass `" " + text` to get the tokens the model writes.
    public func encode(_ text: String) -> [Int] {
        var ids: [Int] = []
        for piece in Self.preTokenize(text) {
            var bytes = ""
            for byte in piece.utf8 { bytes.unicodeScalars.append(Self.byteToUnicode[Int(byte)]) }
            for token in bytePairMerge(bytes) {
                if let id = vocabulary[token] {
                    ids.append(id)
                } else {
                    // Every single byte is in the vocabulary, so this is only reached for a
                    // malformed vocabulary: fall back to the bytes one by one.
                    for scalar in token.unicodeScalars { if let id = vocabulary[String(scalar)] { ids.append(id) } }
                }
            }
        }
        return ids
    }

    /// The text of `ids`, skipping special tokens and timestamps (every id from
    /// ``firstSpecialID`` on) and ids outside the vocabulary. Bytes that are not valid UTF-8 (a
    /// character cut between tokens) become U+FFFD.
    public func decode(_ ids: [Int]) -> String {
        var bytes: [UInt8] = []
        for id in ids where id >= 0 && id < firstSpecialID {
            for scalar in tokens[id].unicodeScalars {
                if let byte = Self.unicodeToByte[scalar] { bytes.append(byte) }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether `id` is a text token (not special, not a timestamp).
    public func isText(_ id: Int) -> Bool { id >= 0 && id < firstSpecialID }

    /// The BPE merges of one pre-token (already in the byte alphabet).
    private func bytePairMerge(_ word: String) -> [String] {
        var parts = word.unicodeScalars.map { String($0) }
        guard parts.count > 1 else { return parts }
        while parts.count > 1 {
            var best = Int.max
            var bestIndex = -1
            for i in 0..<(parts.count - 1) {
                if let rank = vocabulary[parts[i] + parts[i + 1]], rank < best, rank < firstSpecialID {
                    best = rank
                    bestIndex = i
                }
            }
            guard bestIndex >= 0 else { break }
            let left = parts[bestIndex]
            let right = parts[bestIndex + 1]
            var merged: [String] = []
            merged.reserveCapacity(parts.count - 1)
            var i = 0
            while i < parts.count {
                if i < parts.count - 1 && parts[i] == left && parts[i + 1] == right {
                    merged.append(left + right)
                    i += 2
                } else {
                    merged.append(parts[i])
                    i += 1
                }
            }
            parts = merged
        }
        return parts
    }

    // MARK: GPT-2's pre-tokenizer

    private enum Kind { case letter, number, space, other }

    private static func kind(_ scalar: Unicode.Scalar) -> Kind {
        if scalar.properties.isWhitespace { return .space }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter: return .letter
        case .decimalNumber, .letterNumber, .otherNumber: return .number
        default: return .other
        }
    }

    /// Splits text as GPT-2's pattern
    /// `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+` does.
    static func preTokenize(_ text: String) -> [String] {
        let scalars = Array(text.unicodeScalars)
        let kinds = scalars.map(kind)
        var pieces: [String] = []
        var i = 0
        func piece(_ range: Range<Int>) -> String {
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars[range])
            return String(view)
        }
        let contractions: [[Unicode.Scalar]] = ["s", "t", "re", "ve", "m", "ll", "d"].map { Array($0.unicodeScalars) }
        while i < scalars.count {
            if scalars[i] == "'" {
                if let match = contractions.first(where: { suffix in
                    i + suffix.count < scalars.count + 0
                        && Array(scalars[(i + 1)..<min(scalars.count, i + 1 + suffix.count)]) == suffix
                }) {
                    pieces.append(piece(i..<(i + 1 + match.count)))
                    i += 1 + match.count
                    continue
                }
            }
            // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`
            var start = i
            if scalars[i] == " " && i + 1 < scalars.count && kinds[i + 1] != .space { start = i + 1 }
            if kinds[start] != .space {
                let run = kinds[start]
                var end = start + 1
                while end < scalars.count && kinds[end] == run { end += 1 }
                pieces.append(piece(i..<end))
                i = end
                continue
            }
            // `\s+(?!\S)` then `\s+`
            var end = i
            while end < scalars.count && kinds[end] == .space { end += 1 }
            if end < scalars.count && end - i > 1 { end -= 1 }
            pieces.append(piece(i..<end))
            i = end
        }
        return pieces
    }

    // MARK: GPT-2's byte-to-unicode table

    /// Byte → printable scalar: the printable Latin-1 bytes map to themselves, the others to
    /// U+0100 and up, in byte order.
    static let byteToUnicode: [Unicode.Scalar] = {
        var printable = Set<Int>()
        for range in [33...126, 161...172, 174...255] { for byte in range { printable.insert(byte) } }
        var table = [Unicode.Scalar](repeating: " ", count: 256)
        var next = 0
        for byte in 0..<256 {
            if printable.contains(byte) {
                table[byte] = Unicode.Scalar(UInt8(byte))
            } else {
                table[byte] = Unicode.Scalar(UInt32(256 + next))!
                next += 1
            }
        }
        return table
    }()

    static let unicodeToByte: [Unicode.Scalar: UInt8] = {
        var table: [Unicode.Scalar: UInt8] = [:]
        for (byte, scalar) in byteToUnicode.enumerated() { table[scalar] = UInt8(byte) }
        return table
    }()
}
