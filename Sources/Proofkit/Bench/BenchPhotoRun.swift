import ProofkitCore

/// The photo end to end (placeholder until the photo pipeline is in main).
enum BenchPhotoRun {
    static func measure(_ job: BenchJob, photo: String, options: BenchOptions) throws(ProofkitError) -> BenchPhoto? {
        nil
    }

    static func unavailableNote(_ model: BenchModel) -> String {
        "the photo pipeline is not in this build"
    }
}
