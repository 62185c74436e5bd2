import ProofkitCore
import Testing

@Suite("ProofkitError")
struct ProofkitErrorTests {
    @Test("description is one line naming the path")
    func descriptionNamesPath() {
        let error = ProofkitError(.decodeFailed, "no audio in it\nat all", path: "a.ogg")
        #expect(error.description == "a.ogg: no audio in it at all")
        #expect(!error.description.contains("\n"))
    }

    @Test("at(path:) keeps an existing path")
    func atPathKeepsExisting() {
        let error = ProofkitError(.io, "disk full", path: "out.caf").at(path: "other")
        #expect(error.path == "out.caf")
        #expect(ProofkitError(.io, "x").at(path: "p").path == "p")
    }

    @Test(
        "codes have stable names",
        arguments: [
            (ProofkitError.Code.invalidArgument, "invalidArgument"), (.notFound, "notFound"),
            (.unsupportedFormat, "unsupportedFormat"), (.decodeFailed, "decodeFailed"),
            (.deviceUnavailable, "deviceUnavailable"), (.runtimeUnavailable, "runtimeUnavailable"),
            (.modelInvalid, "modelInvalid"), (.io, "io"), (.internal, "internal"),
        ])
    func codeNames(code: ProofkitError.Code, name: String) {
        #expect(code.name == name)
    }
}

@Suite("AudioClip")
struct AudioClipTests {
    @Test("mono mixes channels by their mean")
    func monoMix() {
        let clip = AudioClip(samples: [1, 0, 0.5, 0.5, -1, 1], channels: 2, sampleRate: 8000)
        #expect(clip.frameCount == 3)
        #expect(clip.mono() == [0.5, 0.5, 0])
        #expect(clip.seconds == 3.0 / 8000)
    }
}
