import Proofkit
import ProofkitCore
internal import ProofkitSystem

/// `proofkit pose INPUT...`: body pose on the device (MediaPipe's BlazePose on ONNX Runtime), in
/// photos and video files.
enum PoseCommand: Subcommand {
    static let name = "pose"
    static let summary = "body pose in photos and videos: the squat joints (or all 33 landmarks) as squat's JSON Lines"
    static let synopsis = """
        proofkit pose PHOTO|VIDEO... [--json] [--landmarks squat|all] [--plot OUT.svg] [--threads N] [--fps RATE]
        proofkit pose --camera [DEVICE] [--json] [--max-seconds S]   (each frame as it comes; t in seconds)
        """
    static let discussion = """
        Finds the body in each PHOTO (JPEG or PNG, by content; EXIF orientation applied) on this
        device with MediaPipe Pose's pipeline: the BlazePose detector, the rotated region from the
        hip centre and the body's size, a 256x256 crop of it, and the full landmark model, both
        models run by ONNX Runtime. One person per photo (the detector's best). A JPEG whose
        shorter side is over 1080 pixels is decoded at a reduced size (DCT scaling); a photo over
        50 MP is refused. Nobody in view is a result, not an error.

        A VIDEO (any file that is not a JPEG or PNG: MP4, MOV, MKV, WebM, AVI, MPEG... read
        through FFmpeg's libraries, loaded on first use) is read frame by frame as MediaPipe Pose
        runs on video: the detector on the first frame, then each frame's region from the last
        frame's landmarks, the detector again only when the person is lost (presence below 0.5),
        and the landmarks smoothed over time (MediaPipe's 1-euro filter). Frames are turned
        upright (a phone's rotation) and scaled to at most 1280 pixels on the longer side while
        they decode; a stream over 8192x4320 or more than 8:1 is refused (65). A truncated or
        damaged video gives the frames that decode, then one line on stderr saying where it
        stopped, and exits 65.

        Output: for each photo, "FILE: person (presence P), WxH" and one line per joint (x, y
        normalised to the photo, y downward, and the visibility 0..1), or "FILE: nobody in view
        (no detection|low presence P)".

        JSON (--json): one line per photo, in the format 'proofkit squat' reads:
          {"t": I, "keypoints": {"left_hip": [x, y, visibility], ...}, "file": PATH,
           "person": true|false, "reason": null|"no detection"|"low presence",
           "presence": P|null, "width": W, "height": H}
        t is the photo's position (0, 1, 2, ...), or with --fps RATE its position divided by RATE
        (photos that are a video's frames, e.g. from ffmpeg), or for a video's frame its time in seconds
        from the first frame, with "frame": its number from 0; with several inputs, each starts
        at the next whole second after the one before, so the lines form a valid stream; x, y are
        normalised to the photo (they may fall outside 0..1 for a joint outside it); the third
        value is MediaPipe's visibility (the likelihood that the joint is in view and not hidden),
        which squat compares with its --min-confidence. The joints are squat's 8 (shoulders,
        hips, knees, ankles); --landmarks all gives MediaPipe's 33 (nose, eyes, ears, mouth,
        shoulders, elbows, wrists, fingers, hips, knees, ankles, heels, foot tips). Nobody in view:
        "keypoints" is {} and "person" false.

        --plot OUT.svg (one PHOTO, not a video) draws the skeleton over the photo: the photo is embedded in the
        SVG as a data: URI, joints are dots (faint when hidden), bones lines (left side orange,
        right side blue). Written atomically once the photo is done.

        Models: pose_detection.onnx, pose_landmark_full.onnx and pose_pipeline.json from
        $PROOFKIT_MODELS, else Models/generated above the executable, else ./Models/generated,
        each checked against its SHA-256 (manifest.json, else the digests committed in
        Models/models.sha256). Run 'bash .ci/setup' to build them.

        Exit codes: 0 when every input was read (with or without a person), 64 usage, 65 an input
        is not a usable photo or video (neither JPEG/PNG nor a video, truncated, empty, over the
        size limits), 66 an input is missing or a folder, 74 unreadable, 69 a model, ONNX Runtime
        or an FFmpeg library is not installed (the message names the Debian package), 78 a model
        fails its SHA-256 check or is not the expected graph. A bad photo is reported on stderr (one line
        naming it) and the others are still read; the exit code is then the largest. Model and
        runtime errors stop before any photo.

        Examples:
          proofkit pose squat.jpg
          proofkit pose squat.jpg --plot skeleton.svg
          proofkit pose frames/*.jpg --fps 15 --json > poses.jsonl && proofkit squat poses.jsonl
          proofkit pose photo.png --json --landmarks all
          proofkit pose squats.mp4 --json > poses.jsonl && proofkit squat poses.jsonl
        """
    static let options: [OptionSpec] =
        [
            .flag("json", help: "one JSON line per photo or video frame, in squat's keypoint format"),
            .option("landmarks", value: "SET", help: "squat (the 8 squat joints, default) or all (the 33 landmarks)"),
            .option("plot", value: "FILE", help: "write an SVG of the skeleton over the photo (one PHOTO)"),
            .option("threads", value: "N", help: "ONNX Runtime intra-op threads (default 1; 0 = one per core)"),
            .option("max-seconds", value: "S", help: "with --camera: stop after S seconds (default 30)"),
            .option(
                "fps", value: "RATE",
                help: "the photos are a video's frames at RATE frames/s: t = position / RATE (default 1)"),
        ] + CameraOptions.specs

    /// The largest photo `--plot` embeds, in bytes (the SVG is a third larger).
    static let plotPhotoLimit = 64 << 20

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        let photos = arguments.positionals
        if CameraOptions.isLive(arguments) {
            guard photos.isEmpty else { throw UsageError("--camera estimates the camera's frames; give no PHOTO") }
        } else {
            guard !photos.isEmpty else { throw UsageError("missing PHOTO") }
            guard arguments.value("max-seconds") == nil else { throw UsageError("--max-seconds applies to --camera") }
        }
        let frameRate = try photoFrameRate(arguments)
        let set = arguments.value("landmarks") ?? "squat"
        guard set == "squat" || set == "all" else {
            throw UsageError("--landmarks takes squat or all, not '\(set)'")
        }
        let plotPath = arguments.value("plot")
        if plotPath != nil && photos.count != 1 {
            throw UsageError("--plot draws one photo; give one PHOTO (\(photos.count) given)")
        }
        let threads = try arguments.threads(default: 1, allowsZero: true)
        let json = arguments.has("json")
        let joints = PoseVideoLines.reported(all: set == "all")

        let estimator = try PoseEstimator(store: ModelStore(environment: io.environment), threads: threads)
        if CameraOptions.isLive(arguments) {
            return try watch(estimator, arguments, json: json, joints: joints, io: io)
        }
        var worst = ExitStatus.success
        var lastTime: Double? = nil
        for path in photos {
            // Each input starts at the next whole second after the last line's t (0 for the first),
            // so the lines of several photos and videos form one valid stream.
            let start = lastTime.map { ($0 + 1).rounded(.down) } ?? 0
            // --plot takes one photo: its input is read as a photo, whatever it holds.
            if plotPath == nil, !PoseVideoLines.isPhoto(path) {
                do {
                    let progress = ReportedProgress(io: io, label: "pose \(displayName(path))")
                    defer { progress.finish() }
                    let stop = try PoseVideoLines.run(
                        path: path, estimator: estimator, joints: joints, offset: start, progress: progress.report
                    ) { frame, line in
                        if json {
                            io.printJSON(line)
                        } else {
                            let time = decimalText(start + frame.time, places: 3)
                            printText(
                                frame.observation, width: frame.width, height: frame.height,
                                name: "\(displayName(path)) @ \(time) s", joints: joints, io: io)
                        }
                        if case .object(let fields) = line, case .number(let t) = fields["t"] { lastTime = t }
                    }
                    if let stop {
                        io.printError("proofkit pose: \(displayName(path)): \(stop)")
                        if ExitStatus.dataError.rawValue > worst.rawValue { worst = .dataError }
                    }
                } catch let error as ProofkitError {
                    // A missing library or a failing model stops everything, as before any photo.
                    if [.runtimeUnavailable, .modelInvalid, .internal].contains(error.code) { throw error }
                    io.printError("proofkit pose: \(error.at(path: path).description)")
                    let status = ExitStatus(for: error.code)
                    if status.rawValue > worst.rawValue { worst = status }
                }
                continue
            }
            // One photo a second (t = 0, 1, 2, ...), or with --fps the next frame of the sequence.
            let time: JSONValue
            if let frameRate {
                let seconds = lastTime.map { $0 + 1 / frameRate } ?? 0
                (time, lastTime) = (.rounded(seconds, places: 6), seconds)
            } else {
                (time, lastTime) = (.int(Int(start)), start)
            }
            let photo: PosePhoto
            do {
                photo = try estimator.estimate(photoAt: path)
                if let plotPath {
                    let bytes = try BoundedFile.read(path, limit: plotPhotoLimit, what: "photo to plot")
                    try writeFileAtomically(
                        skeletonSVG(photo: photo, bytes: bytes, title: displayName(path)), to: plotPath)
                }
            } catch {
                io.printError("proofkit pose: \(error.at(path: path).description)")
                let status = ExitStatus(for: error.code)
                if status.rawValue > worst.rawValue { worst = status }
                continue
            }
            if json {
                io.printJSON(line(photo, time: time, path: path, joints: joints))
            } else {
                printText(photo, path: path, joints: joints, io: io)
            }
        }
        return worst
    }

    /// One photo's JSON line (squat's keypoint format, with the photo's details).
    static func line(_ photo: PosePhoto, time: JSONValue, path: String, joints: [(name: String, index: Int)])
        -> JSONValue
    {
        PoseVideoLines.line(
            photo.observation, width: photo.width, height: photo.height, time: time, path: path, joints: joints)
    }

    /// `--fps RATE`: the photos' frame rate, from 0.01 to 1000 frames/s, or `nil` when absent.
    /// - Throws: ``UsageError`` when it is out of range, or given with `--camera` (a camera's frames
    ///   carry their own times).
    static func photoFrameRate(_ arguments: ParsedArguments) throws(UsageError) -> Double? {
        guard let rate = try arguments.double("fps") else { return nil }
        guard !CameraOptions.isLive(arguments) else { throw UsageError("--fps applies to photos, not --camera") }
        guard rate >= 0.01 && rate <= 1000 else {
            throw UsageError("--fps must be from 0.01 to 1000 frames/s, not \(arguments.value("fps") ?? "")")
        }
        return rate
    }

    static func printText(_ photo: PosePhoto, path: String, joints: [(name: String, index: Int)], io: CommandIO) {
        printText(
            photo.observation, width: photo.width, height: photo.height, name: displayName(path), joints: joints, io: io
        )
    }

    static func printText(
        _ observation: PoseObservation, width: Int, height: Int, name: String, joints: [(name: String, index: Int)],
        io: CommandIO
    ) {
        let photo = (width: width, height: height)
        switch observation {
        case .nobody(.noDetection):
            io.print("\(name): nobody in view (no detection)")
        case .nobody(.lowPresence(let presence)):
            io.print("\(name): nobody in view (low presence \(decimalText(presence, places: 3)))")
        case .person(let pose):
            io.print(
                "\(name): person (presence \(decimalText(pose.presence, places: 3))), \(photo.width)x\(photo.height)")
            let width = joints.map(\.name.count).max() ?? 0
            for joint in joints {
                let landmark = pose.landmarks[joint.index]
                let padding = String(repeating: " ", count: width - joint.name.count)
                io.print(
                    "  \(joint.name)\(padding)  x \(decimalText(landmark.x / Double(photo.width), places: 4))  y \(decimalText(landmark.y / Double(photo.height), places: 4))  visibility \(decimalText(landmark.visibility, places: 3))"
                )
            }
        }
    }

    /// The skeleton drawn over the photo (embedded as a data: URI), in the analysed image's pixels.
    static func skeletonSVG(photo: PosePhoto, bytes: [UInt8], title: String) -> String {
        let f = SVGPlot.format
        let (width, height) = (Double(photo.width), Double(photo.height))
        let diagonal = (width * width + height * height).squareRoot()
        let radius = max(2, diagonal / 180)
        let stroke = max(1.5, diagonal / 300)
        let mediaType = photo.format == "png" ? "image/png" : "image/jpeg"
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" \
            width="\(photo.width)" height="\(photo.height)" viewBox="0 0 \(photo.width) \(photo.height)" \
            font-family="sans-serif" font-size="\(f(max(12, diagonal / 60)))">
            <title>\(SVGPlot.escape(title))</title>
            <image x="0" y="0" width="\(photo.width)" height="\(photo.height)" preserveAspectRatio="none" \
            href="\(SVGPlot.dataURI(bytes, mediaType: mediaType))"/>

            """
        guard let pose = photo.observation.estimate else {
            svg +=
                "<text x=\"\(f(width / 2))\" y=\"\(f(height / 2))\" text-anchor=\"middle\" fill=\"white\" stroke=\"black\" stroke-width=\"0.6\">nobody in view</text>\n"
            return svg + "</svg>\n"
        }
        /// The person's left side orange, right side blue, the middle (nose, bones across) white.
        func color(_ index: Int) -> String {
            let name = PoseSkeleton.landmarkNames[index]
            return name.hasPrefix("left") ? "#ff7f0e" : (name.hasPrefix("right") ? "#1f77b4" : "#ffffff")
        }
        func opacity(_ visibility: Double) -> String { f(max(0.25, min(1, visibility))) }
        for (a, b) in PoseSkeleton.edges {
            let (p, q) = (pose.landmarks[a], pose.landmarks[b])
            let side = color(a) == color(b) ? color(a) : "#ffffff"
            svg +=
                "<line x1=\"\(f(p.x))\" y1=\"\(f(p.y))\" x2=\"\(f(q.x))\" y2=\"\(f(q.y))\" stroke=\"\(side)\" stroke-width=\"\(f(stroke))\" stroke-linecap=\"round\" stroke-opacity=\"\(opacity(min(p.visibility, q.visibility)))\"/>\n"
        }
        for (index, landmark) in pose.landmarks.enumerated() {
            svg +=
                "<circle cx=\"\(f(landmark.x))\" cy=\"\(f(landmark.y))\" r=\"\(f(radius))\" fill=\"\(color(index))\" stroke=\"black\" stroke-width=\"\(f(stroke / 3))\" fill-opacity=\"\(opacity(landmark.visibility))\"><title>\(PoseSkeleton.landmarkNames[index]) (visibility \(decimalText(landmark.visibility, places: 2)))</title></circle>\n"
        }
        return svg + "</svg>\n"
    }
}
