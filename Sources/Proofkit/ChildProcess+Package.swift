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

/// A finished one-shot child whose output was captured, for the package's other targets
/// (`ProofkitBenchRunner` measures in a child of the same binary).
package struct CapturedChild: Sendable {
    /// How it ended.
    package var termination: ChildTermination
    /// Its stdout.
    package var stdout: [UInt8]
    /// Its stderr.
    package var stderr: [UInt8]
}

/// Runs `executable arguments...` to its end with stdin from `/dev/null`, capturing stdout and
/// stderr (``ChildProcess/run(_:arguments:stdout:stderr:forwardsTerminationSignals:)``); while it
/// runs, SIGTERM, SIGINT and SIGHUP to this process are passed on to it first.
/// - Throws: a description of the failed system call (`posix_spawn`, `pipe2`) when it cannot be started.
package func runChildCapturingOutput(_ executable: String, arguments: [String]) throws(ChildStartFailure)
    -> CapturedChild
{
    do throws(ChildProcess.Failure) {
        let completed = try ChildProcess.run(
            executable, arguments: arguments, stdout: true, stderr: true, forwardsTerminationSignals: true)
        let termination: ChildTermination =
            switch completed.termination {
            case .exited(let code): .exited(code)
            case .signalled(let signal): .signalled(signal)
            }
        return CapturedChild(termination: termination, stdout: completed.stdout, stderr: completed.stderr)
    } catch {
        throw ChildStartFailure(description: error.description)
    }
}

/// Why a child could not be started: `strerror` of the failed call.
package struct ChildStartFailure: Error, Sendable, CustomStringConvertible {
    package var description: String
}

/// Asks the kernel to kill this process (SIGKILL) when its parent ends (``ChildProcess/dieWithParent()``).
/// - Returns: `false` when the parent is already gone.
package func dieWithParentProcess() -> Bool {
    ChildProcess.dieWithParent()
}
