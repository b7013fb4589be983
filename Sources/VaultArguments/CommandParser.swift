import Foundation
/// What a command line asks for.
public enum ParseResult {
    /// Run this command (parsed and validated).
    case run(any ParsableCommand, CommandPath)
    /// Show the help of this command (`--help`, `-h`).
    case help(CommandPath)
    /// Print the root command's version (`--version`).
    case version(String)
}

/// Parses a command line against a tree of commands.
///
/// Rules (the tests in `CommandParserTests` hold each): words are matched left to right; the
/// first word that is not an option names a subcommand while the command reached has any; options
/// belong to the command that declares them and are refused anywhere else, with the commands that
/// do take them named. `--name value`, `--name=value`, `-n value`, `-nvalue` and bundled short
/// flags (`-rf`) are accepted; a value that starts with `-` must be attached (`--name=-x`) unless
/// it is a negative number. A single-valued option given twice is refused; `[T]` options collect
/// every value. `--` ends the options. `--help`/`-h` anywhere (before `--`) asks for the help of
/// the command reached; `--version` on the root prints its version.
public struct CommandParser {
    public let root: CommandPath

    public init(_ root: any ParsableCommand.Type) {
        self.root = CommandPath([root])
    }

    public func parse(_ arguments: [String]) throws(CommandLineError) -> ParseResult {
        do {
            return try parseWords(arguments)
        } catch {
            // `--help` anywhere before `--` wins over a mistake before it: show the help of the
            // command the words reached.
            if arguments.prefix(while: { $0 != "--" }).contains(where: { $0 == "--help" || $0 == "-h" }) {
                return .help(error.commandPath)
            }
            throw error
        }
    }

    private func parseWords(_ arguments: [String]) throws(CommandLineError) -> ParseResult {
        var path = root
        var command: any ParsableCommand = path.leaf.init()
        var defs = command.definitions
        var positionals = 0
        var help = false
        var onlyPositionals = false
        var i = 0

        func fail(_ kind: CommandLineError.Kind) -> CommandLineError { CommandLineError(kind, commandPath: path) }

        func enter(_ t: any ParsableCommand.Type) {
            path = path.appending(t)
            command = t.init()
            defs = command.definitions
            positionals = 0
        }

        /// Switches to the default subcommand when it declares `option`, before any word was read.
        func enterDefault(declaring matches: (ArgumentDefinition) -> Bool) -> Bool {
            guard positionals == 0, let d = path.leaf.configuration.defaultSubcommand,
                  d.init().definitions.contains(where: matches) else { return false }
            enter(d)
            return true
        }

        func takeValue(_ def: ArgumentDefinition, shown: String, inline: String?) throws(CommandLineError) {
            var value = inline
            if value == nil, i < arguments.count {
                let next = arguments[i]
                if !next.hasPrefix("-") || next == "-" || Self.isNegativeNumber(next) { value = next; i += 1 }
            }
            guard let value else { throw fail(.missingValue(shown)) }
            if def.declaration.isSet() && !def.isRepeating { throw fail(.repeatedOption(shown)) }
            guard def.declaration.assign(value) else { throw fail(.invalidValue(shown, value: value, expected: def.declaration.expectation)) }
        }

        while i < arguments.count {
            let a = arguments[i]
            i += 1
            if !onlyPositionals && a == "--" { onlyPositionals = true; continue }
            if !onlyPositionals && (a == "--help" || a == "-h") { help = true; continue }
            if !onlyPositionals && a == "--version", path.types.count == 1, let v = path.leaf.configuration.version {
                return .version(v)
            }
            if !onlyPositionals && a.hasPrefix("--") {
                let body = a.dropFirst(2)
                let name = String(body.prefix { $0 != "=" })
                let inline = body.contains("=") ? String(body[body.index(after: body.firstIndex(of: "=")!)...]) : nil
                guard let def = defs.first(where: { $0.kind != .positional && $0.longName == name }) else {
                    if enterDefault(declaring: { $0.longName == name }) { i -= 1; continue }
                    if help { continue }
                    throw fail(.unknownOption("--" + name, belongsTo: owners { $0.longName == name }))
                }
                if def.kind == .flag {
                    if inline != nil { throw fail(.flagTakesNoValue("--" + name)) }
                    _ = def.declaration.assign("")
                } else {
                    try takeValue(def, shown: "--" + name, inline: inline)
                }
                continue
            }
            if !onlyPositionals && a.hasPrefix("-") && a.count > 1 && !Self.isNegativeNumber(a) {
                let letters = Array(a.dropFirst())
                var k = 0
                while k < letters.count {
                    let c = letters[k]
                    k += 1
                    if c == "h" && !defs.contains(where: { $0.shortName == "h" }) { help = true; continue }
                    guard let def = defs.first(where: { $0.kind != .positional && $0.shortName == c }) else {
                        if k == 1 && enterDefault(declaring: { $0.shortName == c }) { k = 0; continue }
                        if help { continue }
                        throw fail(.unknownOption("-" + String(c), belongsTo: owners { $0.shortName == c }))
                    }
                    if def.kind == .flag { _ = def.declaration.assign(""); continue }
                    let rest = String(letters[k...])
                    k = letters.count
                    try takeValue(def, shown: "-" + String(c), inline: rest.isEmpty ? nil : rest)
                }
                continue
            }
            // A word: a subcommand's name, or the next positional argument.
            let subcommands = path.leaf.configuration.subcommands
            if positionals == 0 && !subcommands.isEmpty {
                if let t = subcommands.first(where: { $0.configuration.name == a }) { enter(t); continue }
                if let d = path.leaf.configuration.defaultSubcommand, d.init().definitions.contains(where: { $0.kind == .positional }) {
                    enter(d); i -= 1; continue
                }
                if help { continue }
                throw fail(.unknownSubcommand(a, known: path.children.map { $0.leaf.configuration.name }))
            }
            let slots = defs.filter { $0.kind == .positional }
            let index = min(positionals, slots.count - 1)
            guard index >= 0, positionals < slots.count || slots[index].isRepeating else {
                if help { continue }
                throw fail(.unexpectedArgument(a))
            }
            let def = slots[index]
            positionals += 1
            guard def.declaration.assign(a) else {
                throw fail(.invalidValue(def.displayName, value: a, expected: def.declaration.expectation))
            }
        }

        if help { return .help(path) }
        if !path.leaf.configuration.subcommands.isEmpty {
            guard let d = path.leaf.configuration.defaultSubcommand else {
                throw fail(.missingSubcommand(path.children.map { $0.leaf.configuration.name }))
            }
            enter(d)
        }
        if let missing = defs.first(where: { $0.isRequired && !$0.declaration.isSet() }) {
            throw fail(.missingArgument(missing.kind == .positional ? missing.displayName : "\(missing.displayName) <\(missing.valueName)>"))
        }
        do {
            for var group in command.optionGroups { try group.validate() }
            try command.validate()
        } catch let e as ValidationError {
            throw fail(.validation(e.message))
        } catch {
            throw fail(.validation("\(error)"))
        }
        return .run(command, path)
    }

    /// The visible commands of the whole tree that declare an option matching `matches`.
    private func owners(_ matches: (ArgumentDefinition) -> Bool) -> [String] {
        root.allVisible.filter { $0.definitions.contains { $0.kind != .positional && !$0.isHidden && matches($0) } }.map(\.displayName)
    }

    static func isNegativeNumber(_ s: String) -> Bool {
        s.count > 1 && s.hasPrefix("-") && s.dropFirst().allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") }
    }
}
