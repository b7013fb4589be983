import Foundation
/// A command line that does not fit the command's declarations: a usage error (exit 2), shown
/// with the usage of the command it reached.
public struct CommandLineError: Error, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        /// An option no command here declares, or one that belongs to other commands (named).
        case unknownOption(String, belongsTo: [String])
        /// An option that takes a value came last, or before another option.
        case missingValue(String)
        /// The value does not parse as the option's type.
        case invalidValue(String, value: String, expected: String)
        /// `--flag=value`.
        case flagTakesNoValue(String)
        /// A single-valued option given twice.
        case repeatedOption(String)
        /// More words than the command takes.
        case unexpectedArgument(String)
        /// A required argument or option is missing.
        case missingArgument(String)
        /// A command that only groups subcommands was given none.
        case missingSubcommand([String])
        /// A word that names no subcommand.
        case unknownSubcommand(String, known: [String])
        /// The command's own `validate()` refused the values.
        case validation(String)
    }

    public let kind: Kind
    /// The command the parser had reached, for its usage (`["vault", "key", "list"]`).
    public let commandPath: CommandPath

    public init(_ kind: Kind, commandPath: CommandPath) {
        self.kind = kind; self.commandPath = commandPath
    }

    /// One sentence, without the program name.
    public var message: String {
        switch kind {
        case .unknownOption(let o, let owners):
            guard !owners.isEmpty else { return "unknown option '\(o)'" }
            let list = owners.prefix(3).map { "`\($0)`" } + (owners.count > 3 ? ["\(owners.count - 3) other commands"] : [])
            let who = list.count == 1 ? list[0] : list.dropLast().joined(separator: ", ") + " and " + list.last!
            return "unknown option '\(o)' here (it is an option of \(who))"
        case .missingValue(let o): return "\(o) needs a value"
        case .invalidValue(let o, let v, let e): return "\(o): '\(v)' is not \(e)"
        case .flagTakesNoValue(let o): return "\(o) takes no value"
        case .repeatedOption(let o): return "\(o) was given more than once"
        case .unexpectedArgument(let a): return "unexpected argument '\(a)'"
        case .missingArgument(let a): return "missing \(a)"
        case .missingSubcommand(let known):
            return commandPath.types.count == 1 ? "missing a command (`\(commandPath.displayName) help` lists them)" : "missing a subcommand: " + Self.oneOf(known)
        case .unknownSubcommand(let s, let known):
            return commandPath.types.count == 1 ? "unknown command '\(s)' (`\(commandPath.displayName) help` lists them)" : "unknown subcommand '\(s)': " + Self.oneOf(known)
        case .validation(let m): return m
        }
    }

    public var description: String { "\(commandPath.displayName): \(message)" }

    static func oneOf(_ names: [String]) -> String {
        names.count == 1 ? names[0] : "one of " + names.dropLast().joined(separator: ", ") + " or " + names.last!
    }
}

/// The commands from the root to the one reached (`vault`, `key`, `list`).
public struct CommandPath: CustomStringConvertible {
    public let types: [any ParsableCommand.Type]

    public init(_ types: [any ParsableCommand.Type]) {
        precondition(!types.isEmpty, "a command path starts at the root")
        self.types = types
    }

    public var names: [String] { types.map { $0.configuration.name } }
    /// `vault key list`.
    public var displayName: String { names.joined(separator: " ") }
    public var description: String { displayName }
    public var leaf: any ParsableCommand.Type { types.last! }
    public var root: any ParsableCommand.Type { types.first! }

    public func appending(_ t: any ParsableCommand.Type) -> CommandPath { CommandPath(types + [t]) }

    /// The visible subcommands of the leaf.
    public var children: [CommandPath] {
        leaf.configuration.subcommands.filter { !$0.configuration.isHidden }.map(appending)
    }

    /// This command and every visible command below it, depth first.
    public var allVisible: [CommandPath] { [self] + children.flatMap(\.allVisible) }

    /// The declarations of the leaf command (options of its groups included).
    public var definitions: [ArgumentDefinition] { leaf.init().definitions }

    /// The path named by `names` below this one (`["key", "list"]`), or nil.
    public func descendant(_ names: [String]) -> CommandPath? {
        var p = self
        for n in names {
            guard let t = p.leaf.configuration.subcommands.first(where: { $0.configuration.name == n }) else { return nil }
            p = p.appending(t)
        }
        return p
    }
}
