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
            io.printJSON(["cameras": .array(cameras.map(CameraOutput.json))])
        } else {
            for line in CameraOutput.lines(cameras) { io.print(line) }
        }
        return .success
    }

}
