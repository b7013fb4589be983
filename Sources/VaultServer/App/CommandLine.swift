import Foundation
import VaultArguments

/// What a `vault-server` command line asks for, parsed by the shared parser (`VaultArguments`)
/// from the command tree in `ServerCommands.swift`.
enum ServerCommand {
    case serve(ServerConfig, logRequests: Bool)
    case userAdd(dataDir: String, name: String, passwordFile: String?)
    case help(String)
    case version(String)

    /// The help of `vault-server serve` (every option, with its default).
    static var usage: String { HelpGenerator.help(CommandPath([VaultServerProgram.self, Serve.self])) }

    /// Parses `args` (without the program name); a usage error throws `CommandLineError`.
    static func parse(_ args: [String]) throws(CommandLineError) -> ServerCommand {
        let parser = CommandParser(VaultServerProgram.self)
        if args.isEmpty { return .help(HelpGenerator.help(parser.root)) }
        switch try parser.parse(args) {
        case .help(let path): return .help(HelpGenerator.help(path))
        case .version(let v): return .version("vault-server \(v)")
        case .run(let command, _):
            if let serve = command as? Serve {
                // validate() already built it once; it cannot fail now.
                guard let config = try? serve.config() else { preconditionFailure("validated serve options") }
                return .serve(config, logRequests: !serve.quiet)
            }
            if let help = command as? ServerHelp { return .help(help.text) }
            let add = command as! User.Add
            return .userAdd(dataDir: add.data, name: add.name, passwordFile: add.passwordFile)
        }
    }
}
