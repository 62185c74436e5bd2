import Proofkit

#if canImport(Glibc)
    import Glibc
#endif

/// Holds the detector (`~Copyable`) for the benchmark bodies, which are closures.
private final class SileroBox {
    var detector: SileroVoiceDetector
    init(detector: consuming SileroVoiceDetector) { self.detector = detector }
}

/// Silero VAD through proofkit's ONNX Runtime wrapper (x real time on one intra-op thread;
/// target >= 50x), and a whole reading-proof session in `both` mode (energy gate + Silero), next
/// to the same session in energy mode as its peer. Skipped (with a note on stderr) when ONNX
/// Runtime or the model is missing.
func sileroBenchmarks() -> [Benchmark] {
    var environment: [String: String] = [:]
    if let value = getenv(ReadingProofSession.sileroEnvironmentVariable) {
        environment[ReadingProofSession.sileroEnvironmentVariable] = String(cString: value)
    }
    guard let modelPath = ReadingProofSession.sileroModelPath(environment: environment) else {
        note("silero skipped: no Models/generated/silero_vad.onnx")
        return []
    }
    let box: SileroBox
    do {
        box = SileroBox(detector: try SileroVoiceDetector(modelPath: modelPath))
    } catch {
        note("silero skipped: \(error)")
        return []
    }
    // 10 s of deterministic speech-like audio: 4 Hz-modulated 150-300 Hz harmonics over hiss.
    let sampleRate = 16_000
    let seconds = 10.0
    var state: UInt64 = 0x9E37_79B9
    var samples = [Float](repeating: 0, count: Int(seconds) * sampleRate)
    var phase: Float = 0
    for i in samples.indices {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let noise = Float(Int64(bitPattern: state >> 11) % 2_000_001 - 1_000_000) / 1_000_000
        let t = Float(i) / Float(sampleRate)
        let pitch: Float = 150 + 50 * Float((i / 4000) % 3)
        phase += 2 * Float.pi * pitch / Float(sampleRate)
        if phase > 2 * Float.pi { phase -= 2 * Float.pi }
        let envelope: Float = (t.truncatingRemainder(dividingBy: 0.25) < 0.18) ? 0.08 : 0.005
        samples[i] = envelope * (phase < Float.pi ? 1 : -1) * 0.5 + 0.004 * noise
    }
    let chunks = stride(from: 0, to: samples.count, by: 1600).map {
        Array(samples[$0..<min(samples.count, $0 + 1600)])
    }
    return [
        Benchmark(name: "silero.vad", unit: "audio-seconds", warmup: 2, iterations: 10) {
            let probabilities = try! box.detector.probabilities(ofSamples: samples)
            blackHole(probabilities.count)
            return seconds
        },
        Benchmark(name: "readingproof.session.both", unit: "audio-seconds", warmup: 1, iterations: 5) {
            var session = try! ReadingProofSession(
                configuration: ReadingProofConfiguration(voiceDetection: .both), sileroModelPath: modelPath)
            var events = 0
            for chunk in chunks { events += try! session.process(audio: chunk).count }
            blackHole(events)
            return seconds
        },
        // Peer: the same session on the energy gate alone.
        Benchmark(name: "readingproof.session.energy", unit: "audio-seconds", warmup: 1, iterations: 5) {
            var session = try! ReadingProofSession(
                configuration: ReadingProofConfiguration(voiceDetection: .energy), sileroModelPath: nil)
            var events = 0
            for chunk in chunks { events += try! session.process(audio: chunk).count }
            blackHole(events)
            return seconds
        },
    ]
}

/// One line on stderr.
private func note(_ text: String) {
    let line = Array("proofkit-bench: \(text)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
