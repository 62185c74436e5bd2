import Foundation
import ImageProof
import ProofkitCore

/// One photo end to end for `proofkit bench`: the ``PhotoProof`` pipeline (read + decode with
/// DCT scaling, preprocess, inference, score and verdict) with a model loaded once, as
/// `proofkit mat` judges a photo by default (Lite0: five crops in one batch; CLIP: one crop).
enum BenchPhotoRun {
    /// The prompt-embeddings file a CLIP encoder needs, beside the model.
    static func promptsFile(for model: BenchModel) -> String? {
        switch model {
        case .clip: "mobileclip_s0_prompts.json"
        case .clipStandin: "clip_standin_prompts.json"
        default: nil
        }
    }

    /// Judges `photo` once (the first, cold decode) and then ``BenchOptions/photoRuns`` more times.
    /// - Returns: the figures, or `nil` when the model cannot judge photos here (a CLIP encoder
    ///   without its prompt-embeddings file; see ``unavailableNote(_:)``).
    /// - Throws: the photo pipeline's errors (`.notFound`, `.decodeFailed`, ...), naming the photo.
    static func measure(_ job: BenchJob, photo: String, options: BenchOptions) throws(ProofkitError) -> BenchPhoto? {
        let configuration: PhotoProofConfiguration
        switch job.model {
        case .lite0, .lite0FP32:
            // As `proofkit mat` judges by default: DCT-scaled decode, the five-crop rule (centre
            // crop plus four zoomed corner views, one batch of 5).
            configuration = try .lite0(crops: CropRegion.fiveCrop())
        case .clip, .clipStandin:
            guard let file = promptsFile(for: job.model), FileManager.default.fileExists(atPath: options.modelsFolder + "/" + file)
            else { return nil }
            let prompts = try PhotoProof.loadPromptEmbeddings(contentsOf: options.modelsFolder + "/" + file)
            configuration = try .clip(prompts: prompts.scorer, threshold: prompts.threshold ?? MatProofPolicy.clipThreshold)
        case .silero:
            return nil
        }
        let proof = try PhotoProof(configuration: configuration)
        var model = try OnnxPhotoModel(contentsOf: options.path(of: job.model), threads: job.threads)
        let clock = ContinuousClock()
        let firstStart = clock.now
        var result = try proof.judge(contentsOf: photo, model: &model)
        let first = InferenceBench.seconds(clock.now - firstStart)
        var totals: [Double] = []
        var decode: [Double] = []
        var preprocess: [Double] = []
        var inference: [Double] = []
        for _ in 0..<max(1, options.photoRuns) {
            let start = clock.now
            result = try proof.judge(contentsOf: photo, model: &model)
            totals.append(InferenceBench.seconds(clock.now - start))
            decode.append(InferenceBench.seconds(result.timings.decode))
            preprocess.append(InferenceBench.seconds(result.timings.preprocess))
            inference.append(InferenceBench.seconds(result.timings.inference))
        }
        return BenchPhoto(
            file: photo, firstSeconds: first, total: BenchLatency(LatencyStatistics(totals)),
            decodeSeconds: LatencyStatistics(decode).p50, preprocessSeconds: LatencyStatistics(preprocess).p50,
            inferenceSeconds: LatencyStatistics(inference).p50, verdict: result.judgement.verdict.name,
            score: result.judgement.score, peakResidentBytes: ResourceUsage.peakResidentBytes())
    }

    /// Why a photo model has no photo figure.
    static func unavailableNote(_ model: BenchModel) -> String {
        "no \(promptsFile(for: model) ?? "prompt embeddings") beside the model: the photo cannot be judged with \(model.rawValue)"
    }
}
