#if canImport(Glibc)
    import Glibc
#endif

/// Runs `body` on a new detached POSIX thread of its own, never on Swift's cooperative pool
/// (after swift-subprocess's `runOnBackgroundThread`): blocking ALSA reads and writes must not
/// hold a pool thread, of which there is one per core.
///
/// The closure is passed as an `Unmanaged` context and released exactly once, by the thread.
/// Traps when the system cannot create a thread (out of resources: a programmer or system error).
public func runOnDedicatedThread(_ body: @escaping @Sendable () -> Void) {
    final class Box: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(&thread, nil, { raw in
        let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
        box.body()
        return nil
    }, context)
    guard status == 0 else {
        Unmanaged<Box>.fromOpaque(context).release()
        fatalError("pthread_create failed with error \(status)")
    }
    pthread_detach(thread)
}
