public import ProofkitCore
import Dispatch
import Synchronization

/// A sample type that ``AudioFileReader`` decodes to: `Float` (any format, -1...1) or `Int16`
/// (16-bit PCM as stored; see ``AudioFileReader/read(into:maxFrames:)-([Int16],_)``).
public protocol DecodedSample: BitwiseCopyable, Sendable {
    /// Zero, to fill new buffers.
    static var zero: Self { get }
    /// Reads up to `maxFrames` frames into the start of `buffer` with `reader`.
    static func read(_ reader: inout AudioFileReader, into buffer: inout [Self], maxFrames: Int)
        throws(ProofkitError) -> Int
}

extension Float: DecodedSample {
    public static func read(_ reader: inout AudioFileReader, into buffer: inout [Float], maxFrames: Int)
        throws(ProofkitError) -> Int
    {
        try reader.read(into: &buffer, maxFrames: maxFrames)
    }
}

extension Int16: DecodedSample {
    public static func read(_ reader: inout AudioFileReader, into buffer: inout [Int16], maxFrames: Int)
        throws(ProofkitError) -> Int
    {
        try reader.read(into: &buffer, maxFrames: maxFrames)
    }
}

extension AudioFileReader {
    /// Decodes chunk after chunk on a dedicated thread, up to two chunks ahead of `body`, which
    /// runs on the calling thread and gets the chunks in order. Decoding (an MP3 decoder, or the
    /// copy out of the page cache) then overlaps what `body` does with the chunk before (for
    /// `proofkit trim`: converting and writing it), on a second core when there is one.
    ///
    /// Memory stays bounded: at most four chunks exist at a time, and their buffers are reused.
    /// The reader is used only by the decoding thread while this runs, and that thread has ended
    /// when this returns or throws (`position` is then up to date; a few frames past what `body`
    /// accepted may have been decoded when `body` stopped early).
    ///
    /// - Parameters:
    ///   - sampleType: `Float.self` or `Int16.self`.
    ///   - chunkFrames: frames per chunk, at least 1.
    ///   - frameLimit: decode at most this many frames in all, at least 1 (default `nil`: to
    ///     the end of the audio).
    ///   - body: called with each chunk (interleaved, whole frames, never empty); returns `false`
    ///     to stop decoding.
    /// - Throws: a decoding error (after the chunks before it went to `body`), or what `body`
    ///   throws. Calls `sf_readf_float` or `sf_readf_short` on the decoding thread.
    public mutating func forEachChunkDecodedAhead<Sample: DecodedSample>(
        of sampleType: Sample.Type, chunkFrames: Int, frameLimit: Int? = nil,
        _ body: (ArraySlice<Sample>) throws(ProofkitError) -> Bool
    ) throws(ProofkitError) {
        precondition(chunkFrames >= 1 && (frameLimit ?? 1) >= 1)
        let channels = format.channels
        let pipeline = ReadAheadPipeline<Sample>(depth: 2)
        try withUnsafeMutablePointer(to: &self) { (pointer) throws(ProofkitError) in
            // The pointer is valid for this closure, and the thread ends before it returns (the
            // defer below waits for it); until then only that thread touches the reader.
            let reader = ReaderPointer(pointer: pointer)
            runOnDedicatedThread {
                pipeline.produce(reader: reader, chunkFrames: chunkFrames, channels: channels, frameLimit: frameLimit)
            }
            defer { pipeline.stopAndWait() }
            while true {
                switch pipeline.next() {
                case .chunk(let buffer, let frames):
                    let keepGoing = try body(buffer[0..<(frames * channels)])
                    pipeline.recycle(consume buffer)  // unique again, so the decoder reuses it in place
                    if !keepGoing { return }
                case .end:
                    return
                case .failure(let error):
                    throw error
                }
            }
        }
    }
}

/// The reader, lent to the decoding thread for the duration of one
/// ``AudioFileReader/forEachChunkDecodedAhead(of:chunkFrames:frameLimit:_:)`` call.
/// `@unchecked Sendable`: exactly one thread uses it at a time (see there).
private struct ReaderPointer: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<AudioFileReader>
}

/// A bounded hand-over from one decoding thread to one consuming thread: `free` counts the
/// chunks the producer may still decode ahead, `filled` the items waiting for the consumer.
private final class ReadAheadPipeline<Sample: DecodedSample>: Sendable {
    enum Item {
        case chunk([Sample], frames: Int)
        case end
        case failure(ProofkitError)
    }

    struct State {
        var ready: [Item] = []
        var spare: [[Sample]] = []
        var stopped = false
    }

    let state = Mutex(State())
    // All start at 0: libdispatch traps when a semaphore is released below its initial value,
    // which `free` may be after an early stop. Its permits are signalled in `init` instead.
    let free = DispatchSemaphore(value: 0)
    let filled = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)

    init(depth: Int) {
        for _ in 0..<depth { free.signal() }
    }

    /// The decoding loop (on the decoding thread).
    func produce(reader: ReaderPointer, chunkFrames: Int, channels: Int, frameLimit: Int?) {
        defer { finished.signal() }
        var remaining = frameLimit ?? Int.max
        while true {
            free.wait()
            var buffer: [Sample]
            switch state.withLock({ state -> [Sample]? in
                state.stopped ? nil : (state.spare.popLast() ?? [])
            }) {
            case nil: return
            case let reused?: buffer = reused
            }
            if buffer.count < chunkFrames * channels {
                buffer = [Sample](repeating: .zero, count: chunkFrames * channels)
            }
            let item: Item
            if remaining == 0 {
                item = .end
            } else {
                do {
                    let frames = try Sample.read(&reader.pointer.pointee, into: &buffer, maxFrames: min(chunkFrames, remaining))
                    remaining -= frames
                    item = frames == 0 ? .end : .chunk(buffer, frames: frames)
                } catch {
                    item = .failure(error)
                }
            }
            state.withLock { $0.ready.append(item) }
            filled.signal()
            if case .chunk = item { continue }
            return
        }
    }

    /// The next item, in order (on the consuming thread); waits for the decoder.
    func next() -> Item {
        filled.wait()
        return state.withLock { $0.ready.removeFirst() }
    }

    /// Gives a consumed chunk's buffer back for reuse, and lets the decoder go one chunk further.
    func recycle(_ buffer: [Sample]) {
        state.withLock { $0.spare.append(buffer) }
        free.signal()
    }

    /// Stops the decoder (it finishes the chunk it is decoding, if any) and waits for its thread
    /// to end.
    func stopAndWait() {
        state.withLock { $0.stopped = true }
        free.signal()  // wakes a decoder waiting for room; it then sees `stopped`
        finished.wait()
    }
}
