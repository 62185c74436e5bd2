internal import ProofkitSystem

/// What machine a measurement was taken on, so two benchmark runs can be compared honestly.
public struct MachineInfo: Sendable, Equatable {
    /// CPU model name (`/proc/cpuinfo` "model name", or "Model"/"Hardware" on ARM boards).
    public var cpuModel: String
    /// Online logical cores.
    public var cores: Int

    /// Online logical cores now, without reading the rest of the description (`sysconf`).
    public static var onlineCores: Int { POSIX.onlineCores }
    /// Machine architecture, e.g. `x86_64` or `aarch64` (`uname -m`).
    public var architecture: String
    /// Kernel release (`uname -r`).
    public var kernel: String
    /// Operating system name (`/etc/os-release` PRETTY_NAME).
    public var operatingSystem: String
    /// Total memory in bytes (`/proc/meminfo` MemTotal).
    public var memoryBytes: Int

    /// Reads the current machine's description. Never throws: unknown fields read "unknown".
    public static func current() -> MachineInfo {
        let name = POSIX.systemName()
        let cpuinfo = readTextFile("/proc/cpuinfo") ?? ""
        var model = "unknown"
        for key in ["model name", "Model", "Hardware", "cpu model"] {
            if let value = value(of: key, in: cpuinfo) {
                model = value
                break
            }
        }
        if model == "unknown", let part = value(of: "CPU part", in: cpuinfo) {
            model = "ARM CPU part \(part)"
        }
        let os =
            readTextFile("/etc/os-release").flatMap { text -> String? in
                for line in text.split(separator: "\n") where line.hasPrefix("PRETTY_NAME=") {
                    return String(line.dropFirst("PRETTY_NAME=".count)).replacingQuotes()
                }
                return nil
            } ?? "unknown"
        let memKB =
            readTextFile("/proc/meminfo").flatMap { value(of: "MemTotal", in: $0) }
            .flatMap { Int($0.split(separator: " ").first ?? "") } ?? 0
        return MachineInfo(
            cpuModel: model, cores: onlineCores,
            architecture: name.machine, kernel: name.release, operatingSystem: os,
            memoryBytes: memKB * 1024)
    }

    static func value(of key: String, in text: String) -> String? {
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].trimmingSpaces() == key {
                return String(line[line.index(after: colon)...]).trimmingSpaces()
            }
        }
        return nil
    }
}

/// The process's memory use, from `/proc/self/status`.
public enum ResourceUsage {
    /// Peak resident set size in bytes (VmHWM), or 0 when unknown.
    public static func peakResidentBytes() -> Int { statusField("VmHWM") }
    /// Current resident set size in bytes (VmRSS), or 0 when unknown.
    public static func residentBytes() -> Int { statusField("VmRSS") }

    static func statusField(_ name: String) -> Int {
        guard let text = readTextFile("/proc/self/status"),
            let value = MachineInfo.value(of: name, in: text),
            let kb = Int(value.split(separator: " ").first ?? "")
        else { return 0 }
        return kb * 1024
    }
}

/// Reads a small text file (procfs, os-release) whole; `nil` when it cannot be read.
package func readTextFile(_ path: String) -> String? {
    // 1 MiB: /proc/cpuinfo on a 256-core machine is about 300 KiB.
    guard let bytes = try? POSIX.readWhole(path, limit: 1 << 20) else { return nil }
    return String(decoding: bytes, as: UTF8.self)
}

extension StringProtocol {
    func replacingQuotes() -> String { String(filter { $0 != "\"" }) }
}
