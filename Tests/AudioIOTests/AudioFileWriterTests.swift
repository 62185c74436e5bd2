import AudioIO
import Foundation
import ProofkitCore
import TestSupport
import Testing

@Suite("AudioFileWriter writes 16-bit PCM atomically", .offThePool)
struct AudioFileWriterTests {
    @Test(
        "round trip: 16-bit samples written as CAF and WAV read back identically, by us and by sox",
        arguments: [AudioOutputContainer.caf, .wav])
    func roundTrip(container: AudioOutputContainer) throws {
        try withTemporaryFolder { folder in
            let frames = 22050
            let sine = SyntheticAudio.sine(frequency: 523.25, amplitude: 0.6, sampleRate: 22050, frames: frames)
            let noise = SyntheticAudio.noise(amplitude: 0.4, frames: frames)
            let silence = [Float](repeating: 0, count: frames)
            let samples: [Int16] = SyntheticAudio.interleave([sine, noise, silence]).map { AudioFileWriter.int16($0) }
            let path = folder + "/out." + (container == .caf ? "caf" : "wav")
            var writer = try AudioFileWriter(path: path, container: container, sampleRate: 22050, channels: 3)
            try writer.write(Array(samples[0..<30000]))
            try writer.write(Array(samples[30000...]))
            #expect(writer.framesWritten == frames)
            try writer.commit()
            #expect(AudioTestTools.contents(of: folder) == [path.split(separator: "/").last.map(String.init)!])

            var reader = try AudioFileReader(path: path)
            #expect(reader.format.container == (container == .caf ? .caf : .wav))
            #expect(reader.format.isLinearPCM16 && reader.format.channels == 3 && reader.format.sampleRate == 22050)
            let clip = try reader.readClip()
            reader.close()
            #expect(clip.samples.map { Int16(($0 * 32768).rounded()) } == samples)
            #expect(try AudioTestTools.soxInt16(path) == samples)
            let probe = try AudioTestTools.ffprobe(path)
            #expect(probe["codec_name"] == "pcm_s16le")
            #expect(probe["channels"] == "3" && probe["sample_rate"] == "22050")
        }
    }

    @Test("float to 16-bit conversion rounds and clamps, never wraps")
    func conversion() {
        #expect(AudioFileWriter.int16(0) == 0)
        #expect(AudioFileWriter.int16(1) == 32767)
        #expect(AudioFileWriter.int16(-1) == -32768)
        #expect(AudioFileWriter.int16(-12345.0 / 32768) == -12345 && AudioFileWriter.int16(32767.0 / 32768) == 32767)
        #expect(AudioFileWriter.int16(1.5) == 32767)
        #expect(AudioFileWriter.int16(-3) == -32768)
        #expect(AudioFileWriter.int16(0.5 / 32767) == 1)
        #expect(AudioFileWriter.int16(.nan) == 0)
    }

    @Test("a writer that is cancelled or dropped leaves no file, and an existing output untouched")
    func abandonLeavesNothing() throws {
        try withTemporaryFolder { folder in
            let path = folder + "/keep.caf"
            let original = Data("not audio, but precious".utf8)
            _ = FileManager.default.createFile(atPath: path, contents: original)
            do {
                var writer = try AudioFileWriter(path: path, sampleRate: 8000, channels: 1)
                try writer.write([Int16](repeating: 1000, count: 8000))
                writer.cancel()
            }
            do {
                var writer = try AudioFileWriter(path: path, sampleRate: 8000, channels: 1)
                try writer.write([Int16](repeating: 1000, count: 8000))
                // dropped without commit
            }
            var writer = try AudioFileWriter(path: path, sampleRate: 8000, channels: 1)
            try writer.write([Int16](repeating: 1000, count: 8000))
            var error: ProofkitError? = nil
            do throws(ProofkitError) {
                try writer.commit { (_: String) throws(ProofkitError) in
                    throw ProofkitError(.decodeFailed, "verification refused it")
                }
            } catch let caught {
                error = caught
            }
            #expect(error?.code == .decodeFailed)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == original)
            #expect(AudioTestTools.contents(of: folder) == ["keep.caf"])
        }
    }

    @Test("a missing output folder is an I/O error naming the output")
    func missingFolder() throws {
        let error = try #require(
            thrownError {
                _ = try AudioFileWriter(path: "/nonexistent-proofkit-folder/out.caf", sampleRate: 8000, channels: 1)
            })
        #expect(error.code == .io)
        #expect(error.description.hasPrefix("/nonexistent-proofkit-folder/out.caf: "))
    }

    @Test(
        "a full disk (a 64 KiB tmpfs) fails with an I/O error and leaves nothing behind",
        .enabled(if: getuid() == 0, "needs root to mount a tmpfs"))
    func fullDisk() throws {
        try withTemporaryFolder("proofkit-fulldisk") { folder in
            try #require(AudioTestTools.mountTmpfs(at: folder, kilobytes: 64), "root could not mount a tmpfs")
            defer { AudioTestTools.unmount(folder) }
            let path = folder + "/alarm.caf"
            let original = Data(repeating: 7, count: 1000)
            _ = FileManager.default.createFile(atPath: path, contents: original)
            var writer = try AudioFileWriter(path: path, sampleRate: 44100, channels: 2)
            let second = [Int16](repeating: 1234, count: 88200)
            let error = thrownError {
                for _ in 0..<10 { try writer.write(second) }
            }
            #expect(error?.code == .io)
            #expect(error?.description.contains("No space left") == true, "\(String(describing: error))")
            writer.cancel()
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == original)
            #expect(AudioTestTools.contents(of: folder) == ["alarm.caf"])
        }
    }
}

@Suite("AudioFileWriter: syncing and early writeback", .offThePool)
struct AudioFileWriterSyncTests {
    @Test(
        "with early writeback and a sync, a multi-MiB file commits complete; verify sees the final header",
        arguments: [true, false])
    func syncedCommit(writesBackEarly: Bool) throws {
        try withTemporaryFolder { folder in
            let path = folder + "/alarm.caf"
            let frames = 44100 * 15  // 2.6 MB: more than two writeback intervals
            let samples: [Int16] = SyntheticAudio.interleave([
                SyntheticAudio.sine(frequency: 440, amplitude: 0.7, sampleRate: 44100, frames: frames),
                SyntheticAudio.noise(amplitude: 0.3, frames: frames),
            ]).map { AudioFileWriter.int16($0) }
            var writer = try AudioFileWriter(
                path: path, sampleRate: 44100, channels: 2, writesBackEarly: writesBackEarly)
            var offset = 0
            while offset < samples.count {
                let end = min(samples.count, offset + 8192 * 2)
                try writer.write(samples[offset..<end])
                offset = end
            }
            var seenByVerify = -1
            try writer.commit(syncsToDisk: true) { (temporary: String) throws(ProofkitError) in
                // The header is final before verify runs (and before the sync): the frame count is right.
                let reader = try AudioFileReader(path: temporary)
                seenByVerify = Int(reader.format.headerFrameCount ?? -1)
                reader.close()
            }
            #expect(seenByVerify == frames)
            #expect(try AudioTestTools.soxInt16(path) == samples)
            #expect(AudioTestTools.contents(of: folder) == ["alarm.caf"])
        }
    }
}
