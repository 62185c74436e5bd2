import Foundation
import ImageProof
import ProofkitCore
import Testing

/// 1000 logits where class `index` has probability about `probability` and the rest share the remainder.
private func logits(class index: Int = ClassifierReading.prayerRugClass, probability: Double) -> [Float] {
    // softmax: p = e^x / (e^x + 999), so x = log(999 p / (1 - p)).
    var values = [Float](repeating: 0, count: 1000)
    values[index] = Float(log(999 * probability / (1 - probability)))
    return values
}

@Suite("PhotoVerdictRules: the photo proof's verdict from a model's output")
struct PhotoVerdictRulesTests {
    static let mat = PhotoScorer.imageNetClass(ClassifierReading.prayerRugClass)

    @Test("one crop at a time only when asked, with the class scorer, the maximum and more than one crop")
    func oneAtATime() throws {
        let policy = try MatProofPolicy(threshold: 0.3)
        let rules = PhotoVerdictRules(scorer: Self.mat, cropCount: 5, policy: policy, stopsAtFirstPassingCrop: true)
        #expect(rules.runsCropsOneAtATime)
        var mean = rules
        mean.aggregation = .mean
        #expect(!mean.runsCropsOneAtATime)
        var single = rules
        single.cropCount = 1
        #expect(!single.runsCropsOneAtATime)
        #expect(!PhotoVerdictRules(scorer: Self.mat, cropCount: 5, policy: policy).runsCropsOneAtATime)
        // A crop at the threshold ends the run; one below goes on; one without the class ends it.
        #expect(rules.endsAfter(crop: PhotoModelOutput(batch: 1, logits: logits(probability: 0.31))))
        #expect(!rules.endsAfter(crop: PhotoModelOutput(batch: 1, logits: logits(probability: 0.2))))
        #expect(rules.endsAfter(crop: PhotoModelOutput(batch: 1, logits: [0, 0])))
    }

    @Test("the maximum over the crops decides; fewer crops than asked only when running one at a time")
    func judge() throws {
        let policy = try MatProofPolicy(threshold: 0.3)
        let rules = PhotoVerdictRules(scorer: Self.mat, cropCount: 2, policy: policy)
        let output = PhotoModelOutput(batch: 2, logits: logits(probability: 0.1) + logits(probability: 0.6))
        let verdict = try rules.judge(output, brightness: 0.5)
        #expect(verdict.judgement.verdict.isAccepted && verdict.acceptedBy == .score)
        #expect(verdict.cropScores.count == 2 && abs(verdict.cropScores[1] - 0.6) < 1e-4)
        // The top classes are the first crop's: 741 at 0.1 leads 999 classes at 0.0009 each.
        #expect(verdict.topClasses.count == 5 && verdict.topClasses.first?.index == ClassifierReading.prayerRugClass)
        let low = PhotoModelOutput(batch: 2, logits: logits(probability: 0.1) + logits(probability: 0.2))
        #expect(!(try rules.judge(low, brightness: 0.5)).judgement.verdict.isAccepted)
        let first = PhotoModelOutput(batch: 1, logits: logits(probability: 0.6))
        #expect(throws: ProofkitError.self) { _ = try rules.judge(first, brightness: 0.5) }
        var early = rules
        early.stopsAtFirstPassingCrop = true
        #expect(try early.judge(first, brightness: 0.5).judgement.verdict.isAccepted)
        #expect(throws: ProofkitError.self) {
            _ = try rules.judge(PhotoModelOutput(batch: 2, logits: [Float](repeating: 0, count: 200)), brightness: 0.5)
        }
    }
}
