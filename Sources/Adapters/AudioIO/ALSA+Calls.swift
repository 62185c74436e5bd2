// Every libasound (ALSA) call proofkit makes is in this file (swift-system's `Syscalls.swift`
// chokepoint). The rest of AudioIO sees only Swift values: `PCMHandle` (an owned, ~Copyable
// `snd_pcm_t *`), `[Int16]` frames and `ProofkitError`. libasound is not linked: its functions
// come from the table `loadALSA()` fills on first use, and are called through it.
internal import CALSA
internal import CProofkitShims
import ProofkitCore

#if canImport(Glibc)
    import Glibc
#endif

/// Direction of a PCM stream.
enum PCMDirection {
    case capture, playback

    var alsaValue: snd_pcm_stream_t {
        switch self {
        case .capture: SND_PCM_STREAM_CAPTURE
        case .playback: SND_PCM_STREAM_PLAYBACK
        }
    }

    var noun: String { self == .capture ? "capture" : "playback" }
}

/// libasound's functions, from `libasound.so.2`, loaded on the first call and kept for the life of
/// the process (thread-safe). Loading also turns off libasound's own printing on stderr.
/// - Parameter soname: another file to load instead, into a table of its own (tests only).
/// - Throws: `.runtimeUnavailable` (exit 69) in one line: the file, dlerror's reason and the
///   Debian package to install (libasound2).
func loadALSA(soname: String? = nil) throws(ProofkitError) -> proofkit_alsa_api {
    guard let table = proofkit_library_load(proofkit_alsa_library(), soname) else {
        throw ProofkitError(.runtimeUnavailable, String(cString: proofkit_library_failure()), operation: "dlopen")
    }
    return table.load(as: proofkit_alsa_api.self)
}

/// Turns a negative ALSA return value into a `ProofkitError` (the one funnel for ALSA errors).
///
/// Missing, busy, vanished or refused devices are `.deviceUnavailable`; everything else is `.io`.
func alsaError(_ code: Int32, _ operation: String, device: String, direction: PCMDirection)
    -> ProofkitError
{
    let text = alsaErrorText(code)
    let errno = -code
    let message: String
    switch errno {
    case ENOENT, ENXIO:
        message =
            "no \(direction.noun) device named '\(device)' (\(text)); "
            + "'proofkit voice --list-devices' lists the devices"
    case ENODEV:
        message = "the \(direction.noun) device '\(device)' went away (\(text))"
    case EBUSY:
        message = "the \(direction.noun) device '\(device)' is busy: another program is using it (\(text))"
    case EACCES, EPERM:
        message =
            "no permission to open the \(direction.noun) device '\(device)' (\(text)); "
            + "is the user in the 'audio' group?"
    case EINVAL:
        message =
            "the \(direction.noun) device '\(device)' refused the format (\(text)); "
            + "a 'plughw:' or 'default' device converts it"
    default:
        message = "the \(direction.noun) device '\(device)' failed: \(text)"
    }
    let code: ProofkitError.Code =
        [ENOENT, ENXIO, ENODEV, EBUSY, EACCES, EPERM, EINVAL].contains(errno) ? .deviceUnavailable : .io
    return ProofkitError(code, message, operation: operation, underlying: -errno)
}

/// `snd_strerror` text for a negative ALSA code (`error N` when libasound cannot be loaded).
func alsaErrorText(_ code: Int32) -> String {
    guard let alsa = try? loadALSA(), let text = alsa.snd_strerror(code) else { return "error \(code)" }
    return String(cString: text)
}

/// A parsed ALSA configuration tree (`snd_config_t *`), owned; freed on deinit.
struct ALSAConfigTree: ~Copyable {
    fileprivate let raw: OpaquePointer
    /// The library the tree came from (loaded, so every call on the tree goes through it).
    private let alsa: proofkit_alsa_api

    /// Parses configuration text (ALSA's own syntax, as in `~/.asoundrc`).
    /// Calls `snd_config_top`, `snd_input_buffer_open`, `snd_config_load`.
    /// - Throws: `.runtimeUnavailable` when libasound cannot be loaded, `.invalidArgument` when
    ///   the text does not parse, `.internal` when libasound cannot allocate.
    init(text: String) throws(ProofkitError) {
        let alsa = try loadALSA()
        var top: OpaquePointer?
        var status = alsa.snd_config_top(&top)
        guard status >= 0, let top else {
            throw ProofkitError(
                .internal, "cannot create an ALSA configuration: \(alsaErrorText(status))",
                operation: "snd_config_top", underlying: status)
        }
        var input: OpaquePointer?
        status = text.withCString { alsa.snd_input_buffer_open(&input, $0, strlen($0)) }
        guard status >= 0, let input else {
            _ = alsa.snd_config_delete(top)
            throw ProofkitError(
                .internal, "cannot read the ALSA configuration: \(alsaErrorText(status))",
                operation: "snd_input_buffer_open", underlying: status)
        }
        status = alsa.snd_config_load(top, input)
        _ = alsa.snd_input_close(input)
        guard status >= 0 else {
            _ = alsa.snd_config_delete(top)
            throw ProofkitError(
                .invalidArgument,
                "the ALSA configuration does not parse: \(alsaErrorText(status))",
                operation: "snd_config_load", underlying: status)
        }
        raw = top
        self.alsa = alsa
    }

    deinit { _ = alsa.snd_config_delete(raw) }

    /// The ids of the `pcm.NAME` definitions, with their `hint.description` when there is one.
    func pcmDefinitions() -> [(name: String, description: String?)] {
        var pcm: OpaquePointer?
        guard alsa.snd_config_search(raw, "pcm", &pcm) >= 0, let pcm else { return [] }
        var result: [(String, String?)] = []
        var iterator = alsa.snd_config_iterator_first(pcm)
        let end = alsa.snd_config_iterator_end(pcm)
        while iterator != end {
            defer { iterator = alsa.snd_config_iterator_next(iterator) }
            guard let node = alsa.snd_config_iterator_entry(iterator) else { continue }
            var id: UnsafePointer<CChar>?
            guard alsa.snd_config_get_id(node, &id) >= 0, let id else { continue }
            var description: String?
            var hint: OpaquePointer?
            if alsa.snd_config_search(node, "hint.description", &hint) >= 0, let hint {
                var text: UnsafePointer<CChar>?
                if alsa.snd_config_get_string(hint, &text) >= 0, let text { description = String(cString: text) }
            }
            result.append((String(cString: id), description))
        }
        return result
    }
}

/// What a `snd_pcm_readi`/`snd_pcm_writei` result asks of the caller.
enum PCMTransfer: Equatable {
    /// This many frames moved.
    case frames(Int)
    /// An overrun or underrun (`-EPIPE`) or a suspend (`-ESTRPIPE`), `isXrun`, or an interrupted
    /// call (`-EINTR`): recover (``PCMHandle/recover(_:)``) and go on.
    case recoverable(isXrun: Bool)
    /// Nothing moved (`0`, `-EAGAIN`): try again.
    case nothing
    /// Any other (negative) error.
    case failed

    init(_ result: Int) {
        switch result {
        case 1...: self = .frames(result)
        case 0, -Int(EAGAIN): self = .nothing
        case -Int(EPIPE), -Int(ESTRPIPE): self = .recoverable(isXrun: true)
        case -Int(EINTR): self = .recoverable(isXrun: false)
        default: self = .failed
        }
    }
}

/// An open PCM (`snd_pcm_t *`): the unique owner. Closed by `close()` or, best effort, on deinit.
///
/// `@unchecked Sendable`: it has a unique owner (it is `~Copyable`) and is used by one thread at a
/// time (moved to the capture thread); libasound keeps no shared state across handles.
struct PCMHandle: ~Copyable, @unchecked Sendable {
    // Only trivially destructible fields, so that `close()` can `discard self`.
    private let raw: OpaquePointer
    /// The library the PCM came from (loaded, so every call on the PCM goes through it).
    private let alsa: proofkit_alsa_api

    /// Opens `device` for `direction`, from the machine's configuration or from `configuration`.
    /// Calls `snd_pcm_open` or `snd_pcm_open_lconf` (blocking mode).
    /// The parsed configuration is only needed while opening (libasound copies what it keeps).
    /// - Throws: `.runtimeUnavailable` when libasound cannot be loaded; otherwise see `alsaError`.
    init(device: String, direction: PCMDirection, configurationText: String?) throws(ProofkitError) {
        let alsa = try loadALSA()
        var pcm: OpaquePointer?
        let status: Int32
        if let configurationText {
            let tree = try ALSAConfigTree(text: configurationText)
            status = alsa.snd_pcm_open_lconf(&pcm, device, direction.alsaValue, 0, tree.raw)
        } else {
            status = alsa.snd_pcm_open(&pcm, device, direction.alsaValue, 0)
        }
        guard status >= 0 else {
            throw alsaError(status, "snd_pcm_open", device: device, direction: direction)
        }
        guard let pcm else { preconditionFailure("snd_pcm_open succeeded without a handle") }
        raw = pcm
        self.alsa = alsa
    }

    /// Negotiates interleaved S16_LE at `channels` and `sampleRate` with resampling allowed, and
    /// returns the rate the device really runs at plus the period size in frames.
    /// Calls `snd_pcm_set_params`, `snd_pcm_hw_params_current`, `snd_pcm_get_params`.
    func configure(
        channels: Int, sampleRate: Int, latencyMicroseconds: Int, device: String, direction: PCMDirection
    ) throws(ProofkitError)
        -> (sampleRate: Int, periodFrames: Int)
    {
        let status = alsa.snd_pcm_set_params(
            raw, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, UInt32(channels),
            UInt32(sampleRate), 1, UInt32(latencyMicroseconds))
        guard status >= 0 else {
            throw alsaError(status, "snd_pcm_set_params", device: device, direction: direction)
        }
        var actualRate = UInt32(sampleRate)
        var params: OpaquePointer?
        if alsa.snd_pcm_hw_params_malloc(&params) >= 0, let params {
            if alsa.snd_pcm_hw_params_current(raw, params) >= 0 {
                var rate: UInt32 = 0
                var direction: Int32 = 0
                if alsa.snd_pcm_hw_params_get_rate(params, &rate, &direction) >= 0, rate > 0 { actualRate = rate }
            }
            alsa.snd_pcm_hw_params_free(params)
        }
        var bufferSize: snd_pcm_uframes_t = 0
        var periodSize: snd_pcm_uframes_t = 0
        _ = alsa.snd_pcm_get_params(raw, &bufferSize, &periodSize)
        return (Int(actualRate), Int(periodSize))
    }

    /// Reads up to `buffer.count / channels` frames into `buffer` (blocking).
    /// - Returns: frames read (>= 0), or a negative ALSA error code. Calls `snd_pcm_readi`.
    func read(into buffer: inout [Int16], channels: Int) -> Int {
        let frames = buffer.count / channels
        return buffer.withUnsafeMutableBytes { bytes in
            Int(alsa.snd_pcm_readi(raw, bytes.baseAddress, snd_pcm_uframes_t(frames)))
        }
    }

    /// Writes up to `count` frames from `samples[offset...]` (blocking).
    /// - Returns: frames written (>= 0), or a negative ALSA error code. Calls `snd_pcm_writei`.
    func write(_ samples: borrowing [Int16], frameOffset: Int, frames: Int, channels: Int) -> Int {
        precondition((frameOffset + frames) * channels <= samples.count, "write past the buffer")
        return samples.withUnsafeBytes { bytes in
            let start = bytes.baseAddress!.advanced(by: frameOffset * channels * 2)
            return Int(alsa.snd_pcm_writei(raw, start, snd_pcm_uframes_t(frames)))
        }
    }

    /// Writes all `frames` frames from `samples[frameOffset...]` (blocking), recovering quietly
    /// from an underrun (`-EPIPE`), a suspend (`-ESTRPIPE`) or an interrupted call (`-EINTR`), and
    /// retrying when the device took nothing (`0`, `-EAGAIN`). The one write loop for playback
    /// (``SoundPlayer/play(_:progress:)`` and the alarm ring).
    /// - Parameters:
    ///   - underruns: incremented for each underrun or suspend recovered from.
    ///   - written: called after each accepted write with the frames written so far.
    /// - Throws: what ``alsaError(_:_:device:direction:)`` makes of a failed `snd_pcm_writei` or
    ///   `snd_pcm_recover`. Calls `snd_pcm_writei`, `snd_pcm_recover`.
    func writeAll(
        _ samples: borrowing [Int16], frameOffset: Int, frames: Int, channels: Int, device: String,
        underruns: inout Int, written: (Int) -> Void = { _ in }
    ) throws(ProofkitError) {
        var done = 0
        while done < frames {
            let result = write(samples, frameOffset: frameOffset + done, frames: frames - done, channels: channels)
            switch PCMTransfer(result) {
            case .frames(let count):
                done += count
                written(done)
            case .recoverable(let isXrun):
                if isXrun { underruns += 1 }
                let recovered = recover(result)
                if recovered < 0 {
                    throw alsaError(Int32(recovered), "snd_pcm_recover", device: device, direction: .playback)
                }
            case .nothing:
                continue
            case .failed:
                throw alsaError(Int32(result), "snd_pcm_writei", device: device, direction: .playback)
            }
        }
    }

    /// Recovers from an overrun/underrun (`-EPIPE`), a suspend (`-ESTRPIPE`) or an interrupted
    /// call (`-EINTR`) without printing anything.
    /// - Returns: 0 when recovered, otherwise the (negative) error. Calls `snd_pcm_recover`.
    func recover(_ error: Int) -> Int {
        Int(alsa.snd_pcm_recover(raw, Int32(error), 1))
    }

    /// Frames queued in the device but not yet heard (playback), 0 when unknown.
    /// Calls `snd_pcm_delay`.
    func delayFrames() -> Int {
        var delay: snd_pcm_sframes_t = 0
        guard alsa.snd_pcm_delay(raw, &delay) >= 0 else { return 0 }
        return max(0, Int(delay))
    }

    /// Waits until all queued frames are played. Calls `snd_pcm_drain`.
    /// - Returns: `nil`, or the (negative) error; an underrun at the end (`-EPIPE`) is not one.
    func drain() -> Int? {
        let status = Int(alsa.snd_pcm_drain(raw))
        return status < 0 && status != -Int(EPIPE) ? status : nil
    }

    /// Stops at once, dropping queued frames. Calls `snd_pcm_drop`.
    func drop() { _ = alsa.snd_pcm_drop(raw) }

    /// Closes the PCM. Calls `snd_pcm_close`.
    /// - Returns: 0, or a negative ALSA error code.
    consuming func close() -> Int32 {
        let status = alsa.snd_pcm_close(raw)
        discard self
        return status
    }

    deinit { _ = alsa.snd_pcm_close(raw) }
}

/// The PCM devices the machine's configuration offers (name, description, direction).
/// Calls `snd_device_name_hint`, `snd_device_name_get_hint`, `snd_device_name_free_hint`.
/// - Throws: `.runtimeUnavailable` when libasound cannot be loaded.
func alsaDeviceHints() throws(ProofkitError) -> [(name: String, description: String?, ioid: String?)] {
    let alsa = try loadALSA()
    var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    guard alsa.snd_device_name_hint(-1, "pcm", &hints) >= 0, let hints else { return [] }
    defer { _ = alsa.snd_device_name_free_hint(hints) }
    func take(_ hint: UnsafeMutableRawPointer, _ key: String) -> String? {
        guard let text = alsa.snd_device_name_get_hint(hint, key) else { return nil }
        defer { free(text) }
        return String(cString: text)
    }
    var result: [(String, String?, String?)] = []
    var index = 0
    while let hint = hints[index] {
        index += 1
        guard let name = take(hint, "NAME") else { continue }
        result.append((name, take(hint, "DESC"), take(hint, "IOID")))
    }
    return result
}
