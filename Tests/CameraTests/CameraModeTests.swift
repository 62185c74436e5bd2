import Camera
import Foundation
import ProofkitCore
import TestSupport
import Testing

@Suite("Camera: the mode chosen and YUYV to RGB")
struct CameraModeTests {
    /// What a Logitech C270 offers (v4l2-ctl --list-formats-ext): MJPEG up to 1280x960 at 30 fps,
    /// YUYV at 30 fps up to 640x480 and 5-10 fps above (USB 2 bandwidth).
    static let c270: [CameraFormatDescription] = [
        CameraFormatDescription(
            fourcc: "YUYV", description: "YUYV 4:2:2",
            sizes: [
                CameraFrameSize(width: 640, height: 480, framesPerSecond: [30, 25, 20, 15, 10, 5]),
                CameraFrameSize(width: 160, height: 120, framesPerSecond: [30, 15]),
                CameraFrameSize(width: 1280, height: 960, framesPerSecond: [7.5, 5]),
            ]),
        CameraFormatDescription(
            fourcc: "MJPG", description: "Motion-JPEG",
            sizes: [
                CameraFrameSize(width: 640, height: 480, framesPerSecond: [30, 15]),
                CameraFrameSize(width: 1280, height: 960, framesPerSecond: [30, 15]),
            ]),
    ]

    @Test("a C270: YUYV 640x480 at 15 fps; preferring MJPEG gives MJPEG 640x480")
    func c270() {
        #expect(
            CameraMode.choose(from: Self.c270)
                == CameraMode(format: .yuyv, width: 640, height: 480, framesPerSecond: 15))
        #expect(
            CameraMode.choose(from: Self.c270, preferring: .mjpeg)
                == CameraMode(format: .mjpeg, width: 640, height: 480, framesPerSecond: 15))
    }

    @Test("YUYV too slow at 640x480 (a USB 2 HD camera): MJPEG is taken there")
    func slowYUYV() {
        let formats = [
            CameraFormatDescription(
                fourcc: "YUYV", description: "YUYV",
                sizes: [CameraFrameSize(width: 640, height: 480, framesPerSecond: [10, 5])]),
            CameraFormatDescription(
                fourcc: "MJPG", description: "MJPEG",
                sizes: [CameraFrameSize(width: 640, height: 480, framesPerSecond: [60, 30])]),
        ]
        #expect(
            CameraMode.choose(from: formats) == CameraMode(format: .mjpeg, width: 640, height: 480, framesPerSecond: 30)
        )
    }

    @Test("no MJPEG nor YUYV: nothing; only a larger size: the nearest to 640x480")
    func formatsAndSizes() {
        let h264 = [
            CameraFormatDescription(
                fourcc: "H264", description: "H.264",
                sizes: [CameraFrameSize(width: 640, height: 480, framesPerSecond: [30])])
        ]
        #expect(CameraMode.choose(from: h264) == nil)
        #expect(h264[0].pixelFormat == nil)
        let large = [
            CameraFormatDescription(
                fourcc: "MJPG", description: "MJPEG",
                sizes: [
                    CameraFrameSize(width: 1920, height: 1080, framesPerSecond: [30]),
                    CameraFrameSize(width: 800, height: 600, framesPerSecond: [20]),
                    CameraFrameSize(width: 320, height: 240, framesPerSecond: [30]),
                ])
        ]
        #expect(
            CameraMode.choose(from: large) == CameraMode(format: .mjpeg, width: 800, height: 600, framesPerSecond: 20))
    }

    @Test("four-character codes read as V4L2 writes them")
    func fourcc() {
        // V4L2_PIX_FMT_MJPEG and V4L2_PIX_FMT_YUYV from linux/videodev2.h.
        #expect(CameraPixelFormat.mjpeg.fourcc == 0x4750_4A4D)
        #expect(CameraPixelFormat.yuyv.fourcc == 0x5659_5559)
        #expect(CameraPixelFormat(fourcc: 0x5659_5559) == .yuyv)
    }

    static let hasFFmpeg = TestEnvironment.hasTool("ffmpeg")

    @Test(
        "YUYV of a real photo converts as ffmpeg's swscale does (BT.601 limited range)",
        .enabled(if: hasFFmpeg))
    func yuyvMatchesFFmpeg() throws {
        try withTemporaryFolder("proofkit-yuyv") { scratch in
            let folder = URL(fileURLWithPath: scratch)
            let yuyv = folder.appendingPathComponent("frame.yuyv").path
            let rgb = folder.appendingPathComponent("frame.rgb").path
            let photo = TestEnvironment.fixture("images/demo_mat.jpg")
            let quiet = ["-hide_banner", "-loglevel", "error", "-y"]
            let encode = try runProcess(
                "/usr/bin/env",
                ["ffmpeg"] + quiet + [
                    "-i", photo, "-vf", "scale=640:480", "-pix_fmt", "yuyv422", "-f", "rawvideo", yuyv,
                ])
            #expect(encode.status == 0, "\(encode.stderr)")
            let decode = try runProcess(
                "/usr/bin/env",
                ["ffmpeg"] + quiet + [
                    "-f", "rawvideo", "-pix_fmt", "yuyv422", "-s", "640x480", "-i", yuyv, "-sws_flags",
                    "accurate_rnd+bitexact", "-pix_fmt", "rgb24", "-f", "rawvideo", rgb,
                ])
            #expect(decode.status == 0, "\(decode.stderr)")
            let frame = [UInt8](try Data(contentsOf: URL(fileURLWithPath: yuyv)))
            let reference = [UInt8](try Data(contentsOf: URL(fileURLWithPath: rgb)))
            let image = try #require(YUYV.rgb(frame, width: 640, height: 480))
            #expect(image.pixels.count == reference.count)
            var total = 0
            var far = 0
            for (a, b) in zip(image.pixels, reference) {
                let difference = abs(Int(a) - Int(b))
                total += difference
                if difference > 12 { far += 1 }
            }
            let mean = Double(total) / Double(reference.count)
            // ffmpeg interpolates the chroma between pixel pairs; proofkit repeats it (as libjpeg's
            // fast upsampling does): the two differ at colour edges, 1.53 on average for this photo.
            // A wrong matrix, swapped U and V or full range is off by 10 or more.
            #expect(mean < 2, "mean difference \(mean)")
            #expect(Double(far) / Double(reference.count) < 0.01, "\(far) samples differ by more than 12")
        }
    }

    @Test("a truncated or odd-sized YUYV frame is refused, not read past")
    func truncated() {
        #expect(YUYV.rgb([UInt8](repeating: 128, count: 640 * 480 * 2 - 1), width: 640, height: 480) == nil)
        #expect(YUYV.rgb([UInt8](repeating: 128, count: 30), width: 5, height: 3) == nil)
        let grey = YUYV.rgb([UInt8](repeating: 128, count: 8), width: 2, height: 2)
        // Y = 128 with neutral chroma: (128 - 16) * 1.164 = 130.4.
        #expect(grey?.pixels == [UInt8](repeating: 130, count: 12))
    }
}
