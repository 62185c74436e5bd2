/// A block of decoded audio: interleaved 32-bit float samples in -1...1.
///
/// `samples.count == frameCount * channels`. A frame holds one sample per channel.
public struct AudioClip: Sendable, Equatable {
    /// Interleaved samples, nominally in -1...1.
    public var samples: [Float]
    /// Channels per frame (1 = mono), at least 1.
    public var channels: Int
    /// Frames per second, in Hz.
    public var sampleRate: Int

    /// Creates a clip. Traps if `samples.count` is not a multiple of `channels` (a programmer error).
    public init(samples: [Float], channels: Int, sampleRate: Int) {
        precondition(channels >= 1, "channels must be at least 1")
        precondition(samples.count % channels == 0, "samples must hold whole frames")
        self.samples = samples
        self.channels = channels
        self.sampleRate = sampleRate
    }

    /// Number of frames.
    public var frameCount: Int { samples.count / channels }

    /// Duration in seconds.
    public var seconds: Double { sampleRate > 0 ? Double(frameCount) / Double(sampleRate) : 0 }

    /// The mono mix (mean of the channels).
    public func mono() -> [Float] {
        if channels == 1 { return samples }
        var out = [Float](repeating: 0, count: frameCount)
        let scale = 1 / Float(channels)
        for frame in 0..<frameCount {
            var sum: Float = 0
            let base = frame * channels
            for channel in 0..<channels { sum += samples[base + channel] }
            out[frame] = sum * scale
        }
        return out
    }
}

/// An 8-bit RGB image, row-major, 3 bytes per pixel, top-left origin, already upright
/// (any EXIF orientation has been applied by the decoder).
public struct RGBImage: Sendable, Equatable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// `width * height * 3` bytes: R, G, B for each pixel, row after row.
    public var pixels: [UInt8]

    /// Creates an image. Traps if `pixels.count != width * height * 3` (a programmer error).
    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(
            width >= 0 && height >= 0 && pixels.count == width * height * 3,
            "pixels must hold width * height * 3 bytes")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// A solid image of one colour.
    public init(width: Int, height: Int, red: UInt8, green: UInt8, blue: UInt8) {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        var index = 0
        while index < pixels.count {
            pixels[index] = red
            pixels[index + 1] = green
            pixels[index + 2] = blue
            index += 3
        }
        self.init(width: width, height: height, pixels: pixels)
    }
}

/// Whether one C library that proofkit loads on first use could be loaded (`proofkit doctor`).
public struct CLibraryStatus: Sendable, Equatable {
    /// A short name, e.g. `"libsndfile"`.
    public var name: String
    /// The file the loader asks for, e.g. `"libsndfile.so.1"`.
    public var soname: String
    /// The Debian package that provides it, e.g. `"libsndfile1"`.
    public var debianPackage: String
    /// `nil` when it loaded; else why not, in one line.
    public var failure: String?

    public init(name: String, soname: String, debianPackage: String, failure: String? = nil) {
        self.name = name
        self.soname = soname
        self.debianPackage = debianPackage
        self.failure = failure
    }
}
