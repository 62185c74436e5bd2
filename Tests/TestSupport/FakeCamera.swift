import Foundation

/// The fake UVC webcam (`FakeCamera/fakecam.c`): an LD_PRELOAD library that answers the V4L2
/// calls for /dev/video0 (and its metadata node /dev/video1) with real frames from photos. Built
/// here with the C compiler on first use, into a temporary folder (never committed).
public enum FakeCamera {
    /// The C source.
    public static let source = TestEnvironment.packageRoot.appendingPathComponent(
        "Tests/TestSupport/FakeCamera/fakecam.c"
    ).path

    /// Whether it can be built: a C compiler, the V4L2 header and TurboJPEG's.
    public static let isBuildable =
        TestEnvironment.hasTool("cc") && FileManager.default.fileExists(atPath: "/usr/include/linux/videodev2.h")
        && FileManager.default.fileExists(atPath: "/usr/include/turbojpeg.h")

    /// The built library, or nil when it could not be built.
    public static let library: String? = {
        // Built once per test process, removed when it exits.
        guard let folder = try? TestFolder.makeForProcess("proofkit-fakecam") else { return nil }
        let output = folder + "/fakecam.so"
        guard
            let result = try? runProcess(
                "/usr/bin/env",
                ["cc", "-O2", "-Wall", "-shared", "-fPIC", source, "-o", output, "-lturbojpeg", "-ldl", "-lpthread"]),
            result.status == 0
        else { return nil }
        return output
    }()

    /// The environment that puts the fake camera under a child process.
    /// - Parameters:
    ///   - frames: JPEG photos it shows, in turn.
    ///   - formats: the formats it offers, in order (default MJPEG then YUYV, as a C270).
    ///   - fault: "busy", "stall" or "unplug" (default none).
    ///   - unplugAfter: frames given before it goes away (with "unplug").
    ///   - loop: false to stop after the last photo.
    public static func environment(
        frames: [String], formats: String = "MJPG,YUYV", fault: String? = nil, unplugAfter: Int? = nil,
        loop: Bool = true
    ) throws -> [String: String] {
        let library = try requireLibrary()
        var environment = [
            "LD_PRELOAD": library, "FAKECAM_FRAMES": frames.joined(separator: ":"), "FAKECAM_FORMATS": formats,
        ]
        if let fault { environment["FAKECAM_FAULT"] = fault }
        if let unplugAfter { environment["FAKECAM_UNPLUG_AFTER"] = String(unplugAfter) }
        if !loop { environment["FAKECAM_LOOP"] = "0" }
        return environment
    }

    private static func requireLibrary() throws -> String {
        guard let library else { throw CocoaError(.executableLoad) }
        return library
    }
}
