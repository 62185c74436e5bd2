import Proofkit
import ProofkitCore
internal import ProofkitSystem

/// `proofkit squat`: counts squats in body-pose keypoints (JSON Lines), from a file or live on stdin.
enum SquatCommand: Subcommand {
    static let name = "squat"
    static let summary = "squat proof: count reps from body-pose keypoints (JSON Lines)"
    static let synopsis = """
        proofkit squat POSES.jsonl [--target N] [--sets N] [--rest DURATION] [--json] [--plot depth.svg] [--strict]
        proofkit squat - [options]        (read a live stream on stdin; each rep is printed as it happens)
        proofkit squat --camera [DEVICE] [--sets N --target N --rest DURATION] [--max-seconds S]
        proofkit squat --video VIDEO [options]   (find the body in each frame of a video, then count)
        """
    static let discussion = """
        Input: one frame per line, {"t": seconds, "keypoints": {"left_hip": [x, y, conf], ...}}, with
        x, y in normalised image coordinates (y grows downward) and conf in 0...1. The joints used are
        left/right shoulder, hip, knee and ankle; others are ignored. Time must keep growing.
        A squat is counted from the drop of the hips towards the ankles as a fraction of the person's
        own standing hip-to-ankle height: down past 0.15, back up below 0.08, knees straight again,
        feet planted (a foot away for 0.3 s or more is a step; shorter jumps of a tracker are
        ignored), both knees alike, no jump (feet leaving the floor, or hips rising above standing
        and coming down again within 0.4 s of standing up: a rep is printed 0.4 s after it ends), at
        least 0.5 s long, and not sitting (hips still at the bottom for more than 5 s). The standing
        height is learned from a still moment or from the tallest upright 0.1 s seen so far, whichever
        is taller, so a clip that starts in the descent counts; a person never still is measured
        from the whole sequence at its end. Every threshold can be set below; the defaults and the
        figures behind them are in the README (Benchmarks/squat_eval.py measures any setting on the
        shared recordings, all data and held out by source and by person).

        Output: each rep (start, bottom and end time, depth), then the count, skipped frames and the
        verdict against the target (default 10). A rejected verdict exits 0, or 2 with --strict.
        Bad input (not JSON, a missing field, NaN, time going backwards, a line over 1 MiB) stops
        with one line naming the line number, exit 65. A file is read as a stream like stdin, so
        memory stays a few MiB whatever its length.

        --json prints, for a file, one object:
          {"file","frames","reps","target","verdict":"accepted"|"rejected","reason":string|null,
           "repList":[{"number","set","start","bottom","end","depth","checks"}],
           "rejected":[{"reason","start","end","depth","checks"}], "sets":[{"number","reps","start","end"}],
           "longRests":[{"set","rest"}], "skippedFrames", "skipped":{reason: count},
           "standingReference":number|null}
        "checks" is {"footTravel","floorRise","kneeAsymmetry","torsoUprightness":number|null,
        "kneeBend":degrees|null,"hipRise"}, what the squat checks measured (fractions of the standing
        reference, kneeBend in degrees of thigh tilt; see SquatChecks).
        Times are seconds, depths fractions of the standing reference. Reading stdin, each event is
        printed as it happens as {"event":"rep"|"rejected"|"set"|"restTooLong"|"calibrated",...}
        and the object above (with "event":"result") comes last.

        --video VIDEO finds the body in each frame of a video file (MP4, MOV, MKV, WebM, AVI...,
        read through FFmpeg's libraries) as 'proofkit pose VIDEO --json' does, and counts from
        those very lines: the result is the same as 'proofkit pose VIDEO --json > p.jsonl &&
        proofkit squat p.jsonl'. A truncated video is counted on the frames that decode, with a
        line on stderr saying where it stopped; a file that is not a video exits 65, a missing
        FFmpeg library or model 69 (naming what to install or run), a damaged model 78.

        --plot writes an SVG of the smoothed depth over time with both thresholds and the counted
        reps as bands (written atomically, only when the input was read without error).

        Examples:
          proofkit squat morning.jsonl --target 10
          proofkit squat set.jsonl --json --plot depth.svg
          proofkit pose frames/*.jpg --json | proofkit squat - --target 5 --strict
          proofkit squat --camera --sets 3 --target 10 --rest 60s

        By camera (--camera [DEVICE], default the first video capture device): each frame's pose
        is estimated (BlazePose, tracked from the frame before; the newest frame is taken when
        the pose is slower than the camera) and counted as above; each rep is printed as it is
        counted, and it ends at the target (--target reps in each of --sets sets) or at
        --max-seconds (default 300). Between sets the rest is enforced both ways: reps do not
        count until --rest has passed ("set 2: go"), and the next set must start within 15 s
        after that, or the workout ends rejected (rest too long). --reps is --target. Frames stay
        in memory: nothing is written unless --record DIR is given. Camera faults exit with their
        own codes: 80 busy, 81 unplugged (the reps counted so far are printed), 82 no frame for
        5 s, 83 not a camera, 84 no format proofkit decodes.
          proofkit squat --video morning.mp4 --target 10
        """
    static let options: [OptionSpec] =
        [
            .option("target", value: "N", help: "reps per set needed for the proof (default 10)"),
            .option("reps", value: "N", help: "the same as --target"),
            .option(
                "max-seconds", value: "S",
                help: "reading stdin: give the verdict after S seconds even if the stream goes on (default 300)"),
            .option("sets", value: "N", help: "number of sets (default 1)"),
            .option("rest", value: "DURATION", help: "longest rest between sets, e.g. 60s (default 60s)"),
            .flag("json", help: "one JSON object per result on stdout"),
            .option("plot", value: "FILE", help: "write an SVG plot of depth over time"),
            .flag("strict", help: "exit 2 when the proof is rejected"),
            .option("threads", value: "N", help: "with --camera: ONNX Runtime intra-op threads (default 1)"),
            .option("video", value: "VIDEO", help: "count from a video file (body pose found on this device)"),
        ] + CameraOptions.specs
        + tunables.map { .option($0.name, value: $0.isDuration ? "DURATION" : $0.unit, help: $0.help) }

    /// A setting of the counter that the command line can change.
    struct Tunable {
        var name: String
        var unit: String
        var isDuration: Bool
        var keyPath: WritableKeyPath<SquatCounterConfiguration, Double>
        var help: String
    }

    /// Every numeric setting of `SquatCounterConfiguration`, with its default and where it comes
    /// from (the defaults are read from the configuration, so the help cannot drift from them).
    static var tunables: [Tunable] {
        let d = SquatCounterConfiguration()
        func f(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : "\(value)" }
        func s(_ value: Double) -> String { "\(f(value))s" }
        return [
            Tunable(
                name: "depth", unit: "FRACTION", isDuration: false, keyPath: \.depthThreshold,
                help:
                    "down: hip drop as a fraction of the standing hip-to-ankle height (default \(f(d.depthThreshold)); front-view depth-camera squats drop only 0.22-0.29)"
            ),
            Tunable(
                name: "stand", unit: "FRACTION", isDuration: false, keyPath: \.standThreshold,
                help: "back up: hip drop at or below this (default \(f(d.standThreshold)))"),
            Tunable(
                name: "knee-gate", unit: "DEGREES", isDuration: false, keyPath: \.minimumKneeBend,
                help:
                    "thighs must tilt this far from vertical at the bottom; 0 = off (default \(f(d.minimumKneeBend)); real reps measure 62-118 from phone video but 4-49 from a front-view depth camera)"
            ),
            Tunable(
                name: "hip-rise", unit: "FRACTION", isDuration: false, keyPath: \.maximumHipRise,
                help:
                    "hips above standing by more than this during or just after a rep = a jump (default \(f(d.maximumHipRise)); a real squat ended 0.13 above its start)"
            ),
            Tunable(
                name: "take-off-watch", unit: "", isDuration: true, keyPath: \.takeOffWatch,
                help:
                    "a rep is counted this long after standing up, once no take-off followed (default \(s(d.takeOffWatch)))"
            ),
            Tunable(
                name: "floor-rise", unit: "FRACTION", isDuration: false, keyPath: \.maximumFloorRise,
                help:
                    "the lower ankle may rise this much during a rep before it is a jump (default \(f(d.maximumFloorRise)))"
            ),
            Tunable(
                name: "foot-travel", unit: "FRACTION", isDuration: false, keyPath: \.maximumFootTravel,
                help: "a planted ankle may move this much (a lunge step moves more) (default \(f(d.maximumFootTravel)))"
            ),
            Tunable(
                name: "foot-hold", unit: "", isDuration: true, keyPath: \.footHoldTime,
                help:
                    "a foot or knee must stay away this long to count as moved; tracker glitches last up to 0.2s (default \(s(d.footHoldTime)))"
            ),
            Tunable(
                name: "knee-asymmetry", unit: "FRACTION", isDuration: false, keyPath: \.maximumKneeAsymmetry,
                help:
                    "knee heights may differ this much more than standing (a lunge drops one) (default \(f(d.maximumKneeAsymmetry)))"
            ),
            Tunable(
                name: "torso-upright", unit: "FRACTION", isDuration: false, keyPath: \.minimumTorsoUprightness,
                help:
                    "shoulders above the hips at the bottom, fraction of standing; less = bending over (default \(f(d.minimumTorsoUprightness)))"
            ),
            Tunable(
                name: "knee-extension", unit: "FRACTION", isDuration: false, keyPath: \.kneeExtension,
                help:
                    "hip-to-knee height back to this fraction of standing to count as stood up (default \(f(d.kneeExtension)))"
            ),
            Tunable(
                name: "min-rep", unit: "", isDuration: true, keyPath: \.minimumRepDuration,
                help: "faster reps are bounces or jumps (default \(s(d.minimumRepDuration)))"),
            Tunable(
                name: "max-bottom-hold", unit: "", isDuration: true, keyPath: \.maximumBottomHold,
                help:
                    "hips still at the bottom for longer = sitting down (default \(s(d.maximumBottomHold)); the slowest real reps hold about 1.5s)"
            ),
            Tunable(
                name: "max-gap", unit: "", isDuration: true, keyPath: \.maximumGap,
                help:
                    "a rep is never completed across a gap in the keypoints longer than this (default \(s(d.maximumGap)))"
            ),
            Tunable(
                name: "standing-window", unit: "", isDuration: true, keyPath: \.standingWindow,
                help: "how long standing must be still to learn the standing height (default \(s(d.standingWindow)))"),
            Tunable(
                name: "stillness", unit: "FRACTION", isDuration: false, keyPath: \.stillnessTolerance,
                help:
                    "still = hip-to-ankle height within this fraction of its mean (default \(f(d.stillnessTolerance)))"),
            Tunable(
                name: "smoothing", unit: "", isDuration: true, keyPath: \.smoothingTimeConstant,
                help: "time constant of the depth smoothing (default \(s(d.smoothingTimeConstant)))"),
            Tunable(
                name: "min-confidence", unit: "FRACTION", isDuration: false, keyPath: \.minimumConfidence,
                help: "joints below this confidence are not used (default \(f(d.minimumConfidence)))"),
        ]
    }

    /// The plan (`--target`, `--sets`, `--rest`) and the counter's settings (the tunables).
    static func configuration(_ arguments: ParsedArguments) throws -> SquatCounterConfiguration {
        let target = try arguments.int("reps") ?? arguments.int("target") ?? 10
        let sets = try arguments.int("sets") ?? 1
        let rest = try arguments.seconds("rest") ?? 60
        guard target >= 1 else { throw UsageError("--target must be at least 1") }
        guard sets >= 1 else { throw UsageError("--sets must be at least 1") }
        guard rest > 0 else { throw UsageError("--rest must be positive") }
        var configuration = SquatCounterConfiguration(
            plan: SquatWorkoutPlan(repsPerSet: target, sets: sets, maximumRest: rest),
            recordsDepthTrace: arguments.value("plot") != nil)
        for tunable in tunables {
            let value = tunable.isDuration ? try arguments.seconds(tunable.name) : try arguments.double(tunable.name)
            if let value { configuration[keyPath: tunable.keyPath] = value }
        }
        return configuration
    }

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        if CameraOptions.isLive(arguments) { return try watch(arguments, io: io) }
        let videoPath = arguments.value("video")
        let path: String
        if let videoPath {
            guard arguments.positionals.isEmpty else {
                throw UsageError("--video VIDEO takes the place of POSES.jsonl: give one or the other")
            }
            path = videoPath
        } else {
            path = try arguments.requirePositionals(1, names: "POSES.jsonl (or - for stdin)")[0]
        }
        let json = arguments.has("json")
        let plotPath = arguments.value("plot")
        let configuration = try configuration(arguments)
        var counter: SquatRepCounter
        do {
            counter = try SquatRepCounter(configuration: configuration)
        } catch {
            throw UsageError(error.message)
        }
        let displayName = path == "-" ? "stdin" : ProofkitCore.displayName(path)  // bytes that are not UTF-8 as \xNN

        // A file is read exactly as stdin (one fixed buffer, lines capped): memory stays bounded
        // whatever its length. Reading stdin, events are printed as they happen; for a file they
        // wait until every line has been read and checked, so bad input gives no partial output.
        let live = path == "-" && videoPath == nil
        let fd = live ? 0 : (videoPath != nil ? -1 : try PoseLineReader.openInput(path))
        defer { if !live && fd >= 0 { POSIX.closeDescriptor(fd) } }
        // A live stream ends at the target (the workout done) or at --max-seconds, whichever first.
        let maxSeconds = try arguments.seconds("max-seconds") ?? 300
        guard maxSeconds > 0 else { throw UsageError("--max-seconds must be more than 0") }
        var counting = PoseLineCounting(counter: counter, name: displayName, live: live)
        // A file's events are not printed with --json (its result lists them).
        let show: (SquatEvent) -> Void = { event in
            if live || !json { SquatOutput.report(event, json: json, io: io) }
        }
        if let videoPath {
            // The video's frames become the very lines `proofkit pose VIDEO --json` prints, read
            // by the same decoder: counting from a video equals counting from its pose lines.
            let estimator = try PoseEstimator(store: ModelStore(environment: io.environment))
            let progress = ReportedProgress(io: io, label: "pose \(displayName)")
            defer { progress.finish() }
            let stop = try counting.read(
                videoAt: videoPath, estimator: estimator, progress: progress.report, onEvent: show)
            if let stop {
                io.printError("proofkit squat: \(displayName): \(stop); the verdict is on the frames before it")
            }
        } else if try counting.read(
            fd: fd, deadline: live ? POSIX.monotonicSeconds() + maxSeconds : nil, onEvent: show)
        {
            io.printError(
                "proofkit squat: --max-seconds (\(decimalText(maxSeconds, places: 0)) s) reached; the verdict is on what came"
            )
        }
        // A rep the stream ended on (still in its take-off watch, or stood up in the last frames)
        // is decided by finish(): printed like the others.
        let result = try counting.finish(
            path: path, whenEmpty: videoPath == nil ? "no pose frames in the file" : "no frame of the video decodes",
            onEvent: show)
        if let plotPath { try writeFileAtomically(plot(result, title: displayName, configuration), to: plotPath) }
        if json {
            var object = SquatOutput.resultJSON(result, file: displayName)
            if path == "-" { object["event"] = "result" }
            io.printJSON(.object(object))
        } else {
            SquatOutput.printSummary(result, name: displayName, io: io)
        }
        if arguments.has("strict"), !result.verdict.isAccepted { return .rejected }
        return .success
    }

    static func plot(_ result: SquatResult, title: String, _ configuration: SquatCounterConfiguration) -> String {
        var plot = SVGPlot(
            title: "squat depth: \(title) (\(result.repCount) reps)", xLabel: "time (s)",
            yLabel: "depth (fraction of standing hip-to-ankle height)")
        for rep in result.reps {
            plot.addBand(from: rep.startTime, to: rep.endTime, label: "counted rep")
        }
        plot.addLine(result.depthTrace.map { (x: $0.time, y: $0.smoothedDepth) }, label: "smoothed depth")
        plot.addLine(result.depthTrace.map { (x: $0.time, y: $0.depth) }, label: "raw depth", color: "#bbbbbb")
        plot.addHorizontalLine(y: configuration.depthThreshold, label: "down threshold \(configuration.depthThreshold)")
        plot.addHorizontalLine(
            y: configuration.standThreshold, label: "stand threshold \(configuration.standThreshold)")
        return plot.render()
    }
}
