import Foundation
/// Shell completion scripts for bash, zsh and fish, made from the command tree, so that they
/// name exactly the commands, options and values the parser accepts.
public enum CompletionShell: String, CaseIterable, ExpressibleByArgument, Sendable {
    case bash, zsh, fish
    public static var defaultValueName: String { "shell" }
}

public enum CompletionGenerator {
    /// The completion script of `root` for `shell`.
    public static func script(_ root: any ParsableCommand.Type, shell: CompletionShell) -> String {
        let tree = CompletionTree(root)
        switch shell {
        case .bash: return BashCompletion(tree: tree).script
        case .zsh: return ZshCompletion(tree: tree).script
        case .fish: return FishCompletion(tree: tree).script
        }
    }
}

/// The tree as completions need it: every visible command with its subcommands, its options
/// (the default subcommand's too, as the parser accepts them there) and its positionals.
struct CompletionTree {
    struct Node {
        let path: CommandPath
        let name: String
        let abstract: String
        let subcommands: [(name: String, abstract: String)]
        let options: [ArgumentDefinition]
        let positionals: [ArgumentDefinition]
        /// `vault key list` → `vault_key_list`.
        var identifier: String { path.names.map { $0.map { $0.isLetter || $0.isNumber ? $0 : "_" } }.map { String($0) }.joined(separator: "_") }
        var displayName: String { path.displayName }
    }

    let program: String
    let nodes: [Node]

    init(_ root: any ParsableCommand.Type) {
        program = root.configuration.name
        nodes = CommandPath([root]).allVisible.map { p in
            var defs = p.definitions
            if let d = p.leaf.configuration.defaultSubcommand { defs += p.appending(d).definitions }
            defs = defs.filter { !$0.isHidden }
            let help = ArgumentDefinition(kind: .flag, longName: "help", shortName: "h", help: "show help information", valueName: "",
                                          completion: .none, isRequired: false, isRepeating: false, isHidden: false,
                                          defaultDescription: nil, declaration: Declaration.help)
            return Node(path: p, name: p.leaf.configuration.name, abstract: HelpGenerator.sentence(p.leaf.configuration.abstract),
                        subcommands: p.children.map { ($0.leaf.configuration.name, HelpGenerator.sentence($0.leaf.configuration.abstract)) },
                        options: defs.filter { $0.kind != .positional } + [help], positionals: defs.filter { $0.kind == .positional })
        }
    }
}

extension Declaration {
    /// `-h, --help`, which every command takes.
    static var help: Declaration { Declaration(kind: .flag, name: "help", short: "h", help: "", valueName: nil, completion: .none,
                                  isRequired: false, isRepeating: false, isHidden: false, defaultDescription: nil,
                                  expectation: "", assign: { _ in true }, isSet: { false }) }
}
