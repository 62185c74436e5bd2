import ProofkitCore

/// The catalogue written back in the JSON format ``DuaCatalog/init(json:)`` reads, so that a text
/// can be kept with what uses it (the alarm store keeps each chain's text this way, and no longer
/// needs the file it was chosen from).
extension DuaCatalog {
    /// The texts as a JSON document: `{"texts":[{...}]}` with every field written out (key words
    /// with their stems, `required`, `reading_seconds`), so parsing it gives the same texts.
    public var json: String {
        "{\"texts\":[" + texts.map(Self.entry).joined(separator: ",") + "]}"
    }

    static func entry(_ text: DuaText) -> String {
        var fields = [
            "\"name\":" + JSONText.quoted(text.name), "\"title\":" + JSONText.quoted(text.title),
            "\"text\":" + JSONText.quoted(text.text),
        ]
        if let source = text.source { fields.append("\"source\":" + JSONText.quoted(source)) }
        let words = text.keyWords.map { word in
            "{\"word\":" + JSONText.quoted(word.word) + ",\"stems\":["
                + word.stems.map(JSONText.quoted).joined(separator: ",") + "]}"
        }
        fields.append("\"key_words\":[" + words.joined(separator: ",") + "]")
        fields.append("\"required\":\(text.requiredKeyWords)")
        let components = text.readingDuration.components
        let milliseconds = components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
        fields.append("\"reading_seconds\":\(Double(milliseconds) / 1000)")
        return "{" + fields.joined(separator: ",") + "}"
    }
}
