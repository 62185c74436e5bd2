import Foundation
import TestSupport
import Testing

/// Squats and poses by camera: the built `proofkit` over the fake UVC webcam, with frames of real
/// people (the pose check photos; a squat video when one is given).
@Suite(
    "Camera squats and poses (fake UVC webcam)", .serialized,
    .enabled(if: TestEnvironment.hasProofkitBinary, "build proofkit first"),
    .enabled(if: FakeCamera.isBuildable, "needs cc, linux/videodev2.h and turbojpeg.h (bash .ci/setup)"),
    .enabled(if: PoseFixtures.hasModels, "needs the pose models (bash .ci/setup)"), .offThePool)
struct CameraSquatTests {
    @Test(
        "pose --camera finds the person in each frame, live, tracked from the frame before",
        .enabled(if: PoseFixtures.hasPhotos, "needs the pinned wheels (bash .ci/setup)"))
    func livePose() throws {
        try withTemporaryFolder { folder in
            let person = try PoseFixtures.extractPhoto("grace_hopper", into: folder)
            let environment = try FakeCamera.environment(frames: [person], formats: "MJPG")
            let result = try TestEnvironment.runProofkit(
                ["pose", "--camera", "--json", "--max-seconds", "4"], environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n")
            // Live frames keep coming (how many a second is a speed figure: Benchmarks/CAMERA.md; in the
            // full suite on 2 cores this run gave 5 in 4 s).
            #expect(lines.count >= 2, "\(lines.count) frames in 4 s")
            var last = -1.0
            for line in lines {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                #expect(object["person"] as? Bool == true)
                let time = try #require(object["t"] as? Double)
                #expect(time > last && time < 5)
                last = time
                let keypoints = try #require(object["keypoints"] as? [String: [Double]])
                #expect(keypoints.count == 8)
            }
        }
    }

    @Test(
        "squat --camera with nobody squatting: no rep, ends at --max-seconds, rejected",
        .enabled(if: PoseFixtures.hasPhotos, "needs the pinned wheels (bash .ci/setup)"))
    func noSquats() throws {
        try withTemporaryFolder { folder in
            let person = try PoseFixtures.extractPhoto("grace_hopper", into: folder)
            let environment = try FakeCamera.environment(frames: [person])
            let result = try TestEnvironment.runProofkit(
                ["squat", "--camera", "--max-seconds", "3", "--strict", "--reps", "2"], environment: environment)
            #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
            #expect(result.stdout.contains("counting squats: 2 reps"))
            // Grace Hopper's portrait shows her from the chest up: the hint says to step back.
            #expect(result.stdout.contains("only part of you is in view: step back"), "\(result.stdout)")
            #expect(!result.stdout.contains("someone else"), "\(result.stdout)")  // one person in view
            #expect(!result.stdout.contains("rep 1:"))
            #expect(result.stdout.contains("--max-seconds (3 s) reached"))
        }
    }

    @Test(
        "squat --camera with two people in view (a photo beside itself, 4:3): the hint says someone else is in view",
        .enabled(if: PoseFixtures.hasPhotos, "needs the pinned wheels (bash .ci/setup)"),
        .enabled(if: TestEnvironment.hasTool("ffmpeg"), "needs ffmpeg"))
    func someoneElseInView() throws {
        try withTemporaryFolder { folder in
            let person = try PoseFixtures.extractPhoto("grace_hopper", into: folder)
            let two = folder + "/two.jpg"
            let joined = try runProcess(
                "/usr/bin/env",
                [
                    "ffmpeg", "-hide_banner", "-loglevel", "error", "-i", person, "-i", person, "-filter_complex",
                    "hstack=inputs=2,pad=iw:iw*3/4:0:(oh-ih)/2", "-q:v", "2", two,  // 4:3, as the camera frames it
                ])
            #expect(joined.status == 0, "\(joined.stderr)")
            let hint = "someone else is in view: the camera follows one person, so squat alone in front of it"
            let both = try TestEnvironment.runProofkit(
                ["squat", "--camera", "--max-seconds", "3", "--reps", "2"],
                environment: try FakeCamera.environment(frames: [two]))
            #expect(both.stdout.contains(hint), "\(both.stdout)")
        }
    }

    @Test(
        "alarm prove --squat --camera: the chain's 10 squats counted live; nobody squatting is a rejection and the chain goes on",
        .enabled(if: PoseFixtures.hasPhotos, "needs the pinned wheels (bash .ci/setup)"))
    func proveBySquatsRejected() throws {
        let rig = try AlarmRig()
        let person = try PoseFixtures.extractPhoto("grace_hopper", into: rig.folder)
        let environment = try FakeCamera.environment(frames: [person])
        let (id, first) = try rig.add(in: 1, window: 60, gap: 30, extra: ["--proof", "squat"])
        while Date() < first.addingTimeInterval(0.2) { usleep(50_000) }  // due: its first ring's time has come
        let proof = try rig.alarm(
            ["prove", id, "--squat", "--camera", "--max-seconds", "3", "--strict"], environment: environment)
        #expect(proof.status == 2, "\(proof.stdout)\(proof.stderr)")
        #expect(proof.stdout.contains("counting squats: 10 reps"), "\(proof.stdout)")
        #expect(proof.stdout.contains("only part of you is in view: step back"), "\(proof.stdout)")
        #expect(proof.stdout.contains("--max-seconds (3 s) reached"), "\(proof.stdout)")
        #expect(proof.stdout.contains("proof rejected: chain \(id) goes on"), "\(proof.stdout)")
        let status = try rig.status()
        let outcome = try #require((status["outcomes"] as? [[String: Any]])?.first, "\(status)")
        #expect(outcome["kind"] as? String == "rejected" && outcome["detail"] as? String == "squat", "\(outcome)")
    }

    @Test(
        "squat --camera when the camera is unplugged mid-stream: the count so far, then the reason, exit 81",
        .enabled(if: PoseFixtures.hasPhotos, "needs the pinned wheels (bash .ci/setup)"))
    func unplugged() throws {
        try withTemporaryFolder { folder in
            let person = try PoseFixtures.extractPhoto("grace_hopper", into: folder)
            let environment = try FakeCamera.environment(frames: [person], fault: "unplug", unplugAfter: 10)
            let result = try TestEnvironment.runProofkit(
                ["squat", "--camera", "--max-seconds", "30"], environment: environment)
            #expect(result.status == 81, "\(result.stdout)\(result.stderr)")
            let errors = result.stderr.split(separator: "\n").map(String.init)
            #expect(errors.count == 3, "\(errors)")  // the mode, the count so far, the reason
            #expect(errors.dropFirst().first == "proofkit squat: 0 reps counted before the camera stopped")
            #expect(errors.last == "proofkit squat: /dev/video0: camera unplugged (VIDIOC_DQBUF: No such device)")
        }
    }

    @Test(
        "squats from a real video are counted live, as `squat --video` counts the same frames",
        .enabled(if: PoseFixtures.squatVideo != nil, "no squat video: set PROOFKIT_SQUAT_VIDEO"),
        .enabled(if: TestEnvironment.hasTool("ffmpeg"), "needs ffmpeg"))
    func videoSquats() throws {
        try withTemporaryFolder { folder in
            let frames = try PoseFixtures.squatVideoFrames(into: folder)
            try #require(frames.count > 15)
            // The offline count: the same JPEG frames, copied into a 15 fps video, counted by `squat --video`.
            let copied = try runProcess(
                "/usr/bin/env",
                [
                    "ffmpeg", "-hide_banner", "-loglevel", "error", "-framerate", "15", "-i",
                    folder + "/frame-%05d.jpg", "-c:v", "copy", folder + "/frames.mkv",
                ])
            #expect(copied.status == 0, "\(copied.stderr)")
            let offline = try TestEnvironment.runProofkit(
                ["squat", "--video", folder + "/frames.mkv", "--json", "--target", "1000"])
            let offlineReps = try #require(
                (try JSONSerialization.jsonObject(with: Data(offline.stdout.utf8)) as? [String: Any])?["reps"] as? Int,
                "\(offline.stdout)\(offline.stderr)")
            try #require(offlineReps > 0)
            // Live: the camera plays the frames once at 15 fps; the counter stops at the offline count.
            let environment = try FakeCamera.environment(frames: frames, loop: false)
            let live = try TestEnvironment.runProofkit(
                [
                    "squat", "--camera", "--reps", String(offlineReps), "--max-seconds",
                    String(frames.count / 15 + 10),
                ], environment: environment)
            #expect(live.status == 0, "\(live.stderr)")
            #expect(live.stdout.contains("rep \(offlineReps):"), "\(live.stdout)")
            #expect(live.stdout.contains("the workout is done"))
        }
    }

    @Test(
        "alarm prove --squat --camera: a real video's squats, played until the chain's 10 are counted, end the chain",
        .enabled(if: PoseFixtures.squatVideo != nil, "no squat video: set PROOFKIT_SQUAT_VIDEO"),
        .enabled(if: TestEnvironment.hasTool("ffmpeg"), "needs ffmpeg"))
    func proveBySquatsAccepted() throws {
        let rig = try AlarmRig()
        let frames = try PoseFixtures.squatVideoFrames(into: rig.folder)
        try #require(frames.count > 15)
        let environment = try FakeCamera.environment(frames: frames)  // the video again and again
        let (id, first) = try rig.add(in: 1, window: 120, gap: 60, extra: ["--proof", "squat"])
        while Date() < first.addingTimeInterval(0.2) { usleep(50_000) }
        let proof = try rig.alarm(
            ["prove", id, "--squat", "--camera", "--max-seconds", "90", "--strict"], environment: environment)
        #expect(proof.status == 0, "\(proof.stdout)\(proof.stderr)")
        #expect(proof.stdout.contains("counting squats: 10 reps"), "\(proof.stdout)")
        #expect(proof.stdout.contains("rep 10:"), "\(proof.stdout)")
        #expect(proof.stdout.contains("proof accepted: chain \(id) ended"), "\(proof.stdout)")
        let status = try rig.status()
        let outcome = try #require((status["outcomes"] as? [[String: Any]])?.first, "\(status)")
        #expect(outcome["kind"] as? String == "proof", "\(outcome)")
        #expect((outcome["detail"] as? String)?.hasPrefix("squat") == true, "\(outcome)")
    }
}
