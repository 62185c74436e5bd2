import Proofkit
import ProofkitCore

/// The options every live proof by camera shares, and opening the camera they name.
enum CameraOptions {
    /// `--camera [DEVICE]`, `--camera-format`, `--record DIR`.
    static let specs: [OptionSpec] = [
        .optionalValue(
            "camera", value: "DEVICE",
            help: "live from a camera (default the first video capture device, e.g. /dev/video0)"),
        .option(
            "camera-format", value: "FORMAT", choices: ["mjpeg", "yuyv"],
            help: "with --camera: use this format when the camera offers it (default: YUYV, else MJPEG)"),
        .option(
            "record", value: "DIR", help: "with --camera: also write each frame into DIR (default: nothing written)"),
    ]

    /// Whether `--camera` was given.
    static func isLive(_ arguments: ParsedArguments) -> Bool { arguments.value("camera") != nil }

    /// Opens the camera the arguments name and says which mode it runs at (on stderr, so that
    /// JSON on stdout stays clean).
    static func open(_ arguments: ParsedArguments, io: CommandIO) throws -> CameraFrameSource {
        let device = arguments.value("camera").flatMap { $0.isEmpty ? nil : $0 }
        var format: CameraPixelFormat?
        if let name = arguments.value("camera-format") {
            switch name {
            case "mjpeg", "mjpg": format = .mjpeg
            case "yuyv": format = .yuyv
            default: throw UsageError("--camera-format takes mjpeg or yuyv, not '\(name)'")
            }
        }
        let source = try CameraFrameSource(device: device, preferring: format, recording: arguments.value("record"))
        let camera = source.camera
        io.printError("camera: \(source.path) (\(camera.card), \(camera.driver)): \(source.mode)")
        return source
    }

    /// `--max-seconds` (default `fallback`), checked positive.
    static func maxSeconds(_ arguments: ParsedArguments, default fallback: Double) throws -> Double {
        let value = try arguments.seconds("max-seconds") ?? fallback
        guard value > 0 else { throw UsageError("--max-seconds must be more than 0") }
        return value
    }
}
