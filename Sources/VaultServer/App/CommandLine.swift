import Foundation
import VaultArguments

/// What a `vault-server` command line asks for, parsed by the shared parser (`VaultArguments`)
/// from the command tree in `ServerCommands.swift`.
enum ServerCommand {
    case serve(ServerConfig, logRequests: Bool)
    case user(dataDir: String, metadata: String?, UserCommand, content: String? = nil)
    case migrate(MetadataLocation, content: String?)
    /// `export`/`import`: the data folder, its metadata, its `--content` (nil: the folder), the bundle folder.
    case export(dataDir: String, MetadataLocation, content: String?, bundle: String)
    case `import`(dataDir: String, MetadataLocation, content: String?, bundle: String)
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
            if let migrate = command as? Migrate { return .migrate(migrate.location, content: migrate.content) }
            if let c = command as? Export { return .export(dataDir: c.folder.data, c.folder.location, content: c.folder.content, bundle: c.out) }
            if let c = command as? Import { return .import(dataDir: c.folder.data, c.folder.location, content: c.folder.content, bundle: c.from) }
            return userCommand(command)
        }
    }

    /// A `vault-server user …` command (every other command was matched before).
    private static func userCommand(_ command: any ParsableCommand) -> ServerCommand {
        switch command {
        case let c as User.Add: return .user(dataDir: c.user.data, metadata: c.user.metadata, .add(name: c.user.name, passwordFile: c.passwordFile))
        case let c as User.List: return .user(dataDir: c.folder.data, metadata: c.folder.metadata, .list(json: c.json))
        case let c as User.Passwd:
            return .user(dataDir: c.user.data, metadata: c.user.metadata, .passwd(name: c.user.name, passwordFile: c.passwordFile))
        case let c as User.Remove:
            return .user(dataDir: c.user.data, metadata: c.user.metadata, .remove(name: c.user.name, confirmed: c.yes), content: c.user.content)
        case let c as User.Sessions.Revoke: return .user(dataDir: c.user.data, metadata: c.user.metadata, .revokeSessions(name: c.user.name))
        default: preconditionFailure("a command without a case: \(type(of: command))")
        }
    }
}

/// What a `vault-server user …` command asks for.
enum UserCommand: Equatable {
    case add(name: String, passwordFile: String?)
    case list(json: Bool)
    case passwd(name: String, passwordFile: String?)
    /// `confirmed`: `--yes` was given.
    case remove(name: String, confirmed: Bool)
    case revokeSessions(name: String)
}
