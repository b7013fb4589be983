import Foundation
/// The bash completion script: one function that walks the words typed so far to find the
/// command, then offers its subcommands, its options, an option's values, or files where a
/// positional argument is a local file. Generated tables (case statements) hold the tree.
struct BashCompletion {
    let tree: CompletionTree

    var script: String {
        let p = tree.program
        let f = "_" + identifier(p)
        var s = """
        # bash completion for \(p); generated from the command definitions by `\(p) completion bash`.
        # Do not edit: scripts/generate-docs.sh writes it, and a test fails when it differs.

        # The subcommands of a command path ("\(p) key").
        \(f)_subcommands() {
            case "$1" in

        """
        for n in tree.nodes where !n.subcommands.isEmpty {
            s += "        \(quote(n.displayName))) echo \(quote(n.subcommands.map(\.name).joined(separator: " "))) ;;\n"
        }
        s += """
            esac
        }

        # The options of a command path.
        \(f)_options() {
            case "$1" in

        """
        for n in tree.nodes {
            s += "        \(quote(n.displayName))) echo \(quote(n.options.flatMap(names).joined(separator: " "))) ;;\n"
        }
        s += """
            esac
        }

        # Completes the value of option $2 of command path $1; fails when $2 takes no value.
        \(f)_value() {
            case "$1 $2" in

        """
        for n in tree.nodes {
            for o in n.options where o.kind == .option {
                s += "        \(names(o).map { quote(n.displayName + " " + $0) }.joined(separator: "|"))) \(compgen(o.completion)) ;;\n"
            }
        }
        s += """
                *) return 1 ;;
            esac
        }

        # Completes positional argument number $2 (from 0) of command path $1.
        \(f)_positional() {
            case "$1" in

        """
        for n in tree.nodes where !n.positionals.isEmpty {
            s += "        \(quote(n.displayName)))\n            case $2 in\n"
            for (i, a) in n.positionals.enumerated() {
                let last = i == n.positionals.count - 1 && a.isRepeating
                s += "                \(last ? "*" : String(i))) \(compgen(a.completion)) ;;\n"
            }
            s += "            esac ;;\n"
        }
        s += """
            esac
        }

        \(f)() {
            local cur="${COMP_WORDS[COMP_CWORD]}" path="\(p)" word i skip=0 words=0 only=0 cword=$COMP_CWORD
            # bash splits `--opt=value` at '=' (COMP_WORDBREAKS): complete the value of the option before it.
            if [[ "$cur" == "=" ]]; then cur=""; fi
            local opt=""
            if [[ "${COMP_WORDS[cword]}" == "=" ]]; then opt="${COMP_WORDS[cword-1]}"
            elif (( cword > 1 )) && [[ "${COMP_WORDS[cword-1]}" == "=" ]]; then opt="${COMP_WORDS[cword-2]}"; fi
            for (( i = 1; i < cword; i++ )); do
                word="${COMP_WORDS[i]}"
                if (( skip )); then skip=0; continue; fi
                if (( only )); then words=$((words + 1)); continue; fi
                if [[ "$word" == "=" ]]; then skip=1; continue; fi
                if [[ "$word" == "--" ]]; then only=1; continue; fi
                if [[ "$word" == -* ]]; then
                    if [[ "${COMP_WORDS[i+1]}" != "=" ]] && \(f)_value "$path" "$word" >/dev/null 2>&1; then skip=1; fi
                    continue
                fi
                if (( words == 0 )) && [[ " $(\(f)_subcommands "$path") " == *" $word "* ]]; then
                    path="$path $word"
                    continue
                fi
                words=$((words + 1))
            done
            COMPREPLY=()
            if [[ -n "$opt" ]]; then \(f)_value "$path" "$opt"; return 0; fi
            # `--opt=value` as one word (a COMP_WORDBREAKS without '='): complete the value after '='.
            if (( ! only )) && [[ "$cur" == --*=* ]]; then
                opt="${cur%%=*}"; cur="${cur#*=}"
                \(f)_value "$path" "$opt" || return 0
                local k; for k in "${!COMPREPLY[@]}"; do COMPREPLY[k]="$opt=${COMPREPLY[k]}"; done
                return 0
            fi
            if (( skip )); then \(f)_value "$path" "${COMP_WORDS[cword-1]}"; return 0; fi
            if (( ! only )) && [[ "$cur" == -* ]]; then
                COMPREPLY=( $(compgen -W "$(\(f)_options "$path")" -- "$cur") )
                return 0
            fi
            local subs
            subs="$(\(f)_subcommands "$path")"
            if (( words == 0 )) && [[ -n "$subs" ]]; then
                COMPREPLY=( $(compgen -W "$subs" -- "$cur") )
                return 0
            fi
            \(f)_positional "$path" "$words"
            return 0
        }

        complete -F \(f) \(p)

        """
        return s.replacingOccurrences(of: "            case \"$1\" in\n\n", with: "            case \"$1\" in\n")
            .replacingOccurrences(of: "            case \"$1 $2\" in\n\n", with: "            case \"$1 $2\" in\n")
    }

    func names(_ d: ArgumentDefinition) -> [String] {
        (d.longName.map { ["--" + $0] } ?? []) + (d.shortName.map { ["-" + String($0)] } ?? [])
    }

    /// The `COMPREPLY=…` that completes a value of this kind from `$cur`.
    func compgen(_ kind: CompletionKind) -> String {
        switch kind {
        case .none: return "COMPREPLY=()"
        case .file: return "compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- \"$cur\") )"
        case .directory: return "compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -d -- \"$cur\") )"
        case .list(let words): return "COMPREPLY=( $(compgen -W \(quote(words.joined(separator: " "))) -- \"$cur\") )"
        }
    }
}

/// A bash/zsh/fish single-quoted word.
func quote(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }

/// `vault-server` → `vault_server`.
func identifier(_ s: String) -> String { String(s.map { $0.isLetter || $0.isNumber ? $0 : "_" }) }
