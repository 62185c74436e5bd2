import Foundation  // Thread
public import Testing

/// Runs each test of a suite on threads of its own instead of Swift's cooperative pool.
///
/// Swift Testing calls a test's body on the cooperative pool, which has one thread per core (two
/// on the CI machine). A test that waits (for a `proofkit` child, a service's fire time, a FIFO)
/// holds a pool thread while it waits, so on two cores a 60 s end-to-end suite leaves one thread
/// for the rest of the suite and the second core idles. With this trait the test's task prefers
/// ``ThreadPerJobExecutor``: its synchronous body, and every step after an `await`, run on a new
/// thread, and the pool stays free for the CPU-bound tests. The test itself is unchanged.
///
/// `PROOFKIT_TESTS_ON_POOL=1` turns the trait off (to measure what it saves).
public struct OffThePoolTrait: TestTrait, SuiteTrait, TestScoping {
    /// Whether `PROOFKIT_TESTS_ON_POOL` asks for the tests to stay on the cooperative pool.
    static let disabled = ProcessInfo.processInfo.environment["PROOFKIT_TESTS_ON_POOL"] == "1"

    /// A suite's trait applies to each of its tests.
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        if Self.disabled { return try await function() }
        try await withTaskExecutorPreference(ThreadPerJobExecutor.shared) { try await function() }
    }
}

extension Trait where Self == OffThePoolTrait {
    /// Runs the tests on threads of their own, off the cooperative pool (see ``OffThePoolTrait``):
    /// for suites whose tests wait on child processes or on the clock.
    public static var offThePool: Self { Self() }
}

/// A task executor that runs every job on a new thread. Jobs never wait for one another, so a
/// job that blocks (waiting for a child process) delays nothing else, whatever the number of
/// tests running; a thread costs tens of microseconds, nothing beside a child process.
public final class ThreadPerJobExecutor: TaskExecutor {
    /// The one instance (it has no state).
    public static let shared = ThreadPerJobExecutor()

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        Thread.detachNewThread { job.runSynchronously(on: executor) }
    }
}
