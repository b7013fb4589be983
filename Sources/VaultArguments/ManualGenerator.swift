import Foundation
/// A manual page in roff (`man 7 man-pages` layout) made from the command tree: NAME, SYNOPSIS,
/// DESCRIPTION, COMMANDS (each with its options), OPTIONS, then the root's own sections
/// (ENVIRONMENT, FILES, EXIT STATUS, SEE ALSO…). No date, so that regenerating it changes nothing.
public enum ManualGenerator {
    /// The page for the root of `root`, in manual `section` (1 for user commands, 8 for daemons).
    public static func page(_ root: any ParsableCommand.Type, section: Int, title: String = "User Commands") -> String {
        let path = CommandPath([root])
        let c = root.configuration
        var out = ".\\\" Generated from the command definitions by `\(c.name) help --man`; do not edit.\n"
        out += ".\\\" scripts/generate-docs.sh writes it; a test fails when it differs from what the code says.\n"
        out += ".TH \(c.name.uppercased()) \(section) \"\" \"\(escape(c.name + " " + (c.version ?? "")))\" \"\(escape(title))\"\n"
        out += ".nh\n.ad l\n"   // no hyphenation, left-aligned: option names stay whole
        out += ".SH NAME\n\(escape(c.name)) \\- \(escape(c.abstract))\n"
        out += ".SH SYNOPSIS\n"
        if path.children.isEmpty {
            out += synopsis(path) + "\n"
        } else {
            out += ".B \(escape(c.name))\n.I command\n.RI [ options ]\n"
            if c.version != nil { out += ".br\n.B \(escape(c.name))\n.B \\-\\-version\n" }
        }
        out += ".SH DESCRIPTION\n" + paragraphs(c.discussion.isEmpty ? HelpGenerator.sentence(c.abstract) : c.discussion)
        if !path.children.isEmpty {
            out += ".SH COMMANDS\n"
            for p in path.allVisible.dropFirst() { out += command(p) }
        }
        out += ".SH OPTIONS\n"
        out += options(path.definitions.filter { !$0.isHidden })
        out += ".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nShow help information (also after any command).\n"
        if c.version != nil { out += ".TP\n\\fB\\-\\-version\\fR\nShow the version.\n" }
        for s in c.sections {
            out += ".SH \(escape(s.title.uppercased()))\n"
            out += paragraphs(s.paragraphs.joined(separator: "\n\n"))
            for item in s.items { out += ".TP\n.B \(escape(item.term))\n\(escape(item.text))\n" }
        }
        return out
    }

    static func command(_ path: CommandPath) -> String {
        let c = path.leaf.configuration
        var out = ".SS \"\(escape(path.names.dropFirst().joined(separator: " ")))\"\n"
        if c.subcommands.isEmpty || c.defaultSubcommand != nil { out += synopsis(path) + "\n.PP\n" }
        out += escape(HelpGenerator.sentence(c.abstract)) + "\n"
        if !c.discussion.isEmpty { out += paragraphs(c.discussion) }
        if !c.subcommands.isEmpty {
            let names = path.children.map { "\\fB\(escape($0.leaf.configuration.name))\\fR" }
            out += ".PP\nSubcommands: " + names.joined(separator: ", ") + (c.defaultSubcommand.map { " (default: \\fB\(escape($0.configuration.name))\\fR)" } ?? "") + ".\n"
            return out
        }
        let defs = path.definitions.filter { !$0.isHidden }
        out += options(defs.filter { $0.kind == .positional })
        out += options(defs.filter { $0.kind != .positional })
        return out
    }

    /// `vault put [--replace] <local> [<dest>]` with bold names and italic values.
    static func synopsis(_ path: CommandPath) -> String {
        var parts = ["\\fB\(escape(path.displayName))\\fR"]
        let defs = path.leaf.configuration.subcommands.isEmpty ? path.definitions.filter { !$0.isHidden }
            : (path.leaf.configuration.defaultSubcommand.map { path.appending($0).definitions.filter { !$0.isHidden } } ?? [])
        for d in defs where d.kind != .positional {
            let name = d.kind == .flag && d.shortName != nil ? "\\-" + String(d.shortName!) : "\\-\\-" + escape(d.longName ?? "")
            // `\ ` is a space roff never breaks a line at: an option stays with its value.
            var s = "\\fB\(name)\\fR" + (d.kind == .option ? "\\ \\fI\(escape(d.valueName))\\fR" : "")
            if d.isRepeating { s += "\\ ..." }
            parts.append(d.isRequired ? s : "[\(s)]")
        }
        for d in defs where d.kind == .positional {
            let s = "\\fI\(escape(d.valueName))\\fR" + (d.isRepeating ? " ..." : "")
            parts.append(d.isRequired ? s : "[\(s)]")
        }
        return parts.joined(separator: " ")
    }

    static func options(_ defs: [ArgumentDefinition]) -> String {
        var out = ""
        for d in defs {
            var names: [String] = []
            if d.kind == .positional { names.append("\\fI\(escape(d.valueName))\\fR" + (d.isRepeating ? " ..." : "")) }
            if let s = d.shortName { names.append("\\fB\\-\(escape(String(s)))\\fR") }
            if let l = d.longName { names.append("\\fB\\-\\-\(escape(l))\\fR") }
            let value = d.kind == .option ? " \\fI\(escape(d.valueName))\\fR" : ""
            out += ".TP\n" + names.joined(separator: ", ") + value + "\n" + escape(HelpGenerator.helpText(d)) + "\n"
        }
        return out
    }

    static func paragraphs(_ text: String) -> String {
        text.components(separatedBy: "\n\n").filter { !$0.isEmpty }.enumerated().map { i, p in
            (i == 0 ? "" : ".PP\n") + escape(p.replacingOccurrences(of: "\n", with: " ")) + "\n"
        }.joined()
    }

    /// Text safe in roff: backslashes and dashes escaped, characters beyond ASCII as `\[uXXXX]`
    /// (groff reads its input as Latin-1 unless preconv runs), no line starting with a control character.
    static func escape(_ s: String) -> String {
        var out = ""
        for u in s.unicodeScalars {
            switch u {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case _ where u.value > 0x7e:
                let hex = String(u.value, radix: 16, uppercase: true)
                out += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            default: out.unicodeScalars.append(u)
            }
        }
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out
    }
}
