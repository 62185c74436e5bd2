import ProofkitCLI
internal import ProofkitSystem

// A reader that closes the pipe early (`proofkit help | head`) must not kill us mid-write of an
// output file: writes then fail with EPIPE, which the output layer drops.
ChildProcess.ignoreBrokenPipes()
// ONNX Runtime's telemetry opt-out, set while the process has one thread: the runtime is loaded
// on a worker thread, where writing the environment would race other threads' getenv.
POSIX.setEnvironmentValue("ORT_DISABLE_TELEMETRY", "1")
let status = ProofkitCLI.run(arguments: ProofkitCLI.processArguments())
// Every output is complete here (files are written atomically before `run` returns); flush the
// C streams and leave without exit()'s teardown: ONNX Runtime's static destructors (its operator
// schema registry) take about 5 ms, a tenth of a whole `proofkit mat`, and free nothing the
// kernel would not.
POSIX.exitImmediately(status)
