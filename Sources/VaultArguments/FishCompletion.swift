import Foundation
/// The fish completion script: a function that finds the command path from the words typed so
/// far, and one `complete` line per subcommand, option and positional kind, conditioned on it.
struct FishCompletion {
    let tree: CompletionTree

    var script: String {
        let p = tree.program
        let f = "__fish_" + identifier(p)
        var s = """
        # fish completion for \(p); generated from the command definitions by `\(p) completion fish`.
        # Do not edit: scripts/generate-docs.sh writes it, and a test fails when it differs.

        # Every command path, and every option that takes a value (its value is not a command).

        """
        let paths = tree.nodes.dropFirst().map { quote($0.displayName) }
        s += "set -g \(f)_commands \(paths.joined(separator: " "))\n"
        var valued: [String] = []
        for n in tree.nodes {
            for o in n.options where o.kind == .option {
                valued += ((o.longName.map { ["--" + $0] } ?? []) + (o.shortName.map { ["-" + String($0)] } ?? [])).map { quote(n.displayName + " " + $0) }
            }
        }
        s += "set -g \(f)_valued \(valued.joined(separator: " "))\n"
        s += """

        # The command path of the words before the cursor ("\(p) key list").
        function \(f)_path
            set -l tokens (commandline -opc)
            set -e tokens[1]
            set -l path \(p)
            set -l skip 0
            set -l words 0
            for t in $tokens
                if test $skip -eq 1
                    set skip 0
                    continue
                end
                if test "$t" = "--"
                    break
                end
                if string match -q -- '-*' $t
                    if not string match -q -- '*=*' $t; and contains -- "$path $t" $\(f)_valued
                        set skip 1
                    end
                    continue
                end
                if test $words -eq 0; and contains -- "$path $t" $\(f)_commands
                    set path "$path $t"
                    continue
                end
                set words (math $words + 1)
            end
            echo $path
        end

        # True when the words before the cursor name exactly the command path $argv.
        function \(f)_using
            test (\(f)_path) = "$argv"
        end

        complete -c \(p) -f

        """
        for n in tree.nodes {
            let cond = "-n " + quote("\(f)_using \(n.displayName)")
            for sub in n.subcommands {
                s += "complete -c \(p) \(cond) -a \(quote(sub.name)) -d \(quote(sub.abstract))\n"
            }
            for o in n.options {
                var line = "complete -c \(p) \(cond)"
                if let short = o.shortName { line += " -s \(short)" }
                if let long = o.longName { line += " -l \(long)" }
                if o.kind == .option {
                    switch o.completion {
                    case .none: line += " -x"
                    case .file: line += " -r -F"
                    case .directory: line += " -x -a '(__fish_complete_directories)'"
                    case .list(let words): line += " -x -a \(quote(words.joined(separator: " ")))"
                    }
                }
                s += line + " -d \(quote(HelpGenerator.sentence(o.help)))\n"
            }
            if n.subcommands.isEmpty {
                for a in n.positionals {
                    switch a.completion {
                    case .none: break
                    case .file: s += "complete -c \(p) \(cond) -F\n"
                    case .directory: s += "complete -c \(p) \(cond) -a '(__fish_complete_directories)'\n"
                    case .list(let words): s += "complete -c \(p) \(cond) -a \(quote(words.joined(separator: " ")))\n"
                    }
                }
            }
        }
        return s
    }
}
