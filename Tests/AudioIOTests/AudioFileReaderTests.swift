import Foundation
import ProofkitCore
import TestSupport
import Testing

@testable import AudioIO

/// Captures the `ProofkitError` a body throws, or nil.
func thrownError(_ body: () throws -> Void) -> ProofkitError? {
    do {
        try body()
        return nil
    } catch {
        return error as? ProofkitError
    }
}

/// Decodes a whole file with AudioFileReader (in small chunks, to exercise streaming).
func decodeAll(_ path: String, chunk: Int = 1000) throws -> (AudioFileFormat, [Float]) {
    var reader = try AudioFileReader(path: path)
    var all: [Float] = []
    while true {
        let part = try reader.readChunk(maxFrames: chunk)
        if part.isEmpty { break }
        all += part
    }
    let format = reader.format
    reader.close()
    return (format, all)
}

/// RMS of a - b over the overlap, relative to RMS of b, in dB (more negative is closer).
func relativeErrorDB(_ a: [Float], _ b: [Float]) -> Double {
    let n = min(a.count, b.count)
    var err = 0.0
    var ref = 0.0
    for i in 0..<n {
        err += Double(a[i] - b[i]) * Double(a[i] - b[i])
        ref += Double(b[i]) * Double(b[i])
    }
    return 10 * log10(max(err, 1e-30) / max(ref, 1e-30))
}

@Suite("AudioFileReader decodes every format libsndfile reads, by content", .offThePool)
struct AudioFileReaderTests {
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var fileName: String
        var tool: String  // "sox", "ffmpeg", "lame"
        var options: [String]
        var major: String
        var subtype: String
        var isLossless: Bool
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "WAV 16-bit", fileName: "a.wav", tool: "sox", options: ["-D", "-b", "16"], major: "WAV",
            subtype: "PCM_16", isLossless: true),
        Case(
            name: "WAV 24-bit (sox writes it as extensible)", fileName: "a.wav", tool: "sox", options: ["-b", "24"],
            major: "WAVEX", subtype: "PCM_24", isLossless: true),
        Case(
            name: "WAV float", fileName: "a.wav", tool: "sox", options: ["-e", "floating-point", "-b", "32"],
            major: "WAV", subtype: "FLOAT", isLossless: true),
        Case(
            name: "WAV extensible (ffmpeg, 24-bit)", fileName: "a.wav", tool: "ffmpeg", options: ["-c:a", "pcm_s24le"],
            major: "WAVEX", subtype: "PCM_24", isLossless: true),
        Case(
            name: "FLAC", fileName: "a.flac", tool: "sox", options: ["-D", "-b", "16"], major: "FLAC",
            subtype: "PCM_16", isLossless: true),
        Case(
            name: "AIFF", fileName: "a.aiff", tool: "sox", options: ["-D", "-b", "16"], major: "AIFF",
            subtype: "PCM_16", isLossless: true),
        Case(
            name: "CAF", fileName: "a.caf", tool: "sox", options: ["-D", "-b", "16"], major: "CAF", subtype: "PCM_16",
            isLossless: true),
        Case(
            name: "Ogg Vorbis", fileName: "a.ogg", tool: "sox", options: ["-C", "6"], major: "OGG", subtype: "VORBIS",
            isLossless: false),
        Case(
            name: "Opus", fileName: "a.opus", tool: "ffmpeg", options: ["-c:a", "libopus", "-b:a", "128k"],
            major: "OGG", subtype: "OPUS", isLossless: false),
        Case(
            name: "MP3 (lame)", fileName: "a.mp3", tool: "lame", options: ["-b", "192"], major: "MPEG",
            subtype: "MPEG_LAYER_III", isLossless: false),
    ]

    @Test("decodes a generated stereo signal with the right format, length and content", arguments: cases)
    func decodesGeneratedAudio(_ testCase: Case) throws {
        let rate = 48000
        let frames = rate * 2
        let left = SyntheticAudio.sine(frequency: 440, amplitude: 0.4, sampleRate: rate, frames: frames)
        let right = zip(
            SyntheticAudio.sine(frequency: 1000, amplitude: 0.2, sampleRate: rate, frames: frames),
            SyntheticAudio.noise(amplitude: 0.05, frames: frames)
        ).map { $0 + $1 }
        let interleaved = SyntheticAudio.interleave([left, right])
        try withTemporaryFolder { folder in
            let source = folder + "/source.wav"
            try AudioTestTools.writeWithSox(
                interleaved, channels: 2, sampleRate: rate, to: source,
                soxOutputOptions: ["-e", "floating-point", "-b", "32"])
            let path = folder + "/" + testCase.fileName
            switch testCase.tool {
            case "sox": try AudioTestTools.require("sox", [source] + testCase.options + [path])
            case "ffmpeg":
                try AudioTestTools.require("ffmpeg", ["-v", "error", "-y", "-i", source] + testCase.options + [path])
            default:
                let pcm = folder + "/pcm16.wav"
                try AudioTestTools.require("sox", [source, "-b", "16", pcm])
                try AudioTestTools.require("lame", ["--quiet"] + testCase.options + [pcm, path])
            }
            let (format, samples) = try decodeAll(path)
            #expect(format.majorFormatName == testCase.major)
            #expect(format.subtypeName == testCase.subtype)
            #expect(format.sampleRate == rate)
            #expect(format.channels == 2)
            let decodedFrames = samples.count / 2
            if testCase.isLossless {
                #expect(decodedFrames == frames)
                #expect(format.headerFrameCount == frames)
                // Exact up to the quantisation of the stored format (16-bit: one step).
                let tolerance: Float = testCase.subtype == "PCM_16" ? 1.0 / 32768 : 1.0 / 4_000_000
                let worst = zip(samples, interleaved).map { abs($0 - $1) }.max() ?? 1
                #expect(worst <= tolerance)
            } else {
                // Lossy codecs add encoder delay/padding: the length is close, the content similar.
                #expect(abs(decodedFrames - frames) < rate / 10)
                // Compare with ffmpeg's decoding of the same file (an independent decoder that also
                // honours the encoder delay recorded in the file).
                let reference = try AudioTestTools.ffmpegSamples(path)
                #expect(relativeErrorDB(samples, reference) < -40)
                let peak = samples.enumerated().filter { $0.offset % 2 == 0 }.map { abs($0.element) }.max() ?? 0
                #expect(peak > 0.3 && peak < 0.5)
            }
            // The same file renamed with a lying extension decodes the same (detection by content).
            let liar = folder + "/liar.txt"
            try FileManager.default.copyItem(atPath: path, toPath: liar)
            let (liarFormat, liarSamples) = try decodeAll(liar)
            #expect(liarFormat == format)
            #expect(liarSamples == samples)
        }
    }

    @Test(
        "decodes odd channel counts and rates: 8 channels, 8 kHz, 192 kHz",
        arguments: [(8, 44100), (1, 8000), (2, 192000)])
    func decodesOddLayouts(channels: Int, rate: Int) throws {
        let frames = rate / 4
        let signals = (0..<channels).map {
            SyntheticAudio.sine(frequency: 100 * Double($0 + 1), amplitude: 0.3, sampleRate: rate, frames: frames)
        }
        try withTemporaryFolder { folder in
            let path = folder + "/odd.wav"
            try AudioTestTools.writeWithSox(
                SyntheticAudio.interleave(signals), channels: channels, sampleRate: rate, to: path)
            let (format, samples) = try decodeAll(path)
            #expect(format.channels == channels && format.sampleRate == rate)
            #expect(samples.count == frames * channels)
            let expected = try AudioTestTools.soxSamples(path)
            #expect(samples == expected)
        }
    }

    @Test("skipping by seek gives the same frames as decoding and dropping")
    func skipMatchesDecoding() throws {
        try withTemporaryFolder { folder in
            let noise = SyntheticAudio.noise(frames: 30000)
            for name in ["a.wav", "a.flac", "a.mp3"] {
                let path = folder + "/" + name
                try AudioTestTools.writeWithSox(noise, channels: 1, sampleRate: 16000, to: path)
                var reader = try AudioFileReader(path: path)
                #expect(try reader.skip(frames: 12345) == 12345)
                let afterSkip = try reader.readChunk(maxFrames: 500)
                reader.close()
                let (_, all) = try decodeAll(path)
                #expect(afterSkip == Array(all[12345..<12845]), "\(name)")
            }
        }
    }

    @Test("real recitations decode: an MP3, a mid-frame MP3, and a WAVE_FORMAT_EXTENSIBLE excerpt")
    func realFixtures() throws {
        let (mp3, mp3Samples) = try decodeAll(TestEnvironment.fixture("rec_001.mp3"))
        #expect(mp3.container == .mpeg && mp3.sampleRate == 44100 && mp3.channels == 2)
        #expect(abs(Double(mp3Samples.count / 2) / 44100 - 5.657) < 0.1)
        let (mid, midSamples) = try decodeAll(TestEnvironment.fixture("odd_midframe_001.mp3"))
        #expect(mid.container == .mpeg)
        #expect(abs(Double(midSamples.count / mid.channels) / Double(mid.sampleRate) - 7.99) < 0.1)
        let (wavex, wavexSamples) = try decodeAll(TestEnvironment.fixture("rec_007_excerpt3s.wav"))
        #expect(wavex.majorFormatName == "WAVEX" && wavex.isLinearPCM16)
        #expect(wavexSamples.count == 3 * 44100)
        let reference = try AudioTestTools.soxInt16(TestEnvironment.fixture("rec_007_excerpt3s.wav"))
        #expect(wavexSamples.map { Int16(($0 * 32768).rounded()) } == reference)
    }

    @Test(
        "an MP3 cut mid-frame decodes to its end in 65536-frame reads (as trim reads them), as long as ffmpeg and sox decode it",
        arguments: [1.0, 2.5, 4.0])
    func truncatedMP3(seconds: Double) throws {
        try withTemporaryFolder { folder in
            let fixture = TestEnvironment.fixture("rec_001.mp3")
            // 64 kbit/s: `seconds` of audio and 333 bytes into the next frame, as `head -c` cuts.
            let whole = try Data(contentsOf: URL(fileURLWithPath: fixture))
            let path = folder + "/cut.mp3"
            try whole.prefix(Int(64000 / 8 * seconds) + 333).write(to: URL(fileURLWithPath: path))
            var reader = try AudioFileReader(path: path)
            var buffer = [Float](repeating: 0, count: 65536 * 2)
            var samples: [Float] = []
            while case let frames = try reader.read(into: &buffer, maxFrames: 65536), frames > 0 {
                samples += buffer[0..<(frames * 2)]
            }
            reader.close()
            let ours = Double(samples.count / 2) / 44100
            let ffmpeg = Double(try AudioTestTools.ffmpegSamples(path).count / 2) / 44100
            let sox = Double(try AudioTestTools.soxSamples(path).count / 2) / 44100
            // Within a few MPEG frames (26 ms each): decoders differ in what they make of the cut
            // frame. Before, the read that met the cut was dropped whole: up to 1.49 s, or all.
            #expect(abs(ours - ffmpeg) < 0.1, "ours \(ours) s, ffmpeg \(ffmpeg) s")
            #expect(abs(ours - sox) < 0.1, "ours \(ours) s, sox \(sox) s")
            // What is decoded is the start of the whole file, sample for sample around the re-read.
            let (_, reference) = try decodeAll(fixture, chunk: 4096)
            #expect(relativeErrorDB(samples, Array(reference.prefix(samples.count))) < -60)
        }
    }
}

@Suite("AudioFileReader refuses bad input with one clear error", .offThePool)
struct AudioFileReaderErrorTests {
    @Test("AAC in MP4/M4A and raw ADTS are recognised by their bytes and refused with how to convert")
    func refusesAAC() throws {
        for (name, format) in [("rec_003_excerpt2s.m4a", "AAC/M4A"), ("rec_008_excerpt2s.aac", "ADTS")] {
            let error = try #require(thrownError { _ = try AudioFileReader(path: TestEnvironment.fixture(name)) })
            #expect(error.code == .unsupportedFormat)
            #expect(error.description.contains(format))
            #expect(error.description.contains("ffmpeg -i in.m4a out.wav"))
            #expect(!error.description.contains("\n"))
        }
    }

    @Test("an MP3 is not mistaken for ADTS")
    func mp3IsNotADTS() throws {
        for name in ["odd_midframe_001.mp3", "rec_001.mp3"] {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: TestEnvironment.fixture(name)))
            #expect(UnsupportedFormatSniffer.unsupportedFormat(prefix: Array(bytes.prefix(4096))) == nil)
        }
    }

    @Test("missing file, folder, empty file, random bytes and a truncated Ogg give the right codes")
    func badFiles() throws {
        try withTemporaryFolder { folder in
            _ = FileManager.default.createFile(atPath: folder + "/empty.wav", contents: Data())
            let random = Data(
                SyntheticAudio.noise(amplitude: 1, frames: 20000).map {
                    UInt8(truncatingIfNeeded: Int(($0 + 1) * 127.5))
                })
            _ = FileManager.default.createFile(atPath: folder + "/random.mp3", contents: random)
            let cases: [(String, ProofkitError.Code, String)] = [
                (folder + "/missing.wav", .notFound, "no such file"),
                (folder, .notFound, "folder"),
                (folder + "/empty.wav", .decodeFailed, "empty"),
                (folder + "/random.mp3", .decodeFailed, "not a readable audio file"),
                (TestEnvironment.fixture("odd_truncated_001.ogg"), .decodeFailed, "not a readable audio file"),
            ]
            for (path, code, words) in cases {
                let error = try #require(thrownError { _ = try AudioFileReader(path: path) }, "\(path)")
                #expect(error.code == code, "\(path)")
                #expect(error.description.hasPrefix(path + ": "))
                #expect(error.description.contains(words), "\(error)")
            }
        }
    }
}

@Suite("AudioFileReader: 16-bit reads", .offThePool)
struct AudioFileReaderInt16Tests {
    @Test(
        "16-bit PCM read as Int16 gives the stored samples, and s / 32768 is what the float read gives",
        arguments: ["wav", "caf", "aiff", "flac"])
    func int16MatchesFloat(ext: String) throws {
        try withTemporaryFolder { folder in
            let path = folder + "/in." + ext
            let frames = 20000
            let signal = SyntheticAudio.interleave([
                SyntheticAudio.sine(frequency: 330, amplitude: 0.9, sampleRate: 16000, frames: frames),
                SyntheticAudio.noise(amplitude: 0.5, frames: frames),
            ])
            try AudioTestTools.writeWithSox(
                signal, channels: 2, sampleRate: 16000, to: path, soxOutputOptions: ["-D", "-b", "16"])
            let expected = try AudioTestTools.soxInt16(path)  // independent reader

            var reader = try AudioFileReader(path: path)
            #expect(reader.format.isLinearPCM16)
            var buffer = [Int16](repeating: 0, count: 3000 * 2)
            var shorts: [Int16] = []
            while case let n = try reader.read(into: &buffer, maxFrames: 3000), n > 0 {
                shorts += buffer[0..<(n * 2)]
            }
            reader.close()
            #expect(shorts == expected)
            let (_, floats) = try decodeAll(path, chunk: 777)
            #expect(floats == shorts.map { Float($0) / 32768 })
        }
    }
}
