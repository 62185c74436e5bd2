public import ProofkitCore

/// The resampling filter of ``ImageResampler``, with PIL's definitions.
public enum ResamplingFilter: String, Sendable, Equatable, CaseIterable {
    /// Triangle filter, support 1 (PIL `Image.BILINEAR`).
    case bilinear
    /// Keys cubic with a = -0.5, support 2 (PIL `Image.BICUBIC`).
    case bicubic

    /// The filter's support radius at scale 1, in source pixels.
    var support: Double {
        switch self {
        case .bilinear: return 1
        case .bicubic: return 2
        }
    }

    /// The filter's weight at distance `x` (source pixels, already divided by the scale).
    func weight(_ x: Double) -> Double {
        let x = abs(x)
        switch self {
        case .bilinear:
            return x < 1 ? 1 - x : 0
        case .bicubic:
            let a = -0.5
            if x < 1 { return ((a + 2) * x - (a + 3)) * x * x + 1 }
            if x < 2 { return (((x - 5) * x + 8) * x - 4) * a }
            return 0
        }
    }
}

/// Precomputed weights of one axis of a resize: for each output index, the first source index
/// and the fixed-point weights of the source pixels it blends.
struct ResamplingKernel: Sendable {
    /// Weights are integers scaled by 2^precisionBits (PIL's `PRECISION_BITS`, 32 - 8 - 2).
    static let precisionBits = 22
    /// Taps per output (the largest tap count; unused taps have weight 0).
    let taps: Int
    /// First source index of each output.
    let start: [Int]
    /// Number of used taps of each output.
    let count: [Int]
    /// `outputCount * taps` weights.
    let weights: [Int32]

    /// PIL's `precompute_coeffs` and `normalize_coeffs_8bpc` for `inputSize -> outputSize` over
    /// the whole source range: an antialiased filter whose support widens by the downscale
    /// factor, weights normalised to sum 1, then rounded half away from zero to fixed point.
    init(inputSize: Int, outputSize: Int, filter: ResamplingFilter) {
        let scale = Double(inputSize) / Double(outputSize)
        let filterScale = max(scale, 1)
        let support = filter.support * filterScale
        let taps = Int(support.rounded(.up)) * 2 + 1
        var start = [Int](repeating: 0, count: outputSize)
        var count = [Int](repeating: 0, count: outputSize)
        var weights = [Int32](repeating: 0, count: outputSize * taps)
        var row = [Double](repeating: 0, count: taps)
        let inverseFilterScale = 1 / filterScale
        let one = Double(1 << Self.precisionBits)
        for output in 0..<outputSize {
            let center = (Double(output) + 0.5) * scale
            // C's (int) cast truncates toward zero; Int(_:) does the same.
            let low = max(Int(center - support + 0.5), 0)
            let high = min(Int(center + support + 0.5), inputSize)
            let used = max(high - low, 0)
            var total = 0.0
            for tap in 0..<used {
                let w = filter.weight((Double(tap + low) - center + 0.5) * inverseFilterScale)
                row[tap] = w
                total += w
            }
            for tap in 0..<used {
                let w = total != 0 ? row[tap] / total : row[tap]
                let fixed = w < 0 ? Int32(-0.5 + w * one) : Int32(0.5 + w * one)
                weights[output * taps + tap] = fixed
            }
            start[output] = low
            count[output] = used
        }
        self.taps = taps
        self.start = start
        self.count = count
        self.weights = weights
    }
}

/// Resizes 8-bit RGB images exactly as Pillow's `Image.resize(size, filter)` does for `RGB`
/// images (Pillow's `Resample.c`): a separable, antialiased convolution with fixed-point
/// weights, horizontal pass first into an 8-bit intermediate, then vertical, each result
/// rounded and clamped to 0...255. An axis whose size does not change is not resampled.
///
/// Results equal Pillow's byte for byte whenever Pillow runs the horizontal pass first, as its
/// Resample.c does (checked in the tests against Pillow 13). Pillow 13 runs the vertical pass
/// first for some shapes; then some bytes differ by 1 to 3 levels. The weights are computed
/// once per call and each pass is a plain loop over them, with no allocation per pixel.
public enum ImageResampler {
    /// Resizes `image` to `width` x `height`.
    /// - Parameters:
    ///   - image: the source, at least 1x1.
    ///   - width: output width in pixels, at least 1.
    ///   - height: output height in pixels, at least 1.
    ///   - filter: the resampling filter (PIL's `BILINEAR` or `BICUBIC`).
    /// - Returns: the resized image (a copy of `image` when the size is unchanged).
    public static func resize(
        _ image: RGBImage, width: Int, height: Int, filter: ResamplingFilter
    ) -> RGBImage {
        precondition(image.width > 0 && image.height > 0, "cannot resize an empty image")
        precondition(width > 0 && height > 0, "output size must be positive")
        let needsHorizontal = width != image.width
        let needsVertical = height != image.height
        if !needsHorizontal && !needsVertical { return image }

        let vertical =
            needsVertical
            ? ResamplingKernel(inputSize: image.height, outputSize: height, filter: filter) : nil
        // Rows of the source the vertical pass reads (PIL's ybox_first ..< ybox_last).
        var firstRow = 0
        var lastRow = image.height
        if let vertical {
            firstRow = vertical.start[0]
            lastRow = vertical.start[height - 1] + vertical.count[height - 1]
        }

        let intermediate: RGBImage
        if needsHorizontal {
            let horizontal = ResamplingKernel(inputSize: image.width, outputSize: width, filter: filter)
            intermediate = resampleRows(image, rows: firstRow..<lastRow, kernel: horizontal, width: width)
        } else {
            intermediate = image
        }
        guard let vertical else { return intermediate }
        let rowOffset = needsHorizontal ? firstRow : 0
        return resampleColumns(intermediate, rowOffset: rowOffset, kernel: vertical, height: height)
    }

    /// The horizontal pass over `rows` of `image` (PIL's `ImagingResampleHorizontal_8bpc`).
    private static func resampleRows(
        _ image: RGBImage, rows: Range<Int>, kernel: ResamplingKernel, width: Int
    ) -> RGBImage {
        let source = image.pixels
        let sourceStride = image.width * 3
        let taps = kernel.taps
        let weights = kernel.weights
        let starts = kernel.start
        let counts = kernel.count
        let half = Int32(1 << (ResamplingKernel.precisionBits - 1))
        var out = [UInt8](repeating: 0, count: rows.count * width * 3)
        var target = 0
        for row in rows {
            let rowBase = row * sourceStride
            for x in 0..<width {
                var red = half
                var green = half
                var blue = half
                var from = rowBase + starts[x] * 3
                let weightBase = x * taps
                for tap in 0..<counts[x] {
                    let w = weights[weightBase + tap]
                    red &+= Int32(source[from]) &* w
                    green &+= Int32(source[from + 1]) &* w
                    blue &+= Int32(source[from + 2]) &* w
                    from += 3
                }
                out[target] = clip8(red)
                out[target + 1] = clip8(green)
                out[target + 2] = clip8(blue)
                target += 3
            }
        }
        return RGBImage(width: width, height: rows.count, pixels: out)
    }

    /// The vertical pass (PIL's `ImagingResampleVertical_8bpc`); kernel rows are shifted by
    /// `rowOffset` when the horizontal pass kept only the rows needed.
    private static func resampleColumns(
        _ image: RGBImage, rowOffset: Int, kernel: ResamplingKernel, height: Int
    ) -> RGBImage {
        let source = image.pixels
        let stride = image.width * 3
        let taps = kernel.taps
        let weights = kernel.weights
        let half = Int32(1 << (ResamplingKernel.precisionBits - 1))
        var out = [UInt8](repeating: 0, count: height * stride)
        var accumulator = [Int32](repeating: 0, count: stride)
        let pixels = source.span
        for y in 0..<height {
            let first = kernel.start[y] - rowOffset
            let weightBase = y * taps
            var sums = accumulator.mutableSpan
            for index in sums.indices { sums[index] = half }
            // Row by row: each source row is read contiguously (cache friendly), with the same
            // sums as PIL's column-by-column loop since integer addition is exact. Spans over
            // exactly one row let the compiler drop the per-element bounds checks.
            for tap in 0..<kernel.count[y] {
                let w = weights[weightBase + tap]
                let rowBase = (first + tap) * stride
                let row = pixels.extracting(rowBase..<(rowBase + stride))
                for index in sums.indices {
                    sums[index] &+= Int32(row[index]) &* w
                }
            }
            let outBase = y * stride
            var target = out.mutableSpan
            for index in sums.indices {
                target[outBase + index] = clip8(sums[index])
            }
        }
        return RGBImage(width: image.width, height: height, pixels: out)
    }

    /// PIL's `clip8`: the fixed-point sum shifted down (floor) and clamped to 0...255.
    @inline(__always)
    private static func clip8(_ value: Int32) -> UInt8 {
        let shifted = value >> Int32(ResamplingKernel.precisionBits)
        if shifted < 0 { return 0 }
        if shifted > 255 { return 255 }
        return UInt8(truncatingIfNeeded: shifted)
    }
}
