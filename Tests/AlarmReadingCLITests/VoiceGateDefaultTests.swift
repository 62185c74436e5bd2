import Foundation
import Inference
import TestSupport
import Testing

/// Issue 14: the Silero model is checked against the manifest like every other model,
/// `PROOFKIT_MODELS` is honoured for it, and the default gate is Silero when it is installed
/// (else the energy gate, saying so). Runs the built `proofkit` on real speech.
@Suite(
    "voice: Silero integrity and the default gate",
    .enabled(
        if: TestEnvironment.hasProofkitBinary && VoiceProofE2E.hasSilero,
        "needs the proofkit binary, ONNX Runtime and Models/generated/silero_vad.onnx"), .offThePool)
struct VoiceGateDefaultTests {
    static let generated = TestEnvironment.packageRoot.appendingPathComponent("Models/generated").path
    let speech = TestEnvironment.fixture("speech_en_ljspeech_16k.wav")

    /// A models folder with a copy of the set-up's Silero model and manifest; `flipping` flips one
    /// bit of the model in the middle (a damaged or tampered file of the same size).
    static func modelsFolder(flipping: Bool) throws -> String {
        let folder = try TestFolder.make()
        var model = try Data(contentsOf: URL(fileURLWithPath: generated + "/silero_vad.onnx"))
        if flipping { model[model.count / 2] ^= 0x01 }
        try model.write(to: URL(fileURLWithPath: folder + "/silero_vad.onnx"))
        try FileManager.default.copyItem(atPath: generated + "/manifest.json", toPath: folder + "/manifest.json")
        return folder
    }

    static func json(_ text: String) throws -> [String: Any] {
        let line = try #require(text.split(separator: "\n").last)
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test("a byte-flipped Silero model is refused with exit 78, in every mode that loads it and by default")
    func flippedModel() throws {
        let folder = try Self.modelsFolder(flipping: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for extra in [[], ["--vad", "silero"], ["--vad", "both"]] {
            let run = try TestEnvironment.runProofkit(
                ["voice", speech, "--json"] + extra, environment: ["PROOFKIT_MODELS": folder])
            #expect(run.status == 78, "\(extra): \(run.stderr)")
            #expect(run.stdout.isEmpty, "no partial output")
            #expect(run.stderr.contains("SHA-256"), "\(run.stderr)")
        }
        // The explicit override is checked against the same digest.
        let override = try TestEnvironment.runProofkit(
            ["voice", speech, "--vad", "silero"], environment: ["PROOFKIT_SILERO_MODEL": folder + "/silero_vad.onnx"])
        #expect(override.status == 78, "\(override.stderr)")
        // So is another valid ONNX model put in its place (a stand-in that would say anything).
        let other = try TestEnvironment.runProofkit(
            ["voice", speech, "--vad", "silero"],
            environment: ["PROOFKIT_SILERO_MODEL": TestEnvironment.fixture("onnx/add_relu.onnx")])
        #expect(other.status == 78, "\(other.stderr)")
        #expect(other.stderr.contains("SHA-256"))
        // The energy gate needs no model: it still runs.
        let energy = try TestEnvironment.runProofkit(
            ["voice", speech, "--vad", "energy", "--json"], environment: ["PROOFKIT_MODELS": folder])
        #expect(energy.status == 0, "\(energy.stderr)")
    }

    @Test(
        "a damaged Whisper model exits 78 with no output, on speech and on silence (it loads while the recording is read)",
        .enabled(if: FileManager.default.fileExists(atPath: generated + "/whisper_base_decoder.onnx")))
    func damagedWhisper() throws {
        let folder = try Self.modelsFolder(flipping: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for name in ["whisper_tokenizer.json", "whisper_config.json", "whisper_base_decoder.onnx"] {
            try FileManager.default.copyItem(atPath: Self.generated + "/" + name, toPath: folder + "/" + name)
        }
        var encoder = try Data(contentsOf: URL(fileURLWithPath: Self.generated + "/whisper_base_encoder.onnx"))
        encoder[encoder.count / 2] ^= 0x01
        try encoder.write(to: URL(fileURLWithPath: folder + "/whisper_base_encoder.onnx"))
        // 2 s of digital silence, 16-bit mono 16 kHz: no voice, so the recogniser never runs.
        var silence = Data("RIFF".utf8)
        let bytes = 2 * 16_000 * 2
        withUnsafeBytes(of: UInt32(36 + bytes).littleEndian) { silence.append(contentsOf: $0) }
        silence.append(contentsOf: Data("WAVEfmt ".utf8))
        for value: UInt32 in [16, 0x0001_0001, 16_000, 32_000, 0x0010_0002] {  // PCM, mono, 2-byte frames
            withUnsafeBytes(of: value.littleEndian) { silence.append(contentsOf: $0) }
        }
        silence.append(contentsOf: Data("data".utf8))
        withUnsafeBytes(of: UInt32(bytes).littleEndian) { silence.append(contentsOf: $0) }
        silence.append(Data(count: bytes))
        try silence.write(to: URL(fileURLWithPath: folder + "/silence.wav"))
        for recording in [speech, folder + "/silence.wav"] {
            let run = try TestEnvironment.runProofkit(
                ["voice", recording, "--json"], environment: ["PROOFKIT_MODELS": folder])
            #expect(run.status == 78, "\(recording): \(run.stderr)")
            #expect(run.stdout.isEmpty, "no partial output")
            #expect(run.stderr.contains("SHA-256"), "\(run.stderr)")
        }
    }

    @Test(
        "PROOFKIT_MODELS is honoured: the model there is used; an empty folder falls back to the energy gate and says so"
    )
    func modelsFolderHonoured() throws {
        let good = try Self.modelsFolder(flipping: false)
        let empty = try TestFolder.make()
        defer {
            try? FileManager.default.removeItem(atPath: good)
            try? FileManager.default.removeItem(atPath: empty)
        }
        let used = try Self.json(
            TestEnvironment.runProofkit(
                ["voice", speech, "--json"], environment: ["PROOFKIT_MODELS": good]
            ).stdout)
        #expect(used["vad"] as? String == "silero")
        #expect(used["vad_fallback"] is NSNull)
        #expect(used["vad_veto"] as? Bool == true, "Silero's segments are checked by the veto at 16 kHz")
        let unchecked = try Self.json(
            TestEnvironment.runProofkit(
                ["voice", speech, "--json", "--no-veto"], environment: ["PROOFKIT_MODELS": good]
            ).stdout)
        #expect(unchecked["vad_veto"] as? Bool == false)
        #expect(
            unchecked["voiced_seconds"] as? Double == used["voiced_seconds"] as? Double, "a reading keeps its segments")
        let fallback = try TestEnvironment.runProofkit(
            ["voice", speech, "--json"], environment: ["PROOFKIT_MODELS": empty])
        #expect(fallback.status == 0)
        let object = try Self.json(fallback.stdout)
        #expect(object["vad"] as? String == "energy")
        #expect((object["vad_fallback"] as? String)?.contains("PROOFKIT_MODELS") == true, "\(object)")
        // The floor is tracked either way.
        #expect(object["noise_floor_dbfs"] is Double || object["noise_floor_dbfs"] is Int)
        // Text output names the gate that decided.
        let text = try TestEnvironment.runProofkit(["voice", speech], environment: ["PROOFKIT_MODELS": empty])
        #expect(text.stdout.contains("gate: energy (Silero unavailable"), "\(text.stdout)")
        let silero = try TestEnvironment.runProofkit(["voice", speech], environment: ["PROOFKIT_MODELS": good])
        #expect(
            silero.stdout.contains("gate: silero (segments that do not look like speech left out"), "\(silero.stdout)")
        // An explicit --vad silero without the model still exits 69.
        let explicit = try TestEnvironment.runProofkit(
            ["voice", speech, "--vad", "silero"], environment: ["PROOFKIT_MODELS": empty])
        #expect(explicit.status == 69)
    }

    @Test("--plot marks the gate that decided: Silero's and the energy gate's lanes, and the decided regions")
    func plotShowsDecider() throws {
        try withTemporaryFolder { folder in
            let run = try TestEnvironment.runProofkit(["voice", speech, "--plot", folder + "/levels.svg"])
            #expect(run.status == 0, "\(run.stderr)")
            let svg = try String(contentsOfFile: folder + "/levels.svg", encoding: .utf8)
            #expect(svg.contains("voiced (Silero decided)"))
            #expect(svg.contains("Silero: voice") && svg.contains("energy gate: voice"))
            let energy = try TestEnvironment.runProofkit([
                "voice", speech, "--vad", "energy", "--plot", folder + "/energy.svg",
            ])
            #expect(energy.status == 0)
            let energySVG = try String(contentsOfFile: folder + "/energy.svg", encoding: .utf8)
            #expect(energySVG.contains("voiced (energy gate decided)"))
            #expect(!energySVG.contains("Silero: voice"))
            #expect(energySVG.contains("looks like speech (veto)"))
        }
    }

    /// A real noise fixture looped to 15 s at the evaluation's noise-alone level (-36 dBFS RMS),
    /// written into `folder`.
    static func noiseAlone(_ fixture: String, in folder: String) throws -> String {
        let path = folder + "/" + (fixture as NSString).lastPathComponent
        try TestAudio.fixture(fixture).looped(toSeconds: 15).scaled(toRMS: -36).writeWAV(to: path)
        return path
    }

    /// `proofkit voice PATH --recognizer none --json` with `extra`, as parsed JSON.
    static func voiceJSON(_ path: String, _ extra: [String] = []) throws -> [String: Any] {
        try json(TestEnvironment.runProofkit(["voice", path, "--recognizer", "none", "--json"] + extra).stdout)
    }

    @Test("--vad energy leaves out a real mosquito's buzz (the veto); --no-veto counts it; the output says which")
    func energyVeto() throws {
        try withTemporaryFolder { folder in
            // The mosquito (openclonk-data, CC0).
            let path = try Self.noiseAlone("audio/veto_mosquito.wav", in: folder)
            let vetoed = try Self.voiceJSON(path, ["--vad", "energy"])
            let alone = try Self.voiceJSON(path, ["--vad", "energy", "--no-veto"])
            #expect(vetoed["vad_veto"] as? Bool == true && alone["vad_veto"] as? Bool == false)
            let kept = try #require(vetoed["voiced_seconds"] as? Double)
            let counted = try #require(alone["voiced_seconds"] as? Double)
            #expect(kept <= 1.0 && counted > 2, "with the veto \(kept) s, without \(counted) s")
            // The veto's own stretches are reported (their overlap with the energy gate's is what counts);
            // Silero did not run.
            let stretches = try #require(vetoed["veto_segments"] as? [[Double]])
            #expect(stretches.reduce(0) { $0 + $1[1] - $1[0] } <= 1.0, "\(stretches)")
            #expect(vetoed["silero_segments"] is NSNull && vetoed["silero_likeness"] is NSNull)
            let text = try TestEnvironment.runProofkit(["voice", path, "--vad", "energy", "--recognizer", "none"])
            #expect(
                text.stdout.contains("gate: energy (frames that do not look like speech left out)"), "\(text.stdout)")
        }
    }

    @Test("--vad energy names runs on a clock's beat (a real word every 2 s) and never counts them; --plot draws them")
    func periodicTrains() throws {
        try withTemporaryFolder { folder in
            let path = folder + "/beat.wav"
            let room = try TestAudio.fixture("noise_ac_16k.wav").looped(toSeconds: 15).scaled(toRMS: -50)
            try room.mixing(try TestAudio.spokenWord(), at: [1, 3, 5, 7, 9, 11, 13]).writeWAV(to: path)
            let energy = try Self.voiceJSON(path, ["--vad", "energy", "--plot", folder + "/beat.svg"])
            let trains = try #require(energy["periodic_segments"] as? [[Double]])
            #expect(trains.count == 7 && zip(trains, [1, 3, 5, 7, 9, 11, 13]).allSatisfy { abs($0[0] - $1) < 0.15 })
            #expect(energy["voiced_seconds"] as? Double == 0 && energy["voiced_segments"] as? [[Double]] == [])
            let svg = try String(contentsOfFile: folder + "/beat.svg", encoding: .utf8)
            #expect(svg.contains("clock-like (not voice)"))
            #expect(try Self.voiceJSON(path)["periodic_segments"] is NSNull, "Silero decides: no trains")
        }
    }

    @Test("the default gate (Silero) drops a segment of real bubbling heard alone; --no-veto counts it")
    func sileroSegmentVeto() throws {
        try withTemporaryFolder { folder in
            // A fermenter's bubbles (widelands-data, CC0): Silero takes half a second of it for speech.
            let path = try Self.noiseAlone("audio/veto_bubbles.wav", in: folder)
            let checked = try Self.voiceJSON(path)
            let unchecked = try Self.voiceJSON(path, ["--no-veto"])
            #expect(checked["vad"] as? String == "silero" && unchecked["vad"] as? String == "silero")
            let kept = try #require(checked["voiced_seconds"] as? Double)
            let counted = try #require(unchecked["voiced_seconds"] as? Double)
            #expect(kept == 0 && counted >= 0.25, "with the veto \(kept) s, without \(counted) s")
            // Silero's own segments are reported with the veto's likeness over each, which is under the
            // segment threshold (0.2); without the veto there is no likeness.
            let found = try #require(checked["silero_segments"] as? [[Double]])
            let likeness = try #require(checked["silero_likeness"] as? [Double])
            #expect(abs(found.reduce(0) { $0 + $1[1] - $1[0] } - counted) < 0.01, "\(found)")
            #expect(likeness.count == found.count && likeness.allSatisfy { $0 < 0.2 }, "\(likeness)")
            #expect(checked["veto_segments"] is [[Double]] && checked["voiced_segments"] as? [[Double]] == [])
            #expect(unchecked["silero_likeness"] is NSNull && unchecked["veto_segments"] is NSNull)
            #expect(unchecked["silero_segments"] as? [[Double]] == unchecked["voiced_segments"] as? [[Double]])
        }
    }
}
