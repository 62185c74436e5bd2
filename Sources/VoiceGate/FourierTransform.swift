/// An in-place radix-2 complex FFT of one fixed size (a power of two), for the speech-likeness
/// features. Pure Swift: the twiddles are computed once, with the gate's own cosine.
struct FourierTransform: Sendable {
    /// Points per transform.
    let size: Int
    private let cosines: [Double]
    private let sines: [Double]
    private let reversed: [Int]

    /// - Parameter size: points per transform, a power of two of at least 2.
    init(size: Int) {
        precondition(size >= 2 && size & (size - 1) == 0, "the FFT size must be a power of two")
        self.size = size
        cosines = (0..<size / 2).map { cosine(2 * Double.pi * Double($0) / Double(size)) }
        sines = (0..<size / 2).map { cosine(2 * Double.pi * Double($0) / Double(size) - Double.pi / 2) }
        var bits = 0
        while 1 << bits < size { bits += 1 }
        reversed = (0..<size).map { index in
            var value = 0
            for bit in 0..<bits where index & (1 << bit) != 0 { value |= 1 << (bits - 1 - bit) }
            return value
        }
    }

    /// X[k] = sum over n of x[n] e^(-2 pi i k n / size), in place.
    /// - Parameters:
    ///   - real: the real parts, `size` values.
    ///   - imaginary: the imaginary parts, `size` values.
    func forward(real: inout [Double], imaginary: inout [Double]) {
        precondition(real.count == size && imaginary.count == size, "the FFT input has the wrong size")
        for i in 0..<size where i < reversed[i] {
            real.swapAt(i, reversed[i])
            imaginary.swapAt(i, reversed[i])
        }
        var half = 1
        while half < size {
            let step = size / (2 * half)
            var start = 0
            while start < size {
                for j in 0..<half {
                    let c = cosines[j * step]
                    let s = sines[j * step]
                    let a = start + j
                    let b = a + half
                    // w = e^(-i theta) = c - i s
                    let tr = real[b] * c + imaginary[b] * s
                    let ti = imaginary[b] * c - real[b] * s
                    real[b] = real[a] - tr
                    imaginary[b] = imaginary[a] - ti
                    real[a] += tr
                    imaginary[a] += ti
                }
                start += 2 * half
            }
            half *= 2
        }
    }
}
