import ProofkitCore

/// MediaPipe's `LowPassFilter` (an exponential moving average): the first value passes through,
/// each later one is `alpha * value + (1 - alpha) * previous output`.
public struct LowPassFilter: Sendable, Equatable {
    /// The last input, once there has been one.
    public private(set) var lastRawValue: Double?
    /// The last output.
    public private(set) var lastValue = 0.0

    /// A filter that has seen nothing.
    public init() {}

    /// Filters `value` with weight `alpha` (0...1: 1 keeps the new value, 0 the old).
    /// - Returns: the filtered value.
    public mutating func apply(_ value: Double, alpha: Double) -> Double {
        let result = lastRawValue == nil ? value : alpha * value + (1 - alpha) * lastValue
        lastRawValue = value
        lastValue = result
        return result
    }
}

/// The 1€ filter (Casiez, Roussel and Vogel, CHI 2012) as MediaPipe's `OneEuroFilter` runs it: a
/// low-pass filter whose cut-off rises with the (filtered) speed of the value, so that a still
/// value is smoothed hard and a moving one follows with little lag.
///
/// Time is in seconds. As in MediaPipe, the sampling frequency starts at ``frequency`` and is
/// then measured from the gaps between timestamps; a value whose time is not after the last one
/// is returned unfiltered and changes nothing; the speed is measured in units of the value per
/// second times `valueScale` (1 / the object's size, so that it does not depend on how far the
/// person stands).
public struct OneEuroFilter: Sendable, Equatable {
    /// The cut-off, in hertz, of a still value (lower smooths more).
    public var minimumCutoff: Double
    /// How much the cut-off rises per unit of speed (higher lags less).
    public var beta: Double
    /// The cut-off, in hertz, of the speed's own smoothing.
    public var derivativeCutoff: Double
    /// The sampling frequency, in hertz: the configured one until two timestamps give it.
    public private(set) var frequency: Double
    private var value = LowPassFilter()
    private var derivative = LowPassFilter()
    private var lastTime = 0.0

    /// Creates a filter (MediaPipe's defaults for the frequency: 30 Hz).
    public init(minimumCutoff: Double, beta: Double, derivativeCutoff: Double, frequency: Double = 30) {
        self.minimumCutoff = minimumCutoff
        self.beta = beta
        self.derivativeCutoff = derivativeCutoff
        self.frequency = frequency
    }

    /// Filters `value` seen at `time` (seconds).
    /// - Parameters:
    ///   - value: the new measurement.
    ///   - time: when it was seen, in seconds.
    ///   - valueScale: the factor applied to the speed (1 / the object's size).
    /// - Returns: the filtered value.
    public mutating func apply(_ value: Double, time: Double, valueScale: Double = 1) -> Double {
        // MediaPipe keeps the last time as an integer count of nanoseconds, 0 meaning none yet.
        if lastTime >= time { return value }
        if lastTime != 0 && time != 0 { frequency = 1 / (time - lastTime) }
        lastTime = time
        let speed = self.value.lastRawValue.map { (value - $0) * valueScale * frequency } ?? 0
        let smoothedSpeed = derivative.apply(speed, alpha: alpha(cutoff: derivativeCutoff))
        let cutoff = minimumCutoff + beta * abs(smoothedSpeed)
        return self.value.apply(value, alpha: alpha(cutoff: cutoff))
    }

    /// The smoothing weight of a cut-off at the current frequency: 1 / (1 + tau / te).
    private func alpha(cutoff: Double) -> Double {
        let periodSeconds = 1 / frequency
        let timeConstant = 1 / (2 * Double.pi * cutoff)
        return 1 / (1 + timeConstant / periodSeconds)
    }
}

/// MediaPipe Pose's landmark smoothing on video (`PoseLandmarkFiltering`, enabled by its
/// `smooth_landmarks`): each landmark's visibility through a low-pass filter (alpha 0.1), and its
/// x, y and z through a 1€ filter, the 33 body landmarks with a minimum cut-off of 0.05 Hz and a
/// beta of 80, the two tracking landmarks (33 and 34) with 0.01 Hz and 10, both with a derivative
/// cut-off of 1 Hz. Speeds are scaled by 1 / the person's size: twice the distance between the
/// two tracking landmarks, in pixels (the side of the box MediaPipe aligns on them). A frame
/// without a person resets every filter, so a person who comes back starts afresh.
///
/// Pure: values in, values out; the caller gives each frame's time.
public struct PoseLandmarkSmoother: Sendable {
    /// The body landmarks' filter settings (min cut-off Hz, beta, derivative cut-off Hz).
    public static let bodyFilter = (minimumCutoff: 0.05, beta: 80.0, derivativeCutoff: 1.0)
    /// The tracking landmarks' filter settings.
    public static let trackingFilter = (minimumCutoff: 0.01, beta: 10.0, derivativeCutoff: 1.0)
    /// The visibility filter's weight of the new value.
    public static let visibilityAlpha = 0.1
    /// The smallest person size, in pixels, that is smoothed (MediaPipe's `min_allowed_object_scale`);
    /// below it landmarks pass unfiltered.
    public static let minimumObjectScale = 1e-6

    /// The pipeline's constants (which landmarks are the body's and which track).
    public let configuration: PosePipelineConfiguration
    private var coordinates: [OneEuroFilter] = []
    private var visibilities: [LowPassFilter] = []

    /// A smoother that has seen no frame.
    public init(configuration: PosePipelineConfiguration = .mediaPipe) {
        self.configuration = configuration
    }

    /// Forgets every frame (the next one passes unfiltered).
    public mutating func reset() {
        coordinates = []
        visibilities = []
    }

    /// The frame's landmarks smoothed with the frames before.
    /// - Parameters:
    ///   - observation: the frame's result; nobody in view resets the filters and is returned as is.
    ///   - time: the frame's time, in seconds (greater than the last frame's).
    /// - Returns: the observation with its landmarks (``PoseEstimate/landmarks`` and the same
    ///   in ``PoseEstimate/allLandmarks``, and the tracking landmarks there) smoothed; the
    ///   presence, region and detection unchanged.
    public mutating func smooth(_ observation: PoseObservation, time: Double) -> PoseObservation {
        guard case .person(var estimate) = observation else {
            reset()
            return observation
        }
        let body = configuration.poseLandmarks
        let (start, end) = configuration.trackingLandmarks
        let tracked = estimate.allLandmarks.count > max(start, end)
        let count = tracked ? max(body, start + 1, end + 1) : min(body, estimate.allLandmarks.count)
        guard count > 0 else { return observation }
        var scale = 0.0
        if tracked {
            let (a, b) = (estimate.allLandmarks[start], estimate.allLandmarks[end])
            scale = 2 * ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
        }
        if coordinates.count != count * 3 {
            coordinates = (0..<count * 3).map { index in
                let settings = index / 3 < body ? Self.bodyFilter : Self.trackingFilter
                return OneEuroFilter(
                    minimumCutoff: settings.minimumCutoff, beta: settings.beta,
                    derivativeCutoff: settings.derivativeCutoff)
            }
            visibilities = Array(repeating: LowPassFilter(), count: count)
        }
        var landmarks = estimate.allLandmarks
        for index in 0..<count where index < body || index == start || index == end {
            var landmark = landmarks[index]
            landmark.visibility = visibilities[index].apply(landmark.visibility, alpha: Self.visibilityAlpha)
            if scale >= Self.minimumObjectScale {
                let valueScale = 1 / scale
                landmark.x = coordinates[index * 3].apply(landmark.x, time: time, valueScale: valueScale)
                landmark.y = coordinates[index * 3 + 1].apply(landmark.y, time: time, valueScale: valueScale)
                landmark.z = coordinates[index * 3 + 2].apply(landmark.z, time: time, valueScale: valueScale)
            }
            landmarks[index] = landmark
        }
        estimate.allLandmarks = landmarks
        estimate.landmarks = Array(landmarks.prefix(min(body, estimate.landmarks.count)))
        return .person(estimate)
    }
}
