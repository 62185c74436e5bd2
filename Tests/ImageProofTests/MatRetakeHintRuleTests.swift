import ImageProof
import ProofkitCore
import Testing

private func top(_ pairs: [(Int, Double)]) -> [RankedClass] {
    pairs.map { RankedClass(index: $0.0, probability: $0.1) }
}

@Suite("MatRetakeHint: how to retake a rejected mat photo")
struct MatRetakeHintRuleTests {
    @Test("the class list names the issue's textiles by their ImageNet index")
    func classList() {
        // handkerchief, quilt, sarong, velvet, wool, bath towel, sleeping bag, doormat, pillow, shower curtain
        for index in [591, 750, 775, 885, 911, 434, 797, 539, 721, 794, 741] {
            #expect(MatRetakeHint.textileClasses[index] != nil, "\(index)")
        }
        #expect(MatRetakeHint.textileClasses[741] == "prayer rug, prayer mat")
        #expect(MatRetakeHint.textileClasses[868] == nil, "a tray is not a textile")
        #expect(MatRetakeHint.textileClasses.keys.allSatisfy { (0..<1000).contains($0) })
    }

    @Test("textile, close, both, neither; nothing at or above the pass mark")
    func rule() {
        // The folded shared mat: quilt, prayer rug 0.113, king snake, bath towel, studio couch.
        let folded = top([(750, 0.660), (741, 0.113), (56, 0.034), (434, 0.019), (831, 0.007)])
        #expect(
            MatRetakeHint.hint(topClasses: folded, score: 0.113, threshold: 0.3)?.text == MatRetakeHint.closeFoldedHint)
        // A text overlay: sleeping bag, apron, jersey, sweatshirt, swimming trunks.
        let overlay = top([(797, 0.466), (411, 0.141), (610, 0.096), (841, 0.080), (842, 0.062)])
        let hint = MatRetakeHint.hint(topClasses: overlay, score: 0.006, threshold: 0.3)
        #expect(hint?.text == MatRetakeHint.wholeMatHint && hint?.kind == .showWholeMat)
        // Class 741 present (in the top five, or scoring 0.05 on some crop) among non-textiles.
        let room = top([(532, 0.166), (831, 0.107), (905, 0.044), (799, 0.042), (741, 0.039)])
        #expect(MatRetakeHint.hint(topClasses: room, score: 0.039, threshold: 0.3)?.text == MatRetakeHint.closeHint)
        let corner = top([(772, 0.073), (893, 0.047), (885, 0.039), (419, 0.034), (758, 0.030)])
        #expect(MatRetakeHint.hint(topClasses: corner, score: 0.082, threshold: 0.3)?.kind == .almostAMat)
        #expect(MatRetakeHint.hint(topClasses: corner, score: 0.049, threshold: 0.3) == nil)
        // Coffee: no hint. Half textile by probability is enough, less is not.
        #expect(MatRetakeHint.hint(topClasses: top([(967, 0.6), (968, 0.2)]), score: 0, threshold: 0.3) == nil)
        #expect(MatRetakeHint.hint(topClasses: top([(750, 0.3), (831, 0.3)]), score: 0, threshold: 0.3) != nil)
        #expect(MatRetakeHint.hint(topClasses: top([(750, 0.29), (831, 0.3)]), score: 0, threshold: 0.3) == nil)
        // Nothing to say about a photo that passes, or with no classes (CLIP).
        #expect(MatRetakeHint.hint(topClasses: folded, score: 0.3, threshold: 0.3) == nil)
        #expect(MatRetakeHint.hint(topClasses: [], score: 0.01, threshold: 0.3) == nil)
    }

    @Test("the hint never turns a rejection into a pass, and leaves accepted and dark judgements alone")
    func neverPasses() throws {
        let policy = try MatProofPolicy(threshold: MatProofPolicy.lite0Threshold)
        let folded = top([(750, 0.660), (741, 0.113), (56, 0.034), (434, 0.019), (831, 0.007)])
        for score in stride(from: 0.0, through: 1.0, by: 0.01) {
            for brightness in [0.1, 0.5] {
                let plain = policy.judge(score: score, brightness: brightness)
                let hinted = plain.withRetakeHint(topClasses: folded, score: score, threshold: policy.threshold)
                #expect(hinted.verdict.isAccepted == plain.verdict.isAccepted && hinted.score == plain.score)
                if plain.verdict.isAccepted || brightness < policy.darkBrightness {
                    #expect(hinted == plain)
                } else {
                    #expect(hinted.hint == MatRetakeHint.closeFoldedHint)
                    guard case .rejected(let reason) = hinted.verdict else {
                        Issue.record("accepted")
                        continue
                    }
                    #expect(reason.kind == .almostAMat && reason.detail == hinted.hint)
                }
            }
        }
    }
}
