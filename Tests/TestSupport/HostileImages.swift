import Foundation

/// Images made in the tests themselves, for the decoder's limits: real PNGs of any size written
/// here (stored, uncompressed deflate: no zlib needed), and JPEG headers that claim a size.
public enum HostileImages {
    /// A PNG of `width` x `height` 8-bit pixels, `channels` 1 (gray) or 3 (RGB), whose sample at
    /// (x, y), channel c, is `sample(x, y, c)`. The image data is zlib with stored blocks, so the
    /// file is a little larger than the raw pixels.
    /// - Parameter interlaced: sets IHDR's Adam7 flag (the data is then not a valid interlaced
    ///   image: only for tests that must refuse it from the header).
    public static func png(
        width: Int, height: Int, channels: Int = 3, interlaced: Bool = false, sample: (Int, Int, Int) -> UInt8
    ) -> [UInt8] {
        var raw: [UInt8] = []
        raw.reserveCapacity(height * (width * channels + 1))
        for y in 0..<height {
            raw.append(0)  // filter: none
            for x in 0..<width {
                for c in 0..<channels { raw.append(sample(x, y, c)) }
            }
        }
        var zlib: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, raw.count - offset)
            let last: UInt8 = offset + count == raw.count ? 1 : 0
            zlib += [last, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            zlib += raw[offset..<(offset + count)]
            offset += count
        } while offset < raw.count
        zlib += bigEndian(adler32(raw))
        var header = bigEndian(UInt32(width)) + bigEndian(UInt32(height))
        header += [8, channels == 1 ? 0 : 2, 0, 0, interlaced ? 1 : 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", zlib)
            + chunk("IEND", [])
    }

    /// `jpeg` (a real baseline JPEG) with its frame header changed to claim `width` x `height`:
    /// a few hundred bytes whose header says an image of any size.
    public static func jpeg(_ jpeg: [UInt8], claiming width: Int, height: Int) -> [UInt8] {
        var bytes = jpeg
        guard let sof = (2..<(bytes.count - 8)).first(where: { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 }) else {
            return bytes
        }
        bytes[sof + 5] = UInt8(height >> 8)
        bytes[sof + 6] = UInt8(height & 0xFF)
        bytes[sof + 7] = UInt8(width >> 8)
        bytes[sof + 8] = UInt8(width & 0xFF)
        return bytes
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typed + bigEndian(crc32(typed))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    private static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return b << 16 | a
    }

    private static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes { c = crcTable[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
