import Foundation
import ProofkitCore
import TestSupport
import Testing

@testable import VideoIO

/// The real video fixture: 9 s of people walking across a lawn (PETS 2009 footage as Debian's
/// opencv-doc ships it, `vtest.avi`), cropped and scaled to 640x480, H.264 at 10 frames/s.
let walkers = TestEnvironment.fixture("video/walkers.mp4")

/// Runs the `ffmpeg` CLI (an independent reader of the same files) and fails on error.
func ffmpeg(_ arguments: [String]) throws {
    let result = try runProcess("/usr/bin/ffmpeg", ["-v", "error", "-nostdin", "-y"] + arguments)
    guard result.status == 0 else { throw CocoaError(.fileWriteUnknown) }
}

/// Reads every frame and the stop.
func readAll(_ path: String, configuration: VideoReader.Configuration = .init()) throws -> (
    frames: [VideoFrame], reader: VideoReader
) {
    let reader = try VideoReader(path: path, configuration: configuration)
    var frames: [VideoFrame] = []
    while let frame = try reader.next() { frames.append(frame) }
    return (frames, reader)
}

@Suite("FFmpeg's libraries load on first use")
struct VideoLibraryLoadingTests {
    @Test("each of the four tables resolves every function it declares, and FFmpeg+Calls.swift calls each")
    func tables() throws {
        let ffmpeg = try FFmpeg.load()
        let tables: [(Any, String, Int)] = [
            (ffmpeg.format, "format", 6), (ffmpeg.codec, "codec", 10), (ffmpeg.util, "util", 8),
            (ffmpeg.scale, "scale", 3),
        ]
        for (table, receiver, count) in tables {
            let functions = FunctionTable(table)
            #expect(functions.names.count == count, "\(receiver)")
            #expect(functions.unresolved.isEmpty, "not resolved: \(functions.unresolved)")
            let notCalled = try functions.notCalled(
                in: "Sources/Adapters/VideoIO/FFmpeg+Calls.swift", receiver: receiver)
            #expect(notCalled.isEmpty, "declared but never called: \(notCalled)")
        }
        #expect(VideoLibraries.probe().allSatisfy { $0.failure == nil })
    }

    @Test(
        "a library that is not installed, or lacks a function, is runtimeUnavailable (exit 69) naming its Debian package",
        arguments: [
            FailingLibraryLoad(soname: "libavformat.so.99", package: "libavformat59") { soname throws(ProofkitError) in
                try FFmpeg.load("avformat", soname: soname)
            },
            FailingLibraryLoad(soname: "libavcodec.so.99", package: "libavcodec59") { soname throws(ProofkitError) in
                try FFmpeg.load("avcodec", soname: soname)
            },
            FailingLibraryLoad(soname: "libavutil.so.99", package: "libavutil57") { soname throws(ProofkitError) in
                try FFmpeg.load("avutil", soname: soname)
            },
            FailingLibraryLoad(soname: "libswscale.so.99", package: "libswscale6") { soname throws(ProofkitError) in
                try FFmpeg.load("swscale", soname: soname)
            },
            // libavutil is a real library without libavformat's functions.
            FailingLibraryLoad(
                soname: "libavutil.so.57", reason: "undefined symbol: avformat_open_input", package: "libavformat59"
            ) { soname throws(ProofkitError) in try FFmpeg.load("avformat", soname: soname) },
        ])
    func failure(_ load: FailingLibraryLoad) {
        #expect(load.problems() == [])
    }
}

@Suite("VideoReader on real and broken videos")
struct VideoReaderTests {
    @Test("the walkers video: 90 frames of 640x480 at the times ffprobe gives, pixels as the ffmpeg CLI decodes them")
    func walkersVideo() throws {
        let (frames, reader) = try readAll(walkers)
        #expect(reader.stop == nil)
        #expect(reader.codec == "h264")
        #expect(reader.storedWidth == 640 && reader.storedHeight == 480)
        // ffprobe: the presentation time of every frame.
        let probe = try runProcess(
            "/usr/bin/ffprobe",
            ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time", "-of", "csv=p=0", walkers])
        let times = probe.stdout.split(separator: "\n").compactMap { line in
            line.split(separator: ",").first.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        }
        #expect(times.count == 90)
        #expect(frames.count == times.count)
        for (frame, time) in zip(frames, times) {
            #expect(abs(frame.time - (time - times[0])) < 1e-6)
            #expect(frame.image.width == 640 && frame.image.height == 480)
        }
        #expect(frames.map(\.index) == Array(0..<frames.count))
        // Frame 40 as the ffmpeg CLI decodes it to RGB (its own conversion: a level or two apart).
        try withTemporaryFolder { folder in
            try ffmpeg([
                "-i", walkers, "-vf", "select=eq(n\\,40)", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24",
                folder + "/f.rgb",
            ])
            let reference = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/f.rgb")))
            let ours = frames[40].image.pixels
            #expect(reference.count == ours.count)
            let difference = zip(reference, ours).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
            #expect(Double(difference) / Double(max(1, ours.count)) < 2.0)
        }
    }

    @Test("a video cut to 60 % of its bytes gives the frames that decode, then says where it stopped")
    func truncated() throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: walkers))
        try withTemporaryFolder { folder in
            let path = folder + "/cut.mp4"
            try bytes.prefix(bytes.count * 6 / 10).write(to: URL(fileURLWithPath: path))
            let (frames, reader) = try readAll(path)
            #expect(frames.count > 10 && frames.count < 90)
            let stop = try #require(reader.stop)
            #expect(stop.framesRead == frames.count)
            #expect(stop.lastTime == frames.last?.time)
            #expect(stop.description.hasPrefix("stopped after frame \(frames.count) ("))
        }
    }

    @Test("not a video: text, an audio-only file and an empty file are decodeFailed (65); a folder is notFound (66)")
    func notAVideo() throws {
        try withTemporaryFolder { folder in
            try Data("just some text, not a video\n".utf8).write(to: URL(fileURLWithPath: folder + "/a.mp4"))
            try Data().write(to: URL(fileURLWithPath: folder + "/empty.mp4"))
            let audio = TestEnvironment.fixture("speech_en_ljspeech_16k.wav")
            for path in [folder + "/a.mp4", folder + "/empty.mp4", audio] {
                #expect(throws: ProofkitError.self) { _ = try VideoReader(path: path) }
                do throws(ProofkitError) {
                    _ = try VideoReader(path: path)
                } catch {
                    #expect(error.code == .decodeFailed, "\(path): \(error)")
                    #expect(error.path == path)
                }
            }
            do throws(ProofkitError) {
                _ = try VideoReader(path: folder)
                Issue.record("a folder opened as a video")
            } catch {
                #expect(error.code == .notFound)
            }
        }
    }

    @Test(
        "a huge or extreme stream is bounded: 8K+ and 20:1 are refused before decoding, 4K is scaled to 1280x720 while it decodes",
        .enabled(if: TestEnvironment.hasTool("ffmpeg")))
    func bounded() throws {
        try withTemporaryFolder { folder in
            for (name, size) in [("huge", "9000x5000"), ("thin", "4000x200"), ("uhd", "3840x2160")] {
                try ffmpeg([
                    "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=5:duration=0.4", "-c:v", "libx264", "-preset",
                    "ultrafast", "-pix_fmt", "yuv420p", folder + "/\(name).mp4",
                ])
            }
            for name in ["huge", "thin"] {
                do throws(ProofkitError) {
                    _ = try VideoReader(path: folder + "/\(name).mp4")
                    Issue.record("\(name) opened")
                } catch {
                    #expect(error.code == .unsupportedFormat, "\(name): \(error)")
                }
            }
            let (frames, reader) = try readAll(folder + "/uhd.mp4")
            #expect(reader.stop == nil)
            #expect(frames.count == 2)
            #expect(frames.allSatisfy { $0.image.width == 1280 && $0.image.height == 720 })
            #expect(reader.frameSize == (1280, 720))
        }
    }

    @Test(
        "a phone video's rotation (its display matrix) is applied as the ffmpeg CLI applies it: 640x480 becomes 480x640"
    )
    func rotation() throws {
        try withTemporaryFolder { folder in
            let rotated = folder + "/rotated.mp4"
            try ffmpeg(["-i", walkers, "-t", "0.5", "-c", "copy", "-metadata:s:v:0", "rotate=90", rotated])
            let (frames, reader) = try readAll(rotated)
            // FFmpeg 5.1's mov muxer writes `rotate=90` as a matrix that the ffmpeg CLI turns 270
            // degrees clockwise; the pixels below are the CLI's.
            #expect(reader.rotation == 270)
            let first = try #require(frames.first)
            #expect(first.image.width == 480 && first.image.height == 640)
            try ffmpeg(["-i", rotated, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", folder + "/f.rgb"])
            let reference = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/f.rgb")))
            #expect(reference.count == first.image.pixels.count)
            let difference = zip(reference, first.image.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
            #expect(Double(difference) / Double(max(1, reference.count)) < 2.0)
        }
    }
}
