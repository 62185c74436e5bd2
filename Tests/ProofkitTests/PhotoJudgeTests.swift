import Foundation
import ImageProof
import Inference
import Proofkit
import ProofkitCore
import ProofkitDemo
import ProofkitDemoMedia
import ProofkitSystem
import TestSupport
import Testing

private let modelsFolder = TestEnvironment.packageRoot.appendingPathComponent("Models/generated").path
private let canRunModel =
    OnnxRuntime.isAvailable
    && FileManager.default.fileExists(atPath: modelsFolder + "/efficientnet_lite0_int8.onnx")

/// Whether the models build made the ORT-format copies here (`Models/build.sh` does on set-up).
private let hasOptimizedModels =
    canRunModel
    && FileManager.default.fileExists(atPath: modelsFolder + "/efficientnet_lite0_int8.ort")

@Suite("PhotoJudge, ModelStore and the photo demo")
struct PhotoJudgeTests {
    @Test("the compiled-in digests equal Models/models.sha256")
    func committedDigests() throws {
        let text = try String(
            contentsOf: TestEnvironment.packageRoot.appendingPathComponent("Models/models.sha256"), encoding: .utf8)
        var committed: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count == 2 else { continue }
            committed[String(parts[1])] = String(parts[0])
        }
        #expect(!committed.isEmpty)
        #expect(ModelStore.committedSHA256 == committed)
    }

    @Test("the demo's embedded media are the files in Sources/CLI/ProofkitDemoMedia/Media, byte for byte")
    func embeddedMedia() throws {
        let media = TestEnvironment.packageRoot.appendingPathComponent("Sources/CLI/ProofkitDemoMedia/Media")
        for (name, bytes) in [
            ("demo_mat.jpg", DemoMedia.matJPEG), ("demo_coffee.jpg", DemoMedia.coffeeJPEG),
            ("demo_recitation.mp3", DemoMedia.recitationMP3),
        ] {
            let file = [UInt8](try Data(contentsOf: media.appendingPathComponent(name)))
            #expect(file.count > 30_000 && bytes == file, "\(name): run python3 Tests/Scripts/embed_demo_media.py")
        }
    }

    @Test("the demo's embedded pictures are the committed fixtures, byte for byte")
    func embeddedPhotos() throws {
        let photos = try PhotoProofDemo.embeddedPhotos()
        #expect(photos.map(\.name) == ["demo_mat.jpg", "demo_coffee.jpg"])
        for photo in photos {
            #expect(photo.bytes == (try ImageFixtures.bytes(photo.name)), "\(photo.name)")
        }
    }

    @Test(
        "model search: PROOFKIT_MODELS alone when set; else above the executable, then ./Models/generated when only this user could have made it"
    )
    func search() throws {
        let explicit = ModelStore(environment: ["PROOFKIT_MODELS": "/some/folder"])
        #expect(explicit.folders == ["/some/folder"] && explicit.isFromEnvironment)
        let error = try #require(throws: ProofkitError.self) { _ = try explicit.locate("efficientnet_lite0_int8.onnx") }
        #expect(error.code == .runtimeUnavailable)
        #expect(error.message.contains("PROOFKIT_MODELS=/some/folder") && error.message.contains("bash .ci/setup"))
        let executable = TestEnvironment.packageRoot.appendingPathComponent(".build/debug/proofkit").path
        try withTemporaryFolder { current in
            let local = current + "/Models/generated"
            try FileManager.default.createDirectory(atPath: local, withIntermediateDirectories: true)
            let store = ModelStore(environment: [:], executablePath: executable, currentDirectory: current)
            #expect(store.folders == [modelsFolder, local])
            let none = ModelStore(environment: [:], executablePath: nil, currentDirectory: current)
            #expect(none.folders == [local])
            // A link is not followed (it could point anywhere), and a missing folder is not listed.
            try FileManager.default.removeItem(atPath: local)
            try FileManager.default.createSymbolicLink(atPath: local, withDestinationPath: modelsFolder)
            #expect(ModelStore(environment: [:], executablePath: nil, currentDirectory: current).folders == [])
            try FileManager.default.removeItem(atPath: current + "/Models")
            #expect(ModelStore(environment: [:], executablePath: nil, currentDirectory: current).folders == [])
        }
        let fromTmp = ModelStore(environment: [:], executablePath: executable, currentDirectory: "/tmp")
        #expect(fromTmp.folders == [modelsFolder])
    }

    @Test(
        "a Models folder that another user made is not searched: it could hold a planted model and the manifest.json that vouches for it",
        .enabled(if: POSIX.effectiveUser == 0, "needs root, to make a folder of another user's"))
    func plantedModels() throws {
        try withTemporaryFolder { current in
            let local = current + "/Models/generated"
            try FileManager.default.createDirectory(atPath: local, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: current + "/bin", withIntermediateDirectories: true)
            let fromHere = ModelStore(environment: [:], executablePath: nil, currentDirectory: current)
            let beside = ModelStore(
                environment: [:], executablePath: current + "/bin/proofkit", currentDirectory: "/nonexistent")
            #expect(fromHere.folders == [local] && beside.folders == [local])
            for folder in [current + "/Models", local] {
                try FileManager.default.setAttributes([.ownerAccountID: 65534], ofItemAtPath: folder)
                #expect(
                    ModelStore(environment: [:], executablePath: nil, currentDirectory: current).folders == [],
                    "\(folder) owned by nobody")
                #expect(
                    ModelStore(
                        environment: [:], executablePath: current + "/bin/proofkit", currentDirectory: "/nonexistent"
                    ).folders == [])
                try FileManager.default.setAttributes([.ownerAccountID: 0], ofItemAtPath: folder)
            }
        }
    }

    @Test("the expected digest comes from manifest.json, else the committed table")
    func expectedDigest() throws {
        try withTemporaryFolder { folder in
            let model = folder + "/efficientnet_lite0_fp32.onnx"
            #expect(
                try ModelStore.expectedSHA256(ofFileAt: model)
                    == ModelStore.committedSHA256["efficientnet_lite0_fp32.onnx"])
            #expect(try ModelStore.expectedSHA256(ofFileAt: folder + "/unknown.onnx") == nil)
            #expect(try ModelsManifest.load(besideFileAt: model) == nil)
            let digest = String(repeating: "ab", count: 32)
            try
                #"{"format": "proofkit-models-manifest", "version": 1, "files": {"efficientnet_lite0_fp32.onnx": {"sha256": "\#(digest.uppercased())", "bytes": 1}}}"#
                .write(toFile: folder + "/manifest.json", atomically: true, encoding: .utf8)
            #expect(try ModelStore.expectedSHA256(ofFileAt: model) == digest)
            let manifest = try #require(try ModelsManifest.load(besideFileAt: model))
            #expect(manifest.entries.count == 1 && manifest.entries["efficientnet_lite0_fp32.onnx"]?.sha256 == digest)
            #expect(manifest.entries["efficientnet_lite0_fp32.onnx"]?.cpu == nil)
            #expect(
                ModelStore.expectedSHA256(ofFileAt: folder + "/silero_vad.onnx", manifest: manifest)
                    == ModelStore.committedSHA256["silero_vad.onnx"])
            try "not json".write(toFile: folder + "/manifest.json", atomically: true, encoding: .utf8)
            #expect(throws: ProofkitError.self) { _ = try ModelStore.expectedSHA256(ofFileAt: model) }
        }
    }

    @Test("PhotoJudge judges files and bytes alike, with one session", .enabled(if: canRunModel))
    func judge() throws {
        var judge = try PhotoJudge(
            options: PhotoJudgeOptions(), store: ModelStore(environment: ["PROOFKIT_MODELS": modelsFolder]))
        #expect(judge.engine == .lite0 && judge.classNames.count == 1000)
        let fromFile = try judge.judge(contentsOf: ImageFixtures.path("demo_mat.jpg"))
        let fromBytes = try judge.judge(bytes: try ImageFixtures.bytes("demo_mat.jpg"), name: "demo_mat.jpg")
        #expect(fromFile.judgement.verdict.isAccepted)
        #expect(fromFile.judgement.score == fromBytes.judgement.score)
        #expect(fromFile.cropScores.count == 1)  // it passes on the centre crop, so the others do not run
        #expect(judge.className(fromFile.topClasses[0].index) == "prayer rug, prayer mat")
        let folderError = try #require(throws: ProofkitError.self) { _ = try judge.judge(contentsOf: modelsFolder) }
        #expect(folderError.code == .notFound)
    }

    @Test("the committed mat head: 1280 weights and a threshold; its digest is compiled in and is the installed copy's")
    func committedHead() throws {
        let path = TestEnvironment.packageRoot.appendingPathComponent("Models/mat_head.json").path
        let head = try PhotoProof.loadHead(contentsOf: path)
        #expect(head.dimension == 1280)
        let threshold = try #require(head.threshold)
        #expect(threshold > 0.5 && threshold < 1)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(
            head == (try JSONDecoder().decode(LogisticHead.self, from: Data(bytes))), "the reader and Codable agree")
        #expect(ModelStore.committedSHA256["mat_head.json"] == SHA256.hexDigest(of: bytes))
        let installed = modelsFolder + "/mat_head.json"
        if FileManager.default.fileExists(atPath: installed) {
            #expect(
                [UInt8](try Data(contentsOf: URL(fileURLWithPath: installed))) == bytes,
                "Models/generated has another head: run Models/build.sh")
            #expect(try ModelStore.expectedSHA256(ofFileAt: installed) == SHA256.hexDigest(of: bytes))
        }
    }

    @Test(
        "PhotoJudge: the default rule loads the head and scores it on every crop that ran; --rule class loads none",
        .enabled(if: canRunModel))
    func headRule() throws {
        let store = ModelStore(environment: ["PROOFKIT_MODELS": modelsFolder])
        var options = PhotoJudgeOptions(loadsClassNames: false, stopsAtFirstPassingCrop: false)
        var judge = try PhotoJudge(options: options, store: store)
        #expect(judge.rule == .classOrHead && judge.headSHA256 == ModelStore.committedSHA256["mat_head.json"])
        let head = try #require(judge.proof.configuration.head)
        let coffee = try judge.judge(contentsOf: ImageFixtures.path("demo_coffee.jpg"))
        #expect(coffee.cropScores.count == 5)
        let probability = try #require(coffee.headProbability)
        #expect(probability < head.acceptingThreshold && !coffee.judgement.verdict.isAccepted)
        options.rule = .classScore
        var seed = try PhotoJudge(options: options, store: store)
        #expect(seed.rule == .classScore && seed.headSHA256 == nil && seed.proof.configuration.head == nil)
        let same = try seed.judge(contentsOf: ImageFixtures.path("demo_coffee.jpg"))
        #expect(same.cropScores == coffee.cropScores && same.headProbability == nil)
    }

    @Test(
        "this CPU's fingerprint is the one the models build (Python) wrote into manifest.json",
        .enabled(if: hasOptimizedModels))
    func cpuFingerprint() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: modelsFolder + "/manifest.json"))
        let files = try #require(
            (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["files"] as? [String: Any])
        let entry = try #require(files["efficientnet_lite0_int8.ort"] as? [String: Any])
        #expect(entry["cpu"] as? String == ModelStore.cpuFingerprint)
        #expect(ModelStore.cpuFingerprint.hasPrefix(MachineInfo.current().architecture + "-"))
    }

    @Test(
        "an ORT-format session leaves little of its mapped model resident once made; runs map back what they read",
        .enabled(if: hasOptimizedModels))
    func ortModelPagesDropped() throws {
        let path = modelsFolder + "/efficientnet_lite0_int8.ort"
        let manifest = try #require(try ModelsManifest.load(besideFileAt: path))
        let digest = try #require(manifest.entries["efficientnet_lite0_int8.ort"]?.sha256)
        /// Resident KiB of this process's mappings of the file (from /proc/self/smaps).
        func residentKiB() throws -> Int {
            let smaps = try String(contentsOfFile: "/proc/self/smaps", encoding: .utf8)
            var total = 0
            var inFile = false
            for line in smaps.split(separator: "\n") {
                if let first = line.first, first.isHexDigit, line.contains("-") {
                    inFile = line.hasSuffix(path)
                } else if inFile, line.hasPrefix("Rss:") {
                    total += Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
                }
            }
            return total
        }
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        var session = try InferenceSession(
            ortFormatContentsOf: path, expectedSHA256: digest, options: .init(graphOptimization: .disabled))
        // The SHA-256 check and ORT read every page; afterwards (almost) none stay mapped.
        let afterCreation = try residentKiB()
        #expect(afterCreation * 1024 < size / 10, "\(afterCreation) KiB of \(size / 1024) KiB resident")
        let input = try Tensor<Float>(shape: [1, 3, 224, 224], repeating: 0.1)
        let first = try session.run([session.inputs[0].name: input])
        let second = try session.run([session.inputs[0].name: input])
        #expect(try first.tensor("logits", as: Float.self).scalars == second.tensor("logits", as: Float.self).scalars)
        #expect(try residentKiB() * 1024 <= size, "the mapping never holds more than the file")
    }

    @Test(
        "PhotoJudge loads the ORT-format copy made for this machine, with the .onnx's scores; one made elsewhere is passed over; a damaged one is refused",
        .enabled(if: hasOptimizedModels), arguments: [PhotoEngine.lite0, .lite0FP32])
    func optimizedModel(engine: PhotoEngine) throws {
        let photos = ["demo_mat.jpg", "demo_coffee.jpg", "dark_coffee.jpg", "large.jpg"].map { ImageFixtures.path($0) }
        func scores(_ folder: String) throws -> (path: String, scores: [[Double]]) {
            var options = PhotoJudgeOptions(engine: engine)
            options.stopsAtFirstPassingCrop = false
            var judge = try PhotoJudge(
                options: options, store: ModelStore(environment: ["PROOFKIT_MODELS": folder]))
            var all: [[Double]] = []
            for photo in photos { all.append(try judge.judge(contentsOf: photo).cropScores) }
            return (judge.load.modelPath, all)
        }
        let fast = try scores(modelsFolder)
        #expect(fast.path == modelsFolder + "/" + engine.optimizedModelFile!)

        // The same folder, but its manifest says the .ort copies were made on another CPU.
        return try withTemporaryFolder { folder in
            for name in [engine.modelFile, engine.optimizedModelFile!, "imagenet_classes.txt", "mat_head.json"] {
                try FileManager.default.copyItem(atPath: modelsFolder + "/" + name, toPath: folder + "/" + name)
            }
            let manifest = try String(contentsOfFile: modelsFolder + "/manifest.json", encoding: .utf8)
            try manifest.replacingOccurrences(of: ModelStore.cpuFingerprint, with: "other-0000000000000000")
                .write(toFile: folder + "/manifest.json", atomically: true, encoding: .utf8)
            let portable = try scores(folder)
            #expect(portable.path == folder + "/" + engine.modelFile)
            for (a, b) in zip(fast.scores, portable.scores) {
                #expect(a.count == b.count)
                for (x, y) in zip(a, b) { #expect(abs(x - y) < 1e-5, "\(x) vs \(y)") }
            }

            // Back to this CPU, with one byte of the .ort changed: refused like any damaged model.
            try manifest.write(toFile: folder + "/manifest.json", atomically: true, encoding: .utf8)
            let ort = folder + "/" + engine.optimizedModelFile!
            var bytes = try Data(contentsOf: URL(fileURLWithPath: ort))
            bytes[bytes.count / 2] ^= 0x5A
            try bytes.write(to: URL(fileURLWithPath: ort))
            let damaged = try #require(throws: ProofkitError.self) { _ = try scores(folder) }
            #expect(damaged.code == .modelInvalid)
            #expect(damaged.path == ort)
        }
    }
}
