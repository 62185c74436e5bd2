public import ProofkitCore

/// The audio C libraries proofkit loads on first use, for `proofkit doctor`.
public enum AudioLibraries {
    /// Loads libsndfile and libasound (if not loaded yet) and says, for each, whether it loaded.
    /// - Returns: one status per library, libsndfile first; a failure carries the one-line reason
    ///   (the file, the loader's message and the Debian package to install).
    public static func probe() -> [CLibraryStatus] {
        var sndfile = CLibraryStatus(name: "libsndfile", soname: "libsndfile.so.1", debianPackage: "libsndfile1")
        do { _ = try SndFile.load() } catch { sndfile.failure = error.message }
        var alsa = CLibraryStatus(name: "libasound", soname: "libasound.so.2", debianPackage: "libasound2")
        do { _ = try loadALSA() } catch { alsa.failure = error.message }
        return [sndfile, alsa]
    }
}
