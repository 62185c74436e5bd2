import Dispatch
public import PoseEstimation
public import ProofkitCore
internal import ProofkitSystem
import Synchronization
import VideoIO

/// Body pose on a sequence of frames, as MediaPipe Pose runs it on video (`static_image_mode`
/// off): the detector on the first frame, then each frame's region from the last frame's
/// (smoothed) tracking landmarks, and the detector again only when the landmark model's
/// presence drops below its threshold (that frame has nobody, and the next starts with the
/// detector, as in MediaPipe's graph); the landmarks smoothed over time
/// (`PoseLandmarkSmoother`, MediaPipe's `smooth_landmarks`).
///
/// Feed it RGB frames one at a time, from a file (``PoseVideo``) or a camera:
///
/// ```swift
/// let tracker = PoseTracker(estimator: try PoseEstimator(store: store))
/// for (image, seconds) in frames {
///     if let pose = try tracker.track(image, time: seconds).estimate { print(pose.landmarks[23]) }
/// }
/// ```
///
/// Blocking: each call runs the models on the calling thread. Not thread-safe: one tracker per
/// sequence. `@unchecked Sendable`: its state is owned here and used by one caller at a time.
public final class PoseTracker: @unchecked Sendable {
    /// The estimator that runs the models.
    public let estimator: PoseEstimator
    /// Whether landmarks are smoothed over time (default true, as MediaPipe's default).
    public let smoothing: Bool
    /// Frames tracked since the start (or the last ``reset()``).
    public private(set) var frames = 0
    /// Frames on which the detector ran.
    public private(set) var detectorRuns = 0
    /// The last frame's model times.
    public var lastTimings: PoseTimings { estimator.lastTimings }

    private var smoother: PoseLandmarkSmoother
    private var previous: PoseEstimate?
    private var previousSize: (width: Int, height: Int)?

    /// A tracker that has seen no frame.
    /// - Parameters:
    ///   - estimator: the models (one tracker per estimator at a time).
    ///   - smoothing: smooth the landmarks over time (default true).
    public init(estimator: PoseEstimator, smoothing: Bool = true) {
        self.estimator = estimator
        self.smoothing = smoothing
        smoother = PoseLandmarkSmoother(configuration: estimator.pipeline.configuration)
    }

    /// Forgets the frames seen: the next frame starts with the detector and unsmoothed.
    public func reset() {
        previous = nil
        previousSize = nil
        smoother.reset()
        frames = 0
        detectorRuns = 0
    }

    /// The pose in the next frame.
    /// - Parameters:
    ///   - image: the frame, upright RGB. A frame of another size than the last starts afresh.
    ///   - time: its time, in seconds, greater than the last frame's (the smoothing measures
    ///     speeds from it; a time that does not grow leaves the landmarks unsmoothed).
    /// - Returns: a person with 33 landmarks in the frame's pixels, or nobody in view.
    /// - Throws: `.internal` when ONNX Runtime fails; `.modelInvalid` when an output has the wrong size.
    public func track(_ image: RGBImage, time: Double) throws(ProofkitError) -> PoseObservation {
        if let size = previousSize, size.width != image.width || size.height != image.height {
            previous = nil
            smoother.reset()
        }
        previousSize = (image.width, image.height)
        let observation = try estimator.estimate(image: image, previous: previous, redetect: false)
        frames += 1
        if estimator.lastRanDetector { detectorRuns += 1 }
        let result = smoothing ? smoother.smooth(observation, time: time) : observation
        previous = result.estimate
        return result
    }
}

/// One frame of a video with its pose.
public struct PoseVideoFrame: Sendable, Equatable {
    /// A person with 33 landmarks in pixels of the frame, or nobody in view.
    public var observation: PoseObservation
    /// The frame's time, in seconds from the first frame.
    public var time: Double
    /// Its position among the frames, from 0.
    public var index: Int
    /// The analysed frame's width and height, in pixels (upright, scaled to at most
    /// ``PoseVideo/longestSide`` on the longer side).
    public var width: Int
    public var height: Int
    /// The time of each model on this frame.
    public var timings: PoseTimings
}

/// A video file read frame by frame through FFmpeg's libraries (loaded on first use), each frame
/// run through a ``PoseTracker``.
///
/// ```swift
/// let video = try PoseVideo(path: "squats.mp4", tracker: PoseTracker(estimator: estimator))
/// while let frame = try video.next() { print(frame.time, frame.observation.estimate != nil) }
/// if let stop = video.stop { print(stop) }   // a truncated or damaged file: where it stopped
/// ```
///
/// The next frames are decoded ahead on a thread of their own while the models run on this one
/// (as MediaPipe's graph overlaps its decoder and its calculators). Memory stays bounded: at most
/// ``framesAhead`` frames wait, each at most ``longestSide`` pixels on its longer side (scaled
/// while it is converted to RGB); a stream over 8192 x 4320 or more than 8:1 is refused.
/// `@unchecked Sendable`: the tracker is owned here and used by one caller at a time; the reader
/// by the decoding thread alone.
public final class PoseVideo: @unchecked Sendable {
    /// The longer side of the frames the models see, at most, in pixels.
    public static let longestSide = 1280
    /// How many decoded frames may wait for the models, at most: 2.
    public static let framesAhead = 2

    /// The tracker the frames go through.
    public let tracker: PoseTracker
    private let reader: VideoReader
    /// The decoding thread, started by the first frame asked for.
    private var started: FramesAhead?
    private var ahead: FramesAhead {
        if let started { return started }
        let ahead = FramesAhead(reader: reader, depth: Self.framesAhead)
        started = ahead
        return ahead
    }

    /// Opens a video and its decoder.
    /// - Parameters:
    ///   - path: the video file (MP4, MOV, MKV, WebM, AVI, MPEG...; by content).
    ///   - tracker: the tracker (a fresh one: the video's first frame starts with the detector).
    /// - Throws: `ProofkitError` naming `path`: `.notFound` (66), `.io` (74), `.decodeFailed` (65:
    ///   not a video, no video stream, empty), `.unsupportedFormat` (65: over 8192 x 4320 or
    ///   8:1), `.runtimeUnavailable` (69: an FFmpeg library is missing; the message names its
    ///   Debian package).
    public init(path: String, tracker: PoseTracker) throws(ProofkitError) {
        reader = try VideoReader(path: path, configuration: .init(longestSide: Self.longestSide))
        self.tracker = tracker
    }

    /// The stream's stored width and height, in pixels (before rotation and scaling).
    public var storedSize: (width: Int, height: Int) { (reader.storedWidth, reader.storedHeight) }
    /// The video codec's FFmpeg name.
    public var codec: String { reader.codec }
    /// The average frame rate, in frames per second, when known.
    public var frameRate: Double? { reader.frameRate }
    /// The stream's duration, in seconds, when known.
    public var duration: Double? { reader.duration }

    /// Where the frames ended early, once ``next()`` has returned `nil`: "stopped after frame N
    /// (T s): reason". `nil` when the file was read to its end.
    public var stop: String? { reader.stop?.description }

    /// The next frame's pose, or `nil` after the last frame that decodes.
    /// - Throws: ``PoseTracker/track(_:time:)``'s errors (ONNX Runtime); a damaged file is not
    ///   an error (see ``stop``).
    public func next() throws(ProofkitError) -> PoseVideoFrame? {
        guard let frame = try ahead.next() else { return nil }
        let observation = try tracker.track(frame.image, time: frame.time)
        return PoseVideoFrame(
            observation: observation, time: frame.time, index: frame.index, width: frame.image.width,
            height: frame.image.height, timings: tracker.lastTimings)
    }

    /// Decodes the next frame without running the models (for benchmarks of the decoder alone).
    /// - Returns: the frame, upright RGB, and its time in seconds; `nil` after the last.
    public func nextImage() throws(ProofkitError) -> (image: RGBImage, time: Double)? {
        guard let frame = try ahead.next() else { return nil }
        return (frame.image, frame.time)
    }

    /// Stops the decoding thread (after the frame it is decoding, if any).
    deinit { started?.cancel() }
}

/// A video's frames decoded ahead on a thread of their own, at most `depth` of them waiting, so
/// that decoding the next frame overlaps the work on this one. The reader is used by that thread
/// alone; the frames, the end (`nil`) and an error come out in order through ``next()``.
final class FramesAhead: Sendable {
    private let waiting = Mutex<[Result<VideoFrame?, ProofkitError>]>([])
    /// Signalled once per item put in `waiting`.
    private let ready = DispatchSemaphore(value: 0)
    /// Room left in `waiting` (`depth` at first).
    private let room: DispatchSemaphore
    private let cancelled = Atomic<Bool>(false)
    /// Whether ``next()`` has given the end or an error (nothing more comes).
    private let ended = Mutex(false)

    /// Starts decoding `reader`'s frames on a thread of its own.
    /// - Parameter depth: how many decoded frames may wait, at least 1.
    init(reader: VideoReader, depth: Int) {
        room = DispatchSemaphore(value: max(1, depth))
        runOnDedicatedThread { [self] in
            while true {
                room.wait()
                if cancelled.load(ordering: .acquiring) { return }
                let item = Result { () throws(ProofkitError) -> VideoFrame? in try reader.next() }
                waiting.withLock { $0.append(item) }
                ready.signal()
                guard case .success(.some) = item else { return }
            }
        }
    }

    /// The next frame, `nil` after the last (and from then on).
    /// - Throws: the reader's error, once; `nil` follows.
    func next() throws(ProofkitError) -> VideoFrame? {
        if ended.withLock({ $0 }) { return nil }
        ready.wait()
        let item = waiting.withLock { $0.removeFirst() }
        room.signal()
        if case .success(.some) = item { return try item.get() }
        ended.withLock { $0 = true }
        return try item.get()
    }

    /// Asks the thread to stop after the frame it is decoding (it keeps the reader until then).
    func cancel() {
        cancelled.store(true, ordering: .releasing)
        room.signal()
    }
}
