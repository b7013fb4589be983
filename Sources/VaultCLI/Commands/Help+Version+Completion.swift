import VaultArguments
import VaultCore

/// `vault help [COMMAND…]`: the help of a command; `--man` prints the manual page vault(1).
struct HelpCommand: VaultCommand {
    static let obeysPolicy = false
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "help", abstract: "show the help of a command (vault help key passwd), or the manual page with --man")
    }

    @Flag(help: "print the manual page vault(1) in roff (what docs/vault.1 holds)")
    var man = false
    @Argument(help: "the command, and its subcommand", valueName: "command")
    var command: [String] = []

    func validate() throws {
        if man && !command.isEmpty { throw ValidationError("--man prints the whole manual; it takes no command") }
    }

    func run(_ ctx: CommandContext) throws {
        if man { ctx.out.raw(ManualGenerator.page(VaultProgram.self, section: 1)); return }
        let root = CommandParser(VaultProgram.self).root
        guard let path = root.descendant(command) else {
            throw VaultError(.usage, "no command `vault \(command.joined(separator: " "))`", hint: "see `vault help` for the list")
        }
        ctx.out.raw(HelpGenerator.help(path))
    }
}

/// `vault version`.
struct VersionCommand: VaultCommand, ProducesJSON {
    static let obeysPolicy = false
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "version", abstract: "print the version (as --version does)")
    }

    @OptionGroup var output: OutputOptions

    struct Result: Encodable { var version: String }

    func run(_ ctx: CommandContext) throws {
        if ctx.out.json { try ctx.out.emit(Result(version: VaultProgram.version)) } else { ctx.out.line("vault \(VaultProgram.version)") }
    }
}

/// `vault completion SHELL`: the shell completion script, generated from the command definitions.
struct CompletionCommand: VaultCommand {
    static let obeysPolicy = false
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "completion", abstract: "print the completion script for bash, zsh or fish",
                             discussion: "For example: `vault completion bash > ~/.local/share/bash-completion/completions/vault`. scripts/install.sh installs all three.")
    }

    @Argument(help: "the shell", valueName: "shell")
    var shell: CompletionShell

    func run(_ ctx: CommandContext) throws {
        ctx.out.raw(CompletionGenerator.script(VaultProgram.self, shell: shell))
    }
}
