import Foundation
/// The zsh completion script (`#compdef`): one function per command, `_arguments` specs for its
/// options and positionals, `_describe` for subcommands, the way swift-argument-parser lays it out.
struct ZshCompletion {
    let tree: CompletionTree

    var script: String {
        let p = tree.program
        var s = """
        #compdef \(p)
        # zsh completion for \(p); generated from the command definitions by `\(p) completion zsh`.
        # Do not edit: scripts/generate-docs.sh writes it, and a test fails when it differs.

        """
        for n in tree.nodes { s += function(n) }
        s += "\n_\(identifier(p)) \"$@\"\n"
        return s
    }

    func function(_ n: CompletionTree.Node) -> String {
        var args: [String] = []
        for o in n.options {
            let names = (o.shortName.map { ["-" + String($0)] } ?? []) + (o.longName.map { ["--" + $0] } ?? [])
            let exclusive = names.count > 1 ? "'(\(names.joined(separator: " ")))'{\(names.joined(separator: ","))}" : ""
            let value = o.kind == .option ? ":\(escape(o.valueName)):\(action(o.completion))" : ""
            let repeatable = o.isRepeating ? "*" : ""
            let spec = "[\(escape(HelpGenerator.sentence(o.help)))]\(value)"
            args.append(exclusive.isEmpty ? quote(repeatable + names[0] + spec) : repeatable + exclusive + quote(spec))
        }
        if !n.subcommands.isEmpty {
            args.append(quote("(-): :->command"))
            args.append(quote("(-)*:: :->arg"))
        } else {
            for a in n.positionals {
                let colons = a.isRepeating ? "*:" : (a.isRequired ? ":" : "::")
                args.append(quote("\(colons)\(escape(a.valueName)):\(action(a.completion))"))
            }
        }
        var f = "\n_\(n.identifier)() {\n"
        f += "    local context state state_descr line\n    typeset -A opt_args\n    integer ret=1\n"
        f += "    local -a args\n    args=(\n" + args.map { "        " + $0 + "\n" }.joined() + "    )\n"
        f += "    _arguments -s -S \(n.subcommands.isEmpty ? "" : "-C ")$args && ret=0\n"
        if !n.subcommands.isEmpty {
            f += "    case $state in\n        command)\n            local -a commands\n            commands=(\n"
            for sub in n.subcommands { f += "                \(quote(escapeName(sub.name) + ":" + sub.abstract))\n" }
            f += "            )\n            _describe -t commands \(quote(n.displayName + " command")) commands && ret=0\n            ;;\n"
            f += "        arg)\n            case ${words[1]} in\n"
            for sub in n.subcommands {
                f += "                (\(sub.name)) _\(n.identifier)_\(identifier(sub.name)) && ret=0 ;;\n"
            }
            f += "            esac\n            ;;\n    esac\n"
        }
        f += "    return ret\n}\n"
        return f
    }

    func action(_ kind: CompletionKind) -> String {
        switch kind {
        case .none: return " "
        case .file: return "_files"
        case .directory: return "_files -/"
        case .list(let words): return "(\(words.map(escape).joined(separator: " ")))"
        }
    }

    /// Text inside `[…]` or after `:` in an `_arguments` spec.
    func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "[", with: "\\[")
            .replacingOccurrences(of: "]", with: "\\]").replacingOccurrences(of: ":", with: "\\:")
    }

    func escapeName(_ s: String) -> String { s.replacingOccurrences(of: ":", with: "\\:") }
}
