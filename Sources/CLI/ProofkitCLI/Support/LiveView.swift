import Proofkit
import ProofkitCore

/// The live reading proof's view (`proofkit voice --live`): on a terminal, the du'a with its key
/// words lighting up, a level meter and the progress, redrawn in place; otherwise one line per
/// transcript line and key word; with --json, one event per line.
///
/// `@unchecked Sendable`: ``show(_:)`` is called on the listening thread only, one update at a
/// time, and ``finish()`` after listening has ended (``LiveReadingProof/run(_:)`` orders these).
final class LiveView: @unchecked Sendable {
    let io: CommandIO
    let json: Bool
    let text: DuaText
    let usesRecognizer: Bool
    let neededSeconds: Double
    let frameSeconds: Double
    /// Whether the terminal view is drawn (stdout is a terminal, no --json).
    let draws: Bool
    private var screen = Screen()

    init(io: CommandIO, json: Bool, text: DuaText, usesRecognizer: Bool, neededSeconds: Double, frameSeconds: Double) {
        self.io = io
        self.json = json
        self.text = text
        self.usesRecognizer = usesRecognizer
        self.neededSeconds = neededSeconds
        self.frameSeconds = frameSeconds
        draws = !json && io.isStdoutTerminal
    }

    /// What the terminal view shows.
    struct Screen {
        var level: ReadingLevel?
        var progress: ReadingProgress?
        var heard: Set<Int> = []
        var lastLine: String?
        var drawnLines = 0
    }

    /// Shows one update of the listening and the proof's events it caused.
    func show(_ update: LiveReadingProof.Update) {
        var proofEvents: [ReadingProofEvent] = []
        var t = 0.0
        switch update {
        case .audio(let endSeconds, let events):
            t = endSeconds
            proofEvents = events
        case .transcript(let line, let seconds, let events):
            t = seconds
            if json {
                io.printJSON(["event": "transcript", "t": .rounded(t, places: 3), "text": .string(line)])
            } else {
                screen.lastLine = "» " + line
                if !draws { io.print("» \(line)") }
            }
            proofEvents = events
        case .recognizerRestarted(let count):
            if json { io.printJSON(["event": "recognizer_restarted", "restarts": .int(count)]) }
        case .recognizerGaveUp:
            if json {
                io.printJSON(["event": "recognizer_gave_up"])
            } else {
                io.printError("proofkit voice: the recogniser keeps dying; going on with voice only")
            }
        }
        var redraw = false
        for proofEvent in proofEvents {
            if json {
                io.printJSON(jsonEvent(proofEvent, t: t))
                continue
            }
            switch proofEvent {
            case .level(let level):
                screen.level = level
                redraw = true
            case .progress(let progress):
                screen.progress = progress
            case .keyWordHeard(let hit):
                screen.heard.insert(hit.index)
                redraw = true
                if !draws { io.print("heard: \(hit.word)") }
            case .accepted:
                redraw = true
            case .voiceStarted, .voiceStopped:
                break
            }
        }
        if draws && redraw { draw(&screen) }
    }

    /// Draws the view a last time when listening has ended (on a terminal).
    func finish() {
        if draws { draw(&screen) }
    }

    func jsonEvent(_ event: ReadingProofEvent, t: Double) -> JSONValue {
        switch event {
        case .level(let level):
            return [
                "event": "level", "t": .rounded(level.seconds + frameSeconds, places: 3),
                "level_dbfs": .rounded(Double(level.levelDecibels), places: 1),
                "floor_dbfs": .rounded(Double(level.floorDecibels), places: 1),
                "threshold_dbfs": .rounded(Double(level.thresholdDecibels), places: 1), "voiced": .bool(level.isVoiced),
            ]
        case .progress(let progress):
            return [
                "event": "progress", "t": .rounded(t, places: 3),
                "voiced_seconds": .rounded(progress.voicedSeconds, places: 3),
                "needed_seconds": .rounded(progress.neededSeconds, places: 3),
                "key_words_heard": .int(progress.heardKeyWords), "required_key_words": .int(progress.requiredKeyWords),
            ]
        case .voiceStarted(let seconds):
            return ["event": "voice_started", "t": .rounded(seconds, places: 3)]
        case .voiceStopped(let seconds):
            return ["event": "voice_stopped", "t": .rounded(seconds, places: 3)]
        case .keyWordHeard(let hit):
            return [
                "event": "key_word", "t": .rounded(hit.seconds, places: 3), "index": .int(hit.index),
                "word": .string(hit.word),
            ]
        case .accepted(let match):
            return ["event": "accepted", "t": .rounded(t, places: 3), "rule": .string(match.rule.rawValue)]
        }
    }

    /// Redraws the view in place: the du'a, the meter, the progress, the last transcript line.
    func draw(_ screen: inout Screen) {
        var lines: [String] = []
        lines.append(highlighted(heard: screen.heard))
        if let level = screen.level {
            lines.append(meter(level))
        } else {
            lines.append("listening…")
        }
        let progress = screen.progress
        let voiced = progress?.voicedSeconds ?? 0
        var status =
            "voiced \(formatSeconds(voiced)) / \(formatSeconds(neededSeconds)) needed  "
            + bar(voiced / max(neededSeconds, 0.001), width: 20)
        if usesRecognizer {
            status += "   key words \(screen.heard.count)/\(text.requiredKeyWords)"
        }
        lines.append(status)
        lines.append(screen.lastLine ?? "")
        var out = ""
        if screen.drawnLines > 0 { out += "\u{1B}[\(screen.drawnLines)F" }
        for line in lines { out += line + "\u{1B}[K\n" }
        screen.drawnLines = lines.count
        io.writeOut(out)
    }

    /// The text with heard key words in bold green and the others underlined.
    func highlighted(heard: Set<Int>) -> String {
        var result = text.text
        for (index, keyWord) in text.keyWords.enumerated() where !keyWord.word.isEmpty {
            let style = heard.contains(index) ? "\u{1B}[1;32m" : "\u{1B}[4;33m"
            result = result.replacingFirst(keyWord.word, with: style + keyWord.word + "\u{1B}[0m")
        }
        return result
    }

    /// A 50-cell meter from -80 to 0 dBFS: the level as a bar, the floor as `:`, the threshold as
    /// `|`, then the numbers.
    func meter(_ level: ReadingLevel) -> String {
        let cells = 50
        func cell(_ decibels: Float) -> Int {
            max(0, min(cells - 1, Int((Double(decibels) + 80) / 80 * Double(cells))))
        }
        let filled = Double(level.levelDecibels) <= -80 ? 0 : cell(level.levelDecibels) + 1
        var characters = Array(repeating: "·", count: cells)
        for i in 0..<filled { characters[i] = "█" }
        characters[cell(level.floorDecibels)] = ":"
        characters[cell(level.thresholdDecibels)] = "|"
        let colour = level.isVoiced ? "\u{1B}[32m" : "\u{1B}[2m"
        let voice = level.isVoiced ? "\u{1B}[1;32m● voice\u{1B}[0m" : "○ quiet"
        return colour + characters.joined() + "\u{1B}[0m "
            + "\(Int(level.levelDecibels.rounded())) dBFS  floor \(Int(level.floorDecibels.rounded()))  threshold \(Int(level.thresholdDecibels.rounded()))  "
            + voice
    }

    func bar(_ fraction: Double, width: Int) -> String {
        let filled = max(0, min(width, Int(fraction * Double(width))))
        return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "]"
    }
}
