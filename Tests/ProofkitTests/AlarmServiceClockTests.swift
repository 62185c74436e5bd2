import AlarmScheduling
import Foundation
import PrayerPlanning
import ProofkitCore
import Synchronization
import TestSupport
import Testing

@testable import Proofkit

/// A wall clock the test sets by hand (``AlarmServiceOptions/now``).
final class ManualClock: Sendable {
    private let instant: Mutex<Date>
    init(_ start: Date) { instant = Mutex(start) }
    func read() -> Date { instant.withLock { $0 } }
    func set(_ date: Date) { instant.withLock { $0 = date } }
}

/// The lines the service logged, kept in memory.
final class LoggedLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
    /// Whether a line has `event` and then `rest` (the stamp before it is left out).
    func contains(_ event: String, _ rest: String = "") -> Bool {
        all.contains { $0.split(separator: " ", maxSplits: 1).last.map { $0.hasPrefix(event + " " + rest) } ?? false }
    }
}

/// An `AlarmService` in this process, on a store in a temporary folder, with the injected clock
/// and a file-plugin speaker (the real ALSA path; short rings, so each is over in a moment). The
/// tests call `tick()` where the service's loop would (its timer, a socket request).
final class ServiceClockRig {
    let folder: String
    let clock: ManualClock
    let log = LoggedLines()
    let store: AlarmStore
    let service: AlarmService
    let sound: String

    init(start: Date, ringSeconds: Double = 0.3, zone: String = "UTC") throws {
        folder = try TestFolder.make()
        clock = ManualClock(start)
        let config = folder + "/asound.conf"
        try #"pcm.speaker { type file slave.pcm { type null } file "\#(folder)/OUT.raw" format "raw" }"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        sound = folder + "/tone.wav"
        let tone = (0..<16000).map { Int16((0.5 * 32767 * sin(2 * Double.pi * 440 * Double($0) / 16000)).rounded()) }
        try TestAudio.writeWAV(tone, rate: 16000, to: sound)
        var options = AlarmServiceOptions()
        options.device = "speaker"
        options.soundDevices = try SoundDevices(environment: ["PROOFKIT_ALSA_CONFIG": config])
        options.ringSeconds = ringSeconds
        options.environment = ["TZ": zone]
        options.inputs = []
        options.microphone = nil
        options.watchesCamera = false
        let clock = self.clock
        let log = self.log
        options.now = { clock.read() }
        options.log = { log.append($0) }
        store = try AlarmStore(folder: folder + "/store")
        service = try AlarmService(store: store, options: options)
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// Books a one-off chain: rings at `first` and every `gap` seconds over `window` seconds.
    func book(first: Date, window: Int, gap: Int, level: RingLevel = RingLevel()) throws -> String {
        try store.addOneOff(
            first: first, window: .seconds(window), firstGap: .seconds(gap), gapGrowth: .seconds(0), sound: sound,
            keptSound: nil, proof: .any, label: nil, level: level, now: clock.read()
        ).0
    }

    /// The largest sample the speaker was given by the last ring (the file plugin starts the file
    /// again at each ring).
    func peakPlayed() throws -> Int {
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/OUT.raw"))
        return stride(from: 0, to: data.count - 1, by: 2).map {
            abs(Int(Int16(bitPattern: UInt16(data[$0]) | UInt16(data[$0 + 1]) << 8)))
        }.max() ?? 0
    }

    /// Sets the clock to `instant` and runs one tick, as the timer would.
    func tick(at instant: Date) throws {
        clock.set(instant)
        try service.tick()
    }

    /// Waits (real time: a short ring, or one asked to stop, is over in a few tenths of a
    /// second) for the ring under way to end, and records it.
    func finishRing() throws {
        let ringing = try #require(service.current, "nothing is ringing")
        let deadline = Date().addingTimeInterval(10)
        while ringing.finished.withLock({ $0 }) == nil && Date() < deadline { usleep(5_000) }
        #expect(ringing.finished.withLock({ $0 }) != nil, "the ring did not end")
        try service.finishRing()
    }

    /// Silences the ring under way, as `alarm stop` does.
    func silence() throws {
        _ = try service.stopRing(by: "test")
        if service.current != nil { try finishRing() }
    }

    func states(_ chain: String) throws -> [RingState] {
        try store.allRings().filter { $0.ring.chain == chain }.sorted { $0.ring.ringIndex < $1.ring.ringIndex }
            .map(\.state)
    }

    func outcomes(_ chain: String) throws -> [String] {
        try store.outcomes(limit: 100).filter { $0.chain == chain }.reversed().map(\.kind.rawValue)
    }
}

private func instant(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

/// The first ring of the chains below.
private let t0 = instant("2030-03-04T05:00:00Z")

@Suite("the alarm service's decisions on an injected clock (tick() driven by hand)", .serialized, .offThePool)
struct AlarmServiceClockTests {
    @Test("nothing rings before the fire time and the timer is armed for it; at the fire time the ring plays")
    func ringsAtItsInstant() throws {
        let rig = try ServiceClockRig(start: t0.addingTimeInterval(-600))
        let id = try rig.book(first: t0, window: 120, gap: 60)
        try rig.tick(at: t0.addingTimeInterval(-600))
        #expect(rig.service.current == nil)
        #expect(rig.service.nextWake == t0)
        try rig.tick(at: t0.addingTimeInterval(-0.001))
        #expect(rig.service.current == nil)
        try rig.tick(at: t0)
        #expect(rig.service.current?.ring.id == "\(id).r0")
        #expect(rig.log.contains("ring-due", "\(id) \(id).r0 decided_late_ms=0 "), "\(rig.log.all)")
        #expect(try rig.states(id) == [.ringing, .scheduled, .scheduled])
        try rig.finishRing()
        #expect(try rig.states(id) == [.rang, .scheduled, .scheduled])
        #expect(rig.log.contains("ring-end", "\(id) \(id).r0 seconds=0.3"), "\(rig.log.all)")
        // The next wake is the first backup.
        try rig.tick(at: t0.addingTimeInterval(1))
        #expect(rig.service.nextWake == t0.addingTimeInterval(60))
        #expect(FileManager.default.fileExists(atPath: rig.folder + "/OUT.raw"))
    }

    @Test("stop silences the ring and is recorded; the backup still rings at its time")
    func stopThenBackup() throws {
        let rig = try ServiceClockRig(start: t0, ringSeconds: 30)
        let id = try rig.book(first: t0, window: 120, gap: 60)
        try rig.tick(at: t0)
        rig.clock.set(t0.addingTimeInterval(4))
        let stopped = try rig.service.stopRing(by: "test")
        if rig.service.current != nil { try rig.finishRing() }  // stopRing waits 1 s for the thread
        #expect(stopped?.id == "\(id).r0")
        #expect(rig.service.current == nil)
        #expect(rig.log.contains("ring-end", "\(id) \(id).r0") && rig.log.all.last?.hasSuffix(" stopped") == true)
        #expect(try rig.outcomes(id) == ["stopped"])
        try rig.tick(at: t0.addingTimeInterval(59.9))
        #expect(rig.service.current == nil)
        try rig.tick(at: t0.addingTimeInterval(60))
        #expect(rig.service.current?.ring.id == "\(id).r1")
        #expect(try rig.states(id) == [.rang, .ringing, .scheduled])
        try rig.silence()
    }

    @Test("a ring late by up to the 5 s grace still rings; later, it is missed and nothing plays")
    func lateGraceThenMissed() throws {
        let late = try ServiceClockRig(start: t0)
        let ringing = try late.book(first: t0, window: 0, gap: 60)
        try late.tick(at: t0.addingTimeInterval(AlarmRingScheduler.lateGrace))
        #expect(late.service.current?.ring.id == "\(ringing).r0")
        #expect(late.log.contains("ring-due", "\(ringing) \(ringing).r0 decided_late_ms=5000"), "\(late.log.all)")
        try late.finishRing()

        let down = try ServiceClockRig(start: t0)
        let missed = try down.book(first: t0, window: 0, gap: 60)
        try down.tick(at: t0.addingTimeInterval(AlarmRingScheduler.lateGrace + 0.5))
        #expect(down.service.current == nil)
        #expect(try down.states(missed) == [.missed])
        #expect(try down.outcomes(missed) == ["missed"])
        #expect(down.log.contains("missed", "\(missed) \(missed).r0"))
    }

    @Test("a live proof that sends nothing is held at most 3 minutes; then the held backups ring at once")
    func holdEndsAtItsLimit() throws {
        let rig = try ServiceClockRig(start: t0, ringSeconds: 30)
        let id = try rig.book(first: t0, window: 600, gap: 60)
        try rig.tick(at: t0)
        // `alarm prove --voice` (or a live squat stream) holds the chain over the control socket.
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[1]) }
        rig.clock.set(t0.addingTimeInterval(2))
        _ = try rig.service.answer(pair[0], "hold \(id)")
        #expect(rig.log.contains("stop", "\(id) \(id).r0 (live proof)"))
        try rig.finishRing()
        // The backups at +60, +120 and +180 s fall inside the hold: none rings.
        for seconds in [60.0, 120, 181] {
            try rig.tick(at: t0.addingTimeInterval(seconds))
            #expect(rig.service.current == nil, "rang during the hold at +\(seconds) s")
        }
        #expect(rig.service.nextWake == t0.addingTimeInterval(2 + AlarmStore.holdLimit))
        // At the limit the hold ends, and the latest backup due rings at once; the earlier ones merge.
        try rig.tick(at: t0.addingTimeInterval(2 + AlarmStore.holdLimit))
        #expect(rig.log.contains("hold-end", "\(id) reason=limit"), "\(rig.log.all)")
        #expect(rig.service.current?.ring.id == "\(id).r3")
        #expect(try rig.states(id).prefix(4) == [.rang, .merged, .merged, .ringing])
        #expect(!(try rig.states(id)).contains(.missed))
        try rig.silence()
    }

    @Test("--escalate: each backup louder than the last, from the chain's volume to 100 %, in the log and the samples")
    func escalates() throws {
        let rig = try ServiceClockRig(start: t0)
        let id = try rig.book(first: t0, window: 4, gap: 2, level: RingLevel(volume: 40, ramp: 0, escalate: true))
        // The tone peaks at half scale (16384); the ring's gain is on the samples.
        for (ring, volume) in [(0, 40), (1, 70), (2, 100)] {
            try rig.tick(at: t0.addingTimeInterval(Double(2 * ring)))
            #expect(rig.log.contains("ring-due", "\(id) \(id).r\(ring) decided_late_ms=0 sound="), "\(rig.log.all)")
            #expect(rig.log.all.last { $0.contains("ring-due") }?.contains(" volume=\(volume) ramp=0.0") == true)
            try rig.finishRing()
            let expected = 16384.0 * Double(volume) / 100
            let peak = try rig.peakPlayed()
            #expect(abs(Double(peak) - expected) <= 2, "r\(ring): peak \(peak), expected \(expected)")
        }
    }

    @Test("a chain that ends while it rings stops at once, and nothing more rings")
    func endedChainStops() throws {
        let rig = try ServiceClockRig(start: t0, ringSeconds: 30)
        let id = try rig.book(first: t0, window: 120, gap: 60)
        try rig.tick(at: t0)
        let cancelled = try rig.store.end(chain: id, kind: .proof, at: t0.addingTimeInterval(3), requireDue: true)
        #expect(cancelled == ["\(id).r1", "\(id).r2"])
        try rig.tick(at: t0.addingTimeInterval(3))
        #expect(rig.service.current?.stopRequested.withLock { $0 } == true)
        try rig.finishRing()
        for seconds in [60.0, 120, 125] {
            try rig.tick(at: t0.addingTimeInterval(seconds))
            #expect(rig.service.current == nil)
        }
        #expect(try rig.states(id) == [.rang])
    }

    @Test("after the machine's midnight the prayers are planned again, and Fajr rings at the timetable's instant")
    func midnightReplanThenFajr() throws {
        // Makkah (UTC+3) on a machine that keeps UTC: the ring is at the timetable's instant.
        let evening = instant("2030-03-03T20:00:00Z")
        let rig = try ServiceClockRig(start: evening, zone: "UTC")
        try rig.store.write { () throws(ProofkitError) in
            try rig.store.put([
                "prayers.lat": "21.4225", "prayers.lon": "39.8262", "prayers.tz": "Asia/Riyadh",
                "prayers.method": "makkah", "prayers.list": "fajr", "prayers.window": "1200",
                "prayers.proof": "any", "prayers.sound": rig.sound,
            ])
        }
        try rig.tick(at: evening)
        #expect(rig.log.contains("replan", "- reason=firstRun"), "\(rig.log.all)")
        // The rolling 7 days are planned again on the machine's new day (its zone, UTC).
        let midnight = instant("2030-03-04T00:00:00Z")
        #expect(rig.service.nextWake.map { $0 <= midnight.addingTimeInterval(1) } == true)
        try rig.tick(at: midnight.addingTimeInterval(1))
        #expect(rig.log.contains("replan", "- reason=newDay"), "\(rig.log.all)")
        // The timetable's Fajr for that day, from the engine the `times` command uses.
        let calculator = try PrayerTimeCalculator(
            coordinates: try Coordinates(latitude: 21.4225, longitude: 39.8262),
            timeZone: TimeZone(identifier: "Asia/Riyadh")!,
            parameters: try CalculationParameters(options: ["method": "makkah"]))
        let fajr = try #require(
            try rig.store.allRings().filter { $0.state == .scheduled }.map(\.ring.fireDate).min())
        let expected = try #require(calculator.times(on: LocalDate(year: 2030, month: 3, day: 4)).fajr)
        #expect(abs(fajr.timeIntervalSince(expected)) < 1, "booked \(fajr), timetable \(expected)")
        #expect(rig.service.nextWake == fajr)
        try rig.tick(at: fajr)
        #expect(rig.service.current?.ring.fireDate == fajr)
        try rig.finishRing()
    }
}
