public import ProofkitCore

/// What a crop reads outside the image.
public enum PoseCropBorder: Sendable, Equatable {
    /// Black (pixel value 0): the detector's letterbox.
    case zero
    /// The nearest edge pixel: the landmark model's crop.
    case replicate
}

/// The model inputs cut out of an image, sampled exactly as MediaPipe's OpenCV
/// `ImageToTensorCalculator` does with `cv::warpPerspective` (`INTER_LINEAR`) on 8-bit pixels: each
/// tensor pixel's source position is rounded to 1/32 pixel (round half to even), the four
/// bilinear weights are taken in 15-bit fixed point, and the weighted sum is rounded back to
/// 8 bits; the 8-bit result is then scaled linearly to the tensor's range in `Float`.
///
/// Bit-exactness matters: the landmark model amplifies small input changes, and plain float
/// bilinear sampling (pixels at most 3 levels away) moved MediaPipe's landmarks by up to 4 % of
/// the image diagonal on a half-body photo (Models/MODELS.md).
public enum PoseCrop {
    /// The four 15-bit weights (top-left, top-right, bottom-left, bottom-right) for each of the
    /// 32 x 32 sub-pixel positions, index `fy * 32 + fx` (OpenCV's `initInterTab2D`, without its
    /// ±1 correction when the four do not sum to 2^15: at most 1/32768 of a level).
    static let weights: [(Int, Int, Int, Int)] = (0..<(32 * 32)).map { index in
        let a = Double(index % 32) / 32
        let b = Double(index / 32) / 32
        func fixed(_ value: Double) -> Int { Int((value * 32768).rounded(.toNearestOrEven)) }
        return (fixed((1 - a) * (1 - b)), fixed(a * (1 - b)), fixed((1 - a) * b), fixed(a * b))
    }

    /// A coordinate in 1/32 pixel, rounded half to even (OpenCV's `cvRound` on a double); far
    /// outside positions and NaN are held at ±2^40 (every tap is then outside the image).
    @inline(__always) static func fixedPoint(_ value: Double) -> Int {
        guard value.isFinite else { return value == .infinity ? 1 << 40 : -(1 << 40) }
        // Adding and taking away 1.5 * 2^52 rounds half to even (IEEE's default rounding) for
        // |x| < 2^51, as `rounded(.toNearestOrEven)` does, without its call to libm's rint
        // (x86-64's baseline has no rounding instruction).
        let magic = 6_755_399_441_055_744.0
        return Int((min(max(value, -0x1p35), 0x1p35) * 32 + magic) - magic)
    }

    /// The 8-bit RGB pixels of a `width` x `height` crop whose pixel (u, v) reads the image at
    /// `transform` (u, v).
    /// - Parameters:
    ///   - image: the upright photo.
    ///   - transform: tensor pixel → image pixel (``PoseRegion/tensorToImage(width:height:)``).
    ///   - width: the crop's width in pixels.
    ///   - height: the crop's height in pixels.
    ///   - border: what is read outside the image.
    /// - Returns: `width * height * 3` bytes, row after row.
    public static func pixels(
        of image: RGBImage, transform: PoseAffineTransform, width: Int, height: Int, border: PoseCropBorder
    ) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: width * height * 3)
        let (imageWidth, imageHeight) = (image.width, image.height)
        guard imageWidth > 0, imageHeight > 0, width > 0, height > 0 else { return out }
        let stride = imageWidth * 3
        do {
            let source = image.pixels.span
            let table = weights.span
            var target = out.mutableSpan
            @inline(__always) func rounded(_ total: Int) -> UInt8 {
                UInt8(truncatingIfNeeded: min(max((total + (1 << 14)) >> 15, 0), 255))
            }
            var index = 0
            for v in 0..<height {
                for u in 0..<width {
                    let x = transform.a * Double(u) + transform.b * Double(v) + transform.tx
                    let y = transform.c * Double(u) + transform.d * Double(v) + transform.ty
                    let xi = fixedPoint(x)
                    let yi = fixedPoint(y)
                    let x0 = xi >> 5
                    let y0 = yi >> 5
                    let (w00, w01, w10, w11) = table[(yi & 31) * 32 + (xi & 31)]
                    if x0 >= 0 && x0 < imageWidth - 1 && y0 >= 0 && y0 < imageHeight - 1 {
                        // All four taps inside: the common case.
                        // (Wrapping operations: every value here is an in-image offset or
                        // at most 255 * 2^15.)
                        let t00 = y0 &* stride &+ x0 &* 3
                        let t10 = t00 &+ stride
                        for channel in 0..<3 {
                            let total =
                                Int(source[t00 &+ channel]) &* w00 &+ Int(source[t00 &+ 3 &+ channel]) &* w01
                                &+ Int(source[t10 &+ channel]) &* w10 &+ Int(source[t10 &+ 3 &+ channel]) &* w11
                            target[index &+ channel] = rounded(total)
                        }
                    } else {
                        // The taps' offsets; -1 (reads 0) outside with a zero border.
                        func tap(_ column: Int, _ row: Int) -> Int {
                            if column >= 0 && column < imageWidth && row >= 0 && row < imageHeight {
                                return row * stride + column * 3
                            }
                            guard border == .replicate else { return -1 }
                            let nearestColumn = min(max(column, 0), imageWidth - 1)
                            return min(max(row, 0), imageHeight - 1) * stride + nearestColumn * 3
                        }
                        let t00 = tap(x0, y0)
                        let t01 = tap(x0 + 1, y0)
                        let t10 = tap(x0, y0 + 1)
                        let t11 = tap(x0 + 1, y0 + 1)
                        for channel in 0..<3 {
                            var total = 0
                            if t00 >= 0 { total += Int(source[t00 + channel]) * w00 }
                            if t01 >= 0 { total += Int(source[t01 + channel]) * w01 }
                            if t10 >= 0 { total += Int(source[t10 + channel]) * w10 }
                            if t11 >= 0 { total += Int(source[t11 + channel]) * w11 }
                            target[index + channel] = rounded(total)
                        }
                    }
                    index += 3
                }
            }
        }
        return out
    }

    /// 8-bit pixels scaled linearly to `range` in `Float`, as MediaPipe (and numpy in float32)
    /// does: `Float(p) * ((upper - lower) / 255) + lower`.
    public static func tensor(fromPixels pixels: [UInt8], range: ClosedRange<Float>) -> [Float] {
        let scale = Float((Double(range.upperBound) - Double(range.lowerBound)) / 255.0)
        let lower = range.lowerBound
        return pixels.map { Float($0) * scale + lower }
    }

    /// The detector's input: the whole image letterboxed into a `side` x `side` square (black
    /// border), in [-1, 1], NHWC (`[1, side, side, 3]` in row-major order).
    public static func detectorInput(of image: RGBImage, side: Int) -> [Float] {
        let region = PoseRegion.letterbox(imageWidth: image.width, imageHeight: image.height)
        let pixels = pixels(
            of: image, transform: region.tensorToImage(width: side, height: side), width: side, height: side,
            border: .zero)
        return tensor(fromPixels: pixels, range: -1...1)
    }

    /// The landmark model's input: `region` warped to a `side` x `side` square (edge pixels
    /// replicated), in [0, 1], NHWC.
    public static func landmarkInput(of image: RGBImage, region: PoseRegion, side: Int) -> [Float] {
        let pixels = pixels(
            of: image, transform: region.tensorToImage(width: side, height: side), width: side, height: side,
            border: .replicate)
        return tensor(fromPixels: pixels, range: 0...1)
    }
}
