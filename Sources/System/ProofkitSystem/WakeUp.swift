// The alarm service's wake-ups, built on POSIX+Calls.swift's wrappers (no libc here).

/// The alarm service's wake-ups: a wall-clock timerfd that a clock change cancels, an eventfd
/// another thread signals, inotify on a folder, and the keys of input devices.
package enum WakeUp {
    /// A timerfd on CLOCK_REALTIME (close-on-exec, non-blocking). Calls `proofkit_alarm_timer_create`.
    package static func makeTimer() -> Result<Int32, Errno> {
        POSIX.makeWallClockTimer()
    }

    /// Arms `timer` to fire once at `secondsSince1970` (wall clock), cancelled by a clock change.
    /// Calls `proofkit_alarm_timer_set`.
    package static func arm(_ timer: Int32, at secondsSince1970: Double) {
        let whole = secondsSince1970.rounded(.down)
        POSIX.armWallClockTimer(timer, seconds: Int64(whole), nanoseconds: Int64((secondsSince1970 - whole) * 1e9))
    }

    /// Reads `timer`: whether someone set the clock (`ECANCELED`) since it was armed.
    /// Calls `proofkit_alarm_timer_read`.
    package static func clockWasSet(_ timer: Int32) -> Bool {
        POSIX.readWallClockTimer(timer) == .canceled
    }

    /// An eventfd (close-on-exec, non-blocking). Calls `proofkit_event_create`.
    package static func makeEvent() -> Result<Int32, Errno> {
        POSIX.makeEvent()
    }

    /// Wakes whoever polls `event`. Calls `write`.
    package static func signal(_ event: Int32) {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { POSIX.writeAll(event, $0) }
    }

    /// Clears `event`'s counter. Calls `read`.
    package static func drain(_ event: Int32) {
        var counter: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &counter) { POSIX.read(event, into: $0) }
    }

    /// An inotify descriptor (close-on-exec, non-blocking) watching `folder` for files created,
    /// moved in, written or deleted; `nil` when inotify is unavailable.
    /// Calls `inotify_init1`, `inotify_add_watch`.
    package static func watchFolder(_ folder: String) -> Int32? {
        POSIX.watchFolder(folder)
    }

    /// The raw events waiting on an inotify descriptor (up to 4 KiB; empty when none).
    /// Calls `read`.
    package static func pendingEvents(_ watch: Int32) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        guard case .success(let n) = buffer.withUnsafeMutableBytes({ POSIX.read(watch, into: $0) }) else { return [] }
        return Array(buffer[0..<n])
    }

    /// SIGTERM, SIGINT and SIGHUP as a descriptor to poll (a signalfd; they no longer end the
    /// process by themselves), so a service can end cleanly. Calls `proofkit_termination_signals_create`.
    package static func terminationSignals() -> Result<Int32, Errno> {
        POSIX.makeTerminationSignals()
    }

    /// The termination signal waiting on `fd` (from ``terminationSignals()``), or `nil`.
    /// Calls `proofkit_termination_signal_read`.
    package static func pendingSignal(_ fd: Int32) -> Int32? {
        POSIX.readTerminationSignal(fd)
    }

    /// Gives SIGTERM, SIGINT and SIGHUP their default action and unblocks them (a parent may have
    /// passed on either), so that they end the process. Calls `signal`, `pthread_sigmask`.
    package static func restoreTerminationSignals() {
        POSIX.restoreTerminationSignals()
    }

    /// Whether `fd` is a Linux input device (evdev: a keyboard, keypad, presenter or button), which
    /// answers `EVIOCGVERSION`; `/dev/null`, a terminal or a file does not. Calls `ioctl` (through
    /// ``POSIX/control(_:_:_:)``).
    package static func isInputDevice(_ fd: Int32) -> Bool {
        var version: Int32 = 0
        // EVIOCGVERSION is _IOR('E', 0x01, int): read, 4 bytes, type 'E' (0x45), number 1.
        let answer = withUnsafeMutableBytes(of: &version) { POSIX.control(fd, 0x8004_4501, $0.baseAddress!) }
        if case .success = answer { return true }
        return false
    }
}
