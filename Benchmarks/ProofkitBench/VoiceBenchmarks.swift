import DuaMatching
import Proofkit
import VoiceGate

/// The reading proof's benchmarks: the energy voice gate (x real time on one core; target
/// >= 1000x), its peer (a bare frame-RMS loop, the floor any energy gate pays), the du'a
/// matcher's throughput, and a whole ReadingProof session.
func voiceBenchmarks() -> [Benchmark] {
    let sampleRate = 16_000
    let seconds = 60.0
    // Deterministic speech-like input: noise at -50 dBFS with 4 Hz-modulated 200 Hz bursts
    // (syllables) for 2 s out of every 5.
    var state: UInt64 = 0x1234_5678
    func uniform() -> Float {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Float(Int64(bitPattern: state >> 11) % 2_000_001 - 1_000_000) / 1_000_000
    }
    var samples = [Float](repeating: 0, count: Int(seconds) * sampleRate)
    var phase: Float = 0
    for i in samples.indices {
        let t = Float(i) / Float(sampleRate)
        var x = 0.005 * uniform()
        if t.truncatingRemainder(dividingBy: 5) < 2 {
            phase += 2 * Float.pi * 200 / Float(sampleRate)
            if phase > 2 * Float.pi { phase -= 2 * Float.pi }
            let syllable = 0.5 + 0.5 * cosTaylor(2 * Float.pi * 4 * t)
            x += 0.05 * syllable * (phase < Float.pi ? 1 : -1) * 0.5
        }
        samples[i] = x
    }
    let chunks = stride(from: 0, to: samples.count, by: 1600).map {
        Array(samples[$0..<min(samples.count, $0 + 1600)])
    }

    let transcripts = [
        "الحمد لله الذي أحيانا بعد ما أماتنا وإليه النشور",
        "الحمدلله الذي احيانا بعدما اماتنا واليه النشور",
        "ٱلْحَمْدُ لِلَّهِ ٱلَّذِىٓ أَحْيَانَا بَعْدَ مَآ أَمَاتَنَا وَإِلَيْهِ ٱلنُّشُورُ",
        "uh الحمد لله [noise] الذي احيانا 2 بعد ما اماتنا",
        "الحمد لله رب العالمين",
    ]
    let matcher = DuaMatcher(text: DuaCatalog.builtIn.text(named: "waking")!)

    return [
        Benchmark(name: "voicegate.energy", unit: "audio-seconds") {
            var gate = try! VoiceActivityGate(configuration: VoiceGateConfiguration(recordsTrack: false))
            var frames = 0
            for chunk in chunks { frames += gate.process(chunk).count }
            blackHole(frames)
            blackHole(gate.finish().voicedSeconds)
            return seconds
        },
        // Peer: the bare cost of frame RMS over the same chunks (no floor, no decisions).
        Benchmark(name: "voicegate.peer.frame-rms", unit: "audio-seconds") {
            var levels: [Float] = []
            levels.reserveCapacity(3000)
            for chunk in chunks {
                var start = 0
                while start + 320 <= chunk.count {
                    var sum: Float = 0
                    for i in start..<start + 320 { sum += chunk[i] * chunk[i] }
                    levels.append(sum)
                    start += 320
                }
            }
            blackHole(levels.filter { $0 > 0.001 }.count)
            return seconds
        },
        Benchmark(name: "duamatcher.transcripts", unit: "transcripts", iterations: 20) {
            var heard = 0
            for _ in 0..<200 {
                for transcript in transcripts { heard += matcher.keyWordsHeard(in: transcript).count }
            }
            blackHole(heard)
            return Double(200 * transcripts.count)
        },
        Benchmark(name: "readingproof.session", unit: "audio-seconds") {
            var proof = try! ReadingProof(
                configuration: ReadingProofConfiguration(
                    gate: VoiceGateConfiguration(recordsTrack: false)))
            var events = 0
            for (i, chunk) in chunks.enumerated() {
                events += proof.process(audio: chunk).count
                if i % 20 == 0 { events += proof.process(transcript: transcripts[i % transcripts.count]).count }
            }
            blackHole(events)
            return seconds
        },
    ]
}

/// cos(x) for the synthetic input (no Foundation in the benchmark).
private func cosTaylor(_ x: Float) -> Float {
    var y = x.truncatingRemainder(dividingBy: 2 * Float.pi)
    if y > Float.pi { y -= 2 * Float.pi }
    if y < -Float.pi { y += 2 * Float.pi }
    var term: Float = 1
    var result: Float = 1
    for n in 1...10 {
        term *= -y * y / Float((2 * n - 1) * (2 * n))
        result += term
    }
    return result
}
