#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A rotated rectangle of an image, in pixels: the part of the photo the landmark model sees.
public struct PoseRegion: Sendable, Equatable {
    /// The centre, in pixels from the image's left edge.
    public var centerX: Double
    /// The centre, in pixels from the image's top edge.
    public var centerY: Double
    /// The side along the region's own x axis, in pixels.
    public var width: Double
    /// The side along the region's own y axis, in pixels.
    public var height: Double
    /// The rotation, in radians in [-π, π), clockwise on screen (y grows downward).
    public var rotation: Double

    /// Creates a region (pixels, radians).
    public init(centerX: Double, centerY: Double, width: Double, height: Double, rotation: Double) {
        self.centerX = centerX
        self.centerY = centerY
        self.width = width
        self.height = height
        self.rotation = rotation
    }

    /// The whole image padded to a square, unrotated: the detector's view.
    public static func letterbox(imageWidth width: Int, imageHeight height: Int) -> PoseRegion {
        let side = Double(max(width, height))
        return PoseRegion(
            centerX: Double(width) / 2, centerY: Double(height) / 2, width: side, height: side, rotation: 0)
    }

    /// `angle` wrapped into [-π, π).
    public static func normalizedAngle(_ angle: Double) -> Double {
        angle - 2 * Double.pi * ((angle + Double.pi) / (2 * Double.pi)).rounded(.down)
    }

    /// MediaPipe's `AlignmentPointsRectsCalculator` then `RectTransformationCalculator`: a square
    /// centred on `start`, whose side is twice the distance from `start` to `end` times `scale`,
    /// rotated so that the start→end vector points at `targetAngle` (π/2: straight up).
    /// - Parameters:
    ///   - start: the centre point (the hip centre), in pixels.
    ///   - end: the size and rotation point, in pixels.
    ///   - targetAngle: radians (π/2 for the pose graphs).
    ///   - scale: the side's scale (1.25 for the pose graphs).
    public static func aligned(start: PosePoint, end: PosePoint, targetAngle: Double, scale: Double) -> PoseRegion {
        let size = hypot(end.x - start.x, end.y - start.y) * 2
        let rotation = normalizedAngle(targetAngle - atan2(-(end.y - start.y), end.x - start.x))
        return PoseRegion(
            centerX: start.x, centerY: start.y, width: size * scale, height: size * scale, rotation: rotation)
    }

    /// The region of a detection (its keypoints normalised to the image), as
    /// `pose_detection_to_roi.pbtxt` makes it.
    public static func from(
        detection: PoseDetection, imageWidth width: Int, imageHeight height: Int,
        configuration: PosePipelineConfiguration = .mediaPipe
    ) -> PoseRegion {
        let (start, end) = configuration.regionKeypoints
        let w = Double(width)
        let h = Double(height)
        return aligned(
            start: PosePoint(x: detection.keypoints[start].x * w, y: detection.keypoints[start].y * h),
            end: PosePoint(x: detection.keypoints[end].x * w, y: detection.keypoints[end].y * h),
            targetAngle: configuration.targetAngle, scale: configuration.regionScale)
    }

    /// The next frame's region from this frame's landmarks (in pixels, as ``PoseLandmarkDecoder``
    /// gives them: all of the model's landmarks, the auxiliary ones included), as
    /// `pose_landmarks_to_roi.pbtxt` makes it when tracking a video; `nil` when the auxiliary
    /// landmarks are missing.
    public static func tracking(
        landmarks: [PoseLandmark], configuration: PosePipelineConfiguration = .mediaPipe
    ) -> PoseRegion? {
        let (start, end) = configuration.trackingLandmarks
        guard landmarks.indices.contains(start), landmarks.indices.contains(end) else { return nil }
        return aligned(
            start: PosePoint(x: landmarks[start].x, y: landmarks[start].y),
            end: PosePoint(x: landmarks[end].x, y: landmarks[end].y), targetAngle: configuration.targetAngle,
            scale: configuration.regionScale)
    }

    /// The map from a `width` x `height` tensor's pixel (u, v) to the image's pixel coordinates:
    /// the region's corners go to the tensor's corners, pixel indices as coordinates (MediaPipe's
    /// `GetRotatedSubRectToRectTransformMatrix` as its OpenCV converter uses it).
    public func tensorToImage(width: Int, height: Int) -> PoseAffineTransform {
        let c = cos(rotation)
        let s = sin(rotation)
        let sx = self.width / Double(width)
        let sy = self.height / Double(height)
        let halfWidth = Double(width) / 2
        let halfHeight = Double(height) / 2
        return PoseAffineTransform(
            a: c * sx, b: -s * sy, tx: centerX - c * sx * halfWidth + s * sy * halfHeight,
            c: s * sx, d: c * sy, ty: centerY - s * sx * halfWidth - c * sy * halfHeight)
    }
}

/// An affine map of the plane: (x, y) → (a x + b y + tx, c x + d y + ty).
public struct PoseAffineTransform: Sendable, Equatable {
    public var a: Double
    public var b: Double
    public var tx: Double
    public var c: Double
    public var d: Double
    public var ty: Double

    /// Creates the map (x, y) → (a x + b y + tx, c x + d y + ty).
    public init(a: Double, b: Double, tx: Double, c: Double, d: Double, ty: Double) {
        self.a = a
        self.b = b
        self.tx = tx
        self.c = c
        self.d = d
        self.ty = ty
    }

    /// The image of `point`.
    public func apply(_ point: PosePoint) -> PosePoint {
        PosePoint(x: a * point.x + b * point.y + tx, y: c * point.x + d * point.y + ty)
    }

    /// The inverse map (image to tensor), or `nil` when this one is singular.
    public var inverted: PoseAffineTransform? {
        let determinant = a * d - b * c
        guard determinant != 0, determinant.isFinite else { return nil }
        let ia = d / determinant
        let ib = -b / determinant
        let ic = -c / determinant
        let id = a / determinant
        return PoseAffineTransform(a: ia, b: ib, tx: -(ia * tx + ib * ty), c: ic, d: id, ty: -(ic * tx + id * ty))
    }
}
