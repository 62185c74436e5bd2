public import AlarmScheduling
public import DuaMatching
import PrayerPlanning
import ProofkitCore

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The proof an alarm chain asks for (`--proof`).
public enum ProofKind: String, Sendable, Hashable, CaseIterable {
    /// The du'a read aloud.
    case voice
    /// The prayer mat, in a photo or in front of the camera.
    case mat
    /// Squats counted.
    case squat
    /// Any of the three.
    case any

    /// Whether a proof of `kind` is one this chain takes.
    public func accepts(_ kind: ProofKind) -> Bool { self == .any || self == kind }
}

/// Whether an alarm chain still takes a proof.
public enum ChainState: String, Sendable, Hashable {
    /// Booked: it rings, and takes a proof while due.
    case active
    /// Proven or escaped: its rings are cancelled.
    case ended
}

/// Where a ring is in its life.
public enum RingState: String, Sendable, Hashable, CaseIterable {
    /// Booked, not yet due.
    case scheduled
    /// Sounding now (kept across a restart inside its window, so it rings again).
    case ringing
    /// It sounded.
    case rang
    /// It came due while its chain was already ringing, and was folded into that ring.
    case merged
    /// Its time passed while the service was down, and its window has ended.
    case missed
    /// It could not play (the device, the sound); the reason is kept.
    case failed
}

/// What made a chain: `alarm add` (a one-off) or the prayer plan (one occurrence).
public enum ChainKind: String, Sendable, Hashable, CaseIterable {
    /// Booked by `proofkit alarm add`: id `a7`.
    case oneoff
    /// A prayer occurrence of the plan: id `fajr.2026-11-30`.
    case prayer
}

/// A chain in the store: a one-off (`a7`) or a prayer occurrence (`fajr.2026-11-30`).
public struct StoredChain: Sendable, Hashable {
    public var id: String
    /// What made it (a kind this version does not know reads as a one-off).
    public var kind: ChainKind
    public var label: String?
    /// The sound as booked (its path).
    public var sound: String
    /// The last good copy of the sound: its path in the store's sounds folder.
    public var keptSound: String?
    /// The proof it takes.
    public var proof: ProofKind
    /// The first ring.
    public var firstFire: Date
    /// The end of the proof window.
    public var windowEnd: Date
    /// `active` or `ended`.
    public var state: ChainState
    /// How loud it rings, in percent of the sound's own level, 1...100 [100].
    public var volume: Double = 100
    /// The fade-in of each ring, in seconds, 0...60 [3].
    public var ramp: Double = 3
    /// Whether each backup rings louder than the one before, up to 100 %
    /// (``AlarmRingScheduler/ringVolume(volume:ringIndex:ringCount:escalate:)``).
    public var escalate: Bool = false
    /// Whether the service listens for the reading between rings [``HandsFree/Listen/auto``].
    public var listen: HandsFree.Listen = .auto
    /// The du'a the chain's reading proof asks for, as a one-text catalogue (``DuaCatalog/json``),
    /// or `nil` for the built-in waking du'a.
    public var textJSON: String? = nil

    /// The du'a the chain's reading proof asks for: the booked text, else the built-in waking du'a.
    public var duaText: DuaText {
        textJSON.flatMap { try? DuaCatalog(json: $0).texts.first }
            ?? DuaCatalog.builtIn.text(named: DuaCatalog.defaultName)!
    }

    /// Whether the service watches the camera for the mat between this chain's rings: not `off`,
    /// and a proof the mat can give (`mat`, `any`).
    public var watchesMat: Bool { listen != .off && (proof == .mat || proof == .any) }

    /// Whether the service watches the camera for squats between this chain's rings: not `off`,
    /// and a proof squats can give (`squat`, `any`).
    public var watchesSquats: Bool { listen != .off && (proof == .squat || proof == .any) }

    /// Whether the service watches the camera between this chain's rings (the mat, squats).
    public var watches: Bool { watchesMat || watchesSquats }

    /// Whether the service listens for the reading between this chain's rings: `on`, or `auto`
    /// with a proof the voice can give (`voice`, `any`).
    public var listens: Bool {
        switch listen {
        case .on: true
        case .off: false
        case .auto: proof == .voice || proof == .any
        }
    }
}

/// How a chain takes its proof without a keyboard (`alarm add` and `prayers`: `--listen`, `--text`).
public struct HandsFree: Sendable, Equatable {
    /// Whether the service listens for the reading between rings.
    public enum Listen: String, Sendable, Hashable, CaseIterable {
        /// When the chain's proof is `voice` or `any` (the default).
        case auto
        /// Always (the proof must then allow the voice).
        case on
        /// Never: proofs are typed.
        case off
    }
    /// [auto]
    public var listen: Listen = .auto
    /// The du'a to read, or `nil` for the built-in waking du'a [nil].
    public var text: DuaText? = nil
    public init(listen: Listen = .auto, text: DuaText? = nil) {
        self.listen = listen
        self.text = text
    }
    /// The text as kept in the store (a one-text ``DuaCatalog/json``), or `nil`.
    public var textJSON: String? { text.map { DuaCatalog(texts: [$0]).json } }
}

/// How a chain rings: volume, fade-in and escalation (`alarm add` and `prayers`).
public struct RingLevel: Sendable, Hashable {
    /// Percent of the sound's own level, 1...100 [100].
    public var volume: Double = 100
    /// The fade-in of each ring in seconds, 0...60 [3].
    public var ramp: Double = 3
    /// Each backup louder than the one before, up to 100 % [false].
    public var escalate: Bool = false
    public init(volume: Double = 100, ramp: Double = 3, escalate: Bool = false) {
        self.volume = volume
        self.ramp = ramp
        self.escalate = escalate
    }
}

/// A ring in the store, with its state (`scheduled`, `ringing`, `rang`, `merged`, `missed`,
/// `failed`).
public struct StoredRing: Sendable, Hashable {
    public var ring: BookedRing
    public var sound: String
    public var state: RingState
    public var rangAt: Date?
    /// Why a `failed` ring could not play (one line), else `nil`.
    public var detail: String? = nil
}

/// One line of the history: a proof, a rejected proof, an escape, a missed ring or a Stop press.
public struct StoredOutcome: Sendable, Hashable {
    public var chain: String
    public var kind: AlarmRecordKind
    public var at: Date
    public var detail: String?
    /// Its place in the history (increasing).
    public var sequence: Int64 = 0
}
