import AudioIO
import Foundation
import ProofkitCore
import TestSupport
import Testing

/// The owning libsndfile handle: every path that opens a file (plain, the MP3 reopened through
/// virtual I/O, a write that is committed, a write that is abandoned, a file libsndfile refuses)
/// closes what it opened, exactly once.
@Suite("The libsndfile handle closes what it opened")
struct SndFileHandleTests {
    /// The descriptors of this process open on files in `folder` (Linux: /proc/self/fd; other
    /// tests run in parallel, so only this test's own folder is looked at).
    static func openDescriptors(in folder: String) throws -> [String] {
        let folder = URL(fileURLWithPath: folder).resolvingSymlinksInPath().path
        return try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap { fd in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd),
                target.hasPrefix(folder + "/")
            else { return nil }
            return target
        }
    }

    @Test(
        "readers (WAV, MP3 via virtual I/O, a midframe MP3, a truncated OGG, a refused file) and writers (committed, cancelled) leave no descriptor open"
    )
    func noDescriptorLeaks() throws {
        let folder = try AudioTestTools.makeScratchFolder()
        defer { AudioTestTools.remove(folder) }
        let garbage = folder + "/garbage.wav"
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: URL(fileURLWithPath: garbage))
        let names = ["rec_007_excerpt3s.wav", "rec_001.mp3", "odd_midframe_001.mp3", "odd_truncated_001.ogg"]
        for name in names {
            try FileManager.default.copyItem(atPath: TestEnvironment.fixture(name), toPath: folder + "/" + name)
        }
        // The check sees an open reader (and its MP3 virtual-I/O copy of the descriptor).
        do {
            let reader = try AudioFileReader(path: folder + "/rec_001.mp3")
            #expect(try Self.openDescriptors(in: folder).count == 2)
            _ = consume reader
        }
        for _ in 0..<20 {
            for name in names.dropLast() {
                var reader = try AudioFileReader(path: folder + "/" + name)
                #expect(try reader.readChunk(maxFrames: 4096).count > 0)
                if name.hasSuffix(".wav") { reader.close() }  // the others are dropped (deinit)
            }
            do {
                var reader = try AudioFileReader(path: folder + "/odd_truncated_001.ogg")
                _ = try? reader.readClip()
            } catch {}
            #expect(throws: ProofkitError.self) { _ = try AudioFileReader(path: garbage) }
            var kept = try AudioFileWriter(path: folder + "/kept.wav", container: .wav, sampleRate: 8000, channels: 1)
            try kept.write([Int16](repeating: 1000, count: 800))
            try kept.commit()
            var dropped = try AudioFileWriter(
                path: folder + "/dropped.caf", container: .caf, sampleRate: 8000, channels: 1)
            try dropped.write([Int16](repeating: 1000, count: 800))
            dropped.cancel()
        }
        #expect(try Self.openDescriptors(in: folder) == [])
        // The committed file is whole (the header sf_close wrote reached it before the rename).
        var reader = try AudioFileReader(path: folder + "/kept.wav")
        #expect(reader.format.headerFrameCount == 800 && reader.format.isLinearPCM16)
        #expect(try reader.readClip().frameCount == 800)
        #expect(AudioTestTools.contents(of: folder).sorted() == (names + ["garbage.wav", "kept.wav"]).sorted())
    }

    @Test("a short file read to its end, floats and 16-bit (the end-of-file error check runs on the open handle)")
    func shortFileToTheEnd() throws {
        let folder = try AudioTestTools.makeScratchFolder()
        defer { AudioTestTools.remove(folder) }
        let path = folder + "/short.wav"
        let samples = (0..<200).map { Float($0 - 100) / 200 }
        try AudioTestTools.writeWithSox(
            samples, channels: 1, sampleRate: 16000, to: path, soxOutputOptions: ["-b", "16"])
        var reader = try AudioFileReader(path: path)
        var buffer = [Float](repeating: 0, count: 1024)
        var total = 0
        while case let frames = try reader.read(into: &buffer, maxFrames: 1024), frames > 0 { total += frames }
        #expect(total == 200)
        var again = try AudioFileReader(path: path)
        var shorts = [Int16](repeating: 0, count: 64)
        total = 0
        while case let frames = try again.read(into: &shorts, maxFrames: 64), frames > 0 { total += frames }
        #expect(total == 200)
    }
}
