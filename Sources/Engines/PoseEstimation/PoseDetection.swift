public import ProofkitCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A point in a 2-D frame (normalised or in pixels, as its owner says).
public struct PosePoint: Sendable, Equatable {
    /// Horizontal, growing to the right.
    public var x: Double
    /// Vertical, growing downward.
    public var y: Double

    /// Creates a point.
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}

/// An axis-aligned box (normalised or in pixels, as its owner says).
public struct PoseBox: Sendable, Equatable {
    /// Left edge.
    public var minX: Double
    /// Top edge.
    public var minY: Double
    /// Right edge.
    public var maxX: Double
    /// Bottom edge.
    public var maxY: Double

    /// Creates a box from its edges.
    public init(minX: Double, minY: Double, maxX: Double, maxY: Double) {
        self.minX = minX
        self.minY = minY
        self.maxX = maxX
        self.maxY = maxY
    }

    /// Width times height (0 for an inverted box).
    public var area: Double { max(0, maxX - minX) * max(0, maxY - minY) }

    /// Intersection over union with `other`, 0...1 (0 when the union is empty).
    public func intersectionOverUnion(_ other: PoseBox) -> Double {
        let width = max(0, min(maxX, other.maxX) - max(minX, other.minX))
        let height = max(0, min(maxY, other.maxY) - max(minY, other.minY))
        let intersection = width * height
        let union = (maxX - minX) * (maxY - minY) + (other.maxX - other.minX) * (other.maxY - other.minY) - intersection
        return union > 0 ? intersection / union : 0
    }
}

/// One person found by the pose detector: the face's box and four body keypoints (hip centre,
/// full-body scale point, shoulder centre, upper-body scale point), all normalised to the frame
/// they were decoded in (the letterboxed detector input, then the image once the letterbox is removed).
public struct PoseDetection: Sendable, Equatable {
    /// The sigmoid of the anchor's score logit, 0...1 (after suppression: the best candidate's).
    public var score: Double
    /// The anchor it was decoded from (after suppression: the best candidate's).
    public var anchor: Int
    /// The face's box, normalised.
    public var box: PoseBox
    /// The keypoints, normalised.
    public var keypoints: [PosePoint]
    /// How many candidates were averaged into it by the weighted suppression (1 before).
    public var mergedCount: Int

    /// Creates a detection.
    public init(score: Double, anchor: Int, box: PoseBox, keypoints: [PosePoint], mergedCount: Int = 1) {
        self.score = score
        self.anchor = anchor
        self.box = box
        self.keypoints = keypoints
        self.mergedCount = mergedCount
    }
}

/// The fraction of the letterboxed square on each side that is padding (MediaPipe's `PadRoi`):
/// the detector sees the whole image scaled to fit, centred.
public struct PoseLetterbox: Sendable, Equatable {
    /// Left and right padding, each a fraction of the square's side.
    public var horizontal: Double
    /// Top and bottom padding, each a fraction of the square's side.
    public var vertical: Double

    /// The padding of a `width` x `height` image fitted into a square.
    public init(imageWidth width: Int, imageHeight height: Int) {
        let side = Double(max(width, height, 1))
        horizontal = (1 - Double(width) / side) / 2
        vertical = (1 - Double(height) / side) / 2
    }

    /// A detection normalised to the square, normalised to the image instead
    /// (MediaPipe's `DetectionLetterboxRemovalCalculator`).
    public func removed(from detection: PoseDetection) -> PoseDetection {
        let scaleX = 1 - 2 * horizontal
        let scaleY = 1 - 2 * vertical
        var result = detection
        result.box = PoseBox(
            minX: (detection.box.minX - horizontal) / scaleX, minY: (detection.box.minY - vertical) / scaleY,
            maxX: (detection.box.maxX - horizontal) / scaleX, maxY: (detection.box.maxY - vertical) / scaleY)
        result.keypoints = detection.keypoints.map {
            PosePoint(x: ($0.x - horizontal) / scaleX, y: ($0.y - vertical) / scaleY)
        }
        return result
    }
}

/// Turns the pose detector's raw outputs into detections: box and keypoint decoding against the
/// anchors, the sigmoid score, and weighted non-maximum suppression (MediaPipe's
/// `TensorsToDetectionsCalculator` and `NonMaxSuppressionCalculator` as `pose_detection_cpu.pbtxt`
/// sets them).
public struct PoseDetectionDecoder: Sendable {
    /// The pipeline's constants.
    public let configuration: PosePipelineConfiguration
    /// The anchors, in output order (2254 for BlazePose).
    public let anchors: [SSDAnchor]

    /// Values per anchor in the `regressors` output: x, y, w, h, then x, y per keypoint (12).
    public var valuesPerAnchor: Int { 4 + 2 * configuration.detectionKeypoints }

    /// Creates a decoder and its anchors.
    public init(configuration: PosePipelineConfiguration = .mediaPipe) {
        self.configuration = configuration
        anchors = configuration.anchors.anchors()
    }

    /// The candidates whose score is at least the minimum, in anchor order, normalised to the
    /// detector's (letterboxed) input.
    /// - Parameters:
    ///   - regressors: the `regressors` output, anchors x ``valuesPerAnchor`` values (pixels of
    ///     the detector input, relative to each anchor's centre).
    ///   - scores: the `scores` output, one logit per anchor.
    /// - Throws: `.modelInvalid` when the counts do not fit the anchors.
    public func candidates(regressors: [Float], scores: [Float]) throws(ProofkitError) -> [PoseDetection] {
        let stride = valuesPerAnchor
        guard scores.count == anchors.count, regressors.count == anchors.count * stride else {
            throw ProofkitError(
                .modelInvalid,
                "the pose detector gave \(scores.count) scores and \(regressors.count) values; expected \(anchors.count) and \(anchors.count * stride)"
            )
        }
        let scale = configuration.detectorCoordinateScale
        let clip = configuration.scoreClipping
        var found: [PoseDetection] = []
        for index in anchors.indices {
            let logit = min(max(Double(scores[index]), -clip), clip)
            let score = 1 / (1 + exp(-logit))
            guard score >= configuration.minimumDetectionScore else { continue }
            let anchor = anchors[index]
            let base = index * stride
            let (anchorX, anchorY) = (Double(anchor.centerX), Double(anchor.centerY))
            let (anchorWidth, anchorHeight) = (Double(anchor.width), Double(anchor.height))
            let centerX = Double(regressors[base]) / scale * anchorWidth + anchorX
            let centerY = Double(regressors[base + 1]) / scale * anchorHeight + anchorY
            let width = Double(regressors[base + 2]) / scale * anchorWidth
            let height = Double(regressors[base + 3]) / scale * anchorHeight
            let keypoints = (0..<configuration.detectionKeypoints).map { k in
                PosePoint(
                    x: Double(regressors[base + 4 + 2 * k]) / scale * anchorWidth + anchorX,
                    y: Double(regressors[base + 5 + 2 * k]) / scale * anchorHeight + anchorY)
            }
            found.append(
                PoseDetection(
                    score: score, anchor: index,
                    box: PoseBox(
                        minX: centerX - width / 2, minY: centerY - height / 2, maxX: centerX + width / 2,
                        maxY: centerY + height / 2),
                    keypoints: keypoints))
        }
        return found
    }

    /// Weighted non-maximum suppression: the best remaining candidate's group (every remaining
    /// candidate whose box overlaps it by more than the threshold, itself included) becomes one
    /// detection whose box and keypoints are the group's score-weighted means and whose score is
    /// the best one's; repeated until no candidate is left.
    /// - Returns: the detections, best first.
    public func suppressed(_ candidates: [PoseDetection]) -> [PoseDetection] {
        // Stable: equal scores keep anchor order.
        var remaining = candidates.enumerated().sorted {
            $0.element.score != $1.element.score ? $0.element.score > $1.element.score : $0.offset < $1.offset
        }.map(\.element)
        var result: [PoseDetection] = []
        while let best = remaining.first {
            var group: [PoseDetection] = []
            var rest: [PoseDetection] = []
            for candidate in remaining {
                if candidate.box.intersectionOverUnion(best.box) > configuration.suppressionThreshold {
                    group.append(candidate)
                } else {
                    rest.append(candidate)
                }
            }
            let total = group.reduce(0) { $0 + $1.score }
            func mean(_ value: (PoseDetection) -> Double) -> Double {
                group.reduce(0) { $0 + value($1) * $1.score } / total
            }
            var merged = best
            if !group.isEmpty && total > 0 {
                merged.box = PoseBox(
                    minX: mean(\.box.minX), minY: mean(\.box.minY), maxX: mean(\.box.maxX), maxY: mean(\.box.maxY))
                merged.keypoints = best.keypoints.indices.map { k in
                    PosePoint(x: mean { $0.keypoints[k].x }, y: mean { $0.keypoints[k].y })
                }
            }
            merged.mergedCount = group.count
            result.append(merged)
            if rest.count == remaining.count { break }  // nothing overlapped, not even itself (a NaN box)
            remaining = rest
        }
        return result
    }

    /// The first detection of a frame, normalised to the image, or `nil` when there is nobody:
    /// decoding, suppression, then the letterbox removed.
    /// - Throws: `.modelInvalid` when the outputs do not fit the anchors.
    public func firstDetection(regressors: [Float], scores: [Float], letterbox: PoseLetterbox)
        throws(ProofkitError) -> PoseDetection?
    {
        try allDetections(regressors: regressors, scores: scores, letterbox: letterbox).first
    }

    /// Every detection of a frame after the suppression, best first, normalised to the image:
    /// one per person the detector sees (MediaPipe Pose follows only the first).
    /// - Throws: `.modelInvalid` when the outputs do not fit the anchors.
    public func allDetections(regressors: [Float], scores: [Float], letterbox: PoseLetterbox)
        throws(ProofkitError) -> [PoseDetection]
    {
        try suppressed(candidates(regressors: regressors, scores: scores)).map(letterbox.removed(from:))
    }
}
