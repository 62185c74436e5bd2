import Foundation
import TestSupport
import Testing

private let canRun = TestEnvironment.hasProofkitBinary && PoseFixtures.hasModels
private let canRunOnPhotos = canRun && PoseFixtures.hasPhotos
private let squatJoints = [
    "left_shoulder": 11, "right_shoulder": 12, "left_hip": 23, "right_hip": 24, "left_knee": 25, "right_knee": 26,
    "left_ankle": 27, "right_ankle": 28,
]

/// Runs the built proofkit on the models of Models/generated (or `models`).
private func proofkit(_ arguments: [String], models: String = PoseFixtures.models.path) throws -> ProcessResult {
    try TestEnvironment.runProofkit(arguments, environment: ["PROOFKIT_MODELS": models, "PROOFKIT_ORT_LIBRARY": ""])
}

/// The JSON objects of stdout, one per line.
private func objects(_ result: ProcessResult) throws -> [[String: Any]] {
    try result.stdout.split(separator: "\n").map {
        try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
}

/// The six reference photos written into `folder`, in PoseFixtures' order.
private func referencePhotos(in folder: String) throws -> [String] {
    try PoseFixtures.photoNames.map { try PoseFixtures.extractPhoto($0, into: folder) }
}

@Suite("proofkit pose, end to end")
struct PoseEndToEndTests {
    @Test(
        "--json on the six reference photos: squat's format, the Python reference's joints, and squat reads it",
        .enabled(if: canRunOnPhotos, "needs the built proofkit, Models/generated, ONNX Runtime and .deps/wheels"))
    func jsonAndSquat() throws {
        try withTemporaryFolder { folder in
            let photos = try referencePhotos(in: folder)
            let result = try proofkit(["pose", "--json"] + photos)
            #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
            let lines = try objects(result)
            #expect(lines.count == 6)
            for (index, (name, line)) in zip(PoseFixtures.photoNames, lines).enumerated() {
                let reference = try #require(PoseFixtures.photos[name]?["end_to_end"] as? [String: Any])
                #expect(PoseFixtures.number(line["t"]) == Double(index) && line["file"] as? String == photos[index])
                let keypoints = try #require(line["keypoints"] as? [String: Any])
                let person = reference["person"] as? Bool == true
                #expect(line["person"] as? Bool == person, "\(name)")
                guard person else {
                    #expect(keypoints.isEmpty && line["reason"] as? String == "no detection", "\(name)")
                    continue
                }
                #expect(Set(keypoints.keys) == Set(squatJoints.keys), "\(name)")
                let landmarks = (reference["landmarks"] as? [Any] ?? []).map(PoseFixtures.numbers)
                for (joint, index) in squatJoints {
                    let values = PoseFixtures.numbers(keypoints[joint])
                    // Printed with 6 decimals (x, y) and 4 (visibility).
                    #expect(abs(values[0] - landmarks[index][0]) <= 5.1e-7, "\(name) \(joint)")
                    #expect(abs(values[1] - landmarks[index][1]) <= 5.1e-7, "\(name) \(joint)")
                    #expect(abs(values[2] - landmarks[index][3]) <= 5.1e-5, "\(name) \(joint)")
                }
            }
            // squat reads the lines: every frame, no line refused.
            let poses = folder + "/poses.jsonl"
            try result.stdout.write(toFile: poses, atomically: true, encoding: .utf8)
            let squat = try proofkit(["squat", poses, "--json"])
            #expect(squat.status == 0, "\(squat.stderr)")
            let summary = try #require(try objects(squat).last)
            #expect(PoseFixtures.number(summary["frames"]) == 6 && PoseFixtures.number(summary["reps"]) == 0)
            // And from a pipe, as a live stream.
            let live = try TestEnvironment.runProofkit(
                ["squat", "-", "--json"], stdin: Data(result.stdout.utf8), environment: ["PROOFKIT_MODELS": ""])
            #expect(live.status == 0 && live.stdout.contains("\"frames\":6"), "\(live.stderr)")
        }
    }

    @Test(
        "--landmarks all gives the 33 names; the text output names each joint",
        .enabled(if: canRunOnPhotos, "needs the built proofkit, Models/generated, ONNX Runtime and .deps/wheels"))
    func allLandmarksAndText() throws {
        try withTemporaryFolder { folder in
            let astronaut = try PoseFixtures.extractPhoto("astronaut", into: folder)
            let coffee = try PoseFixtures.extractPhoto("coffee", into: folder)
            let all = try objects(try proofkit(["pose", astronaut, "--json", "--landmarks", "all"]))
            let keypoints = try #require(all.first?["keypoints"] as? [String: Any])
            #expect(keypoints.count == 33 && keypoints["nose"] != nil && keypoints["right_foot_index"] != nil)
            let text = try proofkit(["pose", astronaut, coffee])
            #expect(text.status == 0)
            let lines = text.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 10)
            #expect(lines.first == astronaut + ": person (presence 0.979), 512x512")
            #expect(lines.dropFirst().prefix(8).allSatisfy { $0.hasPrefix("  ") && $0.contains("visibility") })
            #expect(lines.last == coffee + ": nobody in view (no detection)")
        }
    }

    @Test(
        "--plot: an SVG (valid XML) with the photo embedded byte for byte, 33 joints and 35 bones",
        .enabled(
            if: canRunOnPhotos && ImageFixtures.hasPythonWithPillow,
            "needs the built proofkit, Models/generated, ONNX Runtime, .deps/wheels and .deps/venv"))
    func plot() throws {
        try withTemporaryFolder { folder in
            let photo = try PoseFixtures.extractPhoto("grace_hopper", into: folder)
            let svg = folder + "/skeleton.svg"
            let result = try proofkit(["pose", photo, "--plot", svg])
            #expect(result.status == 0, "\(result.stderr)")
            // Python's XML parser and base64 decoder check it independently.
            let script = """
                import base64, sys, xml.etree.ElementTree as ET
                root = ET.parse(sys.argv[1]).getroot()
                ns = '{http://www.w3.org/2000/svg}'
                image = root.find(ns + 'image')
                prefix, data = image.get('href').split(',', 1)
                same = base64.b64decode(data, validate=True) == open(sys.argv[2], 'rb').read()
                print(prefix, same, root.get('width'), root.get('height'), len(root.findall(ns + 'circle')), len(root.findall(ns + 'line')))
                """
            let check = try runProcess(try #require(ImageFixtures.pythonWithPillow), ["-c", script, svg, photo])
            #expect(check.stdout == "data:image/jpeg;base64 True 512 600 33 35\n", "\(check.stderr)")
            // Nobody in view: the photo with a note, no skeleton.
            let coffee = try PoseFixtures.extractPhoto("coffee", into: folder)
            let nobody = try proofkit(["pose", coffee, "--plot", svg])
            #expect(nobody.status == 0)
            let text = try String(contentsOfFile: svg, encoding: .utf8)
            #expect(
                text.contains("data:image/png;base64,") && text.contains("nobody in view") && !text.contains("<circle"))
        }
    }

    @Test(
        "bad input: not a photo 65, missing 66, a folder 66, over 32 MiB or 50 MP 65, one line each naming the file; the good photo still printed",
        .enabled(if: canRunOnPhotos, "needs the built proofkit, Models/generated, ONNX Runtime and .deps/wheels"))
    func badInput() throws {
        try withTemporaryFolder { folder in
            let notes = folder + "/notes.jpg"
            try "not a photo at all".write(toFile: notes, atomically: true, encoding: .utf8)
            let bad = try proofkit(["pose", notes, "--json"])
            #expect(bad.status == 65 && bad.stdout.isEmpty)
            #expect(bad.stderr.split(separator: "\n").count == 1 && bad.stderr.contains("notes.jpg"), "\(bad.stderr)")
            let missing = try proofkit(["pose", folder + "/nothing.png"])
            #expect(missing.status == 66 && missing.stderr.contains("nothing.png"))
            let bomb = try proofkit(["pose", ImageFixtures.path("bomb_30000.png")])
            #expect(bomb.status == 65 && bomb.stderr.contains("bomb_30000.png"), "\(bomb.stderr)")
            // As for every input: a folder is missing input (66), a file over the 32 MiB photo
            // limit bad data (65), told from its size before anything is read.
            let huge = folder + "/huge.jpg"
            try Data([0xFF, 0xD8, 0xFF]).write(to: URL(fileURLWithPath: huge))
            #expect(truncate(huge, 33 << 20) == 0)
            for (path, status, words) in [(folder, 66, "is a folder"), (huge, 65, "over the 32 MiB limit")] {
                let refused = try proofkit(["pose", path])
                #expect(refused.status == status && refused.stderr.contains(words), "\(path): \(refused.stderr)")
                #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
            }
            // A good photo and a bad one: the good one's line, the bad one's error, exit 65.
            let astronaut = try PoseFixtures.extractPhoto("astronaut", into: folder)
            let mixed = try proofkit(["pose", astronaut, notes, "--json"])
            let printed = try objects(mixed)
            #expect(mixed.status == 65 && printed.count == 1)
            // No plot is written for a photo that failed.
            let plot = try proofkit(["pose", notes, "--plot", folder + "/out.svg"])
            #expect(plot.status == 65 && !FileManager.default.fileExists(atPath: folder + "/out.svg"))
        }
    }

    @Test(
        "usage errors are 64; missing models are 69 naming the set-up",
        .enabled(if: TestEnvironment.hasProofkitBinary, "needs the built proofkit"))
    func usageAndModels() throws {
        for arguments in [
            ["pose"], ["pose", "a.jpg", "b.jpg", "--plot", "x.svg"], ["pose", "a.jpg", "--landmarks", "some"],
            ["pose", "a.jpg", "--threads", "-1"], ["pose", "a.jpg", "--threads", "257"],
        ] {
            let result = try proofkit(arguments)
            #expect(result.status == 64 && result.stderr.contains("usage: proofkit pose"), "\(arguments)")
        }
        try withTemporaryFolder { empty in
            let none = try proofkit(["pose", "a.jpg"], models: empty)
            #expect(
                none.status == 69 && none.stderr.contains("bash .ci/setup") && none.stdout.isEmpty, "\(none.stderr)")
            let help = try proofkit(["pose", "--help"])
            #expect(
                help.status == 0 && help.stdout.contains("proofkit pose PHOTO|VIDEO...")
                    && help.stdout.contains("Examples:"))
            let man = try proofkit(["help", "man"])
            #expect(man.stdout.contains("proofkit pose PHOTO"))
        }
    }
}
