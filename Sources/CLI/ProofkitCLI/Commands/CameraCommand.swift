import Proofkit
import ProofkitCore

/// `proofkit camera list`: the cameras (V4L2 video capture devices), their formats and sizes, and
/// the mode proofkit would choose.
enum CameraCommand: Subcommand {
    static let name = "camera"
    static let summary = "list the cameras (V4L2) with their formats and sizes, and the mode proofkit picks"
    static let synopsis = "proofkit camera list [--json]"
    static let discussion = """
        Lists every video capture device (/dev/video0 ... /dev/video63 that answer VIDIOC_QUERYCAP
        as capture devices; a webcam's metadata node is left out), with each pixel format, each
        frame size and the frame rates offered, and the mode the live proofs (--camera) would use.
        Nothing is streamed and nothing is written.

        The mode: of MJPEG and YUYV (the two formats proofkit decodes: MJPEG by TurboJPEG, YUYV in
        Swift), the size nearest 640x480 offered at 15 fps or more; at that size YUYV before MJPEG
        (no compression artefacts, and a little cheaper); and the slowest frame rate of 15 fps or
        more (15 on most webcams).

        A Raspberry Pi camera module is not a V4L2 capture device of this kind; run proofkit under
        libcamera's V4L2 compatibility layer: libcamerify proofkit camera list (untested here).

        JSON (--json): {"cameras": [{"path", "card", "driver", "bus",
          "formats": [{"fourcc", "description", "decoded": bool,
                       "sizes": [{"width", "height", "fps": [num]}]}],
          "mode": {"format", "width", "height", "fps"}|null}]}

        Exit status: 0 (also with no camera: the list is empty), 64 usage.

        Examples:
          proofkit camera list
          proofkit camera list --json
        """
    static let options: [OptionSpec] = [.flag("json", help: "one JSON object on stdout")]

    static func run(_ arguments: ParsedArguments, io: CommandIO) throws -> ExitStatus {
        let action = try arguments.requirePositionals(1, names: "list")[0]
        guard action == "list" else { throw UsageError("unknown action '\(action)'; camera takes list") }
        let cameras = Cameras.list()
        if arguments.has("json") {
            io.printJSON(["cameras": .array(cameras.map(json))])
        } else {
            for line in lines(cameras) { io.print(line) }
        }
        return .success
    }

    /// The text of `camera list` (and of doctor's camera part).
    static func lines(_ cameras: [CameraDescription]) -> [String] {
        guard !cameras.isEmpty else { return ["cameras: none (no video capture device in /dev/video*)"] }
        var out: [String] = []
        for camera in cameras {
            out.append("\(camera.path): \(camera.card) (\(camera.driver), \(camera.bus))")
            for format in camera.formats {
                let sizes = format.sizes.map { size in
                    let rates = size.framesPerSecond.map { decimalText($0, places: $0 == $0.rounded() ? 0 : 1) }
                        .joined(separator: "/")
                    return "\(size.width)x\(size.height)" + (rates.isEmpty ? "" : " @ \(rates) fps")
                }
                let decoded = format.pixelFormat == nil ? " (not decoded)" : ""
                out.append("  \(format.fourcc) \(format.description)\(decoded): \(sizes.joined(separator: ", "))")
            }
            if let mode = CameraMode.choose(from: camera.formats) {
                out.append("  proofkit uses: \(mode)")
            } else {
                out.append("  proofkit uses: nothing (it decodes MJPEG and YUYV only)")
            }
        }
        return out
    }

    static func json(_ camera: CameraDescription) -> JSONValue {
        let formats: [JSONValue] = camera.formats.map { format in
            let sizes: [JSONValue] = format.sizes.map { size in
                [
                    "width": .int(size.width), "height": .int(size.height),
                    "fps": .array(size.framesPerSecond.map { .rounded($0, places: 3) }),
                ]
            }
            return [
                "fourcc": .string(format.fourcc), "description": .string(format.description),
                "decoded": .bool(format.pixelFormat != nil), "sizes": .array(sizes),
            ]
        }
        var object: [String: JSONValue] = [
            "path": .string(camera.path), "card": .string(camera.card), "driver": .string(camera.driver),
            "bus": .string(camera.bus), "formats": .array(formats), "mode": .null,
        ]
        if let mode = CameraMode.choose(from: camera.formats) { object["mode"] = modeJSON(mode) }
        return .object(object)
    }

    static func modeJSON(_ mode: CameraMode) -> JSONValue {
        [
            "format": .string(mode.format.rawValue), "width": .int(mode.width), "height": .int(mode.height),
            "fps": .rounded(mode.framesPerSecond, places: 3),
        ]
    }
}
