import Foundation
/// `--help` text and usage lines, made from the declarations (the shape is swift-argument-parser's:
/// OVERVIEW, USAGE, ARGUMENTS, OPTIONS, SUBCOMMANDS).
public enum HelpGenerator {
    /// The usage line of `path` (`vault put [--replace] [-r] <local> [<dest>]`). Optional options
    /// collapse to `[<options>]` when the line would be longer than 80 columns.
    public static func usage(_ path: CommandPath) -> String {
        let head = path.displayName
        if !path.leaf.configuration.subcommands.isEmpty {
            let hasDefault = path.leaf.configuration.defaultSubcommand != nil
            let word = path.types.count == 1 ? "<command>" : "<subcommand>"
            return head + (hasDefault ? " [\(word)]" : " \(word)")
        }
        let defs = path.definitions.filter { !$0.isHidden }
        let required = defs.filter { $0.kind != .positional && $0.isRequired }.map(optionUsage)
        let optional = defs.filter { $0.kind != .positional && !$0.isRequired }.map { "[\(optionUsage($0))]" }
        let words = defs.filter { $0.kind == .positional }.map { d -> String in
            let w = "<\(d.valueName)>" + (d.isRepeating ? " ..." : "")
            return d.isRequired ? w : "[\(w)]"
        }
        let full = ([head] + required + optional + words).joined(separator: " ")
        if full.count <= TextWrap.width - 7 || optional.isEmpty { return full }
        return ([head] + required + ["[<options>]"] + words).joined(separator: " ")
    }

    static func optionUsage(_ d: ArgumentDefinition) -> String {
        let name = d.longName.map { "--" + $0 } ?? "-" + String(d.shortName!)
        let shown = d.shortName.map { "-" + String($0) } ?? name
        let n = d.kind == .flag && d.shortName != nil ? shown : name
        let v = d.kind == .option ? "\(n) <\(d.valueName)>" : n
        return d.isRepeating ? v + " ..." : v
    }

    /// The full help of `path`.
    public static func help(_ path: CommandPath) -> String {
        let c = path.leaf.configuration
        var out = TextWrap.wrap("OVERVIEW: " + sentence(c.abstract), indent: 2, firstIndent: 0) + "\n\n"
        if !c.discussion.isEmpty { out += TextWrap.wrap(c.discussion, indent: 2, firstIndent: 2) + "\n\n" }
        out += TextWrap.wrap("USAGE: " + usage(path), indent: 9, firstIndent: 0) + "\n\n"
        let defs = path.definitions.filter { !$0.isHidden }
        let positionals = defs.filter { $0.kind == .positional }
        if !positionals.isEmpty {
            out += "ARGUMENTS:\n" + positionals.map { TextWrap.item($0.helpNames, helpText($0)) }.joined(separator: "\n") + "\n\n"
        }
        let options = defs.filter { $0.kind != .positional }
        out += "OPTIONS:\n"
        for d in options { out += TextWrap.item(d.helpNames, helpText(d)) + "\n" }
        if path.types.count == 1, c.version != nil { out += TextWrap.item("--version", "Show the version.") + "\n" }
        out += TextWrap.item("-h, --help", "Show help information.") + "\n"
        let children = path.children
        if !children.isEmpty {
            out += "\n" + (path.types.count == 1 ? "COMMANDS:" : "SUBCOMMANDS:") + "\n"
            for child in children {
                let cc = child.leaf.configuration
                let isDefault = c.defaultSubcommand.map { $0.configuration.name == cc.name } ?? false
                out += TextWrap.item(cc.name + (isDefault ? " (default)" : ""), sentence(cc.abstract)) + "\n"
            }
            out += "\n  See '\(path.names[0]) help \((path.names.dropFirst() + ["<\(path.types.count == 1 ? "command" : "subcommand")>"]).joined(separator: " "))' for detailed help.\n"
        }
        for section in c.sections {
            out += "\n" + section.title.uppercased() + ":\n"
            for p in section.paragraphs { out += TextWrap.wrap(p, indent: 2, firstIndent: 2) + "\n" }
            for item in section.items { out += TextWrap.item(item.term, item.text) + "\n" }
        }
        return out
    }

    static func helpText(_ d: ArgumentDefinition) -> String {
        var notes: [String] = []
        if case .list(let values) = d.completion, !values.isEmpty { notes.append("values: " + values.joined(separator: ", ")) }
        if let def = d.defaultDescription, !def.isEmpty { notes.append("default: " + def) }
        return sentence(d.help) + (notes.isEmpty ? "" : " (\(notes.joined(separator: "; ")))")
    }

    /// `text` with a capital first letter and a full stop.
    static func sentence(_ text: String) -> String {
        guard let first = text.first else { return text }
        var s = first.uppercased() + text.dropFirst()
        if let last = s.last, !".!?".contains(last) { s += "." }
        return s
    }
}
