import ImageProof
import Proofkit
package import ProofkitCore
import ProofkitDemoMedia
package import ProofkitSystem

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One photo end to end for `proofkit bench`: read + decode, preprocess, inference, score and
/// verdict, with the model loaded once.
///
/// For `lite0`, `lite0-fp32` and `clip` this is ``PhotoJudge`` with its default options, the very
/// pipeline `proofkit mat` runs (DCT-scaled decode, Lite0's five-crop rule stopping at the first
/// passing crop, the model's SHA-256 checked at load). The CLIP stand-in, which `proofkit mat`
/// does not offer, goes through ``PhotoProof`` with its prompts file.
enum BenchPhotoRun {
    /// The engine `proofkit mat` uses for a bench model, if any.
    static func engine(for model: BenchModel) -> PhotoEngine? {
        switch model {
        case .lite0: .lite0
        case .lite0FP32: .lite0FP32
        case .clip: .clip
        case .clipStandin, .silero, .whisper, .pose: nil
        }
    }

    /// Judges `photo` once (the first, cold decode) and then ``BenchOptions/photoRuns`` more times.
    /// - Returns: the figures, or `nil` for a model that does not judge photos here (Silero, or
    ///   the stand-in without its prompts file; see ``unavailableNote(_:)``).
    /// - Throws: the photo pipeline's errors (`.notFound`, `.decodeFailed`, ...) naming the photo,
    ///   and `.modelInvalid` when the model's digest does not match.
    static func measure(_ job: BenchJob, photo: String, options: BenchOptions) throws(ProofkitError) -> BenchPhoto? {
        if let engine = engine(for: job.model) {
            var judge = try PhotoJudge(
                options: PhotoJudgeOptions(engine: engine, threads: job.threads, loadsClassNames: false),
                store: ModelStore(environment: [ModelStore.environmentVariable: options.modelsFolder]))
            return try timed(photo: photo, runs: options.photoRuns) { () throws(ProofkitError) in
                try judge.judge(contentsOf: photo)
            }
        }
        guard job.model == .clipStandin else { return nil }
        let promptsPath = options.modelsFolder + "/clip_standin_prompts.json"
        guard case .success = POSIX.status(promptsPath) else { return nil }
        let prompts = try PhotoProof.loadPromptEmbeddings(contentsOf: promptsPath)
        let proof = try PhotoProof(
            configuration: try .clip(
                prompts: prompts.scorer, threshold: prompts.threshold ?? MatProofPolicy.clipThreshold))
        var model = try OnnxPhotoModel(contentsOf: options.path(of: job.model), threads: job.threads)
        return try timed(photo: photo, runs: options.photoRuns) { () throws(ProofkitError) in
            try proof.judge(contentsOf: photo, model: &model)
        }
    }

    /// Runs `judge` once, then `runs` more times, timing each whole call.
    static func timed(photo: String, runs: Int, _ judge: () throws(ProofkitError) -> PhotoProofResult)
        throws(ProofkitError) -> BenchPhoto
    {
        let clock = ContinuousClock()
        let firstStart = clock.now
        var result = try judge()
        let first = InferenceBench.seconds(clock.now - firstStart)
        var totals: [Double] = []
        var decode: [Double] = []
        var preprocess: [Double] = []
        var inference: [Double] = []
        for _ in 0..<max(1, runs) {
            let start = clock.now
            result = try judge()
            totals.append(InferenceBench.seconds(clock.now - start))
            decode.append(InferenceBench.seconds(result.timings.decode))
            preprocess.append(InferenceBench.seconds(result.timings.preprocess))
            inference.append(InferenceBench.seconds(result.timings.inference))
        }
        return BenchPhoto(
            file: photo, firstSeconds: first, total: LatencyStatistics(totals),
            decodeSeconds: LatencyStatistics(decode).p50, preprocessSeconds: LatencyStatistics(preprocess).p50,
            inferenceSeconds: LatencyStatistics(inference).p50, verdict: result.judgement.verdict.name,
            score: result.judgement.score, peakResidentBytes: ResourceUsage.peakResidentBytes())
    }

    /// Why a photo model has no photo figure.
    static func unavailableNote(_ model: BenchModel) -> String {
        "no clip_standin_prompts.json beside the model: the photo cannot be judged with \(model.rawValue)"
    }
}

/// The photo `proofkit bench` judges when no `--image` is given: the rendered prayer-mat picture
/// that `proofkit demo` shows (embedded in the binary: ``DemoMedia/photos``).
public enum BenchDemoPhoto {
    /// How reports name it.
    public static let label = "demo_mat.jpg (embedded demo photo)"

    /// Writes the demo photo to a new file in the temporary folder.
    /// - Returns: the file's path, in a new temporary folder of this user's that the caller removes.
    /// - Throws: `.internal` when the embedded photo is missing, `.io` when it cannot be written.
    package static func writeTemporaryFile() throws(ProofkitError) -> (path: String, folder: TemporaryFolder) {
        guard let photo = DemoMedia.photos.first(where: { $0.showsMat }) else {
            throw ProofkitError(.internal, "the embedded demo photo is missing")
        }
        let folder = try TemporaryFolder(prefix: "proofkit-bench")
        do throws(ProofkitError) {
            return (try folder.write(photo.bytes, named: photo.name), folder)
        } catch {
            folder.remove()
            throw error
        }
    }
}
