import Foundation
import ProofkitCLI
import TestSupport
import Testing

@Suite("proofkit dua")
struct DuaCommandTests {
    func run(_ arguments: [String], environment: [String: String] = [:]) -> (status: Int32, out: String, err: String) {
        let captured = CapturedIO()
        var io = captured.io
        io.environment = environment
        let status = ProofkitCLI.run(arguments: ["proofkit", "dua"] + arguments, io: io)
        return (status, captured.stdout, captured.stderr)
    }

    /// Parses each stdout line as a JSON object (independently of proofkit's writer).
    func objects(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test("list shows the shipped texts; --json gives one object per text")
    func list() throws {
        let text = run(["list"])
        #expect(text.status == 0)
        #expect(text.out.contains("waking"))
        #expect(text.out.contains("5 key words, 4 needed, 6 s"))
        let json = run(["list", "--json"])
        let items = try objects(json.out)
        #expect(items.map { $0["name"] as? String } == ["waking", "sleeping", "kursi", "fatiha"])
        #expect(items[0]["required"] as? Int == 4)
        #expect((items[0]["key_words"] as? [String])?.count == 5)
        #expect(json.err.isEmpty)
    }

    @Test("a text without key_words: show states the picking rule and the picked words; check uses them")
    func pickedKeyWords() throws {
        try withTemporaryFolder { folder in
            let file = folder + "/texts.json"
            try
                #"{"texts": [{"name": "clothes", "text": "اَلحَمدُ لِلهِ الَّذِي كَسَانِي هَذَا (الثَّوْبَ) وَرَزَقَنِيهِ مِنْ غَيْرِ حَولٍ مِنِّي وَ لَا قُوَّةٍ", "reading_seconds": 6}]}"#
                .write(toFile: file, atomically: true, encoding: .utf8)
            let shown = run(["show", "clothes", "--texts", file])
            #expect(shown.status == 0)
            #expect(shown.out.contains("key words picked from the text"))
            #expect(shown.out.contains("longest"))
            let json = try #require(try objects(run(["show", "clothes", "--texts", file, "--json"]).out).first)
            #expect(json["key_words_picked"] as? Bool == true)
            #expect((json["key_words_rule"] as? String)?.isEmpty == false)
            let words = (json["key_words"] as? [[String: Any]])?.compactMap { $0["word"] as? String } ?? []
            #expect(words.count == 5 && json["required"] as? Int == 4)
            #expect(!words.contains("الثَّوْبَ"))  // a note in parentheses
            let heard = run([
                "check", "الحمد لله الذي كسانيه ورزقنيه من غير حول مني ولا قوة", "--text", "clothes", "--texts", file,
            ])
            #expect(heard.out.contains("accepted"))
            let waking = run(["show", "waking", "--json"])
            #expect(try objects(waking.out).first?["key_words_picked"] as? Bool == false)
        }
    }

    @Test("a text without reading_seconds loads (it was refused): show says the time was estimated")
    func estimatedReadingTime() throws {
        try withTemporaryFolder { folder in
            let file = folder + "/texts.json"
            try #"{"texts": [{"name": "clothes", "text": "اَلحَمدُ لِلهِ الَّذِي كَسَانِي هَذَا وَرَزَقَنِيهِ مِنْ غَيْرِ حَولٍ مِنِّي وَ لَا قُوَّةٍ"}]}"#
                .write(toFile: file, atomically: true, encoding: .utf8)
            let shown = run(["show", "clothes", "--texts", file])
            #expect(shown.status == 0, "\(shown.err)")
            #expect(shown.out.contains("(estimated from the text"), "\(shown.out)")
            let json = try #require(try objects(run(["show", "clothes", "--texts", file, "--json"]).out).first)
            #expect(json["reading_seconds_estimated"] as? Bool == true)
            // 44 Arabic letters at 5.5 a second: 8 s.
            #expect(json["reading_seconds"] as? Double == 8)
            let waking = try #require(try objects(run(["show", "waking", "--json"]).out).first)
            #expect(waking["reading_seconds_estimated"] as? Bool == false)
            let help = run(["--help"])
            #expect(help.out.contains("reading_seconds, how long a calm reading takes"))
        }
    }

    @Test("show prints the text, key words and stems")
    func show() throws {
        let text = run(["show", "waking"])
        #expect(text.status == 0)
        #expect(text.out.contains("Sahih al-Bukhari 6312"))
        #expect(text.out.contains("وَإِلَيْهِ النُّشُورُ"))
        #expect(text.out.contains("[نشور]"))
        let item = try #require(try objects(run(["show", "kursi", "--json"]).out).first)
        #expect(item["source"] as? String == "Quran 2:255")
        #expect(((item["key_words"] as? [[String: Any]])?.first?["stems"] as? [String]) == ["الحي"])
    }

    @Test(
        "check: which key words were heard and the verdict",
        arguments: [
            ("الحمدلله الذي احيانا بعدما اماتنا واليه النشور", 5, "accepted"),
            ("ٱلْحَمْدُ لِلَّهِ ٱلَّذِىٓ أَحْيَانَا بَعْدَ مَآ أَمَاتَنَا", 3, "rejected"),
            ("الحمد الحمد الحمد الحمد الحمد", 1, "rejected"),
        ])
    func check(transcript: String, heard: Int, verdict: String) throws {
        let result = run(["check", transcript, "--json"])
        #expect(result.status == 0)
        let item = try #require(try objects(result.out).first)
        #expect(item["heard_count"] as? Int == heard)
        #expect(item["verdict"] as? String == verdict)
        #expect(item["text"] as? String == "waking")
        #expect((item["key_words"] as? [[String: Any]])?.filter { $0["heard"] as? Bool == true }.count == heard)
        #expect(item["rule"] as? String == "keyWords")
        #expect((item["reason"] is NSNull) == (verdict == "accepted"))
    }

    @Test("check text output marks heard words")
    func checkText() {
        let result = run(["check", "الحمد لله الذي احيانا"])
        #expect(result.status == 0)
        #expect(result.out.contains("[x] الْحَمْدُ"))
        #expect(result.out.contains("[ ] النُّشُورُ"))
        #expect(result.out.contains("rejected: heard 2 of 5 key words (4 needed)"))
    }

    @Test("--strict makes a rejection exit 2, and keeps acceptance at 0")
    func strict() {
        #expect(run(["check", "الحمد لله", "--strict"]).status == 2)
        #expect(run(["check", "الحمد لله احيانا اماتنا النشور", "--strict"]).status == 0)
    }

    @Test("--voiced-seconds applies the read-twice rule")
    func readTwice() throws {
        let item = try #require(
            try objects(run(["check", "الحمد لله واليه المصير", "--voiced-seconds", "12.5", "--json"]).out).first)
        #expect(item["verdict"] as? String == "accepted")
        #expect(item["rule"] as? String == "readTwice")
        #expect(item["voiced_seconds"] as? Double == 12.5)
    }

    @Test("--text picks another text; unknown names exit 66")
    func otherText() {
        #expect(
            run(["check", "الله لا اله الا هو الحي القيوم لا تاخذه سنة ولا نوم", "--text", "kursi", "--strict"]).status
                == 0)
        let missing = run(["check", "x", "--text", "nope"])
        #expect(missing.status == 66)
        #expect(missing.err.contains("no text named 'nope'"))
        #expect(missing.out.isEmpty)
        #expect(run(["show", "nope"]).status == 66)
    }

    @Test("--texts FILE and the user's file add texts")
    func userTexts() throws {
        try withTemporaryFolder { folder in
            let file = folder + "/mine.json"
            try
                #"{"texts": [{"name": "ikhlas", "text": "قُلْ هُوَ اللَّهُ أَحَدٌ", "key_words": ["أحد", "قل"], "reading_seconds": 2}]}"#
                .write(toFile: file, atomically: true, encoding: .utf8)
            #expect(run(["check", "قل هو الله احد", "--texts", file, "--text", "ikhlas", "--strict"]).status == 0)
            // The same file as the user's config file.
            try FileManager.default.createDirectory(atPath: folder + "/proofkit", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: file, toPath: folder + "/proofkit/duas.json")
            let listed = run(["list"], environment: ["XDG_CONFIG_HOME": folder])
            #expect(listed.out.contains("ikhlas"))
            #expect(!run(["list"]).out.contains("ikhlas"))
        }
    }

    @Test("bad input: clear one-line errors and the right exit codes")
    func badInput() throws {
        try withTemporaryFolder { folder in
            let broken = folder + "/broken.json"
            try "{\"texts\": [".write(toFile: broken, atomically: true, encoding: .utf8)
            let decode = run(["list", "--texts", broken])
            #expect(decode.status == 65)
            #expect(decode.err.contains("broken.json: invalid JSON"))
            #expect(decode.err.split(separator: "\n").count == 1)
            #expect(run(["list", "--texts", folder + "/missing.json"]).status == 66)
            #expect(run(["list", "--texts", folder]).status == 66)
            #expect(run([]).status == 64)
            #expect(run(["dance"]).status == 64)
            #expect(run(["check"]).status == 64)
            #expect(run(["check", "x", "--voiced-seconds", "abc"]).status == 64)
            #expect(run(["list", "--bogus"]).status == 64)
        }
    }
}
