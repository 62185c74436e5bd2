public import ProofkitCore
internal import ProofkitSystem
import Synchronization

/// A block of captured mono audio, as the device delivered it.
public struct AudioChunk: Sendable {
    /// Mono 16-bit samples (S16), `sampleRate` per second.
    public var samples: [Int16]
    /// The capture rate in Hz (the device's real rate, see ``MicrophoneCapture/sampleRate``).
    public var sampleRate: Int
    /// Index of the chunk's first frame since capture started (0 for the first chunk).
    public var startFrame: Int
    /// When the read that delivered this chunk returned (monotonic clock), to measure how far
    /// behind the audio a decision is.
    public var arrival: ContinuousClock.Instant

    /// Creates a chunk.
    public init(samples: [Int16], sampleRate: Int, startFrame: Int, arrival: ContinuousClock.Instant) {
        self.samples = samples
        self.sampleRate = sampleRate
        self.startFrame = startFrame
        self.arrival = arrival
    }

    /// The samples as floats in -1...1 (S16 / 32768).
    public var floatSamples: [Float] { samples.map { Float($0) * (1 / 32768) } }

    /// Seconds from the start of capture to the chunk's first frame.
    public var startSeconds: Double { Double(startFrame) / Double(sampleRate) }

    /// Seconds from the start of capture to just after the chunk's last frame.
    public var endSeconds: Double { Double(startFrame + samples.count) / Double(sampleRate) }

    /// The samples as little-endian S16 bytes (what an external recogniser reads on its stdin).
    public var littleEndianBytes: [UInt8] {
        var bytes = [UInt8](repeating: 0, count: samples.count * 2)
        for (index, sample) in samples.enumerated() {
            let bits = UInt16(bitPattern: sample)
            bytes[2 * index] = UInt8(truncatingIfNeeded: bits)
            bytes[2 * index + 1] = UInt8(truncatingIfNeeded: bits >> 8)
        }
        return bytes
    }
}

/// Counters of a running capture, safe to read from any thread.
public struct CaptureStatistics: Sendable, Equatable {
    /// Frames read from the device so far.
    public var framesRead: Int
    /// Chunks dropped because the consumer fell behind (the oldest are dropped first).
    public var droppedChunks: Int
    /// Overruns (and suspends) the device reported and that were recovered from quietly.
    public var overruns: Int
}

/// What a capture does when its consumer falls behind by ``MicrophoneCapture/bufferedChunks``.
public enum CaptureOverflowPolicy: Sendable, Equatable {
    /// Drop the oldest waiting chunk and count it (``CaptureStatistics/droppedChunks``): right for
    /// a real microphone, which never waits; the consumer always gets the newest audio.
    case dropOldest
    /// Pause reading until the consumer catches up: right for sources that are not paced in real
    /// time (a virtual microphone over a file, the `null` device), which would otherwise outrun
    /// any consumer. On a real microphone a long pause shows as recovered overruns.
    case waitForConsumer
}

/// Microphone capture through ALSA: mono, 16-bit, at 16 kHz by default.
///
/// Opening negotiates the format with `snd_pcm_set_params` (interleaved S16_LE, 1 channel, the
/// requested rate, ALSA's resampler allowed); devices such as `default` and `plughw:` convert
/// from whatever the hardware does. ``sampleRate`` is the rate really obtained.
///
/// ```swift
/// let capture = try MicrophoneCapture(device: "default")
/// let stream = capture.start()          // the device now belongs to the capture thread
/// for try await chunk in stream { ... } // AudioChunk values; throws ProofkitError
/// stream.stop()
/// ```
///
/// Ownership: a `MicrophoneCapture` is the unique owner of the open device until ``start()``
/// hands it to a dedicated capture thread, or ``close()`` closes it. Dropping it closes it.
public struct MicrophoneCapture: ~Copyable, Sendable {
    private var handle: PCMHandle
    /// The device name as given (e.g. `"default"`, `"hw:1,0"`, `"plughw:CARD=USB"`).
    public let device: String
    /// The rate the device really delivers, in Hz (normally the requested one).
    public let sampleRate: Int
    /// The rate that was asked for, in Hz.
    public let requestedSampleRate: Int
    /// Frames per delivered chunk.
    public let chunkFrames: Int
    /// How many chunks may wait for a slow consumer before ``overflowPolicy`` applies.
    public let bufferedChunks: Int
    /// What happens when more than ``bufferedChunks`` chunks wait.
    public let overflowPolicy: CaptureOverflowPolicy
    /// Whether chunks are delivered no faster than real time (their audio's duration since
    /// capture started): a virtual microphone over a file then plays like a real one.
    public let pacedByClock: Bool

    /// Opens a capture device and negotiates mono S16_LE at `sampleRate`.
    /// - Parameters:
    ///   - device: an ALSA PCM name (`"default"`, `"hw:1,0"`, `"plughw:1,0"`, `"null"`, or a
    ///     name defined by `configuration`). Default `"default"`.
    ///   - configuration: ALSA configuration text to open the device from *instead of* the
    ///     machine's configuration (tests, virtual microphones); `nil` (default) uses the machine's.
    ///   - sampleRate: the wanted rate in Hz, default 16000.
    ///   - chunkDuration: audio per delivered chunk, default 40 ms (10 ms...1 s). A chunk is
    ///     delivered as soon as it is complete, so this bounds how far behind the audio a consumer
    ///     can be.
    ///   - bufferedChunks: chunks kept for a slow consumer before `overflow` applies, default 256
    ///     (about 10 s at 40 ms), at least 1.
    ///   - overflow: drop the oldest chunks (default, for real microphones) or pause reading
    ///     (for sources not paced in real time); see ``CaptureOverflowPolicy``.
    ///   - pacedByClock: deliver no faster than real time, default `false`. A real microphone is
    ///     paced by its hardware, so this changes nothing there; a virtual one (ALSA's `file`
    ///     plugin) is read as fast as it is asked otherwise.
    /// - Throws: `.deviceUnavailable` when the device does not exist, is busy, or refuses the
    ///   format (the message names the device); `.invalidArgument` when `configuration` does not
    ///   parse; `.io` for other ALSA failures; `.runtimeUnavailable` when libasound.so.2 cannot be
    ///   loaded (it is loaded on first use, not linked).
    /// Calls `snd_pcm_open` (or `snd_pcm_open_lconf`) and `snd_pcm_set_params`.
    public init(
        device: String = "default", configuration: ALSAConfiguration? = nil, sampleRate: Int = 16000,
        chunkDuration: Duration = .milliseconds(40), bufferedChunks: Int = 256,
        overflow: CaptureOverflowPolicy = .dropOldest, pacedByClock: Bool = false
    ) throws(ProofkitError) {
        precondition(sampleRate > 0, "sampleRate must be positive")
        precondition(bufferedChunks >= 1, "bufferedChunks must be at least 1")
        let chunkSeconds = chunkDuration.seconds
        precondition(chunkSeconds >= 0.01 && chunkSeconds <= 1, "chunkDuration must be 10 ms...1 s")
        let handle = try openPCM(device: device, direction: .capture, configuration: configuration)
        let latency = max(100_000, Int(chunkSeconds * 4e6))
        let negotiated = try handle.configure(
            channels: 1, sampleRate: sampleRate, latencyMicroseconds: latency, device: device,
            direction: .capture)
        self.handle = handle
        self.device = device
        self.sampleRate = negotiated.sampleRate
        self.requestedSampleRate = sampleRate
        self.chunkFrames = max(1, Int((chunkSeconds * Double(negotiated.sampleRate)).rounded()))
        self.bufferedChunks = bufferedChunks
        self.overflowPolicy = overflow
        self.pacedByClock = pacedByClock
    }

    /// Starts capturing on a dedicated thread and returns the stream of chunks.
    ///
    /// The device now belongs to the capture thread; it is closed when the stream ends (by
    /// ``CaptureStream/stop()``, by the consumer leaving its loop or being cancelled, or by a
    /// device error, which the stream throws).
    /// - Returns: the chunk stream.
    /// Calls `snd_pcm_readi` in a loop, and `snd_pcm_recover` on overruns.
    public consuming func start() -> CaptureStream {
        let state = CaptureState()
        // With `.waitForConsumer` the thread itself keeps at most `bufferedChunks` waiting, so
        // the stream's own buffer never drops.
        let (stream, continuation) = AsyncThrowingStream<AudioChunk, any Error>.makeStream(
            bufferingPolicy: .bufferingNewest(bufferedChunks))
        let waitLimit = overflowPolicy == .waitForConsumer ? bufferedChunks : Int.max
        continuation.onTermination = { _ in state.stopRequested.store(true, ordering: .relaxed) }
        let worker = CaptureWorker(handle: handle, device: device)
        let chunkFrames = self.chunkFrames
        let sampleRate = self.sampleRate
        let paced = pacedByClock
        runOnDedicatedThread {
            worker.run(
                chunkFrames: chunkFrames, sampleRate: sampleRate, waitLimit: waitLimit, paced: paced,
                state: state, continuation: continuation)
        }
        return CaptureStream(base: stream, state: state, sampleRate: sampleRate)
    }

    /// Closes the device without capturing.
    /// - Throws: `.io` when ALSA reports an error while closing. Calls `snd_pcm_close`.
    public consuming func close() throws(ProofkitError) {
        let status = handle.close()
        guard status >= 0 else {
            throw alsaError(status, "snd_pcm_close", device: device, direction: .capture)
        }
    }
}

/// State shared by the capture thread and the consumer.
final class CaptureState: Sendable {
    let stopRequested = Atomic<Bool>(false)
    let framesRead = Atomic<Int>(0)
    let droppedChunks = Atomic<Int>(0)
    let overruns = Atomic<Int>(0)
    /// Chunks yielded and not yet taken by the consumer.
    let waiting = Atomic<Int>(0)
}

/// Holds the device for the capture thread.
///
/// `@unchecked Sendable`: `handle` is written once at creation and then taken and used only by
/// the capture thread.
final class CaptureWorker: @unchecked Sendable {
    private var handle: PCMHandle?
    private let device: String

    init(handle: consuming PCMHandle, device: String) {
        self.handle = consume handle
        self.device = device
    }

    func run(
        chunkFrames: Int, sampleRate: Int, waitLimit: Int, paced: Bool, state: CaptureState,
        continuation: AsyncThrowingStream<AudioChunk, any Error>.Continuation
    ) {
        guard let handle = handle.take() else { preconditionFailure("capture started twice") }
        var buffer = [Int16](repeating: 0, count: chunkFrames)
        var frame = 0
        var failure: ProofkitError?
        let clock = ContinuousClock()
        let start = clock.now
        while !state.stopRequested.load(ordering: .relaxed) {
            // Zero first: some plugins (a `file` plugin past the end of its `infile`) report
            // frames without writing them, which must read as silence rather than stale audio.
            buffer.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
            let result = handle.read(into: &buffer, channels: 1)
            switch PCMTransfer(result) {
            case .frames:
                let chunk = AudioChunk(
                    samples: Array(buffer[0..<result]), sampleRate: sampleRate, startFrame: frame,
                    arrival: clock.now)
                frame += result
                state.framesRead.store(frame, ordering: .relaxed)
                if paced {
                    // Not before the audio could have been heard: sleep in steps, so a stop is quick.
                    let due = start + .microseconds(Int64(frame) * 1_000_000 / Int64(sampleRate))
                    while clock.now < due, !state.stopRequested.load(ordering: .relaxed) {
                        let left = (due - clock.now).components
                        let micros = left.seconds * 1_000_000 + left.attoseconds / 1_000_000_000_000
                        POSIX.sleep(microseconds: UInt32(max(1, min(20_000, micros))))
                    }
                }
                while state.waiting.load(ordering: .acquiring) >= waitLimit,
                    !state.stopRequested.load(ordering: .relaxed)
                {
                    POSIX.sleep(microseconds: 1000)  // only for unpaced sources (`.waitForConsumer`)
                }
                state.waiting.add(1, ordering: .releasing)
                if case .dropped = continuation.yield(chunk) {
                    state.waiting.subtract(1, ordering: .releasing)
                    state.droppedChunks.add(1, ordering: .relaxed)
                }
            case .recoverable(let isXrun):
                if isXrun { state.overruns.add(1, ordering: .relaxed) }
                let recovered = handle.recover(result)
                if recovered < 0 {
                    failure = alsaError(Int32(recovered), "snd_pcm_recover", device: device, direction: .capture)
                }
            case .nothing:
                continue
            case .failed:
                failure = alsaError(Int32(result), "snd_pcm_readi", device: device, direction: .capture)
            }
            if failure != nil { break }
        }
        handle.drop()
        _ = handle.close()
        continuation.finish(throwing: failure)
    }
}

/// The chunks of a running ``MicrophoneCapture``: an `AsyncSequence` of ``AudioChunk`` that
/// throws `ProofkitError` (`.deviceUnavailable` when the device goes away mid-read, `.io` for
/// other read failures). It never ends by itself while the device delivers audio; call ``stop()``.
///
/// Buffering: up to `bufferedChunks` chunks wait for a slow consumer; beyond that the oldest are
/// dropped and counted (``statistics``). Single consumer.
public struct CaptureStream: AsyncSequence, Sendable {
    public typealias Element = AudioChunk
    public typealias Failure = ProofkitError

    private let base: AsyncThrowingStream<AudioChunk, any Error>
    private let state: CaptureState
    /// The rate of the chunks, in Hz.
    public let sampleRate: Int

    init(base: AsyncThrowingStream<AudioChunk, any Error>, state: CaptureState, sampleRate: Int) {
        self.base = base
        self.state = state
        self.sampleRate = sampleRate
    }

    /// Asks the capture thread to stop; the stream ends after the read in progress (at most one
    /// chunk later) and the device is closed. Safe to call more than once, from any thread.
    public func stop() {
        state.stopRequested.store(true, ordering: .relaxed)
    }

    /// Frames read, chunks dropped for a slow consumer, and overruns recovered, so far.
    public var statistics: CaptureStatistics {
        CaptureStatistics(
            framesRead: state.framesRead.load(ordering: .relaxed),
            droppedChunks: state.droppedChunks.load(ordering: .relaxed),
            overruns: state.overruns.load(ordering: .relaxed))
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeAsyncIterator(), token: StopToken(state: state), state: state)
    }

    /// Iterates the chunks; when the iterator is dropped (the consumer left its loop), capture stops.
    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = AudioChunk
        public typealias Failure = ProofkitError

        var base: AsyncThrowingStream<AudioChunk, any Error>.AsyncIterator
        let token: StopToken
        let state: CaptureState

        public mutating func next(isolation actor: isolated (any Actor)? = #isolation)
            async throws(ProofkitError) -> AudioChunk?
        {
            do {
                let chunk = try await base.next(isolation: actor)
                if chunk != nil { state.waiting.subtract(1, ordering: .releasing) }
                return chunk
            } catch let error as ProofkitError {
                throw error
            } catch {
                throw ProofkitError(.internal, "capture failed: \(error)")
            }
        }

        public mutating func next() async throws(ProofkitError) -> AudioChunk? {
            try await next(isolation: nil)
        }
    }
}

/// Stops capture when the last iterator goes away.
final class StopToken: Sendable {
    let state: CaptureState
    init(state: CaptureState) { self.state = state }
    deinit { state.stopRequested.store(true, ordering: .relaxed) }
}
