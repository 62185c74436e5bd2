import ProofkitCore
import TestSupport
import Testing

@testable import ImageIO

/// libturbojpeg and libpng are not linked: ImageIO loads them on first use (dlopen) into tables
/// of the functions it calls. These tests load the real libraries.
@Suite("ImageIO's C libraries load on first use")
struct ImageLibraryLoadingTests {
    @Test("libturbojpeg.so.0 loads, and each of the 7 functions its table declares resolves and is called")
    func turbojpeg() throws {
        let table = FunctionTable(try loadTurboJPEG())
        #expect(table.names.count == 7)
        #expect(table.unresolved.isEmpty, "not resolved: \(table.unresolved)")
        let notCalled = try table.notCalled(in: "Sources/Adapters/ImageIO/TurboJPEG+Calls.swift", receiver: "turbo")
        #expect(notCalled.isEmpty, "declared but never called: \(notCalled)")
    }

    @Test("libpng16.so.16 loads, and each of the 3 functions its table declares resolves and is called")
    func png() throws {
        let table = FunctionTable(try PNGReader.load())
        #expect(table.names.count == 3)
        #expect(table.unresolved.isEmpty, "not resolved: \(table.unresolved)")
        let notCalled = try table.notCalled(in: "Sources/Adapters/ImageIO/PNG+Calls.swift", receiver: "libpng")
        #expect(notCalled.isEmpty, "declared but never called: \(notCalled)")
    }

    @Test(
        "a library that is not installed, or lacks a function, is runtimeUnavailable (exit 69) in one line",
        arguments: [
            FailingLibraryLoad(soname: "libturbojpeg.so.99", package: "libturbojpeg0") { soname throws(ProofkitError) in
                _ = try loadTurboJPEG(soname: soname)
            },
            FailingLibraryLoad(soname: "libpng16.so.99", package: "libpng16-16") { soname throws(ProofkitError) in
                _ = try PNGReader.load(soname: soname)
            },
            // libpng is a real library without TurboJPEG's functions.
            FailingLibraryLoad(
                soname: "libpng16.so.16", reason: "undefined symbol: tjInitDecompress",
                package: "libturbojpeg0"
            ) { soname throws(ProofkitError) in _ = try loadTurboJPEG(soname: soname) },
        ])
    func failure(_ load: FailingLibraryLoad) {
        #expect(load.problems() == [])
    }
}
