// proofkit's SincResampler (Sources/Engines/AudioDSP/SincResampler.swift, compiled with this
// file, copied as main.swift, by Benchmarks/resampler_bench.py) on raw float32 mono: reads IN at RATE_IN, writes OUT at
// RATE_OUT, streamed in chunks of 8192 frames as ReadingProofRecording feeds it, and prints the CPU
// seconds of the conversion alone (CLOCK_PROCESS_CPUTIME_ID) on stdout.
// Usage: resample IN OUT RATE_IN RATE_OUT
#if canImport(Glibc)
    import Glibc
#endif

func cpuSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

let arguments = CommandLine.arguments
guard arguments.count >= 5, let rateIn = Int(arguments[3]), let rateOut = Int(arguments[4]),
    let file = fopen(arguments[1], "rb")
else {
    fputs("usage: resample IN OUT RATE_IN RATE_OUT\n", stderr)
    exit(64)
}
guard let out = fopen(arguments[2], "wb") else { exit(73) }
// Streamed as proofkit streams a recording (and as sox does): 8192 frames read, resampled and
// written at a time, so neither side pays for holding the whole file.
var resampler = SincResampler(inputRate: rateIn, outputRate: rateOut, channels: 1)
var chunk = [Float](repeating: 0, count: 8192)
var cpu = 0.0
func write(_ samples: [Float]) {
    _ = samples.withUnsafeBytes { fwrite($0.baseAddress, 4, samples.count, out) }
}
while true {
    let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 4, 8192, file) }
    if n == 0 { break }
    let start = cpuSeconds()
    let produced = resampler.process(n == 8192 ? chunk : Array(chunk[..<n]))
    cpu += cpuSeconds() - start
    write(produced)
}
let start = cpuSeconds()
let tail = resampler.finish()
cpu += cpuSeconds() - start
write(tail)
fclose(file)
fclose(out)
print(cpu)
