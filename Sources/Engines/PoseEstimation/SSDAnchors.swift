/// One anchor of a single-shot detector, normalised to the detector's input (0...1).
public struct SSDAnchor: Sendable, Equatable {
    /// The anchor's centre, normalised to the input's width.
    public var centerX: Float
    /// The anchor's centre, normalised to the input's height.
    public var centerY: Float
    /// The anchor's width, normalised (1 with a fixed anchor size).
    public var width: Float
    /// The anchor's height, normalised (1 with a fixed anchor size).
    public var height: Float

    /// Creates an anchor (all values normalised to the detector's input).
    public init(centerX: Float, centerY: Float, width: Float, height: Float) {
        self.centerX = centerX
        self.centerY = centerY
        self.width = width
        self.height = height
    }
}

/// The options of MediaPipe's `SsdAnchorsCalculator`, and the anchors they give.
///
/// Layers that share a stride share one feature map: each of its cells gets the anchors of every
/// such layer (one per aspect ratio, plus one at the interpolated scale when
/// ``interpolatedScaleAspectRatio`` is positive). The order is: layer group, row, column, anchor,
/// the order of the detector's outputs.
public struct SSDAnchorOptions: Sendable, Equatable {
    /// Layers (5 for BlazePose).
    public var layers: Int
    /// The scale of the first layer, a fraction of the input (0.1484375).
    public var minimumScale: Double
    /// The scale of the last layer (0.75).
    public var maximumScale: Double
    /// The detector's input height, in pixels (224).
    public var inputHeight: Int
    /// The detector's input width, in pixels (224).
    public var inputWidth: Int
    /// Where in its cell an anchor's centre is, as a fraction of the cell (0.5).
    public var offsetX: Double
    /// Where in its cell an anchor's centre is, as a fraction of the cell (0.5).
    public var offsetY: Double
    /// Each layer's stride, in pixels (8, 16, 32, 32, 32).
    public var strides: [Int]
    /// The aspect ratios of each layer's anchors ([1]).
    public var aspectRatios: [Double]
    /// Whether every anchor is 1 x 1 (BlazePose: its boxes are regressed from the centre only).
    public var fixedAnchorSize: Bool
    /// The aspect ratio of the extra anchor at the geometric mean of this layer's and the next
    /// layer's scales; 0 or less: no extra anchor (1.0).
    public var interpolatedScaleAspectRatio: Double
    /// Whether the first layer gets three anchors (scale 0.1 at ratio 1, then ratios 2 and 0.5).
    public var reduceBoxesInLowestLayer: Bool

    /// BlazePose's detector (`pose_detection_cpu.pbtxt`): 2254 anchors.
    public static let blazePose = SSDAnchorOptions(
        layers: 5, minimumScale: 0.1484375, maximumScale: 0.75, inputHeight: 224, inputWidth: 224, offsetX: 0.5,
        offsetY: 0.5, strides: [8, 16, 32, 32, 32], aspectRatios: [1.0], fixedAnchorSize: true,
        interpolatedScaleAspectRatio: 1.0, reduceBoxesInLowestLayer: false)

    /// Creates the options (see each property). `layers` must not exceed `strides.count`.
    public init(
        layers: Int, minimumScale: Double, maximumScale: Double, inputHeight: Int, inputWidth: Int, offsetX: Double,
        offsetY: Double, strides: [Int], aspectRatios: [Double], fixedAnchorSize: Bool,
        interpolatedScaleAspectRatio: Double, reduceBoxesInLowestLayer: Bool
    ) {
        self.layers = layers
        self.minimumScale = minimumScale
        self.maximumScale = maximumScale
        self.inputHeight = inputHeight
        self.inputWidth = inputWidth
        self.offsetX = offsetX
        self.offsetY = offsetY
        self.strides = strides
        self.aspectRatios = aspectRatios
        self.fixedAnchorSize = fixedAnchorSize
        self.interpolatedScaleAspectRatio = interpolatedScaleAspectRatio
        self.reduceBoxesInLowestLayer = reduceBoxesInLowestLayer
    }

    /// The scale of layer `index` of `count`: evenly spaced from the minimum to the maximum.
    func scale(_ index: Int, of count: Int) -> Double {
        count == 1
            ? (minimumScale + maximumScale) / 2
            : minimumScale + (maximumScale - minimumScale) * Double(index) / Double(count - 1)
    }

    /// The anchors, in the detector's output order.
    public func anchors() -> [SSDAnchor] {
        var anchors: [SSDAnchor] = []
        let layerCount = min(layers, strides.count)
        var layer = 0
        while layer < layerCount {
            var ratios: [Double] = []
            var scales: [Double] = []
            var last = layer
            while last < layerCount && strides[last] == strides[layer] {
                let scale = scale(last, of: strides.count)
                if last == 0 && reduceBoxesInLowestLayer {
                    ratios += [1.0, 2.0, 0.5]
                    scales += [0.1, scale, scale]
                } else {
                    for ratio in aspectRatios {
                        ratios.append(ratio)
                        scales.append(scale)
                    }
                    if interpolatedScaleAspectRatio > 0 {
                        let next = last == strides.count - 1 ? 1.0 : self.scale(last + 1, of: strides.count)
                        scales.append((scale * next).squareRoot())
                        ratios.append(interpolatedScaleAspectRatio)
                    }
                }
                last += 1
            }
            let sizes = zip(ratios, scales).map { ratio, scale in
                (width: Float(scale * ratio.squareRoot()), height: Float(scale / ratio.squareRoot()))
            }
            let stride = strides[layer]
            let rows = (inputHeight + stride - 1) / stride
            let columns = (inputWidth + stride - 1) / stride
            for y in 0..<rows {
                for x in 0..<columns {
                    let centerX = Float((Double(x) + offsetX) / Double(columns))
                    let centerY = Float((Double(y) + offsetY) / Double(rows))
                    for size in sizes {
                        anchors.append(
                            SSDAnchor(
                                centerX: centerX, centerY: centerY, width: fixedAnchorSize ? 1 : size.width,
                                height: fixedAnchorSize ? 1 : size.height))
                    }
                }
            }
            layer = last
        }
        return anchors
    }
}
