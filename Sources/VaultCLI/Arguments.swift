import VaultCore

/// Parsed command-line arguments for one command: options that take a value, flags, and
/// positionals. Unknown options are a usage error, never silently ignored.
struct Arguments {
    var positionals: [String] = []
    var values: [String: String] = [:]
    var flags: Set<String> = []

    /// Parses `args` given the option names (without dashes) that take a value and those that don't.
    /// Short aliases map to long names (e.g. "r": "recursive").
    init(_ args: [String], valued: Set<String>, flags known: Set<String>, aliases: [String: String] = [:]) throws {
        var i = 0
        var onlyPositionals = false
        while i < args.count {
            let a = args[i]; i += 1
            if onlyPositionals || a == "-" || !a.hasPrefix("-") { positionals.append(a); continue }
            if a == "--" { onlyPositionals = true; continue }
            var name: String
            var inline: String?
            if a.hasPrefix("--") {
                name = String(a.dropFirst(2))
                if let eq = name.firstIndex(of: "=") { inline = String(name[name.index(after: eq)...]); name = String(name[..<eq]) }
            } else {
                let shorts = Array(a.dropFirst())
                // Bundled short flags: -rf
                if shorts.count > 1, shorts.allSatisfy({ aliases[String($0)].map(known.contains) ?? false }) {
                    for s in shorts { flags.insert(aliases[String(s)]!) }
                    continue
                }
                name = aliases[String(shorts)] ?? String(shorts)
            }
            if valued.contains(name) {
                if let inline { values[name] = inline; continue }
                guard i < args.count else { throw VaultError(.usage, "--\(name) needs a value") }
                values[name] = args[i]; i += 1
            } else if known.contains(name) {
                if inline != nil { throw VaultError(.usage, "--\(name) takes no value") }
                flags.insert(name)
            } else {
                throw VaultError(.usage, "unknown option '\(a)'", hint: "see `vault help`")
            }
        }
    }

    func flag(_ n: String) -> Bool { flags.contains(n) }

    func positional(_ i: Int, _ what: String) throws -> String {
        guard i < positionals.count else { throw VaultError(.usage, "missing \(what)", hint: "see `vault help`") }
        return positionals[i]
    }

    func expectPositionals(max n: Int) throws {
        if positionals.count > n {
            throw VaultError(.usage, "unexpected argument '\(positionals[n])'", hint: "see `vault help`")
        }
    }
}
