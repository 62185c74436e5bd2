import AudioIO
public import Proofkit
public import ProofkitCore
import ProofkitDemoMedia
internal import ProofkitSystem

extension AlarmSound {
    /// What ``demo(output:)`` did.
    public struct DemoResult: Sendable {
        /// The embedded recording the alarm was made from.
        public var sourceTitle: String
        /// The trim, with its check.
        public var trim: TrimResult
    }

    /// The alarm-sound part of `proofkit demo`: prepares an alarm sound from the recitation
    /// embedded in proofkit (a public-domain adhan excerpt, MP3), with leading silence dropped
    /// and the peak normalised to -1 dBFS, writes it to `output` as CAF, and checks it.
    ///
    /// Needs nothing but proofkit itself (no network, no data files). The embedded MP3 is
    /// written to a hidden temporary file beside `output` for decoding and removed afterwards.
    /// - Parameter output: the CAF to write (replaced if it exists).
    /// - Returns: the source and the trim result (with its check).
    /// - Throws: `.io` when `output` cannot be written; anything ``trim(input:output:options:)`` throws.
    public static func demo(output: String) throws(ProofkitError) -> DemoResult {
        let input = try ScratchFile.write(DemoMedia.recitationMP3, beside: output)
        defer { ScratchFile.remove(input) }
        var options = TrimOptions()
        options.trimsLeadingSilence = true
        options.normalizePeakDBFS = -1
        var result = try trim(input: input, output: output, options: options)
        result.input = "embedded demo recitation"
        return DemoResult(sourceTitle: DemoMedia.recitationTitle, trim: result)
    }
}
