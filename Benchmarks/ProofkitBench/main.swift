// proofkit-bench: the project's micro-benchmarks (pure engines and adapters), JSON lines on stdout.
// Usage: swift run -c release proofkit-bench [--filter NAME[,NAME...]] [--image PHOTO.jpg]
// Each area adds its benchmarks in its own file as a function returning [Benchmark], and one
// line below.
var benchmarks: [Benchmark] = []
benchmarks += voiceBenchmarks()
benchmarks += imageBenchmarks()
benchmarks += sileroBenchmarks()
benchmarks += squatBenchmarks()
benchmarks += inferenceBenchmarks()
benchmarks += cameraBenchmarks()

let arguments = CommandLine.arguments
var filter: String?
if let index = arguments.firstIndex(of: "--filter"), index + 1 < arguments.count {
    filter = arguments[index + 1]
}
run(benchmarks, filter: filter)
