import Foundation
import ProofkitCore
import TestSupport
import Testing

@testable import Inference

/// Creates, runs and releases sessions in a fresh process (so other tests running in parallel do
/// not move its memory), and checks that resident memory stays flat.
@Suite("Leak check", .enabled(if: InferenceFixtures.runtimeAvailable, "set PROOFKIT_ORT_LIBRARY"))
struct LeakExitTests {
    @Test("300 sessions created, run and released: resident memory stays flat")
    func threeHundredSessions() async throws {
        let result = try await #require(processExitsWith: .success, observing: [\.standardOutputContent]) {
            let small = try InferenceFixtures.bytes("small_types")
            func cycle() throws {
                var session = try InferenceSession(contentsOf: InferenceFixtures.model("dense_relu"))
                _ = try session.run(["x": try Tensor<Float>(shape: [8, 4], repeating: 0.5)])
                _ = try? session.run(["x": try Tensor<Float>(shape: [8, 5], repeating: 0.5)])  // error path
                session.close()
                var fromBytes = try InferenceSession(bytes: small)
                var feeds: [String: any TensorInput] = [:]
                feeds["u8"] = try Tensor<UInt8>(shape: [64], repeating: 1)
                feeds["i8"] = try Tensor<Int8>(shape: [64], repeating: 1)
                feeds["i32"] = try Tensor<Int32>(shape: [64], repeating: 1)
                feeds["f64"] = try Tensor<Double>(shape: [64], repeating: 1)
                feeds["flags"] = try Tensor<Bool>(shape: [64], repeating: true)
                _ = try fromBytes.run(feeds)
                _ = try? InferenceSession(bytes: Array(small.prefix(100)))  // failed load
            }
            for _ in 0..<50 { try cycle() }  // warm-up: allocator pools, thread-local caches
            let before = InferenceFixtures.residentKiB()
            for _ in 0..<300 { try cycle() }
            let after = InferenceFixtures.residentKiB()
            print("before_kib=\(before) after_kib=\(after)")
        }
        let numbers = parse(result.standardOutputContent)
        let before = try #require(numbers["before_kib"])
        let after = try #require(numbers["after_kib"])
        print(
            "leak check: RSS \(before) KiB after warm-up, \(after) KiB after 300 more sessions (\(after - before) KiB)")
        #expect(before > 0)
        #expect(after - before < 3 * 1024, "resident memory grew by \(after - before) KiB over 300 sessions")
    }

    @Test("the check is sensitive: 300 sessions kept alive grow resident memory well past the limit")
    func sensitivity() async throws {
        let result = try await #require(processExitsWith: .success, observing: [\.standardOutputContent]) {
            final class Holder { var session: InferenceSession? }
            var kept: [Holder] = []
            for _ in 0..<50 {
                var session = try InferenceSession(contentsOf: InferenceFixtures.model("dense_relu"))
                _ = try session.run(["x": try Tensor<Float>(shape: [8, 4], repeating: 0.5)])
            }
            let before = InferenceFixtures.residentKiB()
            for _ in 0..<300 {
                var session = try InferenceSession(contentsOf: InferenceFixtures.model("dense_relu"))
                _ = try session.run(["x": try Tensor<Float>(shape: [8, 4], repeating: 0.5)])
                let holder = Holder()
                holder.session = consume session
                kept.append(holder)
            }
            let after = InferenceFixtures.residentKiB()
            print("before_kib=\(before) after_kib=\(after) kept=\(kept.count)")
        }
        let numbers = parse(result.standardOutputContent)
        let growth = try #require(numbers["after_kib"]) - (try #require(numbers["before_kib"]))
        print("sensitivity: 300 unreleased sessions grew RSS by \(growth) KiB")
        #expect(growth > 3 * 1024)
    }

    private func parse(_ bytes: [UInt8]) -> [String: Int] {
        var values: [String: Int] = [:]
        for field in String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let parts = field.split(separator: "=")
            if parts.count == 2, let value = Int(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }
}

@Suite("Programmer errors trap")
struct TrapExitTests {
    @Test("a tensor index out of range traps")
    func indexOutOfRange() async {
        await #expect(processExitsWith: .failure) {
            let tensor = try Tensor<Float>(shape: [2, 2], scalars: [1, 2, 3, 4])
            _ = tensor[2, 0]
        }
    }

    @Test("a tensor index with the wrong number of components traps")
    func wrongRankIndex() async {
        await #expect(processExitsWith: .failure) {
            let tensor = try Tensor<Float>(shape: [2, 2], scalars: [1, 2, 3, 4])
            _ = tensor[1]
        }
    }

    @Test("a negative thread count traps")
    func negativeThreads() async {
        await #expect(processExitsWith: .failure) {
            _ = InferenceSession.Options(intraOpThreads: -1)
        }
    }
}
