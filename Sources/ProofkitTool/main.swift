import ProofkitCLI

#if canImport(Glibc)
    import Glibc
#endif

// A reader that closes the pipe early (`proofkit help | head`) must not kill us mid-write of an
// output file: writes then fail with EPIPE, which the output layer drops.
signal(SIGPIPE, SIG_IGN)
exit(ProofkitCLI.run(arguments: CommandLine.arguments))
