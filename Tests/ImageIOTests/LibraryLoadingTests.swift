@testable import ImageIO
import ProofkitCore
import Testing
import TestSupport

/// libturbojpeg and libpng are not linked: ImageIO loads them on first use (dlopen) into tables
/// of the functions it calls. These tests load the real libraries.
@Suite("ImageIO's C libraries load on first use")
struct ImageLibraryLoadingTests {
    @Test("libturbojpeg.so.0 loads, and each of the 7 functions its table declares resolves and is called")
    func turbojpeg() throws {
        let table = FunctionTable(try loadTurboJPEG())
        #expect(table.names.count == 7)
        #expect(table.unresolved.isEmpty, "not resolved: \(table.unresolved)")
        let notCalled = try table.notCalled(in: "Sources/ImageIO/TurboJPEG+Calls.swift", receiver: "turbo")
        #expect(notCalled.isEmpty, "declared but never called: \(notCalled)")
    }

    @Test("libpng16.so.16 loads, and each of the 3 functions its table declares resolves and is called")
    func png() throws {
        let table = FunctionTable(try PNGReader.load())
        #expect(table.names.count == 3)
        #expect(table.unresolved.isEmpty, "not resolved: \(table.unresolved)")
        let notCalled = try table.notCalled(in: "Sources/ImageIO/PNG+Calls.swift", receiver: "libpng")
        #expect(notCalled.isEmpty, "declared but never called: \(notCalled)")
    }

    @Test("a library that is not installed is runtimeUnavailable (exit 69) in one line: soname, reason, package")
    func missing() {
        let turbo = #expect(throws: ProofkitError.self) { try loadTurboJPEG(soname: "libturbojpeg.so.99") }
        #expect(turbo?.code == .runtimeUnavailable)
        #expect(turbo?.operation == "dlopen")
        let turboProblems = libraryFailureProblems(
            turbo?.message ?? "", soname: "libturbojpeg.so.99",
            reason: "cannot open shared object file: No such file or directory", package: "libturbojpeg0")
        #expect(turboProblems.isEmpty, "\(turboProblems): \(turbo?.message ?? "")")

        let png = #expect(throws: ProofkitError.self) { try PNGReader.load(soname: "libpng16.so.99") }
        #expect(png?.code == .runtimeUnavailable)
        let pngProblems = libraryFailureProblems(
            png?.message ?? "", soname: "libpng16.so.99",
            reason: "cannot open shared object file: No such file or directory", package: "libpng16-16")
        #expect(pngProblems.isEmpty, "\(pngProblems): \(png?.message ?? "")")
    }

    @Test("a file that loads but lacks a function is runtimeUnavailable naming the function")
    func lacksFunction() {
        // libpng is a real library without TurboJPEG's functions.
        let error = #expect(throws: ProofkitError.self) { try loadTurboJPEG(soname: "libpng16.so.16") }
        #expect(error?.code == .runtimeUnavailable)
        let problems = libraryFailureProblems(
            error?.message ?? "", soname: "libpng16.so.16", reason: "it has no tjInitDecompress: ",
            package: "libturbojpeg0")
        #expect(problems.isEmpty, "\(problems): \(error?.message ?? "")")
    }
}
