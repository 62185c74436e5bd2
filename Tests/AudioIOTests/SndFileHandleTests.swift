import Foundation
import ProofkitCore
import TestSupport
import Testing

@testable import AudioIO

/// The owning libsndfile handle: every path that opens a file (plain, the MP3 reopened through
/// virtual I/O, a write that is committed, a write that is abandoned, a file libsndfile refuses)
/// closes what it opened, exactly once.
@Suite("The libsndfile handle closes what it opened", .offThePool)
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
        try withTemporaryFolder { folder in
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
                var kept = try AudioFileWriter(
                    path: folder + "/kept.wav", container: .wav, sampleRate: 8000, channels: 1)
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
    }

    @Test(
        "a file libsndfile refuses (random bytes, a truncated OGG; a read-only descriptor to write) leaves the caller's descriptor open, for its owner to close once"
    )
    func refusedOpenKeepsTheDescriptor() throws {
        // libsndfile 1.2.0 closes the descriptor of a failed sf_open_fd even when told not to;
        // its owner then closed it a second time, closing whatever another thread had opened
        // under that number meanwhile.
        try withTemporaryFolder { folder in
            let garbage = folder + "/garbage.wav"
            try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: URL(fileURLWithPath: garbage))
            for path in [garbage, TestEnvironment.fixture("odd_truncated_001.ogg")] {
                let fd = open(path, O_RDONLY | O_CLOEXEC)
                try #require(fd >= 0)
                switch try SndFile.openForReading(fd: fd) {
                case .success(let handle):
                    handle.close()
                    Issue.record("libsndfile opened \(path)")
                case .failure: break
                }
                #expect(fcntl(fd, F_GETFD) != -1, "the descriptor of \(path) was closed by the failed open")
                #expect(close(fd) == 0)
            }
            let readOnly = open(folder + "/read-only.wav", O_RDONLY | O_CREAT | O_CLOEXEC, 0o644)
            try #require(readOnly >= 0)
            switch try SndFile.openForWriting(
                fd: readOnly, format: SndFile.formatWAV | SndFile.subtypePCM16, sampleRate: 8000, channels: 1)
            {
            case .success(let handle):
                handle.close()
                Issue.record("libsndfile wrote through a read-only descriptor")
            case .failure: break
            }
            #expect(fcntl(readOnly, F_GETFD) != -1, "the descriptor was closed by the failed open for writing")
            #expect(close(readOnly) == 0)
            #expect(try Self.openDescriptors(in: folder) == [])
        }
    }

    @Test("a short file read to its end, floats and 16-bit (the end-of-file error check runs on the open handle)")
    func shortFileToTheEnd() throws {
        try withTemporaryFolder { folder in
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
}
