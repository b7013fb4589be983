import VaultArguments

/// A small command tree with every kind of declaration, for the parser tests.
struct Tool: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "tool", abstract: "a tool to test the parser with", version: "1.2.3",
                             subcommands: [Copy.self, Remote.self, Queue.self],
                             sections: [ManualSection(title: "Exit status", items: [("0", "Success."), ("2", "A usage error.")])])
    }
}

enum Colour: String, CaseIterable, ExpressibleByArgument {
    case red, green
}

struct Shared: ParsableArguments {
    @Flag(help: "print JSON") var json = false
    func validate() throws {}
}

struct Copy: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "copy", abstract: "copy a thing", discussion: "Copies SOURCE to DEST.")
    }
    @Flag(short: "r", help: "copy folders too") var recursive = false
    @Flag(short: "f", help: "overwrite") var force = false
    @Option(help: "parallel copies (1 to 8)") var concurrency = 4
    @Option(help: "a label") var label: String?
    @Option(short: "x", help: "leave out names matching this (repeatable)", valueName: "pattern") var exclude: [String] = []
    @Option(help: "the colour") var colour: Colour?
    @Option(help: "seconds to wait", valueName: "seconds") var waitTime: Double?
    @Argument(help: "what to copy", valueName: "source", completion: .file) var source: String
    @Argument(help: "where to", valueName: "dest") var dest: String?
    @OptionGroup var shared: Shared

    func validate() throws {
        guard (1...8).contains(concurrency) else { throw ValidationError("--concurrency takes a number from 1 to 8") }
    }
}

struct Remote: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "remote", abstract: "remotes", subcommands: [Add.self, Remove.self])
    }
    struct Add: ParsableCommand {
        static var configuration: CommandConfiguration { CommandConfiguration(name: "add", abstract: "add a remote") }
        @Option(help: "the remote's address", valueName: "url") var url: String
        @Argument(help: "its name", valueName: "name") var name: String
    }
    struct Remove: ParsableCommand {
        static var configuration: CommandConfiguration { CommandConfiguration(name: "remove", abstract: "remove remotes") }
        @Argument(help: "their names", valueName: "name") var names: [String] = []
        @OptionGroup var shared: Shared
    }
}

struct Queue: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "queue", abstract: "the queue", subcommands: [List.self, Drop.self], defaultSubcommand: List.self)
    }
    struct List: ParsableCommand {
        static var configuration: CommandConfiguration { CommandConfiguration(name: "list", abstract: "list the queue") }
        @Option(help: "at most this many", valueName: "n") var limit: Int?
        @OptionGroup var shared: Shared
    }
    struct Drop: ParsableCommand {
        static var configuration: CommandConfiguration { CommandConfiguration(name: "drop", abstract: "drop an entry") }
        @Argument(help: "the entry", valueName: "entry") var entry: String
    }
}

/// Parses `args` against `Tool` and returns the command it runs (failing the test otherwise).
func command<T: ParsableCommand>(_ args: [String], as: T.Type = T.self) throws -> T {
    guard case .run(let c, _) = try CommandParser(Tool.self).parse(args) else { throw Unexpected.notRun }
    guard let t = c as? T else { throw Unexpected.otherCommand("\(type(of: c))") }
    return t
}

/// The usage error `args` gives.
func failure(_ args: [String]) -> CommandLineError? {
    do { _ = try CommandParser(Tool.self).parse(args); return nil } catch { return error }
}

enum Unexpected: Error { case notRun, otherCommand(String) }
