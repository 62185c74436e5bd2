internal import CSndFile
import ProofkitCore

extension AudioFileFormat {
    init(_ info: SndFile.Info) {
        let major = info.format & SndFile.majorMask
        let subtype = info.format & SndFile.subtypeMask
        let majorName = AudioFileFormat.majorName(major) ?? "FORMAT_0x\(String(major, radix: 16))"
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
            subtypeName: AudioFileFormat.subtypeName(subtype) ?? "SUBTYPE_0x\(String(subtype, radix: 16))",
            isSeekable: info.isSeekable)
    }

    /// libsndfile's major formats (sndfile.h), by their libsndfile names.
    /// A `switch`, not a dictionary: a `[Int32: String]` built at first use costs a scan of every
    /// protocol conformance in the binary (to find `Int32: Hashable`), about 0.3 M instructions.
    static func majorName(_ code: Int32) -> String? {
        switch code {
        case Int32(SF_FORMAT_WAV): "WAV"
        case Int32(SF_FORMAT_AIFF): "AIFF"
        case Int32(SF_FORMAT_AU): "AU"
        case Int32(SF_FORMAT_RAW): "RAW"
        case Int32(SF_FORMAT_PAF): "PAF"
        case Int32(SF_FORMAT_SVX): "SVX"
        case Int32(SF_FORMAT_NIST): "NIST"
        case Int32(SF_FORMAT_VOC): "VOC"
        case Int32(SF_FORMAT_IRCAM): "IRCAM"
        case Int32(SF_FORMAT_W64): "W64"
        case Int32(SF_FORMAT_MAT4): "MAT4"
        case Int32(SF_FORMAT_MAT5): "MAT5"
        case Int32(SF_FORMAT_PVF): "PVF"
        case Int32(SF_FORMAT_XI): "XI"
        case Int32(SF_FORMAT_HTK): "HTK"
        case Int32(SF_FORMAT_SDS): "SDS"
        case Int32(SF_FORMAT_AVR): "AVR"
        case Int32(SF_FORMAT_WAVEX): "WAVEX"
        case Int32(SF_FORMAT_SD2): "SD2"
        case Int32(SF_FORMAT_FLAC): "FLAC"
        case Int32(SF_FORMAT_CAF): "CAF"
        case Int32(SF_FORMAT_WVE): "WVE"
        case Int32(SF_FORMAT_OGG): "OGG"
        case Int32(SF_FORMAT_MPC2K): "MPC2K"
        case Int32(SF_FORMAT_RF64): "RF64"
        case Int32(SF_FORMAT_MPEG): "MPEG"
        default: nil
        }
    }

    /// libsndfile's sample encodings (sndfile.h), by their libsndfile names.
    /// A `switch`, not a dictionary: a `[Int32: String]` built at first use costs a scan of every
    /// A `switch`, like ``majorName(_:)``.
    static func subtypeName(_ code: Int32) -> String? {
        switch code {
        case Int32(SF_FORMAT_PCM_S8): "PCM_S8"
        case Int32(SF_FORMAT_PCM_16): "PCM_16"
        case Int32(SF_FORMAT_PCM_24): "PCM_24"
        case Int32(SF_FORMAT_PCM_32): "PCM_32"
        case Int32(SF_FORMAT_PCM_U8): "PCM_U8"
        case Int32(SF_FORMAT_FLOAT): "FLOAT"
        case Int32(SF_FORMAT_DOUBLE): "DOUBLE"
        case Int32(SF_FORMAT_ULAW): "ULAW"
        case Int32(SF_FORMAT_ALAW): "ALAW"
        case Int32(SF_FORMAT_IMA_ADPCM): "IMA_ADPCM"
        case Int32(SF_FORMAT_MS_ADPCM): "MS_ADPCM"
        case Int32(SF_FORMAT_GSM610): "GSM610"
        case Int32(SF_FORMAT_VOX_ADPCM): "VOX_ADPCM"
        case Int32(SF_FORMAT_NMS_ADPCM_16): "NMS_ADPCM_16"
        case Int32(SF_FORMAT_NMS_ADPCM_24): "NMS_ADPCM_24"
        case Int32(SF_FORMAT_NMS_ADPCM_32): "NMS_ADPCM_32"
        case Int32(SF_FORMAT_G721_32): "G721_32"
        case Int32(SF_FORMAT_G723_24): "G723_24"
        case Int32(SF_FORMAT_G723_40): "G723_40"
        case Int32(SF_FORMAT_DWVW_12): "DWVW_12"
        case Int32(SF_FORMAT_DWVW_16): "DWVW_16"
        case Int32(SF_FORMAT_DWVW_24): "DWVW_24"
        case Int32(SF_FORMAT_DWVW_N): "DWVW_N"
        case Int32(SF_FORMAT_DPCM_8): "DPCM_8"
        case Int32(SF_FORMAT_DPCM_16): "DPCM_16"
        case Int32(SF_FORMAT_VORBIS): "VORBIS"
        case Int32(SF_FORMAT_OPUS): "OPUS"
        case Int32(SF_FORMAT_ALAC_16): "ALAC_16"
        case Int32(SF_FORMAT_ALAC_20): "ALAC_20"
        case Int32(SF_FORMAT_ALAC_24): "ALAC_24"
        case Int32(SF_FORMAT_ALAC_32): "ALAC_32"
        case Int32(SF_FORMAT_MPEG_LAYER_I): "MPEG_LAYER_I"
        case Int32(SF_FORMAT_MPEG_LAYER_II): "MPEG_LAYER_II"
        case Int32(SF_FORMAT_MPEG_LAYER_III): "MPEG_LAYER_III"
        default: nil
        }
    }
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
