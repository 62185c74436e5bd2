public import ProofkitCore

/// YUYV (YUY2) to RGB: the uncompressed format of UVC webcams, two pixels in four bytes
/// (Y0 U Y1 V), with limited-range BT.601 colour (luma 16...235, chroma 16...240), as the UVC
/// specification gives for uncompressed YUY2 and as ffmpeg's `yuyv422` decoder assumes.
public enum YUYV {
    /// Converts one frame to RGB, in fixed point (8 fractional bits, as libjpeg-turbo and ffmpeg
    /// do): R = 1.164 (Y - 16) + 1.596 (V - 128), G = 1.164 (Y - 16) - 0.391 (U - 128) - 0.813 (V - 128),
    /// B = 1.164 (Y - 16) + 2.018 (U - 128), clamped to 0...255.
    /// - Parameters:
    ///   - bytes: the frame, `height` rows of `bytesPerLine` bytes (at least `width * 2`).
    ///   - width: pixels per row, even.
    ///   - height: rows.
    ///   - bytesPerLine: bytes from one row to the next (default `width * 2`).
    /// - Returns: the image, or nil when `bytes` is too short for the size (a truncated frame).
    public static func rgb(_ bytes: [UInt8], width: Int, height: Int, bytesPerLine: Int? = nil) -> RGBImage? {
        let stride = bytesPerLine ?? width * 2
        guard width > 0, height > 0, width % 2 == 0, stride >= width * 2,
            bytes.count >= stride * (height - 1) + width * 2
        else { return nil }
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        bytes.withUnsafeBufferPointer { source in
            pixels.withUnsafeMutableBufferPointer { target in
                for row in 0..<height {
                    var input = row * stride
                    var output = row * width * 3
                    for _ in 0..<(width / 2) {
                        let u = Int32(source[input + 1]) - 128
                        let v = Int32(source[input + 3]) - 128
                        let red = 409 * v + 128
                        let green = -100 * u - 208 * v + 128
                        let blue = 516 * u + 128
                        let first = 298 * (Int32(source[input]) - 16)
                        target[output] = clamp((first + red) >> 8)
                        target[output + 1] = clamp((first + green) >> 8)
                        target[output + 2] = clamp((first + blue) >> 8)
                        let second = 298 * (Int32(source[input + 2]) - 16)
                        target[output + 3] = clamp((second + red) >> 8)
                        target[output + 4] = clamp((second + green) >> 8)
                        target[output + 5] = clamp((second + blue) >> 8)
                        output += 6
                        input += 4
                    }
                }
            }
        }
        return RGBImage(width: width, height: height, pixels: pixels)
    }

    @inline(__always)
    private static func clamp(_ value: Int32) -> UInt8 {
        UInt8(truncatingIfNeeded: min(max(value, 0), 255))
    }
}
