public import ProofkitCore

/// The image C libraries proofkit loads on first use, for `proofkit doctor`.
public enum ImageLibraries {
    /// Loads libturbojpeg and libpng (if not loaded yet) and says, for each, whether it loaded.
    /// - Returns: one status per library, libturbojpeg first; a failure carries the one-line
    ///   reason (the file, the loader's message and the Debian package to install).
    public static func probe() -> [CLibraryStatus] {
        var jpeg = CLibraryStatus(name: "libturbojpeg", soname: "libturbojpeg.so.0", debianPackage: "libturbojpeg0")
        do { _ = try loadTurboJPEG() } catch { jpeg.failure = error.message }
        var png = CLibraryStatus(name: "libpng", soname: "libpng16.so.16", debianPackage: "libpng16-16")
        do { _ = try PNGReader.load() } catch { png.failure = error.message }
        return [jpeg, png]
    }
}
