import Foundation
import TestSupport
import Testing

@testable import Proofkit

/// The live reading proof's consumer runs on a thread of its own: every step of the task, also
/// after it waited on an AsyncStream fed from Swift's cooperative pool, runs on that one thread.
// Off the pool: the test blocks its thread until the producer, a task on the pool, has yielded 20
// times; on a pool thread it held one of the two for most of the run.
@Suite("DedicatedThreadExecutor: a task that prefers it stays on its own thread", .offThePool)
struct DedicatedThreadExecutorTests {
    @Test("every resumption after an await runs on the same dedicated thread, not the caller's nor the producer's")
    func staysOnItsThread() throws {
        let caller = pthread_self()
        let (values, continuation) = AsyncStream<Int>.makeStream()
        let producer = Task.detached {
            for value in 0..<20 {
                try? await Task.sleep(for: .milliseconds(1))
                continuation.yield(value)
            }
            continuation.finish()
            return pthread_self()
        }
        let seen = DedicatedThreadExecutor.runBlocking { () async -> [pthread_t] in
            var threads = [pthread_self()]
            for await _ in values { threads.append(pthread_self()) }
            return threads
        }
        #expect(seen.count == 21)
        #expect(Set(seen.map { UInt($0) }).count == 1)
        #expect(pthread_equal(seen[0], caller) == 0)
        let producerThread = DedicatedThreadExecutor.runBlocking { await producer.value }
        #expect(pthread_equal(seen[0], producerThread) == 0)
    }
}
