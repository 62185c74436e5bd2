import Foundation
import Proofkit
import ProofkitCore
import TestSupport
import Testing

/// The pose-line reader (Proofkit's) (the decoder is SquatCounting's: Tests/SquatCountingTests/PoseLineDecoderTests.swift).
@Suite("pose lines: the reader")
struct PoseLineTests {
    @Test("the reader caps a line without a newline (an endless stream) and ends with exit 65")
    func endlessLine() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let writeEnd = fds[1]
        let writer = Thread {
            let chunk = [UInt8](repeating: 0, count: 1 << 16)
            // More than the cap, then the pipe closes.
            for _ in 0..<24 { _ = chunk.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) } }
            close(writeEnd)
        }
        writer.start()
        var lines = 0
        #expect(throws: ProofkitError.self) {
            try PoseLineReader.forEachLine(fd: fds[0], name: "stdin") { _ in lines += 1 }
        }
        // Drain what the writer still sends, so it can finish.
        var sink = [UInt8](repeating: 0, count: 1 << 16)
        while sink.withUnsafeMutableBytes({ read(fds[0], $0.baseAddress, $0.count) }) > 0 {}
        close(fds[0])
        #expect(lines == 0)
    }
}
