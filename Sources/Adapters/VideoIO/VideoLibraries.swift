public import ProofkitCore

/// FFmpeg's libraries, which proofkit loads on first use to read videos, for `proofkit doctor`.
public enum VideoLibraries {
    /// The four libraries, in load order: soname and Debian package.
    static let libraries = [
        (name: "libavutil", soname: "libavutil.so.57", package: "libavutil57"),
        (name: "libavcodec", soname: "libavcodec.so.59", package: "libavcodec59"),
        (name: "libavformat", soname: "libavformat.so.59", package: "libavformat59"),
        (name: "libswscale", soname: "libswscale.so.6", package: "libswscale6"),
    ]

    /// Loads FFmpeg's libraries (if not loaded yet) and says, for each, whether it loaded.
    /// - Returns: one status per library, libavutil first; a failure carries the one-line reason
    ///   (the file, the loader's message and the Debian package to install).
    public static func probe() -> [CLibraryStatus] {
        libraries.map { library in
            var status = CLibraryStatus(name: library.name, soname: library.soname, debianPackage: library.package)
            do throws(ProofkitError) {
                try FFmpeg.load(String(library.name.dropFirst(3)), soname: nil)
            } catch { status.failure = error.message }
            return status
        }
    }
}
