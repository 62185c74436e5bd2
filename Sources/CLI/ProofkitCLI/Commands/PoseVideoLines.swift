import Proofkit
import ProofkitCore
internal import ProofkitSystem

/// A video's frames as `pose --json` lines (squat's keypoint format), shared by `pose VIDEO` and
/// `squat --video`, so that counting from a video and counting from its `pose --json` lines read
/// the very same lines.
enum PoseVideoLines {
    /// Whether `path` holds a photo (JPEG or PNG, by its first bytes). A file that cannot be read
    /// counts as a photo, so that the photo reader words the error (66, 74).
    static func isPhoto(_ path: String) -> Bool {
        guard let (fd, _) = try? POSIX.openInput(path, what: "photo") else { return true }
        defer { POSIX.closeDescriptor(fd) }
        guard case .success(let prefix) = POSIX.readPrefix(fd, count: 8) else { return true }
        return prefix.starts(with: [0xFF, 0xD8, 0xFF]) || prefix.starts(with: [0x89, 0x50, 0x4E, 0x47])
    }

    /// Runs every frame of the video at `path` through a fresh tracker and hands each frame's
    /// JSON line to `each`, with `t` = `offset` + the frame's time (seconds, 6 decimals). Shows a
    /// progress bar on a terminal.
    /// - Returns: where the frames ended early ("stopped after frame N (T s): reason"), or `nil`.
    /// - Throws: the video's errors (65, 66, 69, 74) and the models' (``PoseTracker/track(_:time:)``);
    ///   `each`'s.
    static func run(
        path: String, estimator: PoseEstimator, joints: [(name: String, index: Int)], offset: Double = 0,
        io: CommandIO, each: (PoseVideoFrame, JSONValue) throws -> Void
    ) throws -> String? {
        let video = try PoseVideo(path: path, tracker: PoseTracker(estimator: estimator))
        let totalMilliseconds = Int(((video.duration ?? 0) * 1000).rounded())
        var progress = ProgressBar(io: io, label: "pose \(displayName(path))", total: totalMilliseconds)
        defer { progress.finish() }
        while let frame = try video.next() {
            let line = PoseCommand.line(
                frame.observation, width: frame.width, height: frame.height,
                time: .rounded(offset + frame.time, places: 6), path: path, joints: joints, frame: frame.index)
            try each(frame, line)
            if totalMilliseconds > 0 { progress.update(Int(frame.time * 1000)) }
        }
        return video.stop
    }
}
