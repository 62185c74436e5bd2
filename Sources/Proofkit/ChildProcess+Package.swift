internal import ProofkitSystem
/// How a one-shot child ended, for the package's other targets (`ProofkitDemo` runs espeak-ng).
package enum ChildTermination: Equatable, Sendable {
    /// It exited with this status.
    case exited(Int32)
    /// It was killed by this signal.
    case signalled(Int32)
}

/// Runs `executable arguments...` to its end, with stdin from `/dev/null` and its output
/// discarded (``ChildProcess/run(_:arguments:stdout:stderr:)`` for the package's other targets).
/// - Returns: how it ended, or `nil` when it cannot be started.
package func runChildDiscardingOutput(_ executable: String, arguments: [String]) -> ChildTermination? {
    do throws(ChildProcess.Failure) {
        let completed = try ChildProcess.run(executable, arguments: arguments, stdout: false, stderr: false)
        switch completed.termination {
        case .exited(let code): return .exited(code)
        case .signalled(let signal): return .signalled(signal)
        }
    } catch {
        return nil
    }
}
