import Foundation
import ProofkitCore
import TestSupport
import Testing

@Suite("Base64 decoding of embedded text")
struct Base64Tests {
    @Test("agrees with Foundation's decoder on 300 seeded byte strings of 0-299 bytes, in lines of 100")
    func againstFoundation() {
        var generator = SplitMix64(seed: 0xBA5E_0064)
        for length in 0..<300 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let text = Data(bytes).base64EncodedString()
            #expect(Base64.bytes(text) == bytes, "\(length) bytes")
            // As the generator writes a multi-line literal: lines, indentation stripped or not.
            let lines = stride(from: 0, to: text.count, by: 100).map {
                "        " + text.dropFirst($0).prefix(100)
            }
            #expect(Base64.bytes(lines.joined(separator: "\n")) == bytes, "\(length) bytes, in lines")
        }
    }

    @Test("RFC 4648's test vectors; padding and characters outside the alphabet are skipped")
    func vectors() {
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE="]
        for (plain, encoded) in vectors {
            #expect(Base64.bytes(encoded) == Array(plain.utf8), "\(encoded)")
        }
        #expect(Base64.bytes("Zm9v\nYmFy\r\n") == Array("foobar".utf8))
        #expect(Base64.bytes("Zm9v*YmFy") == Array("foobar".utf8))
    }
}
