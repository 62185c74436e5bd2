import Proofkit
import ProofkitCore

/// `proofkit mat PHOTO...`: the photo proof. Is this a prayer mat?
enum MatCommand: Subcommand {
    static let name = "mat"
    static let summary = "photo proof: is this a prayer mat?"
    static let synopsis = """
        proofkit mat PHOTO... [--engine lite0|lite0-fp32|clip] [--rule class-or-head|class] [--threshold X]
                     [--verbose] [--json] [--strict] [--full-size] [--all-crops] [--threads N]
                     [--enrol MAT_PHOTO]... [--timings]
        """
    static let discussion = """
        Judges each PHOTO (JPEG or PNG, by content; EXIF orientation applied) on this device: the
        photo is read, judged and forgotten. Nothing is written and nothing leaves the device.
        All photos share one model session, loaded once.

        Engines:
          lite0       EfficientNet-Lite0, static int8 (default). The score is the ImageNet class
                      741 "prayer rug, prayer mat" probability, the maximum over five crops (the
                      centre crop of the shorter-side-256 resize, and four corner squares of 0.6 x
                      the shorter side). The head score is the mat head's probability (a logistic
                      regression on the crop's 1280-d embedding, in effect on the model's 1000
                      standardised logits; Models/mat_head.json), also the maximum over the crops. The crops run one at a time, centre first,
                      and stop at the first that passes (the same verdict as all five; --all-crops
                      scores all five in one batch). JPEGs are decoded at a reduced size (DCT
                      scaling, shorter side kept >= 256) unless --full-size is given.
          lite0-fp32  the same in fp32 (about twice the inference time; same verdicts on the
                      project's 52 test photos).
          clip        MobileCLIP-S0 with prompt embeddings: score = the mat prompts' share of the
                      softmax over 30 prompts; accepted when score >= 0.45 (the prompts file's
                      threshold). MobileCLIP is not shipped: export it on a machine with internet
                      and torch with Models/export_mobileclip.py, which writes
                      mobileclip_s0_image.onnx and mobileclip_s0_prompts.json into Models/generated.

        Rules (lite0 and lite0-fp32):
          class-or-head  accepted when score >= 0.3 OR head score >= the head's threshold, 0.9
                         (the default; chosen by leave-one-source-out evaluation, Models/MODELS.md).
                         A carpet, doormat or patterned cloth may pass: you are up at a rug.
          class          the seed's rule: accepted when score >= 0.3; the head is not loaded.
        --threshold sets the class-score threshold; the head's threshold is in its file.

        A rejected photo gets a hint: "too dark: turn on a light" when its brightness (mean luma,
        0..1) is below 0.24, else "that does not look like a prayer mat", or (lite0 engines) a
        retake hint from the top five classes: when class 741 is among them or scores >= 0.05
        ("close: that may be a prayer mat; ..." with what to change), or when textiles (quilt,
        handkerchief, sleeping bag, bath towel, doormat, ...) hold half their probability
        ("... show the whole mat, laid flat, from standing height"). A hint never changes the
        verdict. The rule and the class list are in Models/MODELS.md.
        --enrol MAT_PHOTO (repeatable) enrols the person's own mat first: a photo whose centre-crop
        embedding has a cosine >= 0.75 with an enrolled photo's is also accepted.

        Limits, so that any file is judged in bounded memory (under 128 MiB): only regular files
        are read (a FIFO or a device is refused, exit 74), at most 32 MiB (a larger file: exit 65).
        From the header, before anything is decoded, a photo over 50 MP, with a side under 16
        pixels, more than 16 times longer than wide, or a progressive JPEG whose decoding would hold
        over 48 MiB, is refused (exit 65). At most 8 MP are decoded: a larger JPEG is DCT-scaled to fit (even with
        --full-size), a larger PNG shrunk by a whole factor while it is read row by row (an
        interlaced one over 8 MP is refused).

        Models are looked for in $PROOFKIT_MODELS (a folder; only there when set), else in
        Models/generated above the proofkit executable, else in ./Models/generated. Each model is
        checked against its SHA-256 (the folder's manifest.json, else the digests committed in
        Models/models.sha256; the CLIP encoder may instead be named by its prompts file) before
        ONNX Runtime loads it; the mat head file (mat_head.json) is checked the same way. ONNX Runtime is found via $PROOFKIT_ORT_LIBRARY, the copy set-up
        installs in .deps/onnxruntime, or the system's libonnxruntime.so.1.

        Exit codes: 0 when every photo was judged (rejected ones too; the verdict is in the
        output), 2 with --strict when a photo was rejected, 64 usage, 65 a photo is not a usable
        image (not JPEG/PNG, truncated, empty, over the 32 MiB or 50 MP limits), 66 a photo is missing
        or is a folder, 74 a photo cannot be read, 69 the model is not installed (run
        'bash .ci/setup', or export MobileCLIP) or ONNX Runtime is missing or too old (the message
        lists the paths tried), 78 a model file or the mat head fails its SHA-256 check or is not
        the expected model. A bad photo is reported on stderr (one line naming it) and the others are still
        judged; the exit code is then the largest of the photos' codes. Model and runtime errors
        stop before any photo is judged.

        Output: one line per photo (verdict, score, head score with the default rule, brightness,
        hint); --verbose adds the top-5
        classes, the crops' scores, the decoded size and the times; with two or more photos, a
        summary line "N of M photos accepted".

        JSON (--json): one object per judged photo, then one summary object, each on its own line:
          {"file": str, "verdict": "accepted"|"rejected", "score": num, "threshold": num,
           "brightness": num, "hint": str|null, "accepted_by": "score"|"head"|"enrolment"|null,
                                              ("score": class 741 (or the CLIP share) decided)
           "engine": "lite0"|"lite0-fp32"|"clip", "rule": "class-or-head"|"class"|"clip",
           "class_score": num|null,               (the class-741 score; null for clip)
           "head_score": num|null, "head_threshold": num|null,  (null unless class-or-head)
           "crop_scores": [num],  (class score of each crop that ran, centre first: 1 to 5;
                                   all 5 with --all-crops; the CLIP share for clip)
           "enrolment_similarity": num|null,                      (only with --enrol)
           "top5": [{"index": int, "class": str, "probability": num}],   (only with --verbose;
                                                                   [] for clip)
           "decoded": {"format": "jpeg"|"png", "width": int, "height": int,
                       "stored_width": int, "stored_height": int, "scale": "1/4",
                       "orientation": int, "color_model": str},   (only with --verbose)
           "timings_ms": {"decode": num, "preprocess": num, "inference": num}}
                                                                  (only with --timings or --verbose)
          {"summary": {"photos": int, "accepted": int, "rejected": int, "failed": int,
                       "exit_code": int, "engine": str, "rule": str, "threshold": num,
                       "head_threshold": num|null, "model_sha256": str, "head_sha256": str|null,
                       "load_ms": {"read_verify": num, "session": num}}}
                                                       (load_ms only with --timings or --verbose)
        Photos that fail are not in the per-photo objects (their error is on stderr); they are
        counted in "failed".

        Examples:
          proofkit mat photo.jpg
          proofkit mat --verbose --engine lite0-fp32 IMG_2041.jpg
          proofkit mat --engine lite0 --rule class photo.jpg
          proofkit mat --json --strict morning/*.jpg
          proofkit mat --enrol my_mat.jpg --enrol my_mat_2.jpg photo.jpg
          proofkit mat --camera --max-seconds 60

        By camera (--camera [DEVICE], default the first video capture device): frames are judged
        as they come, at most 4 a second, each as a photo is; the proof passes when 3 judged
        frames in a row pass (a mat held steadily in view for half a second or more; a failing
        frame starts the run again). While nothing passes, the hint that applies is printed each
        time it changes. It ends at --max-seconds (default 60 s; rejected, with the last hint).
        Frames stay in memory: nothing is written unless --record DIR is given. Camera faults
        exit with their own codes (proofkit help exit-codes): 80 busy, 81 unplugged, 82 no frame
        for 5 s, 83 not a camera, 84 no format proofkit decodes.
        """
    static let options: [OptionSpec] =
        [
            .option(
                "engine", value: "NAME", choices: PhotoEngine.allCases.map(\.rawValue),
                help: "lite0 (int8, default), lite0-fp32 or clip"),
            .option(
                "rule", value: "NAME", choices: PhotoRule.allCases.map(\.rawValue),
                help: "class-or-head (default) or class (class 741 only); lite0 engines"),
            .option("threshold", value: "X", help: "score needed to pass, 0..1 (default 0.3; clip 0.45)"),
            .flag("verbose", short: "v", help: "add the top-5 classes, crop scores, decoded size and times"),
            .flag("json", help: "one JSON object per photo, then a summary object, on stdout"),
            .flag("strict", help: "exit 2 when a photo is rejected"),
            .flag("full-size", help: "decode JPEGs at full size, up to 8 MP (slower; default: DCT-scaled)"),
            .flag("all-crops", help: "score all five crops in one batch (default: stop at the first that passes)"),
            .option("threads", value: "N", help: "ONNX Runtime intra-op threads (default 1; 0 = one per core)"),
            .option(
                "enrol", value: "MAT_PHOTO", repeatable: true,
                help: "enrol your own mat from this photo first (repeatable)"
            ),
            .flag("timings", help: "add model load and per-photo times (JSON: timings_ms, load_ms)"),
            .option("max-seconds", value: "S", help: "with --camera: give up after S seconds (default 60)"),
        ] + CameraOptions.specs

    /// Checks the options, loads the model, then judges the photos (or watches the camera) and
    /// prints each verdict and the summary.
    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        let photos = arguments.positionals
        let live = CameraOptions.isLive(arguments)
        if live && !photos.isEmpty { throw UsageError("--camera judges the camera's frames; give no PHOTO") }
        if !live && arguments.value("max-seconds") != nil { throw UsageError("--max-seconds applies to --camera") }
        guard !photos.isEmpty || live else { throw UsageError("missing PHOTO") }
        let options = try judgeOptions(arguments)
        let verbose = arguments.has("verbose")
        let json = arguments.has("json")
        var judge = try PhotoJudge(
            options: options, store: ModelStore(environment: io.environment), prefetching: photos.first)
        let enrolPhotos = arguments.all("enrol")
        if !enrolPhotos.isEmpty { try judge.enrol(contentsOf: enrolPhotos) }
        if live { return try watch(&judge, arguments, io: io) }
        if verbose && !json { printModelLine(judge, options: options, io: io) }
        var tally = judgePhotos(photos, with: &judge, options: options, arguments, io: io)
        if tally.rejected > 0 && arguments.has("strict") && tally.worst.rawValue < ExitStatus.rejected.rawValue {
            tally.worst = .rejected
        }
        if json {
            io.printJSON(summaryJSON(tally, photos: photos.count, judge: judge, options: options, arguments))
        } else if photos.count > 1 {
            let failures = tally.failed > 0 ? " (\(tally.failed) could not be judged)" : ""
            io.print("\(tally.accepted) of \(photos.count) photos accepted\(failures)")
        }
        return tally.worst
    }

    /// The judge's options from `--engine`, `--rule`, `--threshold`, `--threads` and the flags.
    static func judgeOptions(_ arguments: ParsedArguments) throws -> PhotoJudgeOptions {
        let engineName = arguments.value("engine") ?? PhotoEngine.lite0.rawValue
        guard let engine = PhotoEngine(rawValue: engineName) else {
            throw UsageError("unknown engine '\(engineName)'; choose lite0, lite0-fp32 or clip")
        }
        let ruleName = arguments.value("rule")
        let rule = PhotoRule(rawValue: ruleName ?? PhotoRule.classOrHead.rawValue)
        guard let rule else {
            throw UsageError("unknown rule '\(ruleName ?? "")'; choose class-or-head or class")
        }
        if ruleName != nil && engine == .clip {
            throw UsageError("--rule applies to the lite0 engines, not clip")
        }
        let threshold = try arguments.double("threshold")
        if let threshold, !(0...1).contains(threshold) {
            throw UsageError("--threshold must be between 0 and 1, not \(threshold)")
        }
        let threads = try arguments.threads(default: 1, allowsZero: true)
        return PhotoJudgeOptions(
            engine: engine, threshold: threshold, fastDecode: !arguments.has("full-size"), threads: threads,
            loadsClassNames: arguments.has("verbose"), stopsAtFirstPassingCrop: !arguments.has("all-crops"),
            rule: rule)
    }

    /// The `--verbose` model line: the file, its hash, the load times and the threads.
    static func printModelLine(_ judge: borrowing PhotoJudge, options: PhotoJudgeOptions, io: CommandIO) {
        let threads = options.threads
        io.print(
            "model: \(judge.load.modelPath) (\(options.engine), sha256 \(judge.load.modelSHA256.prefix(12))…): read and checked in \(Formatting.ms(judge.load.readAndVerify)) ms, session created in \(Formatting.ms(judge.load.sessionCreation)) ms, \(threads) thread\(threads == 1 ? "" : "s")"
        )
    }

    /// What the photos came to: the worst exit status so far and the counts.
    struct Tally {
        var worst = ExitStatus.success
        var accepted = 0
        var rejected = 0
        var failed = 0
    }

    /// Judges each photo and prints its verdict; a photo that cannot be judged is reported on
    /// stderr and counted, and the others go on.
    static func judgePhotos(
        _ photos: [String], with judge: inout PhotoJudge, options: PhotoJudgeOptions, _ arguments: ParsedArguments,
        io: CommandIO
    ) -> Tally {
        let verbose = arguments.has("verbose")
        let timings = arguments.has("timings") || verbose
        let policyThreshold = judge.proof.configuration.policy.threshold
        var tally = Tally()
        for photo in photos {
            let result: PhotoProofResult
            do {
                result = try judge.judge(contentsOf: photo)
            } catch {
                io.printError("proofkit \(io.commandName ?? name): \(error.at(path: photo).description)")
                tally.failed += 1
                let status = ExitStatus(for: error.code)
                if status.rawValue > tally.worst.rawValue { tally.worst = status }
                continue
            }
            if result.judgement.verdict.isAccepted { tally.accepted += 1 } else { tally.rejected += 1 }
            if arguments.has("json") {
                io.printJSON(
                    photoJSON(
                        result, engine: options.engine, threshold: policyThreshold, judge: judge, verbose: verbose,
                        timings: timings))
            } else {
                printText(result, threshold: policyThreshold, judge: judge, verbose: verbose, timings: timings, io: io)
            }
        }
        return tally
    }

    /// The `--json` summary object: the counts, the exit code and the model's settings (its load
    /// times with `--timings`).
    static func summaryJSON(
        _ tally: Tally, photos: Int, judge: borrowing PhotoJudge, options: PhotoJudgeOptions,
        _ arguments: ParsedArguments
    ) -> JSONValue {
        var summary: [String: JSONValue] = [
            "photos": .int(photos), "accepted": .int(tally.accepted), "rejected": .int(tally.rejected),
            "failed": .int(tally.failed), "exit_code": .int(Int(tally.worst.rawValue)),
            "engine": .string(options.engine.rawValue), "rule": .string(judge.rule?.rawValue ?? "clip"),
            "threshold": .number(judge.proof.configuration.policy.threshold),
            "model_sha256": .string(judge.load.modelSHA256),
            "head_threshold": JSONValue(judge.proof.configuration.head?.acceptingThreshold),
            "head_sha256": JSONValue(judge.headSHA256),
        ]
        if arguments.has("timings") || arguments.has("verbose") {
            summary["load_ms"] = [
                "read_verify": .rounded(Formatting.msValue(judge.load.readAndVerify), places: 3),
                "session": .rounded(Formatting.msValue(judge.load.sessionCreation), places: 3),
            ]
        }
        return ["summary": .object(summary)]
    }

    static func photoJSON(
        _ result: PhotoProofResult, engine: PhotoEngine, threshold: Double, judge: borrowing PhotoJudge, verbose: Bool,
        timings: Bool
    ) -> JSONValue {
        let judgement = result.judgement
        var object: [String: JSONValue] = [
            "file": .string(result.path),
            "verdict": .string(judgement.verdict.isAccepted ? "accepted" : "rejected"),
            "score": .rounded(judgement.score, places: 6), "threshold": .number(threshold),
            "brightness": .rounded(judgement.brightness, places: 4), "hint": JSONValue(judgement.hint),
            "accepted_by": JSONValue(result.acceptedBy?.rawValue), "engine": .string(engine.rawValue),
            "crop_scores": .array(result.cropScores.map { .rounded($0, places: 6) }),
            "rule": .string(judge.rule?.rawValue ?? "clip"),
            "class_score": judge.rule == nil ? .null : .rounded(judgement.score, places: 6),
            "head_score": JSONValue(result.headProbability.map { ($0 * 1e6).rounded() / 1e6 }),
            "head_threshold": JSONValue(judge.proof.configuration.head?.acceptingThreshold),
        ]
        if judge.proof.configuration.enrolment != nil {
            object["enrolment_similarity"] = JSONValue(result.enrolmentSimilarity.map { ($0 * 1e6).rounded() / 1e6 })
        }
        if verbose {
            object["top5"] = .array(
                result.topClasses.map {
                    [
                        "index": .int($0.index), "class": .string(judge.className($0.index)),
                        "probability": .rounded($0.probability, places: 6),
                    ]
                })
            let decoded = result.decoded
            object["decoded"] = [
                "format": .string(decoded.formatName), "width": .int(decoded.width),
                "height": .int(decoded.height), "stored_width": .int(decoded.storedWidth),
                "stored_height": .int(decoded.storedHeight), "scale": .string(decoded.scale),
                "orientation": .int(decoded.orientationCode), "color_model": .string(decoded.colorModel),
            ]
        }
        if timings {
            object["timings_ms"] = [
                "decode": .rounded(Formatting.msValue(result.timings.decode), places: 3),
                "preprocess": .rounded(Formatting.msValue(result.timings.preprocess), places: 3),
                "inference": .rounded(Formatting.msValue(result.timings.inference), places: 3),
            ]
        }
        return .object(object)
    }

    static func printText(
        _ result: PhotoProofResult, threshold: Double, judge: borrowing PhotoJudge, verbose: Bool, timings: Bool,
        io: CommandIO
    ) {
        let judgement = result.judgement
        let classPasses = judgement.score >= threshold
        var facts =
            "score \(Formatting.fixed(judgement.score, 3)) \(classPasses ? ">=" : "<") \(Formatting.fixed(threshold, 2))"
        if let head = result.headProbability, let headThreshold = judge.proof.configuration.head?.acceptingThreshold {
            facts +=
                ", head \(Formatting.fixed(head, 3)) \(head >= headThreshold ? ">=" : "<") \(Formatting.fixed(headThreshold, 2))"
        }
        facts += ", brightness \(Formatting.fixed(judgement.brightness, 2))"
        if judgement.verdict.isAccepted {
            let by =
                result.acceptedBy == .enrolment
                ? ", matches your enrolled mat (cosine \(Formatting.fixed(result.enrolmentSimilarity ?? 0, 2)))" : ""
            io.print("\(result.path): accepted (\(facts)\(by))")
        } else {
            io.print("\(result.path): rejected (\(facts)): \(judgement.hint ?? "")")
        }
        if verbose {
            if !result.topClasses.isEmpty {
                io.print(
                    "  top 5: "
                        + result.topClasses.map {
                            "\(judge.className($0.index)) \(Formatting.fixed($0.probability, 3))"
                        }.joined(
                            separator: "; "))
                let labels = ["centre", "top-left", "top-right", "bottom-left", "bottom-right"]
                io.print(
                    "  crops: "
                        + result.cropScores.enumerated().map {
                            "\($0.offset < labels.count ? labels[$0.offset] : "crop \($0.offset)") \(Formatting.fixed($0.element, 3))"
                        }.joined(separator: ", "))
            }
            let d = result.decoded
            io.print(
                "  decoded \(d.width)x\(d.height) at \(d.scale) of \(d.storedWidth)x\(d.storedHeight) (\(d.colorModel), EXIF orientation \(d.orientationCode))"
            )
        }
        if timings {
            io.print(
                "  times: decode \(Formatting.ms(result.timings.decode)) ms, preprocess \(Formatting.ms(result.timings.preprocess)) ms, inference \(Formatting.ms(result.timings.inference)) ms"
            )
        }
    }

}
