/// A small line chart, or a calendar grid of coloured cells, written as a standalone SVG
/// document, with no dependency.
///
/// Used by the verbs that offer `--plot` (audio levels, squat depth, benchmark latencies, the
/// alarm history's heat map). Axes are scaled to the data; the legend lists every labelled
/// element. A plot with cells (``addCell(column:row:color:marks:text:tooltip:outlined:)``) is
/// drawn as a grid instead of a chart: one square per cell, column and row labels, the legend.
public struct SVGPlot: Sendable {
    enum Element: Sendable {
        case line([Point], label: String, color: String)
        case horizontal(y: Double, label: String, color: String)
        case band(x0: Double, x1: Double, label: String?, color: String)
        case cell(Cell)
        case key(label: String, swatch: Cell)
        case heading(String)
    }
    /// A mark drawn over a grid cell, in its own colour (a cell may have several).
    public enum CellMark: Sendable, Hashable {
        /// An X from corner to corner.
        case cross(color: String)
        /// A circle inside the square (it stays visible over a cross).
        case ring(color: String)
    }
    struct Cell: Sendable {
        var column = 0
        var row = 0
        var color: String
        var marks: [CellMark] = []
        var text: String?
        var tooltip: String?
        var outlined = false
    }
    struct Point: Sendable {
        var x: Double
        var y: Double
    }

    let title: String
    let xLabel: String
    let yLabel: String
    let width: Int
    let height: Int
    var elements: [Element] = []
    var paletteIndex = 0
    var columnLabels: [Int: String] = [:]
    var rowLabels: [String] = []
    var notes: [String] = []
    /// A grid cell's side, pixels.
    public var cellSize = 26

    static let palette = [
        "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
        "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    ]

    /// Creates an empty plot.
    /// - Parameters:
    ///   - title: shown above the chart.
    ///   - xLabel: x-axis label, with its unit (e.g. "time (s)").
    ///   - yLabel: y-axis label, with its unit (e.g. "level (dBFS)").
    ///   - width: in pixels, default 960.
    ///   - height: in pixels, default 400.
    public init(title: String, xLabel: String, yLabel: String, width: Int = 960, height: Int = 400) {
        self.title = title
        self.xLabel = xLabel
        self.yLabel = yLabel
        self.width = width
        self.height = height
    }

    mutating func nextColor(_ color: String?) -> String {
        if let color { return color }
        defer { paletteIndex += 1 }
        return SVGPlot.palette[paletteIndex % SVGPlot.palette.count]
    }

    /// Adds a polyline through `points` (non-finite points break the line).
    public mutating func addLine(_ points: [(x: Double, y: Double)], label: String, color: String? = nil) {
        elements.append(.line(points.map { Point(x: $0.x, y: $0.y) }, label: label, color: nextColor(color)))
    }

    /// Adds a dashed horizontal line at `y` (a threshold).
    public mutating func addHorizontalLine(y: Double, label: String, color: String? = nil) {
        elements.append(.horizontal(y: y, label: label, color: nextColor(color)))
    }

    /// Adds a shaded vertical band from `x0` to `x1` (a region such as a voiced segment or a rep).
    /// Bands with the same label share one legend entry.
    public mutating func addBand(from x0: Double, to x1: Double, label: String?, color: String? = nil) {
        let shade = color ?? "#2ca02c"
        elements.append(.band(x0: min(x0, x1), x1: max(x0, x1), label: label, color: shade))
    }

    /// Adds a square of a grid at `column`, `row` (from 0), filled with `color`; `text` is
    /// written inside it, `tooltip` shown when the pointer rests on it, and `outlined` draws it
    /// as a dashed outline on white instead (a cell still to come).
    public mutating func addCell(
        column: Int, row: Int, color: String, marks: [CellMark] = [], text: String? = nil, tooltip: String? = nil,
        outlined: Bool = false
    ) {
        elements.append(
            .cell(
                Cell(
                    column: column, row: row, color: color, marks: marks, text: text, tooltip: tooltip,
                    outlined: outlined)))
    }

    /// Adds a legend entry that shows a grid cell's look.
    public mutating func addKey(_ label: String, color: String, marks: [CellMark] = [], outlined: Bool = false) {
        elements.append(.key(label: label, swatch: Cell(color: color, marks: marks, outlined: outlined)))
    }

    /// Adds a heading line to the legend (above the entries that follow it).
    public mutating func addLegendHeading(_ text: String) { elements.append(.heading(text)) }

    /// Labels a grid column (above it, from its left edge).
    public mutating func labelColumn(_ column: Int, _ label: String) { columnLabels[column] = label }
    /// Labels the grid's rows (left of them, from row 0; an empty label leaves a row bare).
    public mutating func labelRows(_ labels: [String]) { rowLabels = labels }

    /// Adds a line of text under the grid.
    public mutating func addNote(_ line: String) { notes.append(line) }

    /// The plot area of one rendering (margins in pixels) and the data ranges mapped onto it.
    struct Frame {
        let left = 70.0, right = 20.0, top = 40.0, bottom = 50.0
        let legendWidth = 190.0
        let plotWidth: Double
        let plotHeight: Double
        var xMin = 0.0, xMax = 1.0, yMin = 0.0, yMax = 1.0
        var xTicks: [Double] = []
        var yTicks: [Double] = []

        init(width: Int, height: Int) {
            plotWidth = Double(width) - left - right - legendWidth
            plotHeight = Double(height) - top - bottom
        }

        /// The pixel x of data `x`.
        func sx(_ x: Double) -> Double { left + (x - xMin) / (xMax - xMin) * plotWidth }
        /// The pixel y of data `y`.
        func sy(_ y: Double) -> Double { top + (1 - (y - yMin) / (yMax - yMin)) * plotHeight }
    }

    /// A pixel coordinate with one decimal.
    static func format(_ v: Double) -> String { String(Double((v * 10).rounded()) / 10) }

    /// The complete SVG document.
    public func render() -> String {
        if elements.contains(where: { if case .cell = $0 { true } else { false } }) { return renderGrid() }
        let frame = scaledFrame()
        var svg = header(left: frame.left, width: width, height: height)
        svg += bands(frame)
        svg += gridAndAxes(frame)
        svg += linesAndThresholds(frame)
        svg += legend(frame)
        svg += "</svg>\n"
        return svg
    }

    /// Axes scaled to the data: finite points, thresholds and bands, 5 % of headroom on y, and x
    /// widened to whole ticks.
    func scaledFrame() -> Frame {
        var frame = Frame(width: width, height: height)
        var xs: [Double] = []
        var ys: [Double] = []
        for element in elements {
            switch element {
            case .line(let points, _, _):
                for p in points where p.x.isFinite && p.y.isFinite {
                    xs.append(p.x)
                    ys.append(p.y)
                }
            case .horizontal(let y, _, _): if y.isFinite { ys.append(y) }
            case .band(let x0, let x1, _, _): xs += [x0, x1].filter(\.isFinite)
            case .cell, .key, .heading: continue
            }
        }
        var (xMin, xMax) = (xs.min() ?? 0, xs.max() ?? 1)
        var (yMin, yMax) = (ys.min() ?? 0, ys.max() ?? 1)
        if xMax <= xMin { xMax = xMin + 1 }
        if yMax <= yMin { yMax = yMin + 1 }
        let yPad = (yMax - yMin) * 0.05
        yMin -= yPad
        yMax += yPad
        let xTicks = SVGPlot.ticks(xMin, xMax)
        let yTicks = SVGPlot.ticks(yMin, yMax)
        xMin = min(xMin, xTicks.first ?? xMin)
        xMax = max(xMax, xTicks.last ?? xMax)
        (frame.xMin, frame.xMax, frame.yMin, frame.yMax) = (xMin, xMax, yMin, yMax)
        (frame.xTicks, frame.yTicks) = (xTicks, yTicks)
        return frame
    }

    /// The document's opening, background and title.
    func header(left: Double, width: Int, height: Int) -> String {
        let f = SVGPlot.format
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" \
            viewBox="0 0 \(width) \(height)" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(f(left))" y="22" font-size="15" font-weight="bold">\(SVGPlot.escape(title))</text>

            """
    }

    /// Bands first, under everything else.
    func bands(_ frame: Frame) -> String {
        let f = SVGPlot.format
        let (left, top, plotWidth, plotHeight) = (frame.left, frame.top, frame.plotWidth, frame.plotHeight)
        var svg = ""
        for element in elements {
            if case .band(let x0, let x1, _, let color) = element {
                let a = max(left, frame.sx(x0))
                let b = min(left + plotWidth, frame.sx(x1))
                if b > a {
                    svg +=
                        "<rect x=\"\(f(a))\" y=\"\(f(top))\" width=\"\(f(b - a))\" height=\"\(f(plotHeight))\" fill=\"\(color)\" fill-opacity=\"0.18\"/>\n"
                }
            }
        }
        return svg
    }

    /// Grid and axes: tick lines and labels, the frame, the axis labels.
    func gridAndAxes(_ frame: Frame) -> String {
        let f = SVGPlot.format
        let (left, top, plotWidth, plotHeight) = (frame.left, frame.top, frame.plotWidth, frame.plotHeight)
        let (sx, sy) = (frame.sx, frame.sy)
        var svg = ""
        for t in frame.yTicks where t >= frame.yMin && t <= frame.yMax {
            svg +=
                "<line x1=\"\(f(left))\" y1=\"\(f(sy(t)))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(sy(t)))\" stroke=\"#e5e5e5\"/>\n"
            svg += "<text x=\"\(f(left - 6))\" y=\"\(f(sy(t) + 4))\" text-anchor=\"end\">\(SVGPlot.label(t))</text>\n"
        }
        for t in frame.xTicks where t >= frame.xMin && t <= frame.xMax {
            svg +=
                "<line x1=\"\(f(sx(t)))\" y1=\"\(f(top))\" x2=\"\(f(sx(t)))\" y2=\"\(f(top + plotHeight))\" stroke=\"#f0f0f0\"/>\n"
            svg +=
                "<text x=\"\(f(sx(t)))\" y=\"\(f(top + plotHeight + 16))\" text-anchor=\"middle\">\(SVGPlot.label(t))</text>\n"
        }
        svg +=
            "<rect x=\"\(f(left))\" y=\"\(f(top))\" width=\"\(f(plotWidth))\" height=\"\(f(plotHeight))\" fill=\"none\" stroke=\"#333\"/>\n"
        svg +=
            "<text x=\"\(f(left + plotWidth / 2))\" y=\"\(height - 12)\" text-anchor=\"middle\">\(SVGPlot.escape(xLabel))</text>\n"
        svg +=
            "<text transform=\"translate(16 \(f(top + plotHeight / 2))) rotate(-90)\" text-anchor=\"middle\">\(SVGPlot.escape(yLabel))</text>\n"
        return svg
    }

    /// The lines (broken at non-finite points) and the dashed thresholds.
    func linesAndThresholds(_ frame: Frame) -> String {
        let f = SVGPlot.format
        let (sx, sy) = (frame.sx, frame.sy)
        var svg = ""
        for element in elements {
            switch element {
            case .line(let points, _, let color):
                var segments: [[Point]] = [[]]
                for p in points {
                    if p.x.isFinite && p.y.isFinite {
                        segments[segments.count - 1].append(p)
                    } else {
                        segments.append([])
                    }
                }
                for segment in segments where !segment.isEmpty {
                    let path = segment.map { "\(f(sx($0.x))),\(f(sy($0.y)))" }.joined(separator: " ")
                    svg += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.5\"/>\n"
                }
            case .horizontal(let y, _, let color):
                guard y.isFinite else { continue }
                svg +=
                    "<line x1=\"\(f(frame.left))\" y1=\"\(f(sy(y)))\" x2=\"\(f(frame.left + frame.plotWidth))\" y2=\"\(f(sy(y)))\" stroke=\"\(color)\" stroke-dasharray=\"6 4\" stroke-width=\"1.5\"/>\n"
            case .band, .cell, .key, .heading:
                continue
            }
        }
        return svg
    }

    /// The legend, right of the plot: every labelled element once (bands once per label).
    func legend(_ frame: Frame) -> String {
        let f = SVGPlot.format
        var svg = ""
        var legendY = frame.top + 8
        var seenBands: Set<String> = []
        let legendX = frame.left + frame.plotWidth + 16
        for element in elements {
            let entry: (String, String, String)?
            switch element {
            case .cell, .key, .heading: entry = nil
            case .line(_, let label, let color): entry = (label, color, "line")
            case .horizontal(_, let label, let color): entry = (label, color, "dash")
            case .band(_, _, let label, let color):
                if let label, seenBands.insert(label).inserted { entry = (label, color, "band") } else { entry = nil }
            }
            guard let (label, color, kind) = entry, !label.isEmpty else { continue }
            switch kind {
            case "band":
                svg +=
                    "<rect x=\"\(f(legendX))\" y=\"\(f(legendY - 6))\" width=\"18\" height=\"12\" fill=\"\(color)\" fill-opacity=\"0.25\"/>\n"
            default:
                let dash = kind == "dash" ? " stroke-dasharray=\"6 4\"" : ""
                svg +=
                    "<line x1=\"\(f(legendX))\" y1=\"\(f(legendY))\" x2=\"\(f(legendX + 18))\" y2=\"\(f(legendY))\" stroke=\"\(color)\" stroke-width=\"2\"\(dash)/>\n"
            }
            svg += "<text x=\"\(f(legendX + 24))\" y=\"\(f(legendY + 4))\">\(SVGPlot.escape(label))</text>\n"
            legendY += 18
        }
        return svg
    }

    // MARK: Grid

    /// The grid's document: title, column and row labels, the cells, the legend on the right
    /// and the notes below. Its size follows the content (`width` and `height` are not used).
    func renderGrid() -> String {
        let f = SVGPlot.format
        let step = Double(cellSize) + 3
        let cells = elements.compactMap { if case .cell(let cell) = $0 { cell } else { nil } }
        let columns = (cells.map(\.column).max() ?? 0) + 1
        let rows = max(rowLabels.count, (cells.map(\.row).max() ?? 0) + 1)
        let left = rowLabels.isEmpty ? 20.0 : 50.0
        let top = columnLabels.isEmpty ? 44.0 : 62.0
        let legendX = left + Double(columns) * step + 28
        let legendBottom = top + Double(legendRows) * 20
        let gridBottom = top + Double(rows) * step
        let docWidth = Int(max(legendX + 220, left + Double(title.count) * 8.5 + 20, Self.textWidth(notes) + left))
        let docHeight = Int(max(gridBottom, legendBottom) + 16 + Double(notes.count) * 18)
        var svg = header(left: left, width: docWidth, height: docHeight)
        for (column, label) in columnLabels.sorted(by: { $0.key < $1.key }) {
            svg +=
                "<text x=\"\(f(left + Double(column) * step))\" y=\"\(f(top - 8))\" fill=\"#444\">\(SVGPlot.escape(label))</text>\n"
        }
        for (row, label) in rowLabels.enumerated() where !label.isEmpty {
            svg +=
                "<text x=\"\(f(left - 8))\" y=\"\(f(top + Double(row) * step + Double(cellSize) / 2 + 4))\" text-anchor=\"end\" fill=\"#444\">\(SVGPlot.escape(label))</text>\n"
        }
        for cell in cells {
            svg += square(
                cell, x: left + Double(cell.column) * step, y: top + Double(cell.row) * step, side: Double(cellSize))
        }
        var y = top
        for element in elements {
            switch element {
            case .heading(let text):
                svg +=
                    "<text x=\"\(f(legendX))\" y=\"\(f(y + 11))\" font-weight=\"bold\">\(SVGPlot.escape(text))</text>\n"
            case .key(let label, let swatch):
                svg += square(swatch, x: legendX, y: y, side: 14)
                svg += "<text x=\"\(f(legendX + 22))\" y=\"\(f(y + 11))\">\(SVGPlot.escape(label))</text>\n"
            default:
                continue
            }
            y += 20
        }
        for (index, note) in notes.enumerated() {
            svg +=
                "<text x=\"\(f(left))\" y=\"\(f(max(gridBottom, legendBottom) + 16 + Double(index) * 18))\" fill=\"#333\">\(SVGPlot.escape(note))</text>\n"
        }
        return svg + "</svg>\n"
    }

    /// Legend lines (headings and keys).
    var legendRows: Int {
        elements.filter {
            switch $0 {
            case .key, .heading: true
            default: false
            }
        }.count
    }

    /// One square: its fill (or dashed outline), its marks, its text and its tooltip.
    func square(_ cell: Cell, x: Double, y: Double, side: Double) -> String {
        let f = SVGPlot.format
        var svg = "<g>"
        if let tooltip = cell.tooltip { svg += "<title>\(SVGPlot.escape(tooltip))</title>" }
        svg +=
            cell.outlined
            ? "<rect x=\"\(f(x + 0.5))\" y=\"\(f(y + 0.5))\" width=\"\(f(side - 1))\" height=\"\(f(side - 1))\" rx=\"3\" fill=\"white\" stroke=\"\(cell.color)\" stroke-dasharray=\"3 2\"/>"
            : "<rect x=\"\(f(x))\" y=\"\(f(y))\" width=\"\(f(side))\" height=\"\(f(side))\" rx=\"3\" fill=\"\(cell.color)\"/>"
        // Marks sit in the lower right, clear of the text in the upper left corner (in a small
        // swatch without text, in the middle).
        let (x0, y0, x1, y1) =
            cell.text == nil
            ? (x + side * 0.2, y + side * 0.2, x + side * 0.8, y + side * 0.8)
            : (x + side * 0.34, y + side * 0.38, x + side * 0.86, y + side * 0.9)
        let width = f(max(1.5, side / 9))
        for mark in cell.marks {
            switch mark {
            case .cross(let color):
                svg +=
                    "<path d=\"M\(f(x0)) \(f(y0))L\(f(x1)) \(f(y1))M\(f(x1)) \(f(y0))L\(f(x0)) \(f(y1))\" stroke=\"\(color)\" stroke-width=\"\(width)\" stroke-linecap=\"round\"/>"
            case .ring(let color):
                svg +=
                    "<circle cx=\"\(f((x0 + x1) / 2))\" cy=\"\(f((y0 + y1) / 2))\" r=\"\(f((x1 - x0) * 0.5))\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"\(width)\"/>"
            }
        }
        if let text = cell.text {
            // Small, in a corner, so that a mark stays readable; dark on light fills.
            let ink = cell.outlined || !SVGPlot.isDark(cell.color) ? "#333" : "white"
            svg +=
                "<text x=\"\(f(x + 3))\" y=\"\(f(y + 10))\" font-size=\"9\" fill=\"\(ink)\">\(SVGPlot.escape(text))</text>"
        }
        return svg + "</g>\n"
    }

    /// Whether `#rrggbb` is dark enough for white text (relative luminance under 0.45).
    static func isDark(_ color: String) -> Bool {
        guard color.hasPrefix("#"), color.count == 7, let value = Int(color.dropFirst(), radix: 16) else {
            return false
        }
        let (r, g, b) = (Double(value >> 16 & 0xff), Double(value >> 8 & 0xff), Double(value & 0xff))
        return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255 < 0.45
    }

    /// About how wide the longest of `lines` is at 12 px, pixels.
    static func textWidth(_ lines: [String]) -> Double { Double(lines.map(\.count).max() ?? 0) * 6.6 }

    /// About five round tick values covering `lo...hi`.
    static func ticks(_ lo: Double, _ hi: Double) -> [Double] {
        let span = hi - lo
        guard span > 0, span.isFinite else { return [lo] }
        let raw = span / 5
        var magnitude = 1.0
        while magnitude * 10 <= raw { magnitude *= 10 }
        while magnitude > raw { magnitude /= 10 }
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? magnitude * 10
        var t = (lo / step).rounded(.down) * step
        var result: [Double] = []
        while t <= hi + step * 1e-9 && result.count < 50 {
            if t >= lo - step * 1e-9 { result.append(t) }
            t += step
        }
        return result
    }

    static func label(_ value: Double) -> String {
        if value == value.rounded() && abs(value) < 1e9 { return String(Int(value)) }
        let text = String(Double((value * 1000).rounded()) / 1000)
        return text
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }

    /// `data:MEDIATYPE;base64,...`: bytes to embed in a document (RFC 2397, standard base64 with padding).
    static func dataURI(_ bytes: [UInt8], mediaType: String) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = Array("data:\(mediaType);base64,".utf8)
        out.reserveCapacity(out.count + (bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group = 0
            for k in 0..<3 { group = group << 8 | (k < count ? Int(bytes[index + k]) : 0) }
            for k in 0..<4 {
                out.append(k <= count ? alphabet[(group >> (18 - 6 * k)) & 63] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
