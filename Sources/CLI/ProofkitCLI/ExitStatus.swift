public import ProofkitCore

/// A process exit status, from one documented table (sysexits.h where it has a fitting code).
///
/// | Exit | Meaning |
/// |---|---|
/// | 0 | Success. A rejected verdict is still 0 and is reported in the output. |
/// | 1 | Operational failure (an error not listed below, a bug). |
/// | 2 | Verdict rejected, only with `--strict`. |
/// | 3 | Nothing to prove: no alarm chain is due (`alarm prove`); nothing was changed. |
/// | 64 | Usage error: unknown flag, missing or malformed argument (`EX_USAGE`). |
/// | 65 | Input data invalid: undecodable, unsupported format, not an image (`EX_DATAERR`). |
/// | 66 | Input not found: missing file, folder given for a file, unknown name (`EX_NOINPUT`). |
/// | 69 | Unavailable: audio device, ONNX Runtime, or a C library loaded on first use (`EX_UNAVAILABLE`). |
/// | 73 | Alarm store not writable: read-only disk or folder, or a symbolic link in its place (`EX_CANTCREAT`). |
/// | 74 | I/O error: cannot read an input or write the output, full disk (`EX_IOERR`). |
/// | 75 | Try again: another process holds the lock (a plan's state file, or another alarm service runs on the store) (`EX_TEMPFAIL`). |
/// | 76 | Alarm store corrupt (not a database, or damaged) or written by a newer proofkit; left as it is. |
/// | 78 | Model invalid: checksum mismatch or wrong shape (`EX_CONFIG`). |
/// | 80 | Camera busy: open in another program (`EBUSY`). |
/// | 81 | Camera unplugged, before or during a live proof (`ENODEV`). |
/// | 82 | Camera stalled: no frame for 5 s. |
/// | 83 | Not a camera: the device is not a video capture device. |
/// | 84 | No camera format proofkit decodes (it takes MJPEG and YUYV). |
public struct ExitStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let success = ExitStatus(rawValue: 0)
    public static let failure = ExitStatus(rawValue: 1)
    public static let rejected = ExitStatus(rawValue: 2)
    /// `alarm prove` with no chain due (its first ring not come, or its window over).
    public static let notDue = ExitStatus(rawValue: 3)
    public static let usage = ExitStatus(rawValue: 64)
    public static let dataError = ExitStatus(rawValue: 65)
    public static let noInput = ExitStatus(rawValue: 66)
    public static let unavailable = ExitStatus(rawValue: 69)
    public static let storeReadOnly = ExitStatus(rawValue: 73)
    public static let ioError = ExitStatus(rawValue: 74)
    public static let tryAgain = ExitStatus(rawValue: 75)
    /// Another alarm service already runs on the store: the same code as any held lock (75).
    public static let serviceRunning = tryAgain
    public static let storeCorrupt = ExitStatus(rawValue: 76)
    public static let modelInvalid = ExitStatus(rawValue: 78)
    /// The camera is open in another program (`EBUSY`).
    public static let cameraBusy = ExitStatus(rawValue: 80)
    /// The camera went away (unplugged), before or during a live proof.
    public static let cameraUnplugged = ExitStatus(rawValue: 81)
    /// The camera gave no frame for 5 s.
    public static let cameraStalled = ExitStatus(rawValue: 82)
    /// The device is not a video capture device.
    public static let notACamera = ExitStatus(rawValue: 83)
    /// The camera offers no format proofkit decodes (MJPEG or YUYV).
    public static let cameraFormat = ExitStatus(rawValue: 84)

    /// The one mapping from error codes to exit statuses.
    public init(for code: ProofkitError.Code) {
        switch code {
        case .invalidArgument: self = .usage
        case .notFound: self = .noInput
        case .unsupportedFormat, .decodeFailed: self = .dataError
        case .deviceUnavailable, .runtimeUnavailable: self = .unavailable
        case .io: self = .ioError
        case .busy: self = .tryAgain
        case .modelInvalid: self = .modelInvalid
        case .cameraBusy: self = .cameraBusy
        case .cameraUnplugged: self = .cameraUnplugged
        case .cameraStalled: self = .cameraStalled
        case .notACamera: self = .notACamera
        case .cameraFormat: self = .cameraFormat
        case .storeCorrupt: self = .storeCorrupt
        case .storeReadOnly: self = .storeReadOnly
        case .serviceRunning: self = .serviceRunning
        case .serviceNotRunning: self = .unavailable
        case .notDue: self = .notDue
        default: self = .failure
        }
    }

    public var description: String { String(rawValue) }

    /// The table above, for `proofkit help exit-codes`.
    public static let table: String = """
        Exit codes:
          0   success (a rejected proof is still 0; see --strict)
          1   operational failure
          2   proof rejected, with --strict
          3   nothing to prove: no alarm is due (alarm prove; nothing changed, the next ring named)
          64  usage error (unknown flag, bad argument)
          65  input data invalid (undecodable, unsupported format)
          66  input not found (missing file, folder, unknown name)
          69  unavailable (audio device, ONNX Runtime or C library)
          73  alarm store not writable (read-only disk or folder, or a symbolic link)
          74  I/O error (cannot read an input or write the output, disk full)
          75  try again (another process holds the lock: a plan's state file, or an alarm
              service already running on the store)
          76  alarm store corrupt or from a newer proofkit (left as it is)
          78  model invalid (checksum mismatch, wrong shape)
          80  camera busy (open in another program)
          81  camera unplugged (before or during a live proof)
          82  camera stalled (no frame for 5 s)
          83  not a camera (not a video capture device)
          84  no camera format proofkit decodes (it takes MJPEG and YUYV)
        """
}
