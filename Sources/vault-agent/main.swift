import VaultAgent
#if canImport(Glibc)
import Glibc
#endif

exit(AgentProgram.main(arguments: Array(CommandLine.arguments.dropFirst())))
