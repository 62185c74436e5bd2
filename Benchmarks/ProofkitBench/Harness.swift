import ProofkitCore

#if canImport(Glibc)
    import Glibc
#endif

/// One benchmark: a name, a deterministic input made before timing, and a body.
///
/// The body runs once per iteration and returns how many domain units it processed
/// (e.g. seconds of audio, images, frames), so the runner can report a rate.
struct Benchmark {
    /// Unique name, e.g. `"voicegate.energy"`.
    var name: String
    /// The unit of `body`'s return value, e.g. `"audio-seconds"`, `"frames"`, `"images"`.
    var unit: String
    /// Warm-up iterations (untimed).
    var warmup = 3
    /// Timed iterations.
    var iterations = 20
    /// The timed work. Returns the number of `unit`s processed.
    var body: () -> Double
}

/// Runs benchmarks and prints one JSON object per benchmark:
/// `{"name","unit","iterations","median_s","p90_s","rate_per_s"}` where `rate_per_s` is units per
/// wall-clock second at the median (e.g. x real time for audio-seconds).
/// `filter` is a comma list of name parts; a benchmark runs when its name contains one of them.
func run(_ benchmarks: [Benchmark], filter: String?) {
    let clock = ContinuousClock()
    let parts = filter?.split(separator: ",").map(String.init)
    for benchmark in benchmarks {
        if let parts, !parts.contains(where: { benchmark.name.contains($0) }) { continue }
        var units = 0.0
        for _ in 0..<benchmark.warmup { units = benchmark.body() }
        var times: [Double] = []
        for _ in 0..<benchmark.iterations {
            let start = clock.now
            units = benchmark.body()
            let elapsed = clock.now - start
            times.append(elapsed.seconds)
        }
        times.sort()
        let median = times[times.count / 2]
        let p90 = times[min(times.count - 1, Int(Double(times.count) * 0.9))]
        let rate = median > 0 ? units / median : 0
        print(
            "{\"iterations\":\(benchmark.iterations),\"median_s\":\(median),\"name\":\"\(benchmark.name)\","
                + "\"p90_s\":\(p90),\"rate_per_s\":\(rate),\"unit\":\"\(benchmark.unit)\"}")
    }
}

/// Keeps a value alive so the optimiser cannot drop the work that produced it.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
