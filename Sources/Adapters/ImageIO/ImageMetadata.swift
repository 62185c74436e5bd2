// Pure Swift readers for the little metadata proofkit needs from image files: the EXIF
// orientation (JPEG APP1 "Exif", PNG eXIf) and the Adobe APP14 marker of CMYK JPEGs.
// No C here: a hostile file can only make these return "nothing found".

/// The image file formats ImageDecoder reads, detected from the first bytes (never the name).
public enum ImageFormat: String, Sendable, Equatable, CustomStringConvertible {
    /// JPEG/JFIF/EXIF (starts FF D8 FF).
    case jpeg
    /// PNG (starts 89 50 4E 47 0D 0A 1A 0A).
    case png

    /// Detects the format from the file's first bytes.
    /// - Parameter bytes: the file, or at least its first 8 bytes.
    /// - Returns: the format, or `nil` when the bytes are neither JPEG nor PNG.
    public static func detect<C: Collection<UInt8>>(_ bytes: C) -> ImageFormat? {
        let head = Array(bytes.prefix(8))
        if head.count >= 3, head[0] == 0xFF, head[1] == 0xD8, head[2] == 0xFF { return .jpeg }
        if head == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] { return .png }
        return nil
    }

    public var description: String { rawValue }
}

/// The EXIF orientation tag (0x0112): how the stored pixels must be turned to stand upright.
///
/// Raw values are the tag's values 1...8. The name says what a viewer does to the stored image.
public enum ExifOrientation: Int, Sendable, Equatable, CaseIterable {
    /// 1: stored upright.
    case up = 1
    /// 2: mirror left-right.
    case mirrored = 2
    /// 3: turn 180 degrees.
    case rotated180 = 3
    /// 4: mirror top-bottom.
    case mirroredVertically = 4
    /// 5: transpose (mirror about the top-left to bottom-right diagonal).
    case transposed = 5
    /// 6: turn 90 degrees clockwise (the usual phone portrait photo).
    case rotated90Clockwise = 6
    /// 7: transverse (mirror about the top-right to bottom-left diagonal).
    case transversed = 7
    /// 8: turn 90 degrees counter-clockwise.
    case rotated90CounterClockwise = 8

    /// Whether width and height swap when the image is turned upright.
    public var swapsAxes: Bool { rawValue >= 5 }
}

/// What the JPEG marker segments before the scan say.
struct JPEGMarkers: Equatable {
    var orientation: ExifOrientation = .up
    /// An APP14 "Adobe" segment is present (its CMYK samples are stored inverted).
    var hasAdobeMarker = false
    /// The frame is decoded in several scans (progressive, or a first scan without every
    /// component), so libjpeg holds the whole image's DCT coefficients while decoding.
    var isMultiScan = false
    /// The DCT coefficients' bytes per stored pixel (2 bytes per sample, per component scaled
    /// by its sampling: 3 for 4:2:0 colour, 6 for 4:4:4, 2 for gray), from the frame header;
    /// 0 when there is none.
    var coefficientBytesPerPixel: Double = 0
}

enum ImageMetadata {
    /// Walks the JPEG marker segments from SOI up to the first SOS and collects the EXIF
    /// orientation (first APP1 "Exif" segment) and whether an APP14 "Adobe" segment is present.
    /// Stops quietly at anything malformed.
    static func jpegMarkers(_ bytes: [UInt8]) -> JPEGMarkers {
        var markers = JPEGMarkers()
        var foundExif = false
        var frameComponents = 0
        var index = 2  // after FF D8
        while index + 4 <= bytes.count {
            guard bytes[index] == 0xFF else { break }
            let marker = bytes[index + 1]
            if marker == 0xFF {  // fill byte
                index += 1
                continue
            }
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) {
                index += 2  // standalone markers carry no length
                continue
            }
            if marker == 0xDA, index + 4 < bytes.count {  // start of scan: its component count
                markers.isMultiScan = markers.isMultiScan || Int(bytes[index + 4]) < frameComponents
            }
            if marker == 0xDA || marker == 0xD9 { break }  // start of scan / end of image
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            guard length >= 2, index + 2 + length <= bytes.count else { break }
            let body = (index + 4)..<(index + 2 + length)
            if marker == 0xE1, !foundExif, body.count >= 6,
                bytes[body.lowerBound..<(body.lowerBound + 6)].elementsEqual(
                    [0x45, 0x78, 0x69, 0x66, 0x00, 0x00])
            {
                foundExif = true
                if let orientation = tiffOrientation(bytes[(body.lowerBound + 6)..<body.upperBound]) {
                    markers.orientation = orientation
                }
            } else if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker), body.count >= 6 {
                // Start of frame: progressive for SOF2/3/6/7/10/11/14/15; components and sampling.
                markers.isMultiScan = [0xC2, 0xC3, 0xC6, 0xC7, 0xCA, 0xCB, 0xCE, 0xCF].contains(marker)
                frameComponents = Int(bytes[body.lowerBound + 5])
                let sampling = stride(from: body.lowerBound + 6, to: body.upperBound - 2, by: 3).map {
                    (Int(bytes[$0 + 1] >> 4), Int(bytes[$0 + 1] & 0x0F))
                }
                let most = (sampling.map(\.0).max() ?? 1, sampling.map(\.1).max() ?? 1)
                if most.0 > 0, most.1 > 0 {
                    markers.coefficientBytesPerPixel = sampling.reduce(0) {
                        $0 + 2 * Double($1.0 * $1.1) / Double(most.0 * most.1)
                    }
                }
            } else if marker == 0xEE, body.count >= 5,
                bytes[body.lowerBound..<(body.lowerBound + 5)].elementsEqual([0x41, 0x64, 0x6F, 0x62, 0x65])
            {
                markers.hasAdobeMarker = true
            }
            index += 2 + length
        }
        return markers
    }

    /// The EXIF orientation of a PNG, from its `eXIf` chunk (PNG 1.5 extension) when one comes
    /// before the first IDAT. Stops quietly at anything malformed.
    static func pngOrientation(_ bytes: [UInt8]) -> ExifOrientation {
        var index = 8  // after the signature
        while index + 12 <= bytes.count {
            let length =
                Int(bytes[index]) << 24 | Int(bytes[index + 1]) << 16 | Int(bytes[index + 2]) << 8
                | Int(bytes[index + 3])
            let type = bytes[(index + 4)..<(index + 8)]
            let data = index + 8
            guard length >= 0, data + length + 4 <= bytes.count else { break }
            if type.elementsEqual([0x49, 0x44, 0x41, 0x54]) { break }  // IDAT
            if type.elementsEqual([0x65, 0x58, 0x49, 0x66]) {  // eXIf
                return tiffOrientation(bytes[data..<(data + length)]) ?? .up
            }
            index = data + length + 4
        }
        return .up
    }

    /// Reads tag 0x0112 (Orientation, type SHORT) from IFD0 of a TIFF structure (the EXIF
    /// payload: "II*\0" or "MM\0*", then the IFD0 offset).
    /// - Returns: the orientation, or `nil` when the tag is absent, malformed or out of 1...8.
    static func tiffOrientation(_ tiff: ArraySlice<UInt8>) -> ExifOrientation? {
        let base = tiff.startIndex
        let count = tiff.count
        guard count >= 8 else { return nil }
        let littleEndian: Bool
        switch (tiff[base], tiff[base + 1]) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return nil
        }
        func u16(_ offset: Int) -> Int? {
            guard offset >= 0, offset + 2 <= count else { return nil }
            let a = Int(tiff[base + offset])
            let b = Int(tiff[base + offset + 1])
            return littleEndian ? a | b << 8 : a << 8 | b
        }
        func u32(_ offset: Int) -> Int? {
            guard let low = u16(littleEndian ? offset : offset + 2),
                let high = u16(littleEndian ? offset + 2 : offset)
            else { return nil }
            return high << 16 | low
        }
        guard u16(2) == 42, let ifd = u32(4), let entries = u16(ifd) else { return nil }
        for entry in 0..<entries {
            let position = ifd + 2 + entry * 12
            guard let tag = u16(position) else { return nil }
            guard tag == 0x0112 else { continue }
            guard let type = u16(position + 2), let valueCount = u32(position + 4),
                type == 3, valueCount >= 1, let value = u16(position + 8)
            else { return nil }
            return ExifOrientation(rawValue: value)
        }
        return nil
    }
}
