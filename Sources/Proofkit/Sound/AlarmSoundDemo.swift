public import ProofkitCore
import AudioIO

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
        guard let bytes = Base64.decode(DemoRecitation.base64) else {
            throw ProofkitError(.internal, "the embedded demo recitation is corrupt")
        }
        let input = try ScratchFile.write(bytes, beside: output)
        defer { ScratchFile.remove(input) }
        var options = TrimOptions()
        options.trimsLeadingSilence = true
        options.normalizePeakDBFS = -1
        var result = try trim(input: input, output: output, options: options)
        result.input = "embedded demo recitation"
        return DemoResult(sourceTitle: DemoRecitation.title, trim: result)
    }
}

/// A small base64 decoder (RFC 4648, standard alphabet; whitespace ignored), without Foundation.
enum Base64 {
    static func decode(_ text: String) -> [UInt8]? {
        var table = [UInt8](repeating: 255, count: 256)
        for (index, scalar) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(scalar)] = UInt8(index)
        }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in text.utf8 {
            if byte == 0x3D { break }  // '=' padding: the end
            if byte == 0x0A || byte == 0x0D || byte == 0x20 { continue }
            let value = table[Int(byte)]
            if value == 255 { return nil }
            accumulator = (accumulator << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return out
    }
}
