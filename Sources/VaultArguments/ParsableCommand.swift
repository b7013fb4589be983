import Foundation
/// A set of declared options and arguments: a command, or a group of options several commands
/// share (`@OptionGroup`). The shape is swift-argument-parser's, written by hand: properties
/// declared with `@Option`, `@Flag` and `@Argument`, filled in by `CommandParser`, then
/// `validate()` before anything runs.
public protocol ParsableArguments {
    /// A value with every declaration in place and nothing parsed yet.
    init()
    /// Checks the parsed values together (ranges, options that exclude each other). A thrown
    /// `ValidationError` is a usage error (exit 2) shown with the command's usage.
    mutating func validate() throws
}

extension ParsableArguments {
    public mutating func validate() throws {}
}

/// A command: its name, help and subcommands (`configuration`) and its declared options.
public protocol ParsableCommand: ParsableArguments {
    static var configuration: CommandConfiguration { get }
}

/// What a command says about itself: its name, a one-line abstract, a longer discussion, its
/// subcommands (nested types) and the manual sections of a root command.
public struct CommandConfiguration: @unchecked Sendable {
    // @unchecked: an immutable value of strings and command metatypes.

    /// The word that selects the command (`put`, `add-recovery`).
    public var name: String
    /// One line: what the command does (lists, `--help`, the manual).
    public var abstract: String
    /// Paragraphs after the abstract in `--help` and the manual (blank lines separate them).
    public var discussion: String
    /// The version `--version` prints (root commands).
    public var version: String?
    /// The subcommands, in the order help lists them.
    public var subcommands: [any ParsableCommand.Type]
    /// The subcommand that runs when none is named (its options are accepted directly).
    public var defaultSubcommand: (any ParsableCommand.Type)?
    /// Left out of help, the manual and completions (helpers started by the program itself).
    public var isHidden: Bool
    /// Sections of a root command's manual page and help (ENVIRONMENT, FILES, EXIT STATUS…).
    public var sections: [ManualSection]

    public init(name: String, abstract: String, discussion: String = "", version: String? = nil,
                subcommands: [any ParsableCommand.Type] = [], defaultSubcommand: (any ParsableCommand.Type)? = nil,
                isHidden: Bool = false, sections: [ManualSection] = []) {
        self.name = name; self.abstract = abstract; self.discussion = discussion; self.version = version
        self.subcommands = subcommands; self.defaultSubcommand = defaultSubcommand
        self.isHidden = isHidden; self.sections = sections
    }
}

/// A titled section of a manual page (and of the root command's help): paragraphs, or terms
/// each with its text (`VAULT_HOME` — where the vault lives).
public struct ManualSection: Sendable {
    public var title: String
    public var paragraphs: [String]
    public var items: [(term: String, text: String)]

    public init(title: String, paragraphs: [String] = [], items: [(term: String, text: String)] = []) {
        self.title = title; self.paragraphs = paragraphs; self.items = items
    }
}

/// A command's checks of its own values failed: a usage error (exit 2) shown with the usage.
public struct ValidationError: Error, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
