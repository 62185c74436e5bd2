import Dispatch
internal import ProofkitSystem
import Synchronization

/// A task executor with one POSIX thread of its own (never Swift's cooperative pool): a task
/// that prefers it (`Task(executorPreference:)`) runs all its synchronous work there, so blocking
/// calls in it (a libsndfile write, an ONNX Runtime run) hold this thread, not one of the pool's
/// (one per core).
///
/// Jobs run in the order they are enqueued. ``shutdown()`` ends the thread once the jobs
/// enqueued before it have run; enqueue nothing after it.
final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let jobs = Mutex<[UnownedJob]>([])
    /// One signal per job, and one more for the shutdown.
    private let available = DispatchSemaphore(value: 0)

    /// Starts the thread.
    init() {
        runOnDedicatedThread { [self] in
            while true {
                available.wait()
                guard let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { return }
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        available.signal()
    }

    /// Ends the thread after the jobs already enqueued.
    func shutdown() {
        available.signal()
    }

    /// Runs `body` as a task on a new dedicated thread, blocking the calling (non-pool) thread
    /// until it is done, then ends the thread.
    static func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let executor = DedicatedThreadExecutor()
        defer { executor.shutdown() }
        let result = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: executor) {
            let value = await body()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }
}
