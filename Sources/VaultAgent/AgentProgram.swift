import Foundation
import VaultKeys
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// The `vault-agent` program: the long-lived agent in a process of its own, which links no HTTP
/// client, no sync code and no terminal library (its idle memory is mostly the pages of the
/// libraries it maps: docs/agent.md "Measured"). `vault agent [run]`, what the systemd unit
/// starts, replaces itself with it (`execve`, same pid, same environment); its helpers
/// (`vault agent work`, `vault agent listen`) are the `vault` binary beside it.
public enum AgentProgram {
    /// The agent's executable, installed beside `vault`.
    public static let name = "vault-agent"
    /// The program that runs the agent's helpers, beside `vault-agent`.
    static let helperName = "vault"

    /// Runs the agent for the vault the environment names (`VAULT_HOME`, `XDG_DATA_HOME`) until it
    /// is stopped; returns the exit code when it cannot start (the message and hint on standard
    /// error, as `vault` reports them).
    public static func main(arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment) -> Int32 {
        umask(0o077)
        ProcessHardening.apply()   // execve made the process dumpable again
        signal(SIGPIPE, SIG_IGN)   // a closed pipe is an EPIPE error, not a silent death
        if arguments == ["--help"] || arguments == ["-h"] {
            write(1, usage + "\n")
            return 0
        }
        do {
            guard arguments.isEmpty else {
                throw VaultError(.usage, "\(name) takes no arguments (got '\(arguments.joined(separator: " "))')", hint: "run `vault agent` (\(name) --help)")
            }
            let layout = VaultLayout.fromEnvironment(environment)
            let policy = try PolicyLoader.load(layout: layout, environment: environment)
            try Agent.run(layout: layout, environment: environment, policy: policy, helper: try sibling(helperName))
        } catch {
            let e = VaultError.wrap(error)
            write(2, "\(name): " + DisplayText.escaped(e.message) + "\n" + (e.hint.map { "  hint: " + DisplayText.escaped($0) + "\n" } ?? ""))
            return e.exitCode
        }
    }

    static let usage = """
        usage: \(name)
        The vault agent in the foreground, for the vault the environment names (VAULT_HOME, else
        $XDG_DATA_HOME/vault): it locks at the session's deadlines, runs background transfers and keeps
        the push channel open (docs/agent.md). Started by `vault agent` (and its systemd user unit,
        `vault agent install`); its helpers are the `vault` program beside it.
        """

    /// The executable `file` in the folder of the running one (symbolic links resolved), where
    /// `vault` and `vault-agent` are installed side by side; an error with a hint when it is not
    /// there. Never a search of `PATH`: an agent runs only with the helpers of its own installation.
    public static func sibling(_ file: String) throws -> String {
        let me: String
        do { me = try CurrentProcess.executablePath() } catch { throw VaultError(.io, "cannot find the running executable: \(error)") }
        let path = (me as NSString).deletingLastPathComponent + "/" + file
        guard access(path, X_OK) == 0 else {
            throw VaultError(.notFound, "\(path) is missing (\(String(cString: strerror(errno)))): `vault` and `\(name)` run the agent together",
                             hint: "install both from one build (scripts/install.sh installs vault, vault-agent and vault-server in PREFIX/bin)")
        }
        return path
    }

    private static func write(_ fd: Int32, _ s: String) {
        s.utf8CString.withUnsafeBufferPointer { _ = Glibc.write(fd, $0.baseAddress, $0.count - 1) }
    }
}
