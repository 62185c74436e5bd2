import DuaMatching
import ProofkitCore
import Testing

@Suite("ArabicNormalizer")
struct ArabicNormalizerTests {
    @Test(
        "normalisation pairs",
        arguments: [
            ("الْحَمْدُ لِلَّهِ", "الحمد لله"),
            ("أَحْيَانَا", "احيانا"),
            ("إِلَيْهِ", "اليه"),
            ("آمَنَ", "امن"),
            ("ٱلْحَمْدُ", "الحمد"),
            ("ٱلَّذِىٓ", "الذي"),  // Uthmani: wasla alef, alef maqsura, small maddah
            ("عَلَىٰ", "علي"),  // dagger alef stripped, ى -> ي
            ("رَحْمَةٌ", "رحمه"),
            ("مُؤْمِن", "مومن"),
            ("شَاطِئ", "شاطي"),
            ("الذی", "الذي"),  // Persian yeh
            ("کتاب", "كتاب"),  // Persian kaf
            ("الـــحـــمـــد", "الحمد"),  // tatweel
            ("الحمد، لله! 123 ١٢٣ hello النشور؟", "الحمد لله النشور"),
            ("ﷲ أكبر", "الله اكبر"),
            ("  ", ""),
            // The dagger alef is stripped, as specified.
            ("ذَٰلِكَ ٱلْكِتَٰبُ لَا رَيْبَ ۛ فِيهِ ۛ هُدًى لِّلْمُتَّقِينَ", "ذلك الكتب لا ريب فيه هدي للمتقين"),
        ])
    func pairs(input: String, expected: String) {
        #expect(ArabicNormalizer.normalize(input) == expected)
    }

    @Test("normalising twice changes nothing")
    func idempotent() {
        for text in DuaCatalog.builtIn.texts {
            let once = ArabicNormalizer.normalize(text.text)
            #expect(ArabicNormalizer.normalize(once) == once)
            #expect(!once.unicodeScalars.contains { (0x064B...0x065F).contains($0.value) })
        }
    }
}

@Suite("DuaMatcher")
struct DuaMatcherTests {
    let waking = DuaMatcher(text: DuaCatalog.builtIn.text(named: "waking")!)

    /// Recogniser-like transcripts of the waking du'a: (transcript, key words heard, accepted).
    @Test(
        "recogniser-like transcripts",
        arguments: [
            ("الحمد لله الذي أحيانا بعد ما أماتنا وإليه النشور", 5, true),
            ("الحمد لله الذي احيانا بعد ما اماتنا واليه النشور", 5, true),  // no hamza
            ("الحمدلله الذي احيانا بعدما اماتنا واليه النشور", 5, true),  // merged words
            ("الحمدللهالذياحيانا بعدمااماتنا واليهالنشور", 5, true),  // heavily merged
            ("ٱلْحَمْدُ لِلَّهِ ٱلَّذِىٓ أَحْيَانَا بَعْدَ مَآ أَمَاتَنَا وَإِلَيْهِ ٱلنُّشُورُ", 5, true),  // Uthmani
            ("الحمد لله الذی احیانا بعد ما اماتنا و الیه النشور", 5, true),  // Persian letters, split و
            ("uh الحمد لله [noise] الذي احيانا 2 بعد ما اماتنا", 3, false),  // Latin noise, stopped early
            ("الحمد لله الذي احيانا بعد ما اماتنا", 3, false),  // the last words not heard
            ("الحمد لله احيانا اماتنا النشور", 4, true),  // 4 of 5 is enough
            ("الحمد لله رب العالمين", 1, false),  // a different phrase
            ("الحمد لله الذي بعثنا واليه المصير", 2, false),  // different phrase sharing two key words
            ("الحمد الحمد الحمد الحمد الحمد", 1, false),  // one key word repeated five times
            ("النشور النشور النشور النشور", 1, false),
            ("محمد رسول الله", 0, false),  // حمد inside محمد is not الحمد
            ("", 0, false),
            ("good morning everyone", 0, false),
            ("الحمد لله الذي احيانا بعد ما اماتنا والیه النشور.", 5, true),
            ("بالحمد واحيانا فاماتنا", 3, false),  // attached particles
        ])
    func transcripts(transcript: String, heard: Int, accepted: Bool) {
        let result = waking.evaluate(transcript: transcript)
        #expect(result.heard.count == heard, "\(result.heard)")
        #expect(result.verdict.isAccepted == accepted)
        #expect(result.rule == .keyWords)
    }

    @Test("the read-twice rule: twice the reading time and two key words")
    func readTwice() {
        let two = "الحمد لله الذي بعثنا واليه المصير"  // 2 key words
        #expect(waking.evaluate(transcript: two, voicedSeconds: 12).verdict.isAccepted)
        #expect(waking.evaluate(transcript: two, voicedSeconds: 12).rule == .readTwice)
        #expect(!waking.evaluate(transcript: two, voicedSeconds: 11.9).verdict.isAccepted)
        #expect(!waking.evaluate(transcript: "الحمد الحمد", voicedSeconds: 60).verdict.isAccepted)
        #expect(!waking.evaluate(transcript: two).verdict.isAccepted)
    }

    @Test("the voice-only fallback compares voiced seconds with the reading time")
    func voiceOnly() {
        #expect(waking.evaluateVoiceOnly(voicedSeconds: 6).verdict == .accepted(score: 6))
        let rejected = waking.evaluateVoiceOnly(voicedSeconds: 2.5)
        #expect(!rejected.verdict.isAccepted)
        #expect(rejected.verdict.description.contains("2.5 s of the 6.0 s"))
        #expect(rejected.rule == .voiceOnly)
    }

    @Test("a rejection says what is missing")
    func rejectionDetail() {
        let result = waking.evaluate(transcript: "الحمد لله", voicedSeconds: 3)
        guard case .rejected(let reason) = result.verdict else {
            Issue.record("expected a rejection")
            return
        }
        #expect(reason.kind == .incomplete)
        #expect(reason.detail.hasPrefix("heard 1 of 5 key words (4 needed)"))
    }

    @Test(
        "other shipped texts",
        arguments: [
            (
                "fatiha",
                "بسم الله الرحمن الرحيم الحمد لله رب العالمين الرحمن الرحيم ملك يوم الدين اياك نعبد واياك نستعين اهدنا الصراط المستقيم صراط الذين انعمت عليهم غير المغضوب عليهم ولا الظالين",
                true
            ),
            ("fatiha", "الحمد لله رب العالمين", false),
            ("kursi", "الله لا اله الا هو الحي القيوم لا تاخذه سنة ولا نوم", true),
            ("kursi", "الله لا اله الا هو", false),
            ("sleeping", "باسمك اللهم اموت واحيا", true),
            ("sleeping", "بسمك اللهم", false),
        ])
    func otherTexts(name: String, transcript: String, accepted: Bool) throws {
        let text = try #require(DuaCatalog.builtIn.text(named: name))
        #expect(DuaMatcher(text: text).evaluate(transcript: transcript).verdict.isAccepted == accepted)
    }

    @Test("each shipped text accepts its own full text")
    func ownText() {
        for text in DuaCatalog.builtIn.texts {
            let result = DuaMatcher(text: text).evaluate(transcript: text.text)
            #expect(result.heard.count == text.keyWords.count, "\(text.name): \(result.heard)")
        }
    }
}

@Suite("DuaMatchResult gives the words heard")
struct HeardWordsTests {
    @Test("heardWords are the key words as written in the text, in the order of heard")
    func heardWords() throws {
        let waking = try #require(DuaCatalog.builtIn.text(named: "waking"))
        let matcher = DuaMatcher(text: waking)
        let result = matcher.evaluate(transcript: "واليه النشور الحمد لله")
        #expect(result.heardWords == result.heard.map { waking.keyWords[$0].word })
        #expect(result.heardWords.contains("الْحَمْدُ"))
        #expect(result.heardWords.count == result.heard.count && result.heard.count >= 2)
        #expect(matcher.evaluate(transcript: "").heardWords.isEmpty)
    }
}

@Suite("DuaCatalog")
struct DuaCatalogTests {
    @Test("the built-in texts load, with the waking du'a as documented")
    func builtIn() throws {
        let waking = try #require(DuaCatalog.builtIn.text(named: DuaCatalog.defaultName))
        #expect(waking.keyWords.count == 5)
        #expect(waking.requiredKeyWords == 4)
        #expect(waking.source == "Sahih al-Bukhari 6312")
        #expect(waking.readingSeconds == 6)
        #expect(DuaCatalog.builtIn.texts.map(\.name) == ["waking", "sleeping", "kursi", "fatiha"])
    }

    @Test("a user file adds texts and replaces by name; stems are normalised")
    func userFile() throws {
        let json = #"""
            {"texts": [
              {"name": "waking", "text": "x", "key_words": ["النُّشُورُ"], "reading_seconds": 2.5},
              {"name": "my-ayah", "title": "Mine", "text": "قُلْ هُوَ اللَّهُ أَحَدٌ",
               "key_words": [{"word": "أَحَدٌ", "stems": ["أحد"]}, "\u0627\u0644\u0644\u0647"], "required": 1,
               "reading_seconds": 3}
            ]}
            """#
        let user = try DuaCatalog(json: json)
        let merged = DuaCatalog.builtIn.merging(user)
        #expect(merged.texts.count == 5)
        let waking = try #require(merged.text(named: "waking"))
        #expect(waking.keyWords[0].stems == ["النشور"])
        #expect(waking.readingSeconds == 2.5)
        let mine = try #require(merged.text(named: "my-ayah"))
        #expect(mine.keyWords[0].stems == ["احد"])
        #expect(mine.keyWords[1].stems == ["الله"])
        #expect(DuaMatcher(text: mine).evaluate(transcript: "قل هو الله أحد").verdict.isAccepted)
    }

    @Test(
        "bad files are refused with decodeFailed and a useful message",
        arguments: [
            ("", "invalid JSON"),
            ("{", "invalid JSON"),
            ("[]", "\"texts\""),
            (#"{"texts": [{"name": "a"}]}"#, "missing \"text\""),
            (#"{"texts": [{"name": "A B", "text": "x", "key_words": ["نوم"], "reading_seconds": 1}]}"#, "name"),
            (
                #"{"texts": [{"name": "a", "text": "x", "key_words": [], "reading_seconds": 1}]}"#,
                "at least one key word"
            ),
            (#"{"texts": [{"name": "a", "text": "x", "key_words": ["abc"], "reading_seconds": 1}]}"#, "no Arabic stem"),
            (
                #"{"texts": [{"name": "a", "text": "x", "key_words": ["نوم"], "required": 2, "reading_seconds": 1}]}"#,
                "required"
            ),
            (
                #"{"texts": [{"name": "a", "text": "x", "key_words": ["نوم"], "reading_seconds": 0}]}"#,
                "reading_seconds"
            ),
            (
                #"{"texts": [{"name": "a", "text": "x", "key_words": ["نوم"], "reading_seconds": 1}, {"name": "a", "text": "y", "key_words": ["نوم"], "reading_seconds": 1}]}"#,
                "used twice"
            ),
        ])
    func badFiles(json: String, mentions: String) {
        do {
            _ = try DuaCatalog(json: json)
            Issue.record("accepted: \(json)")
        } catch {
            #expect(error.code == .decodeFailed)
            #expect(error.message.contains(mentions), "\(error.message)")
        }
    }

    @Test("reading_seconds may be left out: estimated from the text, within 25% of each shipped text's own")
    func readingSecondsEstimated() throws {
        // The shipped texts' reading times were set by hand; the estimate is checked against them.
        for text in DuaCatalog.builtIn.texts {
            let estimate = DuaText.estimatedReadingSeconds(of: text.text)
            #expect(abs(estimate - text.readingSeconds) <= 0.25 * text.readingSeconds, "\(text.name): \(estimate)")
            #expect(!text.readingIsEstimated)
        }
        let catalog = try DuaCatalog(
            json: #"{"texts": [{"name": "a", "text": "الْحَمْدُ لِلَّهِ (ثلاثا) الَّذِي", "key_words": ["حمد"]}]}"#)
        let text = try #require(catalog.texts.first)
        #expect(text.readingIsEstimated)
        // الحمد لله الذي: 5 + 3 + 4 = 12 letters at 5.5 a second is 2.2 s, so 2.5 s; the note in
        // parentheses is not read.
        #expect(text.readingSeconds == 2.5)
        #expect(DuaText.estimatedReadingSeconds(of: "hello there world") == 2.5)  // 3 words at 0.7 s
        #expect(DuaText.estimatedReadingSeconds(of: "") == 1)
        #expect(throws: ProofkitError.self) {
            try DuaCatalog(json: #"{"texts": [{"name": "a", "text": "نوم", "reading_seconds": "6"}]}"#)
        }
    }
}

@Suite("KeyWordPicker")
struct KeyWordPickerTests {
    static let texts = [
        "اَلحَمدُ لِلهِ الَّذِي كَسَانِي هَذَا (الثَّوْبَ) وَرَزَقَنِيهِ مِنْ غَيْرِ حَولٍ مِنِّي وَ لَا قُوَّةٍ",
        "بِاسْمِكَ رَبِّي وَضَعْتُ جَنْبِي، وَبِكَ أَرْفَعُهُ، فإِنْ أَمْسَكْتَ نَفْسِي فَارْحَمْهَا، وَإِنْ أَرْسَلْتَهَا فَاحْفَظْهَا، بِمَا تَحْفَظُ بِهِ عِبَادَكَ الصَّالِحِينَ",
        "سُبْحَانَ اللهِ (ثَلاثاً وثَلاثِينَ) وَالحَمْدُ لِلَّهِ (ثَلاثاً وثَلاثِينَ) وَاللهُ أكْبرُ (أربَعاً وثَلاثِينَ)",
        "غُفْرَانَكَ",
        DuaCatalog.builtIn.text(named: "waking")!.text,
        DuaCatalog.builtIn.text(named: "fatiha")!.text,
    ]

    @Test("at most 5 key words, from the text, in its order, never common words or notes in parentheses")
    func rule() {
        for text in Self.texts {
            let (keyWords, required) = KeyWordPicker.pick(from: text)
            #expect(!keyWords.isEmpty && keyWords.count <= KeyWordPicker.count)
            #expect(required >= 1 && required <= keyWords.count)
            #expect(Double(required) >= Double(keyWords.count) * KeyWordPicker.requiredFraction)
            #expect(required >= keyWords.count - 1)
            let words = ArabicNormalizer.normalizedWords(text)
            var lastIndex = -1
            for keyWord in keyWords {
                let index = words.firstIndex(of: ArabicNormalizer.normalize(keyWord.word)) ?? -1
                #expect(index > lastIndex, "\(keyWord.word) out of order or not in the text")
                lastIndex = index
                #expect(keyWord.stems.count == 1)
                #expect(!KeyWordPicker.commonWords.contains(keyWord.stems[0]))
                #expect(keyWord.stems[0].unicodeScalars.count <= KeyWordPicker.maxStemLetters)
                #expect(!["ثلاثا", "وثلاثين", "اربعا", "الثوب"].contains(ArabicNormalizer.normalize(keyWord.word)))
            }
            // The stems are distinct.
            #expect(Set(keyWords.map { $0.stems[0] }).count == keyWords.count)
        }
    }

    @Test("the longest uncommon words win; reading the text itself hears them all; another text does not pass")
    func longestAndMatching() throws {
        let (keyWords, _) = KeyWordPicker.pick(from: Self.texts[1])
        #expect(keyWords.count == 5)
        // Every picked stem is at least as long as every uncommon word left out.
        let shortestPicked = keyWords.map { $0.stems[0].unicodeScalars.count }.min()!
        #expect(shortestPicked >= 4)
        for (index, text) in Self.texts.enumerated() {
            let (words, required) = KeyWordPicker.pick(from: text)
            let dua = try DuaText(
                name: "t\(index)", title: "t", text: text, keyWords: words, requiredKeyWords: required,
                readingDuration: .seconds(5), keyWordsArePicked: true)
            let matcher = DuaMatcher(text: dua)
            #expect(matcher.evaluate(transcript: ArabicNormalizer.withoutMarks(text)).heard.count == words.count)
            let other = Self.texts[(index + 1) % Self.texts.count]
            #expect(!matcher.evaluate(transcript: ArabicNormalizer.withoutMarks(other)).verdict.isAccepted, "\(index)")
        }
    }

    @Test("an entry without key_words gets picked key words; with only common words it keeps its longest word")
    func catalogEntries() throws {
        let catalog = try DuaCatalog(
            json: #"""
                {"texts": [
                  {"name": "clothes", "text": "اَلحَمدُ لِلهِ الَّذِي كَسَانِي هَذَا (الثَّوْبَ) وَرَزَقَنِيهِ مِنْ غَيْرِ حَولٍ مِنِّي وَ لَا قُوَّةٍ", "reading_seconds": 6},
                  {"name": "short", "text": "اللَّهُمَّ لَكَ", "reading_seconds": 1},
                  {"name": "given", "text": "x", "key_words": ["نوم"], "reading_seconds": 1}
                ]}
                """#)
        let clothes = try #require(catalog.text(named: "clothes"))
        #expect(clothes.keyWordsArePicked)
        #expect(clothes.keyWords.map(\.word) == KeyWordPicker.pick(from: clothes.text).keyWords.map(\.word))
        let short = try #require(catalog.text(named: "short"))
        #expect(short.keyWords.count == 1 && short.requiredKeyWords == 1)
        #expect(catalog.text(named: "given")?.keyWordsArePicked == false)
        #expect(throws: ProofkitError.self) {
            try DuaCatalog(json: #"{"texts": [{"name": "a", "text": "abc", "reading_seconds": 1}]}"#)
        }
    }

    @Test("withoutMarks keeps the letters as written and drops harakat and brackets")
    func withoutMarks() {
        #expect(ArabicNormalizer.withoutMarks("الْحَمْدُ لِلَّهِ  (الثَّوْبَ) ﴿قُلْ﴾") == "الحمد لله الثوب قل")
        #expect(ArabicNormalizer.withoutMarks("أَحْيَانَا بَرَاءَةٌ") == "أحيانا براءة")
    }
}

@Suite("DuaMatcher near matches")
struct NearMatchTests {
    static func text(_ stems: [String]) throws -> DuaText {
        try DuaText(
            name: "t", title: "t", text: stems.joined(separator: " "),
            keyWords: stems.map { KeyWord(word: $0, stems: [$0]) }, requiredKeyWords: stems.count,
            readingDuration: .seconds(3))
    }

    @Test("a stem of 5 letters or more is heard with one letter swapped, not with two; shorter stems need every letter")
    func oneLetter() throws {
        let matcher = DuaMatcher(text: try Self.text(["سبحان", "ملايكه", "حمد"]))
        #expect(matcher.keyWordsHeard(in: "صبحان الذي") == [0])  // ص for س
        #expect(matcher.keyWordsHeard(in: "والملاعكة") == [1])  // ع for ي, after و and ال
        #expect(matcher.keyWordsHeard(in: "صبحام") == [])  // two letters differ
        #expect(matcher.keyWordsHeard(in: "خمد") == [])  // a 3-letter stem: exact only
    }

    @Test("a picked stem without its leading alef is found in either spelling")
    func leadingAlef() throws {
        let (keyWords, _) = KeyWordPicker.pick(from: "اللَّهُمَّ اجْعَلْنِي مِنَ التَّوَّابِينَ")
        let dua = try DuaText(
            name: "t", title: "t", text: "x", keyWords: keyWords, requiredKeyWords: keyWords.count,
            readingDuration: .seconds(3), keyWordsArePicked: true)
        let matcher = DuaMatcher(text: dua)
        #expect(matcher.evaluate(transcript: "اللهم جعلني من التوابين").verdict.isAccepted)
        #expect(matcher.evaluate(transcript: "اللهم اجعلني من التوابين").verdict.isAccepted)
    }
}

@Suite("ArabicNormalizer.spokenWords")
struct SpokenWordsTests {
    @Test(
        "markup, footnote numbers, brackets, punctuation and ﷺ are word breaks; harakat dropped; letters kept as written"
    )
    func cleaning() {
        let words = ArabicNormalizer.spokenWords(
            "(يَبْدَأُ بِرِجْلِهِ)<sup><small>(١)</small></sup>، قَالَ رَسُولُ اللهِ ﷺ: «أَعُوْذُ بِاللَّهِ» [ثَلاثاً] ﴿إِلَى﴾ 3")
        #expect(words.written == ["يبدأ", "برجله", "قال", "رسول", "الله", "أعوذ", "بالله", "ثلاثا", "إلى"])
        #expect(words.normalized == ["يبدا", "برجله", "قال", "رسول", "الله", "اعوذ", "بالله", "ثلاثا", "الي"])
    }

    @Test("a lone و joins the word after it, as Arabic writes it")
    func loneWaw() {
        let words = ArabicNormalizer.spokenWords("سُبْحَانَ اللهِ وَ بِحَمْدِهِ وَ لَا قُوَّةَ وَ")
        #expect(words.written == ["سبحان", "الله", "وبحمده", "ولا", "قوة", "و"])
        #expect(words.normalized == ["سبحان", "الله", "وبحمده", "ولا", "قوه", "و"])
        #expect(ArabicNormalizer.spokenWords("hello 123 ...").written.isEmpty)
    }

    @Test("the normalised words are what normalize gives, word for word, once lone و are joined")
    func agreesWithNormalize() {
        for text in ["الْحَمْدُ لِلَّهِ الَّذِي أَحْيَانَا بَعْدَ مَا أَمَاتَنَا وَإِلَيْهِ النُّشُورُ", "ﷲ أكبر، كبيرا"] {
            #expect(
                ArabicNormalizer.spokenWords(text).normalized.joined(separator: " ") == ArabicNormalizer.normalize(text)
            )
        }
    }
}
