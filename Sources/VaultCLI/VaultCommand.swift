import VaultArguments
import VaultCore

/// A `vault` command that runs: its declarations (`ParsableCommand`) and what it does with the
/// context the shared runner builds (`CommandRunner`). Errors it throws become the message and
/// exit code of `VaultError`.
protocol VaultCommand: ParsableCommand {
    /// False for the organisation's own tools, which must work to repair a broken policy.
    static var obeysPolicy: Bool { get }
    func run(_ ctx: CommandContext) throws
}

extension VaultCommand {
    static var obeysPolicy: Bool { true }
}

/// `--json`, for commands with a machine-readable result (docs/json.md describes each).
struct OutputOptions: ParsableArguments {
    @Flag(help: "print the result as one JSON document (docs/json.md); errors too")
    var json = false
}

/// `--password-file`, for commands that open or unlock the vault.
struct PasswordOptions: ParsableArguments {
    @Option(help: "read the vault password from the first line of FILE (a regular file or a pipe) instead of VAULT_PASSWORD_COMMAND or the terminal",
            valueName: "file", completion: .file)
    var passwordFile: String?
}

/// Commands with `--json` expose it to the runner (errors are JSON too).
protocol ProducesJSON {
    var output: OutputOptions { get }
}

/// Commands with `--password-file` expose it to the runner (it builds the password source).
protocol ReadsPassword {
    var password: PasswordOptions { get }
}
