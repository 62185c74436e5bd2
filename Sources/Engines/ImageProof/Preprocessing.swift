public import ProofkitCore

/// How a photo becomes a model input: resize the shorter side, crop, normalise.
///
/// The default, ``efficientNetLite0``, is what EfficientNet-Lite0 was trained with and what the
/// project's Python reference pipeline (`images/REFERENCE.md` in the shared data) does:
/// shorter side to 256 with PIL's antialiased bicubic filter, centre crop 224x224 at
/// `((w - 224) // 2, (h - 224) // 2)`, then `(RGB - 127) / 128` as float32 NCHW. (The ImageNet
/// mean/std of the PyTorch port's docstring is wrong for the Lite models.)
public struct ImagePreprocessing: Sendable, Equatable {
    /// The shorter side after resizing, in pixels (default 256). The longer side keeps the
    /// aspect ratio, rounded to the nearest pixel (ties to even, as Python's `round`).
    public var shorterSide: Int
    /// The square crop fed to the model, in pixels (default 224). At most ``shorterSide``.
    public var cropSize: Int
    /// The resampling filter (default bicubic, as the reference pipeline and TensorFlow's
    /// EfficientNet preprocessing use).
    public var filter: ResamplingFilter
    /// Per-channel (R, G, B) value subtracted from the 0...255 pixel (default 127 each).
    public var mean: [Float]
    /// Per-channel (R, G, B) divisor applied after the subtraction (default 128 each).
    public var standardDeviation: [Float]

    /// Creates a preprocessing recipe.
    /// - Parameters:
    ///   - shorterSide: resize target of the shorter side in pixels (positive).
    ///   - cropSize: square crop in pixels (positive, at most `shorterSide`).
    ///   - filter: resampling filter.
    ///   - mean: three per-channel means in 0...255 units.
    ///   - standardDeviation: three per-channel divisors (non-zero).
    /// - Throws: `.invalidArgument` when a value is out of range.
    public init(
        shorterSide: Int = 256, cropSize: Int = 224, filter: ResamplingFilter = .bicubic,
        mean: [Float] = [127, 127, 127], standardDeviation: [Float] = [128, 128, 128]
    ) throws(ProofkitError) {
        guard shorterSide > 0, cropSize > 0, cropSize <= shorterSide else {
            throw ProofkitError(
                .invalidArgument,
                "crop size \(cropSize) must be positive and at most the shorter side \(shorterSide)")
        }
        guard mean.count == 3, standardDeviation.count == 3, !standardDeviation.contains(0) else {
            throw ProofkitError(.invalidArgument, "mean and standard deviation need three values, std non-zero")
        }
        self.shorterSide = shorterSide
        self.cropSize = cropSize
        self.filter = filter
        self.mean = mean
        self.standardDeviation = standardDeviation
    }

    /// EfficientNet-Lite0: 256 / 224 / bicubic / (x - 127) / 128.
    public static let efficientNetLite0 = Self(
        uncheckedShorterSide: 256, cropSize: 224, filter: .bicubic, mean: [127, 127, 127],
        standardDeviation: [128, 128, 128])

    private init(
        uncheckedShorterSide: Int, cropSize: Int, filter: ResamplingFilter, mean: [Float],
        standardDeviation: [Float]
    ) {
        self.shorterSide = uncheckedShorterSide
        self.cropSize = cropSize
        self.filter = filter
        self.mean = mean
        self.standardDeviation = standardDeviation
    }

    /// The size an image of `width` x `height` is resized to: shorter side ``shorterSide``, the
    /// other side scaled and rounded to the nearest pixel (at least ``shorterSide``).
    public func resizedSize(width: Int, height: Int) -> (width: Int, height: Int) {
        if width <= height {
            let long = Int((Double(height) * Double(shorterSide) / Double(width)).rounded(.toNearestOrEven))
            return (shorterSide, max(long, shorterSide))
        } else {
            let long = Int((Double(width) * Double(shorterSide) / Double(height)).rounded(.toNearestOrEven))
            return (max(long, shorterSide), shorterSide)
        }
    }
}

/// Where a model-sized crop is taken from.
public enum CropRegion: Sendable, Hashable, CustomStringConvertible {
    /// The centre of the resized image, at `((w - crop) // 2, (h - crop) // 2)` (floor, as the
    /// reference pipeline does).
    case center
    /// The start of the longer axis (left edge of a landscape photo, top of a portrait one),
    /// centred on the shorter axis.
    case start
    /// The end of the longer axis (right edge / bottom), centred on the shorter axis.
    case end
    /// The whole photo squashed (aspect ratio not kept) to the crop size, resized directly from
    /// the decoded image with the same filter.
    case fullFrame
    /// A crop with its top-left corner at (`x`, `y`) in the resized image; clamped to fit.
    case offset(x: Int, y: Int)
    /// A zoomed square of the decoded photo, resized to the crop size: side
    /// `s = Int(zoom * min(w, h))`, top-left at `(Int((w - s) * fractionX), Int((h - s) *
    /// fractionY))`. With fractions 0 or 1 these are the four corner views of the five-crop rule
    /// (the models study's `five_crop_views`, zoom 0.6).
    case zoomed(fractionX: Double, fractionY: Double, zoom: Double)

    /// The five-crop views: the centre crop, then zoomed squares at the top-left, top-right,
    /// bottom-left and bottom-right corners (in that order).
    /// - Parameter zoom: the squares' side as a fraction of the shorter side (default 0.6).
    public static func fiveCrop(zoom: Double = 0.6) -> [CropRegion] {
        [.center]
            + [(0.0, 0.0), (1, 0), (0, 1), (1, 1)].map {
                .zoomed(fractionX: $0.0, fractionY: $0.1, zoom: zoom)
            }
    }

    /// A short stable name (`"center"`, `"start"`, `"end"`, `"full"`, `"x,y"`).
    public var description: String {
        switch self {
        case .center: return "center"
        case .start: return "start"
        case .end: return "end"
        case .fullFrame: return "full"
        case .offset(let x, let y): return "\(x),\(y)"
        case .zoomed(let fx, let fy, let zoom): return "zoom \(zoom) at \(fx),\(fy)"
        }
    }
}

/// A model input tensor: float32 values in NCHW order with their shape.
public struct ImageTensor: Sendable, Equatable {
    /// `shape.reduce(1, *)` values, batch-major, then channel (R, G, B), row, column.
    public var values: [Float]
    /// `[batch, 3, height, width]`.
    public var shape: [Int]

    /// Creates a tensor. Traps when `values.count` does not match `shape` (a programmer error).
    public init(values: [Float], shape: [Int]) {
        precondition(shape.reduce(1, *) == values.count, "tensor values do not match the shape")
        self.values = values
        self.shape = shape
    }
}

/// A photo resized for a model, with its brightness; crops are cut from it into tensors.
public struct PreparedPhoto: Sendable {
    /// The recipe used.
    public let preprocessing: ImagePreprocessing
    /// The photo resized so its shorter side is ``ImagePreprocessing/shorterSide``.
    public let resized: RGBImage
    /// Mean Rec.601 luma `(0.299 R + 0.587 G + 0.114 B) / 255` of ``resized``, in 0...1
    /// (measured on the resized image, as the reference pipeline does).
    public let brightness: Double
    /// The decoded photo, kept only for ``CropRegion/fullFrame`` crops.
    private let original: RGBImage

    /// Resizes `image` and measures its brightness.
    /// - Parameters:
    ///   - image: the upright decoded photo (at least 1x1).
    ///   - preprocessing: the recipe (default EfficientNet-Lite0).
    public init(_ image: RGBImage, preprocessing: ImagePreprocessing = .efficientNetLite0) {
        precondition(image.width > 0 && image.height > 0, "cannot prepare an empty image")
        self.preprocessing = preprocessing
        let size = preprocessing.resizedSize(width: image.width, height: image.height)
        let resized = ImageResampler.resize(
            image, width: size.width, height: size.height, filter: preprocessing.filter)
        self.resized = resized
        self.brightness = Brightness.meanLuma(resized)
        self.original = image
    }

    /// The top-left corner of `region` in ``resized`` (for every region but `.fullFrame`).
    public func origin(of region: CropRegion) -> (x: Int, y: Int) {
        let crop = preprocessing.cropSize
        let spareX = resized.width - crop
        let spareY = resized.height - crop
        switch region {
        case .center, .fullFrame, .zoomed: return (spareX / 2, spareY / 2)
        case .start: return spareX >= spareY ? (0, spareY / 2) : (spareX / 2, 0)
        case .end: return spareX >= spareY ? (spareX, spareY / 2) : (spareX / 2, spareY)
        case .offset(let x, let y): return (min(max(x, 0), spareX), min(max(y, 0), spareY))
        }
    }

    /// One crop as a `[1, 3, crop, crop]` tensor.
    public func tensor(_ region: CropRegion = .center) -> ImageTensor {
        tensor([region])
    }

    /// Several crops as one `[n, 3, crop, crop]` batch, in the order given.
    /// - Parameter regions: at least one region.
    public func tensor(_ regions: [CropRegion]) -> ImageTensor {
        precondition(!regions.isEmpty, "a batch needs at least one crop")
        let crop = preprocessing.cropSize
        let plane = crop * crop
        var values = [Float](repeating: 0, count: regions.count * 3 * plane)
        let table = normalisationTable()
        for (batchIndex, region) in regions.enumerated() {
            let source: RGBImage
            let originX: Int
            let originY: Int
            if region == .fullFrame {
                source = ImageResampler.resize(
                    original, width: crop, height: crop, filter: preprocessing.filter)
                (originX, originY) = (0, 0)
            } else if case .zoomed(let fx, let fy, let zoom) = region {
                source = ImageResampler.resize(
                    Self.zoomedSquare(original, fractionX: fx, fractionY: fy, zoom: zoom),
                    width: crop, height: crop, filter: preprocessing.filter)
                (originX, originY) = (0, 0)
            } else {
                source = resized
                (originX, originY) = origin(of: region)
            }
            Self.writeCrop(
                source, x: originX, y: originY, size: crop, table: table,
                into: &values, at: batchIndex * 3 * plane)
        }
        return ImageTensor(values: values, shape: [regions.count, 3, crop, crop])
    }

    /// The square of `image` that a `.zoomed` region names (at least 1x1), as its own image.
    static func zoomedSquare(_ image: RGBImage, fractionX: Double, fractionY: Double, zoom: Double) -> RGBImage {
        let width = image.width
        let height = image.height
        let side = min(max(Int(zoom * Double(min(width, height))), 1), min(width, height))
        let x = min(max(Int(Double(width - side) * fractionX), 0), width - side)
        let y = min(max(Int(Double(height - side) * fractionY), 0), height - side)
        var pixels = [UInt8](repeating: 0, count: side * side * 3)
        let source = image.pixels
        for row in 0..<side {
            let from = ((y + row) * width + x) * 3
            let to = row * side * 3
            for index in 0..<(side * 3) { pixels[to + index] = source[from + index] }
        }
        return RGBImage(width: side, height: side, pixels: pixels)
    }

    /// `table[c * 256 + v]` = `(v - mean[c]) / std[c]`, so the crop loop is a lookup.
    private func normalisationTable() -> [Float] {
        var table = [Float](repeating: 0, count: 3 * 256)
        for channel in 0..<3 {
            for value in 0..<256 {
                table[channel * 256 + value] =
                    (Float(value) - preprocessing.mean[channel]) / preprocessing.standardDeviation[channel]
            }
        }
        return table
    }

    private static func writeCrop(
        _ image: RGBImage, x: Int, y: Int, size: Int, table: [Float], into values: inout [Float],
        at offset: Int
    ) {
        let pixels = image.pixels
        let stride = image.width * 3
        let plane = size * size
        var target = offset
        for row in 0..<size {
            var from = (y + row) * stride + x * 3
            for _ in 0..<size {
                values[target] = table[Int(pixels[from])]
                values[target + plane] = table[256 + Int(pixels[from + 1])]
                values[target + 2 * plane] = table[512 + Int(pixels[from + 2])]
                target += 1
                from += 3
            }
        }
    }
}

/// Photo brightness.
public enum Brightness {
    /// Mean Rec.601 luma of `image`, `(0.299 R + 0.587 G + 0.114 B) / 255`, in 0...1 (0 for an
    /// empty image). Exact: channel sums are integers, weighted once at the end.
    public static func meanLuma(_ image: RGBImage) -> Double {
        let count = image.width * image.height
        guard count > 0 else { return 0 }
        var red = 0
        var green = 0
        var blue = 0
        let pixels = image.pixels
        var index = 0
        while index < pixels.count {
            red += Int(pixels[index])
            green += Int(pixels[index + 1])
            blue += Int(pixels[index + 2])
            index += 3
        }
        let luma = 0.299 * Double(red) + 0.587 * Double(green) + 0.114 * Double(blue)
        return luma / (Double(count) * 255)
    }
}
