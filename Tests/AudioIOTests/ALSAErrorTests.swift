import Foundation
import ProofkitCore
import Testing

@testable import AudioIO

/// A microphone that is busy or vanishes mid-read cannot be made without sound hardware (this
/// kernel has no sound subsystem, and ALSA's software plugins never report these errors), so the
/// one funnel every ALSA failure goes through is checked with the real codes and libasound's own
/// texts: what a person reads, and the exit code it maps to (69, device unavailable).
@Suite("ALSA errors: a busy or vanished device gets a clear one-line error")
struct ALSAErrorTests {
    @Test("a device that went away mid-read (-ENODEV from snd_pcm_readi) is deviceUnavailable, naming it")
    func vanished() {
        let error = alsaError(-ENODEV, "snd_pcm_readi", device: "hw:1,0", direction: .capture)
        #expect(error.code == .deviceUnavailable)
        #expect(error.message.contains("'hw:1,0' went away"))
        #expect(error.message.contains("No such device"))  // snd_strerror's own text
        #expect(error.operation == "snd_pcm_readi")
        #expect(error.underlying == -ENODEV)  // the ALSA return code, as libasound gave it
        #expect(!error.message.contains("\n"))
    }

    @Test("a device another program holds (-EBUSY from snd_pcm_open) is deviceUnavailable and says so")
    func busy() {
        let error = alsaError(-EBUSY, "snd_pcm_open", device: "plughw:0,0", direction: .playback)
        #expect(error.code == .deviceUnavailable)
        #expect(error.message.contains("'plughw:0,0' is busy: another program is using it"))
        #expect(error.message.contains("busy"))
        #expect(error.underlying == -EBUSY)
        #expect(!error.message.contains("\n"))
    }

    @Test("other failures are I/O errors with libasound's text, never a crash", arguments: [EIO, ENOMEM, EAGAIN])
    func other(code: Int32) {
        let error = alsaError(-code, "snd_pcm_readi", device: "default", direction: .capture)
        #expect(error.code == .io)
        #expect(error.message.hasPrefix("the capture device 'default' failed: "))
        #expect(error.underlying == -code)
    }
}
