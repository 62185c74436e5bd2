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
/// At most ``limit`` such tests run at once (their children are what loads the machine); the
/// others wait for a slot without holding a thread. A serialised suite runs as a whole off the
/// pool, and its tests, one at a time, take no slot:
/// - a serialised suite's runner goes from one test to the next on the executor its task
///   prefers. On the pool, each step waited behind every CPU-bound test queued there, so the
///   real-clock alarm suites only ran once the pool was empty, one after another, at the end;
/// - without the bound, every test of every such suite started in the run's first second, and a
///   real-clock test then shared two cores with a hundred children.
///
/// `PROOFKIT_TESTS_ON_POOL=1` turns the trait off (to measure what it saves);
/// `PROOFKIT_TESTS_OFF_POOL=N` sets the bound [three times the cores].
public struct OffThePoolTrait: TestTrait, SuiteTrait, TestScoping {
    /// Whether `PROOFKIT_TESTS_ON_POOL` asks for the tests to stay on the cooperative pool.
    static let disabled = ProcessInfo.processInfo.environment["PROOFKIT_TESTS_ON_POOL"] == "1"

    /// How many tests of parallel suites may run off the pool at once: `PROOFKIT_TESTS_OFF_POOL`,
    /// or three times the number of cores.
    public static let limit: Int = {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let asked = ProcessInfo.processInfo.environment["PROOFKIT_TESTS_OFF_POOL"].flatMap { Int($0) }
        return max(1, asked ?? 3 * cores)
    }()

    /// The slots of ``limit``.
    static let slots = Slots(count: limit)

    /// Set inside a serialised suite that runs off the pool: its tests take no slot.
    @TaskLocal static var inSerializedSuite = false

    /// A suite's trait applies to each of its tests.
    public var isRecursive: Bool { true }

    /// Each test, and a serialised suite as a whole (see above).
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        if test.isSuite {
            return test.traits.contains { $0 is ParallelizationTrait } ? self : nil
        }
        return testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        if Self.disabled { return try await function() }
        if test.isSuite || Self.inSerializedSuite {
            return try await Self.$inSerializedSuite.withValue(true) {
                try await withTaskExecutorPreference(ThreadPerJobExecutor.shared) { try await function() }
            }
        }
        await Self.slots.acquire()
        do {
            try await withTaskExecutorPreference(ThreadPerJobExecutor.shared) { try await function() }
        } catch {
            await Self.slots.release()
            throw error
        }
        await Self.slots.release()
    }

    /// A counting semaphore whose waiters suspend (first come, first served).
    actor Slots {
        private var free: Int
        private var waiting: [CheckedContinuation<Void, Never>] = []

        init(count: Int) { free = count }

        func acquire() async {
            if free > 0 {
                free -= 1
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        func release() {
            if waiting.isEmpty {
                free += 1
            } else {
                waiting.removeFirst().resume()
            }
        }
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
