import Proofkit
import ProofkitCore

/// How cameras are shown, shared by `camera list`, `doctor` and the live proofs by camera.
enum CameraOutput {
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
