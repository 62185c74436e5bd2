import Inference
import Proofkit
public import ProofkitCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
// libm only (sin, cos); system calls go through ProofkitSystem.
#if canImport(Glibc)
    import Glibc
#endif

/// A model that `proofkit bench` can measure.
///
/// Each has a file under `Models/generated/` (set-up makes all but ``clip``, which a user exports
/// with `Models/export_mobileclip.py`), and a fixed, deterministic input of the shape proofkit
/// feeds it in real use (one photo, or one 32 ms audio chunk).
public enum BenchModel: String, Sendable, Hashable, CaseIterable, Codable {
    /// EfficientNet-Lite0, static int8 (`efficientnet_lite0_int8.onnx`): the default photo model.
    case lite0
    /// EfficientNet-Lite0, fp32 (`efficientnet_lite0_fp32.onnx`).
    case lite0FP32 = "lite0-fp32"
    /// The real MobileCLIP-S0 image encoder (`mobileclip_s0_image.onnx`), when a user exported it.
    case clip
    /// The small CLIP-shaped stand-in that the models build makes for tests
    /// (`clip_standin.onnx`). Its figures say nothing about MobileCLIP's speed; it is measured
    /// only when asked for by name, and labelled as the stand-in everywhere.
    case clipStandin = "clip-standin"
    /// Silero VAD v6 (`silero_vad.onnx`): one 32 ms chunk at 16 kHz per run.
    case silero
    /// The built-in recogniser, Whisper base (`whisper_base_encoder.onnx` and
    /// `whisper_base_decoder.onnx` as the set-up installs them): one run is the encoder on one 30 s
    /// window, followed by ``whisperDecoderSteps`` decoder steps of one token each (timed apart).
    /// Measured only when named (it takes about a second per run).
    case whisper
    /// Body pose, MediaPipe's BlazePose as `proofkit pose` runs it (`pose_detection.onnx` and
    /// `pose_landmark_full.onnx`, SHA-256-checked): one run is one frame, the detector on the
    /// letterboxed image then the landmark model on its region (or on the letterboxed image when
    /// nobody is found), each timed. Measured only when named.
    case pose

    /// Decoder steps (one token each, after the 4-token prompt) timed per ``whisper`` run.
    public static let whisperDecoderSteps = 32

    /// The models `--model all` measures, in order (not the stand-in, not Whisper).
    public static let all: [BenchModel] = [.lite0, .lite0FP32, .clip, .silero]

    /// The file name under the models folder.
    public var fileName: String {
        switch self {
        case .lite0: "efficientnet_lite0_int8.onnx"
        case .lite0FP32: "efficientnet_lite0_fp32.onnx"
        case .clip: "mobileclip_s0_image.onnx"
        case .clipStandin: "clip_standin.onnx"
        case .silero: "silero_vad.onnx"
        case .whisper: "whisper_base_encoder.onnx"
        case .pose: "pose_detection.onnx"
        }
    }

    /// Whether the model judges photos (so a photo's end-to-end time applies).
    public var isPhotoModel: Bool { self != .silero && self != .whisper && self != .pose }

    /// What one run processes, for the throughput unit.
    public var unit: String {
        switch self {
        case .silero: "chunks"
        case .whisper: "windows"
        case .pose: "frames"
        default: "images"
        }
    }

    /// Seconds of audio one run covers (Silero: 512 samples at 16 kHz), for the real-time factor;
    /// `nil` for photo models.
    public var audioSecondsPerRun: Double? { self == .silero ? 512.0 / 16_000 : nil }

    /// Parses a `--model` value: one name, or `all`.
    /// - Throws: `.invalidArgument` naming the valid values.
    public static func parseList(_ text: String) throws(ProofkitError) -> [BenchModel] {
        var models: [BenchModel] = []
        for part in text.split(separator: ",").map({ String($0).trimmingSpaces() }) where !part.isEmpty {
            if part == "all" {
                models += all
            } else if let model = BenchModel(rawValue: part) {
                models.append(model)
            } else {
                throw ProofkitError(
                    .invalidArgument,
                    "unknown model '\(part)'; choose from \(allCases.map(\.rawValue).joined(separator: ", ")) or all")
            }
        }
        var seen = Set<BenchModel>()
        let unique = models.filter { seen.insert($0).inserted }
        guard !unique.isEmpty else { throw ProofkitError(.invalidArgument, "no model named") }
        return unique
    }

    /// The deterministic inputs of one run, named as the model declares them.
    ///
    /// Photo models get one `[1, 3, S, S]` image whose values follow a fixed smooth pattern in the
    /// model's input range (the convolution kernels' speed does not depend on the values; a fixed
    /// pattern keeps runs and machines comparable). Silero gets a 576-sample chunk of a tone, a zero
    /// state and the 16 kHz rate.
    /// - Parameter inputs: the model's declared inputs (``InferenceSession/inputs``).
    /// - Throws: `.modelInvalid` when the inputs are not what this model kind takes.
    func feeds(for inputs: [TensorDescription]) throws(ProofkitError) -> [String: AnyTensor] {
        switch self {
        case .whisper, .pose:
            throw ProofkitError(
                .modelInvalid, "\(rawValue) is measured by InferenceBench with its facade, not one session")
        case .silero:
            let names = Set(inputs.map(\.name))
            guard names == ["input", "state", "sr"] else {
                throw ProofkitError(.modelInvalid, "not a Silero VAD model (inputs \(inputs))")
            }
            let samples = (0..<576).map { Float(0.1 * sin(Double($0) * 2 * Double.pi * 220 / 16_000)) }
            return [
                "input": try Tensor(shape: [1, 576], scalars: samples).erased,
                "state": try Tensor<Float>(shape: [2, 1, 128], repeating: 0).erased,
                "sr": Tensor<Int64>(scalar: 16_000).erased,
            ]
        default:
            guard inputs.count == 1, let input = inputs.first, input.elementType == .float32, input.shape.count == 4
            else {
                throw ProofkitError(.modelInvalid, "not a photo model: it needs one float32 [N, 3, H, W] input")
            }
            let side = input.shape[2].size ?? (self == .clip ? 256 : 224)
            let width = input.shape[3].size ?? side
            let channels = input.shape[1].size ?? 3
            let count = channels * side * width
            // RGB/255 models (CLIP) take 0...1; Lite0 takes (RGB - 127) / 128, about -1...1.
            let low: Float = (self == .clip || self == .clipStandin) ? 0 : -1
            var values = [Float](repeating: 0, count: count)
            for index in 0..<count {
                let wave = sin(Double(index % 997) * 0.013) * cos(Double(index / width) * 0.05)
                values[index] = low + (1 - low) * Float(0.5 + 0.5 * wave)
            }
            return [input.name: try Tensor(shape: [1, channels, side, width], scalars: values).erased]
        }
    }

    /// The output(s) to fetch in each run: what proofkit reads in real use.
    func requestedOutputs(of outputs: [TensorDescription]) -> [String]? {
        let names = outputs.map(\.name)
        switch self {
        case .silero: return ["output", "stateN"].filter(names.contains)
        case .lite0, .lite0FP32: return names.contains("logits") ? ["logits"] : nil
        case .clip, .clipStandin: return names.contains("embedding") ? ["embedding"] : nil
        case .whisper, .pose: return nil
        }
    }
}
