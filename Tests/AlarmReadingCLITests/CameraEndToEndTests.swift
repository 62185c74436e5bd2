import Foundation
import TestSupport
import Testing

/// The camera proofs end to end: the built `proofkit` with its real V4L2 calls, over the fake
/// UVC webcam (TestSupport's FakeCamera, LD_PRELOAD) serving real photos as MJPEG or YUYV frames.
@Suite(
    "Camera end to end (fake UVC webcam)", .serialized,
    .enabled(if: TestEnvironment.hasProofkitBinary, "build proofkit first"),
    .enabled(if: FakeCamera.isBuildable, "needs cc, linux/videodev2.h and turbojpeg.h (bash .ci/setup)"), .offThePool)
struct CameraEndToEndTests {
    static let matPhoto = TestEnvironment.fixture("images/demo_mat.jpg")
    static let coffeePhoto = TestEnvironment.fixture("images/demo_coffee.jpg")
    static let darkPhoto = TestEnvironment.fixture("images/dark_coffee.jpg")

    /// Runs proofkit with the fake camera under it.
    static func run(
        _ arguments: [String], frames: [String], formats: String = "MJPG,YUYV", fault: String? = nil,
        unplugAfter: Int? = nil
    ) throws -> ProcessResult {
        let environment = try FakeCamera.environment(
            frames: frames, formats: formats, fault: fault, unplugAfter: unplugAfter)
        return try TestEnvironment.runProofkit(arguments, environment: environment)
    }

    @Test("camera list shows the webcam with both formats, its sizes and rates, not its metadata node")
    func list() throws {
        let result = try Self.run(["camera", "list"], frames: [Self.matPhoto])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "/dev/video0: Fake Webcam C270 (uvcvideo, usb-0000:00:14.0-1)")
        #expect(lines.contains("  MJPG Motion-JPEG: 640x480 @ 30/15 fps, 320x240 @ 30/15 fps, 1280x720 @ 30/15 fps"))
        #expect(lines.contains("  YUYV YUYV 4:2:2: 640x480 @ 30/15 fps, 320x240 @ 30/15 fps, 1280x720 @ 10/5 fps"))
        #expect(lines.contains("  proofkit uses: YUYV 640x480 at 15 fps"))
        #expect(!result.stdout.contains("/dev/video1"))

        let json = try Self.run(["camera", "list", "--json"], frames: [], formats: "H264,MJPG")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let cameras = try #require(object["cameras"] as? [[String: Any]])
        #expect(cameras.count == 1)
        let formats = try #require(cameras[0]["formats"] as? [[String: Any]])
        #expect(formats.map { $0["fourcc"] as? String } == ["H264", "MJPG"])
        #expect(formats.map { $0["decoded"] as? Bool } == [false, true])
        let mode = try #require(cameras[0]["mode"] as? [String: Any])
        #expect(mode["format"] as? String == "MJPG" && mode["width"] as? Int == 640 && mode["fps"] as? Double == 15)

        // Without the fake camera this machine has none: an empty list, exit 0.
        let none = try TestEnvironment.runProofkit(["camera", "list"])
        #expect(none.status == 0)
        #expect(none.stdout.contains("cameras: none") || none.stdout.contains("/dev/video"))
    }

    @Test("doctor lists the camera too")
    func doctor() throws {
        let result = try Self.run(["doctor"], frames: [Self.matPhoto])
        #expect(result.stdout.contains("/dev/video0: Fake Webcam C270"), "\(result.stdout)")
        #expect(result.stdout.contains("proofkit uses: YUYV 640x480 at 15 fps"))
    }

    @Test(
        "the mat held in view passes, in MJPEG and in YUYV (negotiated both ways)",
        .enabled(if: alarmModelsBuilt, "needs the models (bash .ci/setup)"),
        arguments: [("MJPG", "MJPG"), ("YUYV", "YUYV"), ("MJPG,YUYV", "YUYV")])
    func matPasses(offered: String, used: String) throws {
        let result = try Self.run(
            ["mat", "--camera", "--max-seconds", "20", "--strict"], frames: [Self.matPhoto], formats: offered)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("camera: /dev/video0 (Fake Webcam C270, uvcvideo): \(used) 640x480 at 15 fps"))
        #expect(result.stdout.contains("mat in view (3 of 3)"))
        #expect(result.stdout.contains("accepted: the mat held in view for 3 frames in a row"))
    }

    @Test(
        "a room does not pass: the hint is printed and it ends at --max-seconds, rejected",
        .enabled(if: alarmModelsBuilt, "needs the models (bash .ci/setup)"))
    func roomRejected() throws {
        let started = Date()
        let result = try Self.run(["mat", "--camera", "--max-seconds", "3", "--strict"], frames: [Self.coffeePhoto])
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("not yet:"))
        #expect(result.stdout.contains("rejected: no steady view of the mat"))
        #expect(Date().timeIntervalSince(started) < 20)
        // A dark room gets the light hint.
        let dark = try Self.run(["mat", "--camera", "--max-seconds", "2"], frames: [Self.darkPhoto])
        #expect(dark.status == 0)
        #expect(dark.stdout.contains("not yet: too dark: turn on a light"), "\(dark.stdout)")
    }

    @Test(
        "faults: busy 80, unplugged mid-stream 81, stalled 82, not a camera 83, no decodable format 84",
        .enabled(if: alarmModelsBuilt, "needs the models (bash .ci/setup)"))
    func faults() throws {
        let busy = try Self.run(["mat", "--camera"], frames: [Self.coffeePhoto], fault: "busy")
        #expect(busy.status == 80, "\(busy.stderr)")
        #expect(
            busy.stderr
                == "proofkit mat: /dev/video0: camera busy: another program is using it (close it and try again)\n")

        let unplugged = try Self.run(
            ["mat", "--camera", "--max-seconds", "30"], frames: [Self.coffeePhoto], fault: "unplug", unplugAfter: 8)
        #expect(unplugged.status == 81, "\(unplugged.stderr)")
        #expect(unplugged.stderr.contains("camera unplugged"))
        #expect(unplugged.stderr.split(separator: "\n").count == 2)  // the mode line, then the reason

        let started = Date()
        let stalled = try Self.run(
            ["mat", "--camera", "--max-seconds", "30"], frames: [Self.coffeePhoto], fault: "stall")
        let waited = Date().timeIntervalSince(started)
        #expect(stalled.status == 82, "\(stalled.stderr)")
        #expect(stalled.stderr.contains("/dev/video0: the camera gave no frame for 5 s"))
        #expect(waited >= 5 && waited < 20, "\(waited) s")

        let metadata = try Self.run(["mat", "--camera", "/dev/video1"], frames: [])
        #expect(metadata.status == 83, "\(metadata.stderr)")
        #expect(metadata.stderr.contains("/dev/video1: is not a video capture device"))
        let null = try TestEnvironment.runProofkit(["mat", "--camera", "/dev/null"])
        #expect(null.status == 83, "\(null.stderr)")
        #expect(null.stderr.contains("/dev/null: is not a video device"))
        let file = try TestEnvironment.runProofkit(["mat", "--camera", Self.matPhoto])
        #expect(file.status == 83, "\(file.stderr)")
        #expect(file.stderr.contains("is a regular file, not a camera"))

        let h264 = try Self.run(["mat", "--camera"], frames: [], formats: "H264")
        #expect(h264.status == 84, "\(h264.stderr)")
        #expect(h264.stderr.contains("offers no format proofkit decodes (it takes MJPEG and YUYV; offered: H264)"))

        let missing = try TestEnvironment.runProofkit(["mat", "--camera", "/dev/video9"])
        #expect(missing.status == 66, "\(missing.stderr)")
    }

    @Test(
        "privacy: under strace, a live mat run writes no file and opens no socket",
        .enabled(if: alarmModelsBuilt, "needs the models (bash .ci/setup)"),
        .enabled(if: TestEnvironment.hasTool("strace"), "needs strace (bash .ci/setup)"))
    func privacy() throws {
        try withTemporaryFolder("proofkit-strace") { scratch in
            let folder = URL(fileURLWithPath: scratch)
            let trace = folder.appendingPathComponent("trace.txt").path
            var environment = try FakeCamera.environment(frames: [Self.matPhoto])
            // strace itself must not run under the fake camera: pass LD_PRELOAD to the child only.
            let preload = environment.removeValue(forKey: "LD_PRELOAD") ?? ""
            let result = try runProcess(
                "/usr/bin/env",
                [
                    "strace", "-f", "-qq", "-e", "trace=%file,%network", "-o", trace, "-E", "LD_PRELOAD=\(preload)",
                    TestEnvironment.proofkitBinary, "mat", "--camera", "--max-seconds", "20",
                ], environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("accepted"))
            let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
            #expect(lines.count > 10)
            // Nothing is opened to write, created, renamed or removed, and no socket is made. (The fake
            // camera answers the node's open in the process, so it makes no system call of its own.)
            // Each line is "PID NAME(ARGUMENTS) = RESULT"; "<... NAME resumed>" lines finish a call.
            let changing: Set<String> = [
                "creat", "unlink", "unlinkat", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir", "link",
                "linkat", "symlink", "symlinkat", "truncate", "chmod", "fchmodat", "chown", "fchownat", "lchown",
            ]
            let writes = lines.filter { line in
                let words = line.split(separator: " ", maxSplits: 1)
                guard words.count == 2, let open = words[1].firstIndex(of: "(") else { return false }
                let name = String(words[1][..<open])
                let opensToWrite =
                    name.hasPrefix("open")
                    && ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC"].contains { line.contains($0) }
                return opensToWrite || changing.contains(name)
            }
            #expect(writes.isEmpty, "\(writes)")
            let sockets = lines.filter { $0.contains("socket(") || $0.contains("connect(") || $0.contains("sendto(") }
            #expect(sockets.isEmpty, "\(sockets)")
        }
    }

    @Test(
        "alarm prove --photo --camera ends a due chain; --photo without a photo or camera is a usage error",
        .enabled(if: alarmModelsBuilt, "needs the models (bash .ci/setup)"))
    func alarmProve() throws {
        let rig = try AlarmRig()
        let (id, first) = try rig.add(in: 1, window: 60, gap: 30, extra: ["--proof", "mat"])
        usleep(UInt32(max(0, first.timeIntervalSinceNow + 0.2) * 1_000_000))  // due: its first ring's time has come
        let bare = try rig.alarm(["prove", id, "--photo"])
        #expect(bare.status == 64, "\(bare.stderr)")
        #expect(bare.stderr.contains("--photo needs a PHOTO, or --camera"))
        let environment = try FakeCamera.environment(frames: [Self.matPhoto])
        let proof = try rig.alarm(
            ["prove", id, "--photo", "--camera", "--max-seconds", "20"], environment: environment)
        #expect(proof.status == 0, "\(proof.stdout)\(proof.stderr)")
        #expect(proof.stdout.contains("accepted: the mat held in view for 3 frames in a row"))
        #expect(proof.stdout.contains("proof accepted: chain \(id) ended; 3 rings cancelled"), "\(proof.stdout)")
    }

    @Test(
        "--record DIR writes each frame handed out, and only there",
        .enabled(if: alarmModelsBuilt, "needs the models (bash .ci/setup)"))
    func record() throws {
        try withTemporaryFolder("proofkit-record") { scratch in
            let folder = URL(fileURLWithPath: scratch)
            let result = try Self.run(
                ["mat", "--camera", "--camera-format", "mjpeg", "--record", folder.path, "--max-seconds", "20"],
                frames: [Self.matPhoto])
            #expect(result.status == 0, "\(result.stderr)")
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            #expect(!names.isEmpty)
            #expect(names.allSatisfy { $0.hasPrefix("frame-") && $0.hasSuffix(".jpg") })
            let first = try Data(contentsOf: folder.appendingPathComponent(names[0]))
            #expect(first.prefix(3) == Data([0xFF, 0xD8, 0xFF]))
        }
    }
}
