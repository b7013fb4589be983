import VaultCLI
#if canImport(Glibc)
import Glibc
#endif

exit(VaultCommandLine.run(Array(CommandLine.arguments.dropFirst())))
