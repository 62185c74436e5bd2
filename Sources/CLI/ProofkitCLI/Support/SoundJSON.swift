import Proofkit
import ProofkitCore

/// The alarm sound's JSON, shared by `trim`, `check` and `demo`.
enum SoundJSON {
    static func dbfs(_ value: Double) -> JSONValue {
        value.isFinite ? .rounded(value, places: 2) : .null
    }
    static func json(for result: AlarmSound.TrimResult, warnings: [String]) -> JSONValue {
        let check = result.check
        return .object([
            "input": .string(result.input),
            "output": .string(result.output),
            "sample_rate": .int(check.format.sampleRate),
            "channels": .int(check.format.channels),
            "frames": .int(check.decodedFrames),
            "seconds": .rounded(check.decodedSeconds, places: 6),
            "cut": .bool(result.wasCut),
            "fade_ms": .int(fadeMilliseconds(result)),
            "skipped_seconds": .rounded(result.skippedSeconds, places: 6),
            "gain_db": result.gainDB.map { .rounded($0, places: 3) } ?? .null,
            "peak_dbfs": dbfs(check.levels.peakDBFS),
            "rms_dbfs": dbfs(check.levels.rmsDBFS),
            "clipped_samples": .int(check.levels.clippedSamples),
            "input_format": SoundJSON.json(format: result.inputFormat),
            "check": SoundJSON.json(for: check),
            "warnings": .array(warnings.map(JSONValue.string)),
        ])
    }

    static func json(format: AudioFileFormat) -> JSONValue {
        .object([
            "container": .string(format.container.description),
            "major_format": .string(format.majorFormatName),
            "subtype": .string(format.subtypeName),
            "sample_rate": .int(format.sampleRate),
            "channels": .int(format.channels),
            "header_seconds": format.headerSeconds.map { .rounded($0, places: 6) } ?? .null,
        ])
    }
    static func json(for report: AlarmSound.CheckReport) -> JSONValue {
        let reasons: [JSONValue] = report.problems.map {
            .object(["kind": .string($0.kind.name), "detail": .string($0.detail)])
        }
        return .object([
            "path": .string(report.path),
            "verdict": .string(report.verdict.name),
            "reasons": .array(reasons),
            "decoded_seconds": .rounded(report.decodedSeconds, places: 6),
            "reached_limit": .bool(report.reachedLimit),
            "header_seconds": report.format.headerSeconds.map { .rounded($0, places: 6) } ?? .null,
            "peak_dbfs": SoundJSON.dbfs(report.levels.peakDBFS),
            "rms_dbfs": SoundJSON.dbfs(report.levels.rmsDBFS),
            "clipped_samples": .int(report.levels.clippedSamples),
            "clipped_fraction": .rounded(report.levels.clippedFraction, places: 6),
            "heavy_clipping": .bool(report.isHeavilyClipped),
            "format": json(format: report.format),
            "warnings": .array(report.warnings.map(JSONValue.string)),
        ])
    }

    static func fadeMilliseconds(_ result: AlarmSound.TrimResult) -> Int {
        Int((Double(result.fadeFrames) * 1000 / Double(result.check.format.sampleRate)).rounded())
    }
}
