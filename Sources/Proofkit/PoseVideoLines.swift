public import PoseEstimation
public import ProofkitCore
internal import ProofkitSystem

/// A video's frames as `pose --json` lines (squat's keypoint format), shared by `pose VIDEO`,
/// `squat --video` and `alarm prove --squat --video`, so that counting from a video and counting
/// from its `pose --json` lines read the very same lines.
public enum PoseVideoLines {
    /// The landmarks printed: squat's 8 joints or all 33, as (name, landmark number).
    public static func reported(all: Bool) -> [(name: String, index: Int)] {
        if all { return PoseSkeleton.landmarkNames.enumerated().map { ($1, $0) } }
        return PoseJoint.allCases.map { ($0.rawValue, PoseSkeleton.landmarkIndex(of: $0)) }
    }

    /// Whether `path` holds a photo (JPEG or PNG, by its first bytes). A file that cannot be read
    /// counts as a photo, so that the photo reader words the error (66, 74).
    public static func isPhoto(_ path: String) -> Bool {
        guard let (fd, _) = try? POSIX.openInput(path, what: "photo") else { return true }
        defer { POSIX.closeDescriptor(fd) }
        guard case .success(let prefix) = POSIX.readPrefix(fd, count: 8) else { return true }
        return prefix.starts(with: [0xFF, 0xD8, 0xFF]) || prefix.starts(with: [0x89, 0x50, 0x4E, 0x47])
    }

    /// Runs every frame of the video at `path` through a fresh tracker and hands each frame's
    /// JSON line to `each`, with `t` = `offset` + the frame's time (seconds, 6 decimals).
    /// - Parameters:
    ///   - path: the video (any container and codec FFmpeg's libraries read).
    ///   - estimator: the pose models.
    ///   - joints: the landmarks reported (``reported(all:)``).
    ///   - offset: added to each frame's time, in seconds (default 0).
    ///   - progress: called once with the video's length in milliseconds (0 when unknown), then
    ///     after each frame with its time in milliseconds.
    ///   - each: each frame and its line.
    /// - Returns: where the frames ended early ("stopped after frame N (T s): reason"), or `nil`.
    /// - Throws: the video's errors (65, 66, 69, 74) and the models' (``PoseTracker/track(_:time:)``);
    ///   `each`'s.
    public static func run(
        path: String, estimator: PoseEstimator, joints: [(name: String, index: Int)], offset: Double = 0,
        progress: (_ milliseconds: Int) -> Void = { _ in }, each: (PoseVideoFrame, JSONValue) throws -> Void
    ) throws -> String? {
        let video = try PoseVideo(path: path, tracker: PoseTracker(estimator: estimator))
        progress(Int(((video.duration ?? 0) * 1000).rounded()))
        while let frame = try video.next() {
            let line = line(
                frame.observation, width: frame.width, height: frame.height,
                time: .rounded(offset + frame.time, places: 6), path: path, joints: joints, frame: frame.index)
            try each(frame, line)
            progress(Int(frame.time * 1000))
        }
        return video.stop
    }

    /// One frame's JSON line: `t`, the keypoints normalised to the frame, and the frame's details
    /// (`frame`: its position in a video, when it is one): `proofkit pose --json`'s line, which
    /// `squat` reads back (SquatCounting's `PoseLineDecoder`).
    /// - Parameters:
    ///   - observation: the pose found, or why nobody was.
    ///   - width: the frame's width, in pixels.
    ///   - height: the frame's height, in pixels.
    ///   - time: `t`, in seconds.
    ///   - path: the input, as `file`.
    ///   - joints: the landmarks reported (``reported(all:)``).
    ///   - frame: the frame's position in a video, or `nil`.
    public static func line(
        _ observation: PoseObservation, width: Int, height: Int, time: JSONValue, path: String,
        joints: [(name: String, index: Int)], frame: Int? = nil
    ) -> JSONValue {
        var object: [String: JSONValue] = [
            "t": time, "file": .string(path), "width": .int(width), "height": .int(height),
        ]
        if let frame { object["frame"] = .int(frame) }
        switch observation {
        case .person(let pose):
            var keypoints: [String: JSONValue] = [:]
            for joint in joints {
                let landmark = pose.landmarks[joint.index]
                keypoints[joint.name] = [
                    .rounded(landmark.x / Double(width), places: 6),
                    .rounded(landmark.y / Double(height), places: 6), .rounded(landmark.visibility, places: 4),
                ]
            }
            object["keypoints"] = .object(keypoints)
            object["person"] = true
            object["reason"] = nil
            object["presence"] = .rounded(pose.presence, places: 4)
        case .nobody(let absence):
            object["keypoints"] = .object([:])
            object["person"] = false
            switch absence {
            case .noDetection:
                object["reason"] = "no detection"
                object["presence"] = nil
            case .lowPresence(let presence):
                object["reason"] = "low presence"
                object["presence"] = .rounded(presence, places: 4)
            }
        }
        return .object(object)
    }
}
