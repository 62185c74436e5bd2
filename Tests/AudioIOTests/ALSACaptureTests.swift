import AudioIO
import Foundation
import ProofkitCore
import TestSupport
import Testing

/// Writes `samples` as a headerless S16_LE file.
func writeRaw(_ samples: [Int16], to path: String) throws {
    var data = Data(capacity: samples.count * 2)
    for sample in samples {
        let bits = UInt16(bitPattern: sample)
        data.append(UInt8(truncatingIfNeeded: bits))
        data.append(UInt8(truncatingIfNeeded: bits >> 8))
    }
    try data.write(to: URL(fileURLWithPath: path))
}

/// Reads a headerless S16_LE file.
func readRaw(_ path: String) throws -> [Int16] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return stride(from: 0, to: data.count - 1, by: 2).map {
        Int16(bitPattern: UInt16(data[$0]) | UInt16(data[$0 + 1]) << 8)
    }
}

/// A sine of `frequency` Hz at `amplitude` (0...1), interleaved over `channels`.
func sine(frequency: Double, seconds: Double, rate: Int, channels: Int = 1, amplitude: Double = 0.5) -> [Int16] {
    let frames = Int(seconds * Double(rate))
    var out = [Int16](repeating: 0, count: frames * channels)
    for frame in 0..<frames {
        let value = Int16((amplitude * 32767 * sin(2 * .pi * frequency * Double(frame) / Double(rate))).rounded())
        for channel in 0..<channels { out[frame * channels + channel] = value }
    }
    return out
}

/// Collects `frames` frames from a capture stream, then stops it.
func collect(_ stream: CaptureStream, frames: Int) async throws -> [Int16] {
    var samples: [Int16] = []
    for try await chunk in stream {
        samples += chunk.samples
        if samples.count >= frames { break }
    }
    stream.stop()
    return Array(samples.prefix(frames))
}

func rms(_ samples: ArraySlice<Int16>) -> Double {
    guard !samples.isEmpty else { return 0 }
    return (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
}

/// The strongest frequency in `samples` among `candidates` (Goertzel power), in Hz.
func dominantFrequency(_ samples: ArraySlice<Int16>, rate: Int, candidates: [Double]) -> Double {
    func power(_ frequency: Double) -> Double {
        let coefficient = 2 * cos(2 * .pi * frequency / Double(rate))
        var s1 = 0.0
        var s2 = 0.0
        for sample in samples {
            let s0 = Double(sample) + coefficient * s1 - s2
            s2 = s1
            s1 = s0
        }
        return s1 * s1 + s2 * s2 - coefficient * s1 * s2
    }
    return candidates.max { power($0) < power($1) }!
}

@Suite("MicrophoneCapture through libasound", .offThePool)
struct ALSACaptureTests {
    @Test("capture from the null device returns silence at 16 kHz")
    func nullIsSilence() async throws {
        let capture = try MicrophoneCapture(device: "null", configuration: .null(), overflow: .waitForConsumer)
        #expect(capture.sampleRate == 16000)
        let stream = capture.start()
        let samples = try await collect(stream, frames: 16000)
        #expect(samples.count == 16000)
        #expect(samples.allSatisfy { $0 == 0 })
    }

    @Test("capture from the machine's own null device works without any configuration")
    func machineNull() async throws {
        let capture = try MicrophoneCapture(device: "null")
        let samples = try await collect(capture.start(), frames: 3200)  // drops are fine: all silence
        #expect(samples == [Int16](repeating: 0, count: 3200))
    }

    @Test("the virtual microphone delivers the file's samples exactly, in order, then silence")
    func virtualMicrophoneIsExact() async throws {
        try await withTemporaryFolder { folder in
            // A ramp that never repeats within the file, so any reordering or loss shows.
            let input = (0..<24_000).map { Int16(truncatingIfNeeded: $0 &* 7 &- 12_000) }
            try writeRaw(input, to: folder + "/in.raw")
            let capture = try MicrophoneCapture(
                device: "vmic", configuration: .virtualMicrophone(name: "vmic", rawFile: folder + "/in.raw"),
                chunkDuration: .milliseconds(20), overflow: .waitForConsumer)
            #expect(capture.chunkFrames == 320)
            let stream = capture.start()
            var chunks: [AudioChunk] = []
            for try await chunk in stream {
                chunks.append(chunk)
                if chunks.reduce(0, { $0 + $1.samples.count }) >= 32_000 { break }
            }
            let samples = chunks.flatMap(\.samples)
            #expect(Array(samples.prefix(24_000)) == input)
            #expect(samples[24_000..<32_000].allSatisfy { $0 == 0 })
            // Chunks are contiguous and stamped with their position.
            var expected = 0
            for chunk in chunks {
                #expect(chunk.startFrame == expected)
                expected += chunk.samples.count
            }
            #expect(stream.statistics.framesRead >= 32_000)
            #expect(stream.statistics.droppedChunks == 0)
        }
    }

    @Test("a 48 kHz stereo microphone is converted to 16 kHz mono by ALSA's plug layer")
    func conversion() async throws {
        try await withTemporaryFolder { folder in
            try writeRaw(sine(frequency: 1000, seconds: 2, rate: 48000, channels: 2), to: folder + "/in48.raw")
            let capture = try MicrophoneCapture(
                device: "usbmic",
                configuration: .virtualMicrophone(
                    name: "usbmic", rawFile: folder + "/in48.raw", sampleRate: 48000, channels: 2),
                overflow: .waitForConsumer)
            #expect(capture.sampleRate == 16000)
            let samples = try await collect(capture.start(), frames: 16000)
            let middle = samples[4000..<12000]
            // Same tone, same level (0.5 full scale sine: RMS 0.5 / sqrt 2), after resampling.
            #expect(dominantFrequency(middle, rate: 16000, candidates: [250, 500, 1000, 2000, 3000]) == 1000)
            #expect(isApproximatelyEqual(rms(middle), 0.5 * 32767 / 2.0.squareRoot(), relativeTolerance: 0.1))
        }
    }

    @Test(
        "a device name that does not exist is deviceUnavailable, naming the device",
        arguments: ["nosuchdevice", "hw:7,0", "plughw:CARD=Nope"])
    func missingDevice(name: String) throws {
        let error = #expect(throws: ProofkitError.self) { _ = try MicrophoneCapture(device: name) }
        #expect(error?.code == .deviceUnavailable)
        #expect(error?.description.contains("'\(name)'") == true)
        #expect(error?.underlying != nil)
    }

    @Test("a device missing from a test configuration is deviceUnavailable")
    func missingFromConfiguration() throws {
        let error = #expect(throws: ProofkitError.self) {
            _ = try MicrophoneCapture(device: "default", configuration: .null(name: "other"))
        }
        #expect(error?.code == .deviceUnavailable)
    }

    @Test("configuration text that does not parse is invalidArgument")
    func badConfiguration() throws {
        let error = #expect(throws: ProofkitError.self) {
            _ = try MicrophoneCapture(device: "x", configuration: ALSAConfiguration(text: "pcm.x { type null "))
        }
        #expect(error?.code == .invalidArgument)
    }

    @Test("a virtual microphone whose file is missing is deviceUnavailable or io, never a crash")
    func missingInfile() throws {
        let error = #expect(throws: ProofkitError.self) {
            _ = try MicrophoneCapture(
                device: "vmic", configuration: .virtualMicrophone(name: "vmic", rawFile: "/nonexistent/in.raw"))
        }
        #expect(error?.code == .deviceUnavailable || error?.code == .io)
    }

    @Test("a consumer that falls behind loses the oldest chunks, and they are counted")
    func dropsOldest() async throws {
        // The null device is not paced, so it produces audio far faster than real time.
        let capture = try MicrophoneCapture(
            device: "null", configuration: .null(), chunkDuration: .milliseconds(10), bufferedChunks: 4)
        let stream = capture.start()
        try await Task.sleep(for: .milliseconds(300))
        var iterator = stream.makeAsyncIterator()
        let first = try await iterator.next()
        let chunk = try #require(first)
        #expect(stream.statistics.droppedChunks > 0)
        #expect(chunk.startFrame > 0, "the oldest chunks were dropped, so the first delivered is a later one")
        stream.stop()
    }

    @Test("stop ends the stream and closes the device, so it can be opened again")
    func stopEnds() async throws {
        try await withTemporaryFolder { folder in
            try writeRaw(sine(frequency: 440, seconds: 0.5, rate: 16000), to: folder + "/in.raw")
            let config = ALSAConfiguration.virtualMicrophone(name: "vmic", rawFile: folder + "/in.raw")
            let stream = try MicrophoneCapture(device: "vmic", configuration: config, overflow: .waitForConsumer)
                .start()
            var count = 0
            for try await _ in stream {
                count += 1
                if count == 3 { stream.stop() }
            }
            #expect(count >= 3)
            // The loop ended: the stream finished. The same device opens again.
            let again = try MicrophoneCapture(device: "vmic", configuration: config)
            try again.close()
        }
    }

    @Test("chunk bytes are little-endian S16, as a recogniser reads them")
    func chunkBytes() {
        let chunk = AudioChunk(samples: [1, -2, 0x1234], sampleRate: 16000, startFrame: 0, arrival: .now)
        #expect(chunk.littleEndianBytes == [0x01, 0x00, 0xFE, 0xFF, 0x34, 0x12])
        #expect(chunk.floatSamples[1] == Float(-2) / 32768)
        #expect(chunk.endSeconds == 3.0 / 16000)
    }
}

@Suite("Audio devices", .offThePool)
struct AudioDeviceTests {
    @Test("listing the machine's devices includes null (libasound is installed)")
    func machineDevices() throws {
        let devices = try AudioDevice.all()
        #expect(devices.contains { $0.name == "null" && !$0.description.isEmpty })
    }

    @Test("listing a test configuration gives its PCM definitions with their descriptions")
    func configurationDevices() throws {
        let config = ALSAConfiguration(
            text: """
                pcm.vmic { type file slave.pcm { type null } file "/dev/null" infile "/dev/null" format "raw"
                           hint.description "Virtual microphone" }
                pcm.sink { type null }
                """)
        let devices = try AudioDevice.all(configuration: config)
        #expect(devices.map(\.name) == ["vmic", "sink"])
        #expect(devices.first?.description == "Virtual microphone")
    }

    @Test("PROOFKIT_ALSA_CONFIG names a configuration file; unset means the machine's")
    func environment() throws {
        #expect(try ALSAConfiguration.fromEnvironment([:]) == nil)
        try withTemporaryFolder { folder in
            try "pcm.x { type null }\n".write(toFile: folder + "/asound.conf", atomically: true, encoding: .utf8)
            let config = try ALSAConfiguration.fromEnvironment(["PROOFKIT_ALSA_CONFIG": folder + "/asound.conf"])
            #expect(config?.text == "pcm.x { type null }\n")
            let error = #expect(throws: ProofkitError.self) {
                try ALSAConfiguration.fromEnvironment(["PROOFKIT_ALSA_CONFIG": folder + "/missing.conf"])
            }
            #expect(error?.code == .notFound)
        }
    }
}
