import Foundation
import Proofkit
import TestSupport
import Testing

@Suite("LatencyStatistics", .offThePool)
struct LatencyStatisticsTests {
    @Test("nearest-rank percentiles match numpy's 'inverted_cdf' on 1...100")
    func percentiles() {
        let stats = LatencyStatistics((1...100).map(Double.init).shuffled())
        #expect(stats.min == 1 && stats.max == 100)
        #expect(stats.p50 == 50 && stats.p90 == 90 && stats.p99 == 99)
        #expect(stats.mean == 50.5)
        #expect(isApproximatelyEqual(stats.standardDeviation, 29.011491975882016, relativeTolerance: 1e-12))
    }

    @Test("a wide spread is flagged as noisy")
    func noisy() {
        #expect(!LatencyStatistics([10, 10, 10, 11, 11]).isNoisy)
        #expect(LatencyStatistics([10, 10, 10, 10, 10, 10, 10, 10, 30, 30]).isNoisy)
    }
}

@Suite("MachineInfo", .offThePool)
struct MachineInfoTests {
    @Test("describes this machine as uname and nproc do")
    func matchesTools() throws {
        let info = MachineInfo.current()
        let arch = try runProcess("/bin/uname", ["-m"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let kernel = try runProcess("/bin/uname", ["-r"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let cores = try runProcess("/usr/bin/nproc", []).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(info.architecture == arch)
        #expect(info.kernel == kernel)
        #expect(String(info.cores) == cores)
        #expect(info.cpuModel != "unknown" && !info.cpuModel.isEmpty)
        #expect(info.memoryBytes > 100_000_000)
    }

    @Test("resident memory grows when memory is touched")
    func residentMemory() {
        // The process's resident size is shared with the tests running beside this one: one that
        // frees a large buffer between the two readings hides the growth. Three tries; one must see it.
        var growths: [Int] = []
        for _ in 0..<3 {
            let before = ResourceUsage.residentBytes()
            var block = [UInt8](repeating: 1, count: 64 << 20)
            block[12345] = 2
            let after = ResourceUsage.residentBytes()
            growths.append(after - before)
            #expect(ResourceUsage.peakResidentBytes() >= after)
            #expect(block[12345] == 2)
            if after - before > 50 << 20 { break }
        }
        #expect(growths.contains { $0 > 50 << 20 }, "growths \(growths)")
    }
}
