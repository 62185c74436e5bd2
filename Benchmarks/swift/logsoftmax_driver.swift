// Before/after driver: 200 Whisper-sized rows through WhisperTranscriber.logSoftmax, 100 of them
// masked as a greedy step masks them (every 37th token and the timestamp tokens).
struct Seeded: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
var generator = Seeded(state: 38)
let row = (0..<51_865).map { _ in Float.random(in: -12...18, using: &generator) }
let mask = (0..<51_865).map { $0 % 37 == 1 || $0 >= 50_364 }
var total = 0.0
for i in 0..<100 { total += WhisperTranscriber.logSoftmax(row, at: i * 7) }
for i in 0..<100 { total += WhisperTranscriber.logSoftmax(row, at: i * 7 + 3, masked: mask) }
print(total)
