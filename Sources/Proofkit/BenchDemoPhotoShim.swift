import ProofkitCore
import ProofkitDemoMedia

/// Forwarding shim for `BenchDemoPhoto` (Bench/BenchPhotoRun.swift), which reads the demo's mat
/// picture: the demo now lives in the `ProofkitDemo` target and its media in `ProofkitDemoMedia`.
/// Remove this file (and Proofkit's dependency on ProofkitDemoMedia) once the bench runner has
/// left the facade and reads ``DemoMedia/photos`` itself.
enum PhotoProofDemo {
    /// The embedded pictures: (name, title, shows a mat, JPEG bytes); see ``DemoMedia/photos``.
    static func embeddedPhotos() throws(ProofkitError) -> [(name: String, title: String, showsMat: Bool, bytes: [UInt8])] {
        DemoMedia.photos
    }
}
