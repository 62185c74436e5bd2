import ProofkitCLI

#if canImport(Glibc)
    import Glibc
#endif

exit(ProofkitCLI.run(arguments: CommandLine.arguments))
