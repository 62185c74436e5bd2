// The media of `proofkit demo`, embedded in the binary so that the demo works from any folder with
// nothing else installed. They are the files in `Media/`, written into EmbeddedMedia.swift as base64
// text by Tests/Scripts/embed_demo_media.py (PhotoJudgeTests.embeddedMedia checks they agree):
// - demo_mat.jpg and demo_coffee.jpg: byte for byte Tests/TestSupport/Fixtures/images/demo_mat.jpg
//   and demo_coffee.jpg, made by Tests/Scripts/make_demo_photos.py (which writes both copies);
//   sources and licences in Tests/TestSupport/Fixtures/README.md.
// - demo_recitation.mp3: the first 14 s of the Asr adhan from Makkah (archive.org
//   "AsrAzanFromMakkah", public domain per its ID3 comment, creativecommons.org/licenses/publicdomain),
//   taken from Hami-d-Raza/Miqat app/src/main/res/raw/azan_asr_makkah.mp3 (commit 6a65197c34e3),
//   re-encoded with sox + lame as 22.05 kHz mono MP3 at 40 kb/s (70269 bytes).
// `PhotoJudgeTests.embeddedPhotos` checks the photos against the fixtures; `AlarmSound.demo`'s test decodes the MP3.
import ProofkitCore

/// The embedded demo media: bytes and the titles the demo prints.
public enum DemoMedia {
    /// A rendered picture of a prayer mat (drawn by proofkit's script; not a photo), 640x480 JPEG.
    public static let matTitle = "a rendered picture of a prayer mat on a wooden floor (drawn by proofkit, not a photo)"
    /// scikit-image's `coffee` sample photo, CC0 (photographer Rachel Michetti), 480x320 JPEG.
    public static let coffeeTitle = "a photo of a cup of coffee (scikit-image sample, CC0, Rachel Michetti)"
    /// A short description of the recitation, for the demo's output.
    public static let recitationTitle = "Asr adhan from Makkah (public domain, archive.org), first 14 s, MP3"

    /// `demo_mat.jpg`, the JPEG file's bytes (decoded once, on first use).
    public static let matJPEG = Base64.bytes(matJPEGBase64)
    /// `demo_coffee.jpg`, the JPEG file's bytes (decoded once, on first use).
    public static let coffeeJPEG = Base64.bytes(coffeeJPEGBase64)
    /// `demo_recitation.mp3`, the MP3 file's bytes (70,269; decoded once, on first use).
    public static let recitationMP3 = Base64.bytes(recitationMP3Base64)

    /// The two pictures the photo proof judges, mat first: (file name, title, shows a mat, JPEG bytes).
    public static var photos: [(name: String, title: String, showsMat: Bool, bytes: [UInt8])] {
        [("demo_mat.jpg", matTitle, true, matJPEG), ("demo_coffee.jpg", coffeeTitle, false, coffeeJPEG)]
    }
}
