import Foundation
import TestSupport
import Testing

// Issue 40: ring volume per alarm and a gentle start, checked on the samples the file-plugin
// speaker wrote: the sound's own 16-bit samples times the gain, within 1 LSB after the ramp.

/// The 16-bit little-endian samples of a raw file.
private func samples(_ path: String) -> [Int16] {
    let data = FileManager.default.contents(atPath: path) ?? Data()
    return stride(from: 0, to: data.count - 1, by: 2).map {
        Int16(bitPattern: UInt16(data[$0]) | UInt16(data[$0 + 1]) << 8)
    }
}

/// The 16-bit samples of a mono 16-bit WAV (the test reader's floats are sample / 32768: exact).
private func pcm16(_ path: String) throws -> [Int16] {
    try TestAudio.readWAV(path).samples.map { Int16(($0 * 32768).rounded()) }
}

/// The largest difference between `played` (from frame `from` on) and the looped `sound` times `gain`.
private func worstError(_ played: [Int16], _ sound: [Int16], gain: Double, from: Int) -> Int {
    var worst = 0
    for index in from..<played.count {
        let expected = (Double(sound[index % sound.count]) * gain).rounded()
        worst = max(worst, Int(abs(Double(played[index]) - expected)))
    }
    return worst
}

@Suite(
    "ring volume and fade-in: gain on the samples, exact within 1 LSB (the file-plugin speaker)",
    .serialized, .enabled(if: TestEnvironment.hasProofkitBinary, "build proofkit first"), .offThePool)
struct AlarmVolumeTests {
    /// Books one ring with `extra` options, lets the service ring it for `seconds`, and returns what it wrote.
    func ring(_ extra: [String], seconds: Double) throws -> (played: [Int16], sound: [Int16], rig: AlarmRig) {
        let rig = try AlarmRig()
        try rig.startService(ringSeconds: seconds)
        let (_, first) = try rig.add(in: 2, window: 30, gap: 20, extra: extra)  // the chain stays in status
        _ = try #require(rig.firstSound(by: first.addingTimeInterval(4)), "nothing rang: \(rig.log)")
        // The ring is paced by the clock: wait until it has ended and the file is complete.
        let deadline = Date().addingTimeInterval(seconds + 5)
        while !rig.log.contains("ring-end") && Date() < deadline { usleep(50_000) }
        #expect(rig.log.contains("ring-end"), "\(rig.log)")
        return (samples(rig.out), try pcm16(rig.sound), rig)
    }

    @Test("--volume 50 --ramp 0: every sample is the sound's times 0.5, within 1 LSB; status keeps the level")
    func halfVolumeNoRamp() throws {
        let (played, sound, rig) = try ring(["--volume", "50", "--ramp", "0s"], seconds: 1.5)
        #expect(played.count >= 16_000, "\(played.count) samples")
        #expect(worstError(played, sound, gain: 0.5, from: 0) <= 1)
        #expect(rig.log.contains("volume=50 ramp=0.0"), "\(rig.log)")
        let chain = try #require((try rig.status()["chains"] as? [[String: Any]])?.first)
        #expect(chain["volume"] as? Double == 50 && chain["ramp"] as? Double == 0)
    }

    @Test("--ramp 1s fades in from 30 % and is exact after the ramp; at 100 % the sound's own samples")
    func rampThenExact() throws {
        let (played, sound, _) = try ring(["--ramp", "1s"], seconds: 2)
        #expect(played.count >= 24_000)
        #expect(worstError(played, sound, gain: 1, from: 16_000) <= 1)
        // During the ramp it is quieter: the first 0.1 s peaks near 30 % of the sound's peak.
        let peak = Double(sound.map { abs(Int($0)) }.max() ?? 1)
        let early = Double(played.prefix(1600).map { abs(Int($0)) }.max() ?? 0)
        #expect(early > 0.25 * peak && early < 0.4 * peak, "early peak \(early) of \(peak)")
    }

    // --escalate (each backup louder) is decided by the service: AlarmServiceClockTests.escalates.

    @Test("play --volume 30 writes the same gain, so a level can be tried before booking")
    func playVolume() throws {
        let rig = try AlarmRig()
        let result = try TestEnvironment.runProofkit(
            ["play", rig.sound, "--device", "speaker", "--volume", "30", "--json"],
            environment: ["PROOFKIT_ALSA_CONFIG": rig.config])
        #expect(result.status == 0, "\(result.stderr)")
        let sound = try pcm16(rig.sound)
        let played = samples(rig.out)
        #expect(played.count == sound.count)
        #expect(worstError(played, sound, gain: 0.3, from: 0) <= 1)
        let bad = try TestEnvironment.runProofkit(["play", rig.sound, "--volume", "0"])
        #expect(bad.status == 64 && bad.stderr.contains("--volume must be a percentage from 1 to 100"))
    }
}
