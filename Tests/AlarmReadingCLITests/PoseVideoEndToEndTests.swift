import Foundation
import TestSupport
import Testing

private let canRun = TestEnvironment.hasProofkitBinary && PoseFixtures.hasModels
private let walkers = TestEnvironment.fixture("video/walkers.mp4")

/// Runs the built proofkit on the models of Models/generated (or `models`).
private func proofkit(_ arguments: [String], models: String = PoseFixtures.models.path) throws -> ProcessResult {
    try TestEnvironment.runProofkit(arguments, environment: ["PROOFKIT_MODELS": models, "PROOFKIT_ORT_LIBRARY": ""])
}

/// The JSON objects of stdout, one per line.
private func objects(_ text: String) throws -> [[String: Any]] {
    try text.split(separator: "\n").map {
        try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
}

/// `squat --json`'s result without its "file" (the name of what was read).
private func result(_ text: String) throws -> NSDictionary {
    var object = try #require(try objects(text).last)
    object["file"] = nil
    return object as NSDictionary
}

@Suite(
    "proofkit pose VIDEO and squat --video, end to end",
    .enabled(if: canRun, "needs the built proofkit and Models/generated"))
struct PoseVideoEndToEndTests {
    @Test(
        "pose VIDEO --json: one line per frame, t the frame's time, nobody in view a frame; squat --video counts exactly as squat on those lines, with every option"
    )
    func countingEqualsComposition() throws {
        try withTemporaryFolder { folder in
            let pose = try proofkit(["pose", walkers, "--json"])
            #expect(pose.status == 0 && pose.stderr.isEmpty, "\(pose.stderr)")
            let lines = try objects(pose.stdout)
            #expect(lines.count == 90)
            #expect(lines.map { PoseFixtures.number($0["t"]) } == (0..<90).map { Double($0) / 10 })
            #expect(lines.map { $0["frame"] as? Int } == (0..<90).map { $0 })
            let nobody = lines.filter { $0["person"] as? Bool == false }
            #expect(nobody.count >= 10 && nobody.count <= 30)
            #expect(nobody.allSatisfy { ($0["keypoints"] as? [String: Any])?.isEmpty == true && $0["reason"] != nil })
            let poses = folder + "/walkers.jsonl"
            try pose.stdout.write(toFile: poses, atomically: true, encoding: .utf8)
            // The default settings, and others that change what the counter sees (a shallow depth, no
            // knee gate, a low confidence gate, two sets of one: the walkers' steps then give a
            // rejected "rep"): the same result either way.
            let shallow = [
                "--depth", "0.05", "--stand", "0.02", "--knee-gate", "0", "--min-rep", "0.2", "--min-confidence", "0.2",
                "--target", "1", "--sets", "2",
            ]
            var direct: [NSDictionary] = []
            for options in [[], shallow] {
                let composed = try proofkit(["squat", poses, "--json"] + options)
                let video = try proofkit(["squat", "--video", walkers, "--json"] + options)
                #expect(composed.status == 0 && video.status == 0, "\(composed.stderr) \(video.stderr)")
                #expect(video.stderr.isEmpty, "\(video.stderr)")
                direct.append(try result(video.stdout))
                #expect(try direct.last == result(composed.stdout), "\(options)")
                #expect(direct.last?["frames"] as? Int == 90)
            }
            #expect((direct.last?["rejected"] as? [Any])?.isEmpty == false)
            // Text output, and --strict on the rejected proof (nobody squats in this video).
            let text = try proofkit(["squat", "--video", walkers, "--strict"])
            #expect(text.status == 2)
            // (A movement the counter looked at and turned down is printed above the summary.)
            #expect(
                text.stdout.split(separator: "\n").contains {
                    $0.hasPrefix(walkers + ": 0 squats (target 10): rejected")
                },
                "\(text.stdout)")
        }
    }

    @Test(
        "bad video input: not a video 65, a truncated one gives its frames and where it stopped, a huge one is refused 65, missing 66, POSES and --video together 64, --plot of a video 65"
    )
    func badInput() throws {
        try withTemporaryFolder { folder in
            let text = folder + "/notes.mp4"
            try "a shopping list, not a video\n".write(toFile: text, atomically: true, encoding: .utf8)
            for arguments in [["pose", text, "--json"], ["squat", "--video", text]] {
                let run = try proofkit(arguments)
                #expect(run.status == 65, "\(arguments): \(run.stderr)")
                #expect(run.stdout.isEmpty)
                #expect(run.stderr.split(separator: "\n").count == 1 && run.stderr.contains("not a photo or a video"))
            }
            // Cut to 60 % of its bytes: the frames that decode, then one line saying where it stopped.
            let bytes = try Data(contentsOf: URL(fileURLWithPath: walkers))
            let cut = folder + "/cut.mp4"
            try bytes.prefix(bytes.count * 6 / 10).write(to: URL(fileURLWithPath: cut))
            let pose = try proofkit(["pose", cut, "--json"])
            #expect(pose.status == 65)
            let lines = try objects(pose.stdout)
            #expect(lines.count > 10 && lines.count < 90)
            #expect(pose.stderr.split(separator: "\n").count == 1)
            #expect(pose.stderr.contains("cut.mp4: stopped after frame \(lines.count) ("), "\(pose.stderr)")
            let squat = try proofkit(["squat", "--video", cut, "--json"])
            #expect(squat.status == 0, "\(squat.stderr)")
            #expect(try result(squat.stdout)["frames"] as? Int == lines.count)
            #expect(squat.stderr.contains("the verdict is on the frames before it"), "\(squat.stderr)")
            // A stream over 8K: refused from its header, before any frame is decoded.
            let huge = folder + "/huge.mp4"
            let made = try runProcess(
                "/usr/bin/ffmpeg",
                [
                    "-v", "error", "-nostdin", "-f", "lavfi", "-i", "color=size=9000x5000:rate=1:duration=1", "-c:v",
                    "libx264", "-preset", "ultrafast", huge,
                ])
            #expect(made.status == 0, "\(made.stderr)")
            let refused = try proofkit(["pose", huge])
            #expect(refused.status == 65 && refused.stderr.contains("9000x5000"), "\(refused.stderr)")
            #expect(try proofkit(["squat", "--video", folder + "/missing.mp4"]).status == 66)
            #expect(try proofkit(["squat", walkers, "--video", walkers]).status == 64)
            // --plot draws a photo: a video given to it is not one (65), and nothing is written.
            #expect(try proofkit(["pose", walkers, "--plot", folder + "/x.svg"]).status == 65)
            #expect(!FileManager.default.fileExists(atPath: folder + "/x.svg"))
        }
    }

    @Test(
        "a real squat video: squat --video counts its reps, exactly as squat on pose VIDEO --json",
        .enabled(if: PoseFixtures.squatVideo != nil, "no squat video: set PROOFKIT_SQUAT_VIDEO"))
    func realSquats() throws {
        let video = try #require(PoseFixtures.squatVideo)
        try withTemporaryFolder { folder in
            let pose = try proofkit(["pose", video, "--json"])
            #expect(pose.status == 0, "\(pose.stderr)")
            let poses = folder + "/poses.jsonl"
            try pose.stdout.write(toFile: poses, atomically: true, encoding: .utf8)
            let composed = try proofkit(["squat", poses, "--json", "--target", "1"])
            let direct = try proofkit(["squat", "--video", video, "--json", "--target", "1"])
            #expect(composed.status == 0 && direct.status == 0, "\(composed.stderr) \(direct.stderr)")
            let counted = try result(direct.stdout)
            #expect(counted == (try result(composed.stdout)))
            #expect((counted["reps"] as? Int ?? 0) >= 1, "\(counted)")
        }
    }

    @Test(
        "pose FRAMES --fps RATE: a video's frames as photos are timed position / RATE, so squat reads them as a video; --fps 0 or with --camera is a usage error",
        .enabled(if: TestEnvironment.hasTool("ffmpeg"), "needs ffmpeg"))
    func photoFrameRate() throws {
        try withTemporaryFolder { folder in
            let extract = try runProcess(
                "/usr/bin/env",
                [
                    "ffmpeg", "-hide_banner", "-loglevel", "error", "-i", walkers, "-frames:v", "30", "-q:v", "2",
                    folder + "/f-%03d.jpg",
                ])
            #expect(extract.status == 0, "\(extract.stderr)")
            let frames = try FileManager.default.contentsOfDirectory(atPath: folder).sorted().map { folder + "/" + $0 }
            try #require(frames.count == 30)  // the first 3 s
            let pose = try proofkit(["pose", "--json", "--fps", "10"] + frames)
            #expect(pose.status == 0, "\(pose.stderr)")
            let lines = try objects(pose.stdout)
            #expect(lines.map { PoseFixtures.number($0["t"]) } == (0..<30).map { Double($0) / 10 })
            // Without --fps, one a second: 0, 1, 2, ...
            let slow = try objects(try proofkit(["pose", "--json"] + frames.prefix(3)).stdout)
            #expect(slow.map { $0["t"] as? Int } == [0, 1, 2])
            let poses = folder + "/frames.jsonl"
            try pose.stdout.write(toFile: poses, atomically: true, encoding: .utf8)
            let squat = try proofkit(["squat", poses, "--json"])
            #expect(squat.status == 0 && squat.stdout.contains("\"frames\":30"), "\(squat.stdout)\(squat.stderr)")
            for bad in [[frames[0], "--fps", "0"], [frames[0], "--fps", "fast"], ["--camera", "--fps", "15"]] {
                let refused = try proofkit(["pose"] + bad)
                #expect(refused.status == 64 && refused.stderr.contains("--fps"), "\(bad): \(refused.stderr)")
            }
        }
    }

    @Test("squat --video without the models: 69 naming the set-up; with a damaged model: 78")
    func models() throws {
        try withTemporaryFolder { folder in
            let missing = try proofkit(["squat", "--video", walkers], models: folder)
            #expect(missing.status == 69 && missing.stderr.contains(".ci/setup"), "\(missing.stderr)")
            for name in ["pose_detection.onnx", "pose_landmark_full.onnx", "pose_pipeline.json", "manifest.json"] {
                try FileManager.default.copyItem(
                    atPath: PoseFixtures.models.appendingPathComponent(name).path, toPath: folder + "/" + name)
            }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: folder + "/pose_landmark_full.onnx"))
            try handle.seek(toOffset: 4096)
            try handle.write(contentsOf: Data([0x5A, 0xA5]))
            try handle.close()
            let damaged = try proofkit(["squat", "--video", walkers], models: folder)
            #expect(damaged.status == 78, "\(damaged.stderr)")
        }
    }

    @Test(
        "alarm prove --squat --video: the video's squats are the proof (none here: rejected, recorded as a squat proof)"
    )
    func alarmProve() throws {
        let rig = try AlarmRig()
        let (id, first) = try rig.add(in: 1, window: 600, gap: 300)
        let wait = first.timeIntervalSinceNow + 0.2
        if wait > 0 { usleep(useconds_t(wait * 1_000_000)) }
        let proof = try rig.alarm(
            ["prove", "--squat", "--video", walkers, "--json"],
            environment: ["PROOFKIT_MODELS": PoseFixtures.models.path])
        #expect(proof.status == 0, "\(proof.stdout) \(proof.stderr)")
        let object = try #require(try objects(proof.stdout).last)
        #expect(object["chain"] as? String == id)
        #expect(object["proof"] as? String == "squat" && object["verdict"] as? String == "rejected")
        let missing = try rig.alarm(["prove", "--squat", "--video"])
        #expect(missing.status == 64, "\(missing.stderr)")
    }
}
