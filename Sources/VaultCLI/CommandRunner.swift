import Foundation
import VaultAgent
import VaultArguments
import VaultCore
#if canImport(Glibc)
import Glibc
#endif

/// The one runner every `vault` command goes through (SwiftPM's `SwiftCommand` shape): parse and
/// validate, answer `--help` and `--version`, build the context (layout, policy, password source,
/// output), run, and turn any error into its message and exit code.
enum CommandRunner {
    /// Runs `arguments` (without the program name) and returns the exit code.
    static func run(_ arguments: [String], environment: [String: String]) -> Int32 {
        let parsed: ParseResult
        if arguments.isEmpty {   // a bare `vault` shows what there is
            StandardStream.output.write(HelpGenerator.help(CommandParser(VaultProgram.self).root))
            return finish(0)
        }
        do {
            parsed = try CommandParser(VaultProgram.self).parse(arguments)
        } catch {
            return usageError(error, json: jsonRequested(arguments), environment: environment)
        }
        switch parsed {
        case .version(let v):
            StandardStream.output.write("vault \(v)\n")
            return finish(0)
        case .help(let path):
            StandardStream.output.write(HelpGenerator.help(path))
            return finish(0)
        case .run(let command, _):
            guard let command = command as? any VaultCommand else { return finish(0) }
            return run(command, environment: environment)
        }
    }

    static func run(_ command: any VaultCommand, environment: [String: String]) -> Int32 {
        let out = Output(json: (command as? ProducesJSON)?.output.json ?? false, environment: environment)
        do {
            let layout = VaultLayout.fromEnvironment(environment)
            for removed in BackupBundle.removeAbandonedImports(beside: layout) {
                out.note("removed the leftovers of an interrupted `vault backup import`: \(removed)")
            }
            let policy = type(of: command).obeysPolicy ? try PolicyLoader.load(layout: layout, environment: environment) : .none
            let ctx = CommandContext(layout: layout, environment: environment, out: out,
                                     passwordFile: (command as? ReadsPassword)?.password.passwordFile, policy: policy,
                                     agents: AgentConnections(environment: environment, warn: { out.warn($0) }))
            try command.run(ctx)
            return finish(0)
        } catch let e as ReportedFailure {
            return finish(e.exitCode)
        } catch {
            let e = (error as? VaultError) ?? VaultError.wrap(error)
            report(e, out: out)
            return finish(e.exitCode)
        }
    }

    /// A command line that does not parse: the message and the usage of the command reached, on
    /// standard error (and the error object with `--json`); exit 2.
    static func usageError(_ error: CommandLineError, json: Bool, environment: [String: String]) -> Int32 {
        let e = VaultError(.usage, error.message, hint: "see `\(error.commandPath.displayName) --help`")
        let out = Output(json: json, environment: environment)
        if json { emitError(e, out: out) }
        StandardStream.error.write(DisplayText.escaped(error.description) + "\n"
                                   + "Usage: \(HelpGenerator.usage(error.commandPath))\n"
                                   + "See '\(error.commandPath.displayName) --help'.\n")
        return e.exitCode
    }

    /// Whether the words ask for JSON (before `--`), for errors found before parsing finished.
    static func jsonRequested(_ arguments: [String]) -> Bool {
        arguments.prefix { $0 != "--" }.contains("--json")
    }

    /// The exit code, or 1 when standard output could not be written (other than a reader that
    /// left, which is no failure: `vault transfers | head -1`).
    static func finish(_ code: Int32) -> Int32 {
        guard code == 0, let e = StandardStream.output.writeError else { return code }
        StandardStream.error.write("vault: cannot write to standard output: \(String(cString: strerror(e)))\n")
        return 1
    }

    static func report(_ e: VaultError, out: Output) {
        if out.json { emitError(e, out: out) }
        out.note("vault: \(e.message)")
        if let h = e.hint { out.note("  hint: \(h)") }
    }

    /// The error object of docs/json.md.
    static func emitError(_ e: VaultError, out: Output) {
        try? out.emit(ErrorResult(error: .init(kind: e.kind.rawValue, message: e.message, hint: e.hint, exitCode: e.exitCode)))
    }
}

/// A failure the command has already reported in its own output (a `--json` result that lists
/// what went wrong): only its exit code is left to give.
struct ReportedFailure: Error {
    let exitCode: Int32
}
