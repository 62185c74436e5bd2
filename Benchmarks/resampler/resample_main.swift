// proofkit's SincResampler (Sources/Engines/AudioDSP/SincResampler.swift, compiled with this
// file, copied as main.swift, by Benchmarks/resampler_bench.py) on raw float32 mono: reads IN at RATE_IN, writes OUT at
// RATE_OUT, fed in chunks of 8192 frames as ReadingProofRecording feeds it, and prints the CPU
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
fseek(file, 0, SEEK_END)
let frames = ftell(file) / 4
fseek(file, 0, SEEK_SET)
var input = [Float](repeating: 0, count: frames)
_ = input.withUnsafeMutableBytes { fread($0.baseAddress, 4, frames, file) }
fclose(file)
let start = cpuSeconds()
var resampler = SincResampler(inputRate: rateIn, outputRate: rateOut, channels: 1)
var output: [Float] = []
output.reserveCapacity(frames * rateOut / rateIn + 1024)
var index = 0
while index < frames {
    let n = min(8192, frames - index)
    output += resampler.process(Array(input[index..<(index + n)]))
    index += n
}
output += resampler.finish()
let cpu = cpuSeconds() - start
guard let out = fopen(arguments[2], "wb") else { exit(73) }
_ = output.withUnsafeBytes { fwrite($0.baseAddress, 4, output.count, out) }
fclose(out)
print(cpu)
