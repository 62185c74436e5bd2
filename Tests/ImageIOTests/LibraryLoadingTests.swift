import Foundation
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

    @Test(
        "libpng16.so.16 loads, and each of the 17 functions its table declares resolves and is called (the simplified API from Swift, the classic one from C)"
    )
    func png() throws {
        let table = FunctionTable(try PNGReader.load())
        #expect(table.names.count == 17)
        #expect(table.unresolved.isEmpty, "not resolved: \(table.unresolved)")
        let notCalledInSwift = try table.notCalled(in: "Sources/Adapters/ImageIO/PNG+Calls.swift", receiver: "libpng")
        let c = try String(
            contentsOf: TestEnvironment.packageRoot.appendingPathComponent("CSupport/CPNG/png.c"), encoding: .utf8)
        let notCalledInC = table.names.filter { !c.contains("api->\($0)(") }
        let notCalled = Set(notCalledInSwift).intersection(notCalledInC)
        #expect(notCalled.isEmpty, "declared but never called: \(notCalled.sorted())")
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
