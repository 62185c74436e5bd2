import Foundation
import Testing
import ProofkitCore
import TestSupport
import AudioIO

/// The owning libsndfile handle: every path that opens a file (plain, the MP3 reopened through
/// virtual I/O, a write that is committed, a write that is abandoned, a file libsndfile refuses)
/// closes what it opened, exactly once.
@Suite("The libsndfile handle closes what it opened")
struct SndFileHandleTests {
    /// The descriptors open in this process (Linux: /proc/self/fd).
    static func openDescriptors() throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))
    }

    @Test("readers (WAV, MP3 via virtual I/O, a midframe MP3, a truncated OGG, a refused file) and writers (committed, cancelled) leave no descriptor open")
    func noDescriptorLeaks() throws {
        let folder = try AudioTestTools.makeScratchFolder()
        defer { AudioTestTools.remove(folder) }
        let garbage = folder + "/garbage.wav"
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: URL(fileURLWithPath: garbage))
        // Warm up: libsndfile and its codecs are loaded once and keep their own descriptors.
        var warm = try AudioFileReader(path: TestEnvironment.fixture("rec_001.mp3"))
        _ = try warm.readChunk(maxFrames: 1024)
        warm.close()
        let before = try Self.openDescriptors()
        for _ in 0..<20 {
            for name in ["rec_007_excerpt3s.wav", "rec_001.mp3", "odd_midframe_001.mp3"] {
                var reader = try AudioFileReader(path: TestEnvironment.fixture(name))
                #expect(try reader.readChunk(maxFrames: 4096).count > 0)
                if name.hasSuffix(".wav") { reader.close() }  // the others are dropped (deinit)
            }
            do {
                var reader = try AudioFileReader(path: TestEnvironment.fixture("odd_truncated_001.ogg"))
                _ = try? reader.readClip()
            } catch {}
            #expect(throws: ProofkitError.self) { _ = try AudioFileReader(path: garbage) }
            var kept = try AudioFileWriter(path: folder + "/kept.wav", container: .wav, sampleRate: 8000, channels: 1)
            try kept.write([Int16](repeating: 1000, count: 800))
            try kept.commit()
            var dropped = try AudioFileWriter(path: folder + "/dropped.caf", container: .caf, sampleRate: 8000, channels: 1)
            try dropped.write([Int16](repeating: 1000, count: 800))
            dropped.cancel()
        }
        #expect(try Self.openDescriptors() == before)
        // The committed file is whole (the header sf_close wrote reached it before the rename).
        var reader = try AudioFileReader(path: folder + "/kept.wav")
        #expect(reader.format.headerFrameCount == 800 && reader.format.isLinearPCM16)
        #expect(try reader.readClip().frameCount == 800)
        #expect(AudioTestTools.contents(of: folder).sorted() == ["garbage.wav", "kept.wav"])
    }
}
