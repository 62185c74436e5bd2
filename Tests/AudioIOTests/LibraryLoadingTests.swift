import ProofkitCore
import TestSupport
import Testing

@testable import AudioIO

/// libasound and libsndfile are not linked: AudioIO loads them on first use (dlopen) into tables
/// of the functions it calls. These tests load the real libraries.
@Suite("AudioIO's C libraries load on first use")
struct AudioLibraryLoadingTests {
    @Test("libasound.so.2 loads, and each of the 32 functions its table declares resolves and is called")
    func alsa() throws {
        let table = FunctionTable(try loadALSA())
        #expect(table.names.count == 32)
        #expect(table.unresolved.isEmpty, "not resolved: \(table.unresolved)")
        // snd_lib_error_set_handler is called from C, right after loading (it takes a variadic
        // handler, which Swift cannot write).
        let notCalled = try table.notCalled(in: "Sources/Adapters/AudioIO/ALSA+Calls.swift", receiver: "alsa")
        #expect(notCalled == ["snd_lib_error_set_handler"])
    }

    @Test("libsndfile.so.1 loads, and each of the 12 functions its table declares resolves and is called")
    func sndfile() throws {
        let table = FunctionTable(try SndFile.load())
        #expect(table.names.count == 12)
        #expect(table.unresolved.isEmpty, "not resolved: \(table.unresolved)")
        let source = "Sources/Adapters/AudioIO/SndFile+Calls.swift"
        // Opening calls go through `sndfile` (just loaded), calls on a handle through `loaded`.
        let viaHandle = try table.notCalled(in: source, receiver: "loaded")
        let notCalled = try table.notCalled(in: source, receiver: "sndfile").filter(viaHandle.contains)
        #expect(notCalled.isEmpty, "declared but never called: \(notCalled)")
    }

    @Test(
        "a library that is not installed, or lacks a function, is runtimeUnavailable (exit 69) in one line",
        arguments: [
            FailingLibraryLoad(soname: "libasound.so.99", package: "libasound2") { soname throws(ProofkitError) in
                _ = try loadALSA(soname: soname)
            },
            FailingLibraryLoad(soname: "libsndfile.so.99", package: "libsndfile1") { soname throws(ProofkitError) in
                _ = try SndFile.load(soname: soname)
            },
            // libsndfile is a real library without libasound's functions.
            FailingLibraryLoad(
                soname: "libsndfile.so.1", reason: "undefined symbol: snd_strerror",
                package: "libasound2"
            ) { soname throws(ProofkitError) in _ = try loadALSA(soname: soname) },
        ])
    func failure(_ load: FailingLibraryLoad) {
        #expect(load.problems() == [])
    }

    @Test("a failed load of another file leaves the process-wide library usable")
    func failedTestLoadIsolated() throws {
        _ = try? loadALSA(soname: "libasound.so.99")
        _ = try? SndFile.load(soname: "libsndfile.so.99")
        #expect(FunctionTable(try loadALSA()).unresolved.isEmpty)
        #expect(alsaErrorText(-2) == "No such file or directory")  // snd_strerror, not "error -2"
        let reader = try AudioFileReader(path: TestEnvironment.fixture("speech_en_ljspeech_16k.wav"))
        #expect(reader.format.sampleRate == 16000)
    }
}
