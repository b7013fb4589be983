import Foundation
import VaultCore
import VaultAgent
#if canImport(Glibc)
import Glibc
#endif

/// The `vault` command line: parses, dispatches, and turns errors into a message and an exit code.
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
                report(e, out: Output(json: CommandLine.arguments.contains("--json"), environment: [:]))
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
        guard let name = arguments.first, name != "--help", name != "-h", name != "help" else {
            if arguments.count > 1, let c = commands.first(where: { $0.name == arguments[1] }) { printHelp(c) } else { printUsage() }
            return finish(0)
        }
        if name == "--version" || name == "version" { StandardStream.output.write("vault 0.1.0\n"); return finish(0) }
        guard let command = commands.first(where: { $0.name == name }) else {
            StandardStream.error.write("vault: unknown command '\(DisplayText.escaped(name))'\nRun `vault help` for the list.\n")
            return VaultError(.usage, "").exitCode
        }
        let rest = Array(arguments.dropFirst())
        let json = rest.contains("--json")
        let out = Output(json: json, environment: environment)
        do {
            let args = try Arguments(rest, valued: command.valued.union(Command.commonValued),
                                     flags: command.flags.union(Command.commonFlags), aliases: command.aliases)
            if args.flag("help") { printHelp(command); return finish(0) }
            let layout = VaultLayout.fromEnvironment(environment)
            for removed in BackupBundle.removeAbandonedImports(beside: layout) {
                out.note("removed the leftovers of an interrupted `vault backup import`: \(removed)")
            }
            let ctx = CommandContext(layout: layout, environment: environment, out: out,
                                     passwordFile: args.values["password-file"],
                                     policy: command.obeysPolicy ? try PolicyLoader.load(layout: layout, environment: environment) : .none,
                                     agents: AgentConnections(environment: environment, warn: { out.warn($0) }))
            try command.run(ctx, args)
            return finish(0)
        } catch let e as ReportedFailure {
            return finish(e.exitCode)
        } catch let e as VaultError {
            report(e, out: out)
            return finish(e.exitCode)
        } catch {
            let e = VaultError.wrap(error)
            report(e, out: out)
            return finish(e.exitCode)
        }
    }

    /// The exit code, or 1 when standard output could not be written (other than a reader that
    /// left, which is no failure: `vault transfers | head -1`).
    static func finish(_ code: Int32) -> Int32 {
        guard code == 0, let e = StandardStream.output.writeError else { return code }
        StandardStream.error.write("vault: cannot write to standard output: \(String(cString: strerror(e)))\n")
        return 1
    }

    static func report(_ e: VaultError, out: Output) {
        if out.json {
            struct ErrorJSON: Encodable { var error: Body; struct Body: Encodable { var kind: String; var message: String; var hint: String?; var exitCode: Int32 } }
            try? out.emit(ErrorJSON(error: .init(kind: e.kind.rawValue, message: e.message, hint: e.hint, exitCode: e.exitCode)))
        }
        out.note("vault: \(e.message)")
        if let h = e.hint { out.note("  hint: \(h)") }
    }

    static func printUsage() {
        var s = "vault — an encrypted offline vault for your cloud drive\n\nUsage: vault COMMAND [OPTIONS]\n\nCommands:\n"
        for c in commands { s += "  \(c.name.padding(toLength: 17, withPad: " ", startingAt: 0)) \(c.summary)\n" }
        s += """

        Every command takes --json (machine-readable output), --password-file FILE and --help.
        The password comes from --password-file, VAULT_PASSWORD_COMMAND or the terminal (no echo).
        VAULT_HOME overrides where the vault lives (default $XDG_DATA_HOME/vault).
        Exit codes: 0 ok, 1 error, 2 usage, 3 locked/wrong password, 4 not found, 5 exists/conflict,
        6 integrity (tampered or damaged data), 7 busy, 8 no space, 9 insecure, 10 content not local,
        11 policy (forbidden, not compliant, or the policy itself is invalid).

        """
        StandardStream.output.write(s)
    }

    static func printHelp(_ c: Command) {
        StandardStream.output.write("\(c.usage)\n\n  \(c.summary)\n\nCommon options: --json, --password-file FILE, --help\n")
    }
}

/// A failure the command has already reported in its own output (a `--json` result that lists
/// what went wrong): only its exit code is left to give.
struct ReportedFailure: Error {
    let exitCode: Int32
}
