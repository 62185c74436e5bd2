import ProofkitCLI
import Testing

/// Exit tests (a trap ends the process): `.ci/test-loop` runs the suites named `...ExitTests` in a
/// step of their own (see there why).
@Suite("Argument parsing: a programmer error traps")
struct ArgumentTrapExitTests {
    @Test("asking for an option the command never declared traps (value, has, all, typed)")
    func undeclaredNameTraps() async throws {
        await #expect(processExitsWith: .failure) {
            let parsed = try parseArguments([], options: sampleOptions)
            _ = parsed.value("outptu")
        }
        await #expect(processExitsWith: .failure) {
            let parsed = try parseArguments(["--json"], options: sampleOptions)
            _ = parsed.has("jsno")
        }
        await #expect(processExitsWith: .failure) {
            let parsed = try parseArguments([], options: sampleOptions)
            _ = parsed.all("prompts")
        }
        await #expect(processExitsWith: .failure) {
            let parsed = try parseArguments([], options: sampleOptions)
            _ = try parsed.double("max-second")
        }
    }
}
