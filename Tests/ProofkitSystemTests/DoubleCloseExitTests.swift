import Foundation
import Testing

@testable import ProofkitSystem

/// A close of a descriptor that is not open is a bug (a double close could close another
/// thread's file). A debug build traps; the release build, which users run and the tests run,
/// says so on stderr and goes on, so that an alarm is never ended by it.
@Suite("A double close is named, never silent")
struct DoubleCloseExitTests {
    @Test("closing a descriptor twice: a debug build traps, a release build writes one line on stderr and goes on")
    func doubleClose() async throws {
        #if DEBUG
            await #expect(processExitsWith: .failure) {
                guard case .success(let fd) = POSIX.open("/dev/null", .readOnly) else { return }
                POSIX.closeDescriptor(fd)
                POSIX.closeDescriptor(fd)
            }
        #else
            let result = try await #require(
                processExitsWith: .success, observing: [\.standardErrorContent, \.standardOutputContent]
            ) {
                guard case .success(let fd) = POSIX.open("/dev/null", .readOnly) else { return }
                POSIX.closeDescriptor(fd)
                print("first close fd=\(fd)")
                POSIX.closeDescriptor(fd)
                print("went on")
            }
            let output = String(decoding: result.standardOutputContent, as: UTF8.self)
            let fd = try #require(output.split(separator: "\n").first?.split(separator: "=").last)
            #expect(output.hasSuffix("went on\n"), "\(output)")
            let errors = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(
                errors.contains("proofkit: bug: close(\(fd)) of a descriptor that is not open (closed twice?)\n"),
                "\(errors)")
        #endif
    }
}
