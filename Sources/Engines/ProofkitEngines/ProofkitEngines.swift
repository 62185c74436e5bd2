// The `ProofkitEngines` product's one import: `import ProofkitEngines` brings every pure engine
// and ProofkitCore's values, for an app that links the engines alone (a phone app that brings its
// own camera, microphone and model runtime). No code of its own: it only re-exports, so the
// engines stay pure (no C, no I/O, no clock) and `Tests/ProofkitCLITests/LibraryPackageTests.swift`
// builds a package that depends on proofkit by path and imports this alone.
@_exported public import AlarmScheduling
@_exported public import AudioDSP
@_exported public import DuaMatching
@_exported public import ImageProof
@_exported public import PoseEstimation
@_exported public import PrayerPlanning
@_exported public import ProofkitCore
@_exported public import ReadingRules
@_exported public import SpeechRecognition
@_exported public import SquatCounting
@_exported public import VoiceGate
