import Foundation
import VaultCore
#if canImport(Glibc)
import Glibc
#endif

/// The `vault` program: `main.swift` calls `main()` and nothing else.
public enum VaultCommandLine {
    /// Runs `vault` with this process's arguments. An argument that is not valid UTF-8 is refused
    /// (exit 5): vault names and paths are UTF-8, and such a name cannot be passed on faithfully.
    public static func main() -> Int32 {
        var arguments: [String] = []
        for i in 1..<Int(CommandLine.argc) {
            guard let p = CommandLine.unsafeArgv[i] else { continue }
            let bytes = UnsafeRawBufferPointer(start: p, count: strlen(p))
            guard let a = String(validating: bytes, as: UTF8.self) else {
                let e = VaultError(.invalidName, "the argument '\(DisplayText.escaped(bytes: bytes))' is not valid UTF-8; vault names and paths are UTF-8",
                                   hint: "rename the file to a UTF-8 name (for example with `convmv -f latin1 -t utf8`), then try again")
                CommandRunner.report(e, out: Output(json: CommandLine.arguments.contains("--json"), environment: [:]))
                return e.exitCode
            }
            arguments.append(a)
        }
        return run(arguments)
    }

    /// Runs `vault` with `arguments` (without the program name) and returns the exit code.
    public static func run(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment) -> Int32 {
        umask(0o077)
        ProcessHardening.apply()
        signal(SIGPIPE, SIG_IGN)   // a closed pipe is an EPIPE error we handle, not a silent death
        return CommandRunner.run(arguments, environment: environment)
    }
}
