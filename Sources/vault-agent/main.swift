// Built with -static-stdlib (Package.swift): importing Foundation here records the static
// Foundation's own libraries (ICU, CoreFoundation) for the linker.
import Foundation
import VaultAgent

exit(AgentProgram.main(arguments: Array(CommandLine.arguments.dropFirst())))
