import Proofkit
import ProofkitCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `proofkit alarm history`: the lines, the summary, the JSON object and the SVG heat map of
/// what the store's chains did (the rules are ``AlarmHistory``'s).
struct AlarmHistoryReport {
    let folder: String
    let now: Date
    let zone: TimeZone
    /// The period shown: `days` local days up to today.
    let from: LocalDate
    let to: LocalDate
    /// Every entry of the store (streaks count over all of them).
    let all: [AlarmHistoryEntry]
    let summary: AlarmHistorySummary

    init(folder: String, chains: [AlarmHistoryChain], days: Int, now: Date, zone: TimeZone) {
        self.folder = folder
        self.now = now
        self.zone = zone
        to = WallClockTime(now, in: zone).date
        from = to.adding(days: -(days - 1))
        all = AlarmHistory.entries(chains, now: now, zone: zone)
        summary = AlarmHistory.summary(all, now: now, zone: zone)
    }

    /// The entries of the period, in first-ring order.
    var shown: [AlarmHistoryEntry] { all.filter { $0.day >= from && $0.day <= to } }

    var periodDays: Int { from.days(to: to) + 1 }

    // MARK: Text

    /// The lines and the summary, as printed.
    func text() -> [String] {
        var lines = ["alarm history of \(folder): \(from) to \(to) (\(periodDays) days, \(zone.identifier))"]
        let rows = shown.map { entry -> [String] in
            [
                entry.day.description, entry.series, entry.status.rawValue, entry.proof?.kind ?? "-",
                entry.proof?.source ?? "-", entry.secondsToProof.map(Self.duration) ?? "-", String(entry.stops),
                String(entry.rings),
            ]
        }
        if rows.isEmpty {
            lines.append("no alarm in this period")
        } else {
            lines += Self.table(
                [["date", "alarm", "result", "proof", "how", "to proof", "stops", "rings"]] + rows,
                rightAligned: [5, 6, 7])
        }
        lines.append(
            "streaks of proven days (an escape or a missed alarm breaks one; a day without an alarm does not):")
        let streaks = summary.streaks + (summary.streaks.count > 1 ? [summary.overall] : [])
        if streaks.isEmpty { lines.append("  none yet") }
        let width = streaks.map { ($0.series ?? "every alarm").count }.max() ?? 0
        for streak in streaks {
            lines.append("  " + (streak.series ?? "every alarm").padded(toLength: width + 2) + Self.streakText(streak))
        }
        let kinds = summary.proofsByKind.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
        let sources = summary.proofsBySource.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
        lines.append(
            "proofs by kind: "
                + (kinds.isEmpty
                    ? "none"
                    : kinds.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + " ("
                        + sources.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")"))
        func pace(_ week: AlarmWeekPace) -> String {
            "\(week.medianSecondsToProof.map(Self.duration) ?? "-") (\(week.proofs) proof\(week.proofs == 1 ? "" : "s"), \(week.from) to \(week.to))"
        }
        lines.append("median time to proof: this week \(pace(summary.thisWeek)), last week \(pace(summary.lastWeek))")
        return lines
    }

    static func streakText(_ streak: AlarmStreak) -> String {
        var text = "now \(days(streak.current))"
        if let since = streak.currentSince { text += " (since \(since))" }
        text += ", longest \(days(streak.longest))"
        if let a = streak.longestFrom, let b = streak.longestTo { text += " (\(a) to \(b))" }
        if let last = streak.lastBreak {
            text += "; last broken \(last.day) by \(last.by == .escape ? "an escape" : "a missed alarm")"
        }
        return text
    }

    static func days(_ n: Int) -> String { "\(n) day\(n == 1 ? "" : "s")" }

    /// `38s`, `4m 12s`, `1h 05m`.
    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        if s < 60 { return "\(s)s" }
        if s < 3600 { return "\(s / 60)m \(String(100 + s % 60).dropFirst())s" }
        return "\(s / 3600)h \(String(100 + s % 3600 / 60).dropFirst())m"
    }

    /// Columns padded to their widest cell, two spaces apart.
    static func table(_ rows: [[String]], rightAligned: Set<Int>) -> [String] {
        let widths = (0..<(rows.first?.count ?? 0)).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return rightAligned.contains(column) ? pad + cell : cell + pad
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }
    }

    // MARK: JSON

    func json() -> JSONValue {
        func date(_ instant: Date?) -> JSONValue { instant.map { .string(iso8601($0, in: zone)) } ?? .null }
        func day(_ day: LocalDate?) -> JSONValue { day.map { .string($0.description) } ?? .null }
        func seconds(_ value: Double?) -> JSONValue { value.map { JSONValue.rounded($0, places: 1) } ?? .null }
        func streak(_ s: AlarmStreak) -> JSONValue {
            .object([
                "series": JSONValue(s.series), "current": .int(s.current), "current_since": day(s.currentSince),
                "longest": .int(s.longest), "longest_from": day(s.longestFrom), "longest_to": day(s.longestTo),
                "last_break": s.lastBreak.map {
                    .object(["date": .string($0.day.description), "by": .string($0.by.rawValue)])
                } ?? .null,
            ])
        }
        func week(_ w: AlarmWeekPace) -> JSONValue {
            .object([
                "from": .string(w.from.description), "to": .string(w.to.description),
                "median_seconds": seconds(w.medianSecondsToProof), "proofs": .int(w.proofs),
            ])
        }
        return .object([
            "store": .string(folder), "now": date(now), "zone": .string(zone.identifier),
            "from": .string(from.description), "to": .string(to.description), "period_days": .int(periodDays),
            "chains": .array(
                shown.map { entry in
                    .object([
                        "id": .string(entry.id), "date": .string(entry.day.description),
                        "series": .string(entry.series),
                        "status": .string(entry.status.rawValue), "proof": JSONValue(entry.proof?.kind),
                        "how": JSONValue(entry.proof?.source), "first_ring": date(entry.firstRing),
                        "ended_at": date(entry.endedAt), "seconds_to_proof": seconds(entry.secondsToProof),
                        "stops": .int(entry.stops), "rings": .int(entry.rings), "missed_rings": .int(entry.missedRings),
                    ])
                }),
            "streaks": .array(summary.streaks.map(streak)), "overall_streak": streak(summary.overall),
            "proofs_by_kind": .object(summary.proofsByKind.mapValues { .int($0) }),
            "proofs_by_how": .object(summary.proofsBySource.mapValues { .int($0) }),
            "median_time_to_proof": .object(["this_week": week(summary.thisWeek), "last_week": week(summary.lastWeek)]),
            "days": .array(
                AlarmHistory.calendar(shown, from: from, to: to).map { d in
                    .object([
                        "date": .string(d.day.description), "chains": .int(d.chains), "proofs": .int(d.proofs),
                        "escapes": .int(d.escapes), "missed": .int(d.missed), "open": .int(d.open),
                        "median_seconds_to_proof": seconds(d.medianSecondsToProof),
                    ])
                }),
        ])
    }

    // MARK: SVG heat map

    /// The time-to-proof scale: upper bounds in seconds and colours (fast is deep green).
    static let scale: [(upTo: Double, color: String, label: String)] = [
        (60, "#1a9850", "under 1 min"), (180, "#66bd63", "1-3 min"), (600, "#a6d96a", "3-10 min"),
        (1200, "#d9ef8b", "10-20 min"), (.infinity, "#fee08b", "20 min or more"),
    ]
    static let missedColor = "#d73027"
    static let escapeColor = "#7b3294"
    static let noAlarmColor = "#ebedf0"
    static let openColor = "#969696"

    static func color(seconds: Double) -> String { scale.first { seconds < $0.upTo }?.color ?? scale.last!.color }

    /// The calendar: one column per week (Monday on top), one square per day of the period.
    /// The colour is the day's median time to proof; a day with only escapes or missed alarms is
    /// filled with their colour and marked (a ring for an escape, an X for a missed alarm, both
    /// when it had both), and a day that had both a proof and such a chain keeps its proof colour
    /// with the marks drawn in the escape's and the miss's colours.
    func svg() -> String {
        var plot = SVGPlot(title: "proofkit alarm history: \(from) to \(to)", xLabel: "", yLabel: "")
        let weeks = (Self.weekday(to) + from.days(to: to) - Self.weekday(from)) / 7 + 1
        plot.cellSize = max(14, min(30, 720 / weeks))
        plot.labelRows(["Mon", "", "Wed", "", "Fri", "", "Sun"])
        let firstMonday = from.adding(days: -Self.weekday(from))
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        var labelled: Set<Int> = []
        let calendar = AlarmHistory.calendar(shown, from: from, to: to)
        let chainsByDay = Dictionary(grouping: shown, by: \.day)
        for day in calendar {
            let column = firstMonday.days(to: day.day) / 7
            if day.day == from || day.day.day == 1, labelled.insert(column).inserted {
                plot.labelColumn(
                    column,
                    months[day.day.month - 1] + (day.day.month == 1 || day.day == from ? " \(day.day.year)" : ""))
            }
            let tooltip =
                ([day.day.description]
                + (chainsByDay[day.day] ?? []).map {
                    "\($0.series): \($0.status.rawValue)\($0.secondsToProof.map { " after " + Self.duration($0) } ?? "")"
                }).joined(separator: "\n")
            var color = Self.noAlarmColor
            // Over a proof's colour the marks take the miss's and the escape's colours; alone, they
            // fill the square (the miss's colour when there were both) and the marks are white.
            let proven = day.medianSecondsToProof != nil
            var marks: [SVGPlot.CellMark] = []
            if day.missed > 0 { marks.append(.cross(color: proven ? Self.missedColor : "white")) }
            if day.escapes > 0 { marks.append(.ring(color: proven ? Self.escapeColor : "white")) }
            if let median = day.medianSecondsToProof {
                color = Self.color(seconds: median)
            } else if day.missed > 0 || day.escapes > 0 {
                color = day.missed > 0 ? Self.missedColor : Self.escapeColor
            }
            plot.addCell(
                column: column, row: Self.weekday(day.day),
                color: day.open > 0 && day.chains == day.open ? Self.openColor : color,
                marks: marks, text: String(day.day.day), tooltip: tooltip,
                outlined: day.open > 0 && day.chains == day.open)
        }
        plot.addLegendHeading("time to proof (median of the day)")
        for step in Self.scale { plot.addKey(step.label, color: step.color) }
        plot.addLegendHeading("not proven")
        plot.addKey("escape (never a proof)", color: Self.escapeColor, marks: [.ring(color: "white")])
        plot.addKey("missed", color: Self.missedColor, marks: [.cross(color: "white")])
        plot.addKey(
            "proof, and an escape the same day", color: Self.scale[1].color, marks: [.ring(color: Self.escapeColor)])
        plot.addKey(
            "proof, and a miss the same day", color: Self.scale[1].color, marks: [.cross(color: Self.missedColor)])
        plot.addLegendHeading("other days")
        plot.addKey("no alarm", color: Self.noAlarmColor)
        plot.addKey("window still open", color: Self.openColor, outlined: true)
        for streak in summary.streaks + (summary.streaks.count > 1 ? [summary.overall] : []) {
            plot.addNote("\(streak.series ?? "every alarm"): streak \(Self.streakText(streak))")
        }
        plot.addNote(
            "median time to proof: this week \(summary.thisWeek.medianSecondsToProof.map(Self.duration) ?? "-"), last week \(summary.lastWeek.medianSecondsToProof.map(Self.duration) ?? "-")"
        )
        return plot.render()
    }

    /// Monday 0 ... Sunday 6 (1970-01-01 was a Thursday).
    static func weekday(_ day: LocalDate) -> Int { ((day.daysSinceEpoch + 3) % 7 + 7) % 7 }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
