public import ProofkitCore

/// MediaPipe Pose's single-person pipeline around its two models, without running them: the
/// caller runs the detector and the landmark model on the inputs this gives and hands their
/// outputs back (the facade's `PoseEstimator` does, with ONNX Runtime).
///
/// A photo (static image mode): ``detectorInput(of:)`` → detector → ``firstDetection(regressors:scores:imageWidth:imageHeight:)``
/// → ``region(of:imageWidth:imageHeight:)`` → ``landmarkInput(of:region:)`` → landmark model →
/// ``observation(landmarks:presence:heatmap:region:detection:)``. A video frame may instead take
/// its region from the previous frame's estimate (``PoseRegion/tracking(landmarks:configuration:)``)
/// and run the detector only when that frame had nobody.
///
/// Pure: no I/O, no clock; values only.
public struct PosePipeline: Sendable {
    /// The pipeline's constants.
    public let configuration: PosePipelineConfiguration
    /// Box, keypoint and score decoding, and the suppression.
    public let detections: PoseDetectionDecoder
    /// Refinement and projection of the landmarks.
    public let landmarks: PoseLandmarkDecoder

    /// Creates the pipeline (the anchors are generated here).
    public init(configuration: PosePipelineConfiguration = .mediaPipe) {
        self.configuration = configuration
        detections = PoseDetectionDecoder(configuration: configuration)
        landmarks = PoseLandmarkDecoder(configuration: configuration)
    }

    /// The detector's input tensor, `[1, side, side, 3]` in [-1, 1] (side 224): the image letterboxed.
    public func detectorInput(of image: RGBImage) -> [Float] {
        PoseCrop.detectorInput(of: image, side: configuration.detectorInputSize)
    }

    /// The first detection, normalised to the image, or `nil` when nobody was detected.
    /// - Throws: `.modelInvalid` when the outputs do not fit the anchors.
    public func firstDetection(regressors: [Float], scores: [Float], imageWidth: Int, imageHeight: Int)
        throws(ProofkitError) -> PoseDetection?
    {
        try detections.firstDetection(
            regressors: regressors, scores: scores,
            letterbox: PoseLetterbox(imageWidth: imageWidth, imageHeight: imageHeight))
    }

    /// Every detection after the suppression, best first, normalised to the image: one per person
    /// the detector sees (empty when nobody). The first is ``firstDetection(regressors:scores:imageWidth:imageHeight:)``'s.
    /// - Throws: `.modelInvalid` when the outputs do not fit the anchors.
    public func allDetections(regressors: [Float], scores: [Float], imageWidth: Int, imageHeight: Int)
        throws(ProofkitError) -> [PoseDetection]
    {
        try detections.allDetections(
            regressors: regressors, scores: scores,
            letterbox: PoseLetterbox(imageWidth: imageWidth, imageHeight: imageHeight))
    }

    /// The landmark model's region for a detection, in pixels.
    public func region(of detection: PoseDetection, imageWidth: Int, imageHeight: Int) -> PoseRegion {
        PoseRegion.from(
            detection: detection, imageWidth: imageWidth, imageHeight: imageHeight, configuration: configuration)
    }

    /// The landmark model's input tensor, `[1, side, side, 3]` in [0, 1] (side 256): the region warped.
    public func landmarkInput(of image: RGBImage, region: PoseRegion) -> [Float] {
        PoseCrop.landmarkInput(of: image, region: region, side: configuration.landmarkInputSize)
    }

    /// The frame's result from the landmark model's outputs.
    /// - Parameters:
    ///   - raw: the `landmarks` output (39 x 5 values).
    ///   - presence: the `presence` output (a probability; the model ends in a sigmoid).
    ///   - heatmap: the `heatmap` output (64 x 64 x 39 logits).
    ///   - region: the region the crop came from.
    ///   - detection: the detection the region came from (`nil` when tracked).
    /// - Returns: `.person` when the presence is above the threshold, else `.nobody(.lowPresence)`.
    /// - Throws: `.modelInvalid` when the outputs' sizes do not fit.
    public func observation(
        landmarks raw: [Float], presence: Float, heatmap: [Float], region: PoseRegion, detection: PoseDetection?
    ) throws(ProofkitError) -> PoseObservation {
        let all = try landmarks.landmarks(raw: raw, heatmap: heatmap, region: region)
        let presence = Double(presence)
        guard presence > configuration.presenceThreshold else { return .nobody(.lowPresence(presence)) }
        return .person(
            PoseEstimate(
                detection: detection, region: region, presence: presence,
                landmarks: Array(all.prefix(configuration.poseLandmarks)), allLandmarks: all))
    }
}
