import DuaMatching
import Testing

@Suite("DuaCatalog.json: a catalogue written back parses to the same texts")
struct DuaCatalogJSONTests {
    @Test("the built-in texts round-trip: names, texts, key words and stems, required, reading time")
    func builtInRoundTrips() throws {
        let written = DuaCatalog.builtIn.json
        let parsed = try DuaCatalog(json: written)
        #expect(parsed.texts.count == DuaCatalog.builtIn.texts.count)
        for (a, b) in zip(parsed.texts, DuaCatalog.builtIn.texts) {
            #expect(a.name == b.name && a.title == b.title && a.text == b.text && a.source == b.source)
            #expect(a.keyWords == b.keyWords)
            #expect(a.requiredKeyWords == b.requiredKeyWords)
            #expect(a.readingDuration == b.readingDuration)
        }
    }

    @Test("picked key words, an estimated reading time and characters JSON must escape survive")
    func pickedAndEscaped() throws {
        let source = """
            {"texts":[{"name":"q","title":"a \\"quoted\\" title\\\\ with\\ttab","text":"الْحَمْدُ لِلَّهِ رَبِّ الْعَالَمِينَ"}]}
            """
        let original = try DuaCatalog(json: source)
        let text = try #require(original.texts.first)
        #expect(text.keyWordsArePicked && text.readingIsEstimated)
        let again = try #require(try DuaCatalog(json: original.json).texts.first)
        #expect(again.title == "a \"quoted\" title\\ with\ttab")
        #expect(again.keyWords == text.keyWords && again.requiredKeyWords == text.requiredKeyWords)
        #expect(again.readingDuration == text.readingDuration)
    }
}
