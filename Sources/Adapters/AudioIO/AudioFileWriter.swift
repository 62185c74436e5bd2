public import ProofkitCore
internal import ProofkitSystem

extension AudioOutputContainer {
    var sndfileFormat: Int32 {
        // CAF defaults to big-endian; force little-endian.
        self == .caf
            ? SndFile.formatCAF | SndFile.subtypePCM16 | SndFile.endianLittle
            : SndFile.formatWAV | SndFile.subtypePCM16
    }
}

/// Writes a 16-bit PCM CAF or WAV file atomically.
///
/// Frames go to a temporary file in the output's folder (`.NAME.tmp-XXXXXX`, with the existing
/// output's mode, and as root its owner; temporaries of that name over 5 minutes old, left by a
/// killed writer, are removed first). An output that is not a regular file (a device node, a
/// FIFO, a folder) or is read-only is refused and never replaced. Only
/// ``commit(syncsToDisk:verify:)`` renames it onto the output, after the complete file (header
/// included) is on its way to the disk (or, when asked, on it) and an optional check of it passes. If anything fails before
/// that (a full disk, an exception, the writer simply going out of scope) the temporary is
/// removed: no output appears, and an existing file at the output path is left exactly as it was.
///
/// ```swift
/// var writer = try AudioFileWriter(path: "alarm.caf", container: .caf, sampleRate: 44100, channels: 2)
/// try writer.write(samples)         // interleaved floats in -1...1
/// try writer.commit()
/// ```
///
/// Ownership: a unique owner of the libsndfile handle and the temporary file; `@unchecked
/// Sendable` because it has one owner and no shared state.
public struct AudioFileWriter: ~Copyable, @unchecked Sendable {
    /// The final output path.
    public let path: String
    /// The container written.
    public let container: AudioOutputContainer
    /// Frames per second, in Hz.
    public let sampleRate: Int
    /// Channels per frame.
    public let channels: Int
    /// Frames written so far.
    public private(set) var framesWritten: Int = 0
    private var handle: SndFileHandle?
    /// The temporary file's descriptor: owned by ``handle`` while it is open, then by the writer.
    private var descriptor: Int32 = -1
    private var ownsDescriptor = false
    private var temporaryPath: String?
    private var scratch: [Int16] = []
    private let writesBackEarly: Bool
    private var bytesSinceWriteback = 0

    /// Starts writing `path` (through a temporary file beside it).
    /// - Parameters:
    ///   - path: the output file; its folder must exist and be writable.
    ///   - container: `.caf` (default) or `.wav`.
    ///   - sampleRate: in Hz, 1...655350.
    ///   - channels: 1...1024.
    ///   - writesBackEarly: start writing the data to the disk every
    ///     ``writebackIntervalBytes`` while it is written (Linux `sync_file_range`, which does not
    ///     wait), so that ``commit(syncsToDisk:verify:)`` with `syncsToDisk` waits for less
    ///     (default `false`: the data stays in the page cache until the kernel writes it).
    /// - Throws: `.io` naming `path` when the folder is missing or unwritable, or `path` is not a
    ///   regular file or is read-only;
    ///   `.invalidArgument` when libsndfile refuses the rate or channel count;
    ///   `.runtimeUnavailable` when libsndfile.so.1 cannot be loaded (no file is left behind).
    ///   Calls `mkstemp`, `sf_format_check`, `sf_open_fd`.
    public init(
        path: String, container: AudioOutputContainer = .caf, sampleRate: Int, channels: Int,
        writesBackEarly: Bool = false
    ) throws(ProofkitError) {
        self.path = path
        self.container = container
        self.sampleRate = sampleRate
        self.channels = channels
        self.writesBackEarly = writesBackEarly
        guard sampleRate >= 1, channels >= 1 else {
            throw ProofkitError(
                .invalidArgument, "cannot write \(channels) channels at \(sampleRate) Hz",
                path: path)
        }
        let (fd, temporary, _) = try POSIX.beginReplacement(of: path)
        let opened: SndFile.Opened
        do {
            opened = try SndFile.openForWriting(
                fd: fd, format: container.sndfileFormat, sampleRate: sampleRate, channels: channels)
        } catch {
            POSIX.closeDescriptor(fd)
            POSIX.remove(temporary)
            throw error
        }
        switch opened {
        case .success(var handle):
            // The handle closes the descriptor after itself until ``commit`` takes it back.
            handle.closesAfterwards(fd)
            self.handle = consume handle
            self.descriptor = fd
            self.temporaryPath = temporary
        case .failure(let failure):
            let (text, code) = (failure.text, failure.code)
            POSIX.closeDescriptor(fd)
            POSIX.remove(temporary)
            throw ProofkitError(
                .invalidArgument,
                "cannot write \(container) at \(sampleRate) Hz with \(channels) channels (libsndfile: \(text.trimmedLine))",
                operation: "sf_open_fd", underlying: code, path: path)
        }
    }

    deinit {
        // An open handle closes itself, then the descriptor, after this body.
        if ownsDescriptor && descriptor >= 0 { POSIX.closeDescriptor(descriptor) }
        if let temporaryPath { POSIX.remove(temporaryPath) }
    }

    /// With `writesBackEarly`, how much is written between two starts of writeback, in bytes:
    /// 1 MiB.
    public static let writebackIntervalBytes = 1 << 20

    /// Appends interleaved 16-bit samples (`samples.count` a multiple of `channels`, else traps).
    /// - Throws: `.io` when the data cannot be written (full disk, file size limit).
    ///   Calls `sf_writef_short`.
    public mutating func write(_ samples: [Int16]) throws(ProofkitError) {
        try write(samples[...])
    }

    /// Appends interleaved 16-bit samples (`samples.count` a multiple of `channels`, else traps).
    /// - Throws: see ``write(_:)-([Int16])``.
    public mutating func write(_ samples: ArraySlice<Int16>) throws(ProofkitError) {
        precondition(samples.count % channels == 0, "samples must hold whole frames")
        guard handle != nil else { preconditionFailure("write after commit") }
        let frames = samples.count / channels
        guard frames > 0 else { return }
        let written = samples.withUnsafeBufferPointer {
            handle!.writeShort($0.baseAddress!, frames: frames)
        }
        if writesBackEarly {
            bytesSinceWriteback += written * channels * 2
            if bytesSinceWriteback >= AudioFileWriter.writebackIntervalBytes {
                POSIX.startWriteback(descriptor)
                bytesSinceWriteback = 0
            }
        }
        if written != frames {
            let (text, code) = handle!.error()
            throw ProofkitError(
                .io, "cannot write the output (\(text.trimmedLine))",
                operation: "sf_writef_short", underlying: code, path: path)
        }
        framesWritten += frames
    }

    /// Appends interleaved float samples, converted to 16 bits with
    /// ``AudioFileWriter/int16(_:)`` (`round(x * 32768)`, clamped to -32768...32767).
    /// - Throws: see ``write(_:)-([Int16])``.
    public mutating func write(_ samples: [Float]) throws(ProofkitError) {
        precondition(samples.count % channels == 0, "samples must hold whole frames")
        if scratch.count != samples.count {
            scratch = [Int16](repeating: 0, count: samples.count)
        }
        samples.withUnsafeBufferPointer { input in
            scratch.withUnsafeMutableBufferPointer { output in
                for index in 0..<input.count { output[index] = AudioFileWriter.int16(input[index]) }
            }
        }
        try write(scratch)
    }

    /// The 16-bit sample for a float in -1...1: `x * 32768` rounded to nearest (ties to even), clamped to
    /// -32768...32767 (never wraps). NaN becomes 0.
    ///
    /// 32768 is libsndfile's scale when it reads 16-bit data as floats, so 16-bit input passes
    /// through bit-exactly.
    @inline(__always)
    public static func int16(_ x: Float) -> Int16 {
        var scaled = x * 32768
        scaled = scaled.isNaN ? 0 : scaled
        scaled = scaled < -32768 ? -32768 : scaled
        scaled = scaled > 32767 ? 32767 : scaled
        // Round to nearest (ties to even) without libm or trapping conversions: after adding
        // 1.5 * 2^23 (bit pattern 0x4B40_0000) the float's low mantissa bits hold the integer.
        // Branch-free, so the loop vectorises.
        let biased = (scaled + 12_582_912).bitPattern &- 0x4B40_0000
        return Int16(truncatingIfNeeded: Int32(bitPattern: biased))
    }

    /// Finishes the file: closes it (libsndfile writes the final header), runs `verify` on the
    /// temporary (complete) file, and only then renames it onto ``path``.
    ///
    /// Either way the complete file's writes to the disk are started (Linux `sync_file_range`,
    /// which does not wait) before `verify` runs, so the disk works while `verify` reads the file
    /// back from the page cache, and the file's blocks are allocated before the rename. Both ways
    /// are atomic for running programs: they see the old file or the complete new one. They
    /// differ in what a power cut soon after can leave:
    /// - `syncsToDisk: false` (the default) does not wait for the disk. On a journalling file
    ///   system that writes data before the metadata that exposes it (ext4 in its default
    ///   `data=ordered` mode, as on Debian and Raspberry Pi OS), the rename is committed only
    ///   after the data it exposes, so a power cut leaves the old file (or none) or the complete
    ///   new one; what is not promised is that the new file is on the disk when `commit` returns.
    /// - `syncsToDisk: true` also waits for the disk (`fdatasync` of the data, header, size and
    ///   block map) before the rename: once `commit` returns, the new file survives a power cut on
    ///   any file system, except for the rename itself, which reaches the disk with the file
    ///   system's next commit (ext4: within 5 s). It costs the disk's write time (a few ms for a
    ///   5 MB file on an SSD, more on an SD card); with `writesBackEarly` most of the data is on
    ///   its way already.
    /// - Parameters:
    ///   - syncsToDisk: wait for the disk before the rename (default `false`; see above).
    ///   - verify: called with the temporary file's path; throwing aborts the commit
    ///     (the temporary is removed and no output appears).
    /// - Throws: `.io` when closing, syncing or renaming fails, or whatever `verify` throws.
    ///   Calls `sf_close`, `sync_file_range` (through `proofkit_posix_start_writeback`),
    ///   `fdatasync` when syncing, `close`, `rename`.
    public consuming func commit(
        syncsToDisk: Bool = false, verify: (String) throws(ProofkitError) -> Void = { _ in }
    ) throws(ProofkitError) {
        guard let handle = handle.take(), let temporary = temporaryPath else {
            preconditionFailure("commit after commit")
        }
        let (errorText, errorCode) = handle.error()
        let (closeCode, _) = handle.closeReleasingDescriptor()
        ownsDescriptor = true
        if errorCode != 0 || closeCode != 0 {
            // temporaryPath and descriptor are still set: deinit closes and removes the temporary.
            throw ProofkitError(
                .io,
                "cannot finish the output (\(errorCode != 0 ? errorText.trimmedLine : "libsndfile error \(closeCode)"))",
                operation: "sf_close", underlying: errorCode != 0 ? errorCode : closeCode, path: path)
        }
        // Start the writes now: the disk works while `verify` reads the file back, and the
        // blocks are allocated before the rename (see above). Measured: replacing a 29 s WAV
        // alarm got faster (the rename no longer has ext4 allocate and flush the new file); a new
        // one costs about 0.4 ms more. On a thread of its own it was no faster for a new file and
        // slower when replacing one.
        POSIX.startWriteback(descriptor)
        try verify(temporary)
        if syncsToDisk, case .failure(let failure) = POSIX.syncData(descriptor) {
            throw ProofkitError(
                .io, "cannot write the output to the disk: \(POSIX.describe(failure.code))",
                operation: "fdatasync", underlying: failure.code, path: path)
        }
        POSIX.closeDescriptor(descriptor)
        descriptor = -1
        // Checked again just before the rename: a device or FIFO swapped in is not replaced.
        try POSIX.finishReplacement(temporary: temporary, onto: path)
        self.temporaryPath = nil
    }

    /// Abandons the output: the temporary file is removed and nothing appears at ``path``.
    public consuming func cancel() {
        // deinit closes the handle and removes the temporary.
    }
}
