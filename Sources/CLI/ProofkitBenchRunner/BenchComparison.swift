import Proofkit
import ProofkitCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
// libm only (log, exp); system calls go through ProofkitSystem.
#if canImport(Glibc)
    import Glibc
#endif

/// Two bench reports side by side: the same figures for each (model, threads) found in either,
/// with the ratio B / A (below 1 means B is faster or smaller for times and memory; above 1
/// means B has more throughput).
public struct BenchComparison: Sendable, Equatable {
    /// One figure compared.
    public enum Metric: String, Sendable, CaseIterable {
        /// Median latency of one run (s).
        case p50 = "p50_s"
        /// 90th-percentile latency (s).
        case p90 = "p90_s"
        /// Runs per second.
        case throughput = "throughput_per_s"
        /// Session creation (s).
        case load = "load_s"
        /// Peak resident memory (bytes).
        case peakResident = "peak_rss_bytes"
        /// The photo end to end, median (s).
        case photo = "photo_p50_s"

        /// The column heading in the text table.
        public var heading: String {
            switch self {
            case .p50: "p50 ms"
            case .p90: "p90 ms"
            case .throughput: "runs/s"
            case .load: "load ms"
            case .peakResident: "peak MiB"
            case .photo: "photo ms"
            }
        }

        /// The figure in the table's unit (ms, MiB, /s).
        func display(_ value: Double) -> Double {
            switch self {
            case .p50, .p90, .load, .photo: value * 1000
            case .peakResident: value / 1_048_576
            case .throughput: value
            }
        }

        func value(in result: BenchResult) -> Double? {
            switch self {
            case .p50: result.latency.p50
            case .p90: result.latency.p90
            case .throughput: result.throughputPerSecond
            case .load: result.loadSeconds
            case .peakResident: Double(result.memory.peakResidentBytes)
            case .photo: result.photo?.total.p50
            }
        }
    }

    /// One (model, threads) row.
    public struct Row: Sendable, Equatable {
        /// The model name.
        public var model: String
        /// The thread count.
        public var threads: Int
        /// Per metric: A's figure, B's figure, and B / A (nil when either is missing or A is 0).
        public var cells: [Metric: Cell]
    }

    /// One metric of one row.
    public struct Cell: Sendable, Equatable {
        /// A's figure (seconds, bytes or runs per second), or `nil` when A lacks it.
        public var a: Double?
        /// B's figure, or `nil` when B lacks it.
        public var b: Double?
        /// `b / a`, or `nil`.
        public var ratio: Double? {
            guard let a, let b, a > 0 else { return nil }
            return b / a
        }
    }

    /// The first report.
    public let a: BenchReport
    /// The second report.
    public let b: BenchReport
    /// The rows: A's order first, then what only B has.
    public let rows: [Row]

    /// Compares two reports.
    public init(_ a: BenchReport, _ b: BenchReport) {
        self.a = a
        self.b = b
        var keys: [(String, Int)] = []
        for result in a.results + b.results where !keys.contains(where: { $0 == (result.model, result.threads) }) {
            keys.append((result.model, result.threads))
        }
        rows = keys.map { model, threads in
            let left = a.results.first { $0.model == model && $0.threads == threads }
            let right = b.results.first { $0.model == model && $0.threads == threads }
            var cells: [Metric: Cell] = [:]
            for metric in Metric.allCases {
                cells[metric] = Cell(a: left.flatMap(metric.value(in:)), b: right.flatMap(metric.value(in:)))
            }
            return Row(model: model, threads: threads, cells: cells)
        }
    }

    /// The geometric mean of B / A median latency over the rows both have (`nil` when none):
    /// one number for "how much faster is B".
    public var geometricMeanLatencyRatio: Double? {
        let ratios = rows.compactMap { $0.cells[.p50]?.ratio }.filter { $0 > 0 }
        guard !ratios.isEmpty else { return nil }
        let logSum = ratios.reduce(0.0) { $0 + log($1) }
        return exp(logSum / Double(ratios.count))
    }

    /// The side-by-side table as text: a header naming both machines, then one line per row with
    /// A, B and B/A for each metric.
    /// - Parameters:
    ///   - nameA: how to call A (e.g. its file name).
    ///   - nameB: how to call B.
    public func table(nameA: String, nameB: String) -> String {
        func machine(_ report: BenchReport) -> String {
            let m = report.machine
            let load = m.loadAverage.first.map { ", load \(decimalText($0, places: 2))" } ?? ""
            return "\(m.cpuModel), \(m.cores) cores, \(m.architecture), kernel \(m.kernel)\(load); "
                + "proofkit \(report.proofkitVersion), ONNX Runtime \(report.onnxRuntime?.version ?? "?"); \(report.timestamp)"
                + (report.isNoisy ? " (noisy)" : "")
        }
        var lines = [
            "A: \(nameA): \(machine(a))",
            "B: \(nameB): \(machine(b))",
            "",
        ]
        // Columns that neither report has (the photo time without --image) are left out.
        let metrics = [Metric.p50, .p90, .throughput, .load, .peakResident, .photo].filter { metric in
            rows.contains { $0.cells[metric]?.a != nil || $0.cells[metric]?.b != nil }
        }
        var header = ["model", "threads"]
        for metric in metrics { header += ["\(metric.heading) A", "B", "B/A"] }
        var body: [[String]] = []
        for row in rows {
            var line = [row.model, String(row.threads)]
            for metric in metrics {
                let cell = row.cells[metric] ?? Cell(a: nil, b: nil)
                line.append(cell.a.map { format(metric.display($0)) } ?? "-")
                line.append(cell.b.map { format(metric.display($0)) } ?? "-")
                line.append(cell.ratio.map { format($0, digits: 2) + "x" } ?? "-")
            }
            body.append(line)
        }
        let widths = header.indices.map { column in
            ([header] + body).map { $0[column].count }.max() ?? 0
        }
        func render(_ cells: [String]) -> String {
            cells.enumerated().map { index, text in
                let pad = String(repeating: " ", count: widths[index] - text.count)
                return index == 0 ? text + pad : pad + text
            }.joined(separator: "  ")
        }
        lines.append(render(header))
        for line in body { lines.append(render(line)) }
        if let mean = geometricMeanLatencyRatio {
            lines.append("")
            lines.append(
                "Median latency, geometric mean of B/A over \(rows.filter { $0.cells[.p50]?.ratio != nil }.count) rows: \(format(mean, digits: 2))x"
                    + (mean < 1 ? " (B is faster)" : mean > 1 ? " (A is faster)" : ""))
        }
        if a.isNoisy || b.isNoisy {
            lines.append(
                "Note: a report is marked noisy (wide spread): re-run it on a quiet machine before trusting small differences."
            )
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A number with a sensible number of digits: 3 significant figures at least.
    func format(_ value: Double, digits: Int? = nil) -> String {
        let places: Int
        if let digits {
            places = digits
        } else {
            let magnitude = abs(value)
            places = magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : magnitude >= 1 ? 2 : magnitude >= 0.1 ? 3 : 4
        }
        return decimalText(value, places: places)
    }
}
