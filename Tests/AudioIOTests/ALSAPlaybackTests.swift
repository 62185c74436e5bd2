import AudioIO
import Foundation
import ProofkitCore
import TestSupport
import Testing

@Suite("SoundPlayer through libasound")
struct ALSAPlaybackTests {
    @Test("playing to the null device takes the whole sound and reports progress to the end")
    func playToNull() throws {
        let clip = AudioClip(
            samples: sine(frequency: 440, seconds: 1, rate: 22050, channels: 2).map { Float($0) / 32768 },
            channels: 2, sampleRate: 22050)
        var player = try SoundPlayer(device: "null", configuration: .null())
        var reports: [(Int, Int)] = []
        try player.play(clip) { reports.append(($0, $1)) }
        #expect(reports.count >= 2)
        #expect(reports.last! == (22050, 22050))
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.0 <= $1.0 })
        // A second sound at another rate renegotiates.
        try player.play(AudioClip(samples: [Float](repeating: 0, count: 800), channels: 1, sampleRate: 8000))
        try player.close()
    }

    @Test("what is played to a recording sink is the clip, sample for sample")
    func recordingSink() throws {
        try withTemporaryFolder { folder in
            let input = sine(frequency: 523.25, seconds: 0.75, rate: 16000, amplitude: 0.8)
            // As a decoder gives them: a 16-bit sample / 32768, which playback writes back exactly.
            let clip = AudioClip(samples: input.map { Float($0) / 32768 }, channels: 1, sampleRate: 16000)
            var player = try SoundPlayer(
                device: "tap", configuration: .recordingSink(name: "tap", rawFile: folder + "/out.raw"))
            try player.play(clip)
            try player.close()
            let played = try readRaw(folder + "/out.raw")
            #expect(played == input)
        }
    }

    @Test("playing from async code runs on a dedicated thread and finishes")
    func dedicatedThread() async throws {
        let clip = AudioClip(samples: [Float](repeating: 0.1, count: 16000), channels: 1, sampleRate: 16000)
        let player = try SoundPlayer(device: "null", configuration: .null())
        let underruns = try await player.playOnDedicatedThread(clip)
        #expect(underruns == 0)
    }

    @Test("a missing playback device is deviceUnavailable")
    func missing() {
        let error = #expect(throws: ProofkitError.self) { _ = try SoundPlayer(device: "nosuchspeaker") }
        #expect(error?.code == .deviceUnavailable)
        #expect(error?.description.contains("playback") == true)
    }
}
