import ProofkitCore

extension AudioFileFormat {
    init(_ info: SndFile.Info) {
        let major = info.format & SndFile.majorMask
        let subtype = info.format & SndFile.subtypeMask
        let majorName = AudioFileFormat.majorNames[major] ?? "FORMAT_0x\(String(major, radix: 16))"
        let container: AudioContainer
        switch majorName {
        case "WAV", "WAVEX", "RF64": container = .wav
        case "AIFF": container = .aiff
        case "CAF": container = .caf
        case "FLAC": container = .flac
        case "OGG": container = .ogg
        case "MPEG": container = .mpeg
        default: container = .other(majorName)
        }
        // libsndfile reports an unknown length as a huge count (SF_COUNT_MAX) or 0 for streams.
        let frames: Int? = info.frames > 0 && info.frames < Int64(1) << 50 ? Int(info.frames) : nil
        self.init(
            sampleRate: info.sampleRate, channels: info.channels, headerFrameCount: frames,
            container: container, majorFormatName: majorName,
            subtypeName: AudioFileFormat.subtypeNames[subtype] ?? "SUBTYPE_0x\(String(subtype, radix: 16))",
            isSeekable: info.isSeekable)
    }

    /// libsndfile's major formats (sndfile.h), by their libsndfile names.
    static let majorNames: [Int32: String] = [
        0x01_0000: "WAV", 0x02_0000: "AIFF", 0x03_0000: "AU", 0x04_0000: "RAW", 0x05_0000: "PAF",
        0x06_0000: "SVX", 0x07_0000: "NIST", 0x08_0000: "VOC", 0x0A_0000: "IRCAM", 0x0B_0000: "W64",
        0x0C_0000: "MAT4", 0x0D_0000: "MAT5", 0x0E_0000: "PVF", 0x0F_0000: "XI", 0x10_0000: "HTK",
        0x11_0000: "SDS", 0x12_0000: "AVR", 0x13_0000: "WAVEX", 0x16_0000: "SD2", 0x17_0000: "FLAC",
        0x18_0000: "CAF", 0x19_0000: "WVE", 0x20_0000: "OGG", 0x21_0000: "MPC2K", 0x22_0000: "RF64",
        0x23_0000: "MPEG",
    ]

    /// libsndfile's sample encodings (sndfile.h), by their libsndfile names.
    static let subtypeNames: [Int32: String] = [
        0x0001: "PCM_S8", 0x0002: "PCM_16", 0x0003: "PCM_24", 0x0004: "PCM_32", 0x0005: "PCM_U8",
        0x0006: "FLOAT", 0x0007: "DOUBLE", 0x0010: "ULAW", 0x0011: "ALAW", 0x0012: "IMA_ADPCM",
        0x0013: "MS_ADPCM", 0x0020: "GSM610", 0x0021: "VOX_ADPCM", 0x0022: "NMS_ADPCM_16",
        0x0023: "NMS_ADPCM_24", 0x0024: "NMS_ADPCM_32", 0x0030: "G721_32", 0x0031: "G723_24",
        0x0032: "G723_40", 0x0040: "DWVW_12", 0x0041: "DWVW_16", 0x0042: "DWVW_24",
        0x0043: "DWVW_N", 0x0050: "DPCM_8", 0x0051: "DPCM_16", 0x0060: "VORBIS", 0x0064: "OPUS",
        0x0070: "ALAC_16", 0x0071: "ALAC_20", 0x0072: "ALAC_24", 0x0073: "ALAC_32",
        0x0080: "MPEG_LAYER_I", 0x0081: "MPEG_LAYER_II", 0x0082: "MPEG_LAYER_III",
    ]
}

/// Recognises, by their first bytes, formats that libsndfile cannot read but users often have,
/// so that they get a message naming the format and how to convert it.
enum UnsupportedFormatSniffer {
    /// The format's name when `prefix` (the file's first bytes) is AAC in MP4/M4A, ADTS or ADIF.
    static func unsupportedFormat(prefix bytes: [UInt8]) -> String? {
        var start = 0
        // Skip an ID3v2 tag (10-byte header, syncsafe size) when it fits in the prefix.
        if bytes.count >= 10, bytes[0] == 0x49, bytes[1] == 0x44, bytes[2] == 0x33 {
            let size = bytes[6...9].reduce(0) { ($0 << 7) | (Int($1) & 0x7F) }
            start = 10 + size + ((bytes[5] & 0x10) != 0 ? 10 : 0)
        }
        if bytes.count >= 12, bytes[4] == 0x66, bytes[5] == 0x74, bytes[6] == 0x79, bytes[7] == 0x70 {
            let brand = String(decoding: bytes[8..<12], as: UTF8.self)
            return "AAC/M4A (MPEG-4 audio, brand '\(brand.trimmingSpaces)')"
        }
        if bytes.count >= start + 4, bytes[start..<(start + 4)].elementsEqual("ADIF".utf8) {
            return "AAC (ADIF stream)"
        }
        if isADTSHeader(bytes, at: start) {
            let length = adtsFrameLength(bytes, at: start)
            // Confirm with the next frame's sync when the prefix reaches it.
            if start + length + 2 > bytes.count || isADTSHeader(bytes, at: start + length) {
                return "AAC (raw ADTS stream)"
            }
        }
        return nil
    }

    /// 12-bit sync 0xFFF and layer bits 00 (MP3 frames have a non-zero layer).
    static func isADTSHeader(_ bytes: [UInt8], at index: Int) -> Bool {
        guard index >= 0, index + 7 <= bytes.count else { return false }
        return bytes[index] == 0xFF && (bytes[index + 1] & 0xF6) == 0xF0
            && adtsFrameLength(bytes, at: index) >= 7
    }

    static func adtsFrameLength(_ bytes: [UInt8], at i: Int) -> Int {
        (Int(bytes[i + 3] & 0x03) << 11) | (Int(bytes[i + 4]) << 3) | (Int(bytes[i + 5]) >> 5)
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(self.unicodeScalars.filter { $0 != " " && $0.value != 0 })
    }
}
