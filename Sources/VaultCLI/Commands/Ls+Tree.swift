import Foundation
import VaultArguments
import VaultCore

/// `vault ls`: list a folder.
struct LsCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "ls", abstract: "list a folder (works offline)",
                             discussion: "Names are shown with control characters escaped; --json keeps them exact. The long listing's state column: L local, - not downloaded, v downloading, S stale; P pinned; ^ awaiting upload. A folder is read and printed a page at a time, in the order of the folder's (parent, name) index: folders first, then files, each by name.")
    }

    @Flag(short: "l", help: "long listing: state, size, modification time")
    var long = false
    @Argument(help: "the vault folder (or file) to list", valueName: "path")
    var path = "/"
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    static let dateFormatter: DateFormatter = {
        let f = DateFormatter()
        f.dateFormat = "yyyy-MM-dd HH:mm"
        f.locale = Locale(identifier: "en_US_POSIX")
        return f
    }()

    func run(_ ctx: CommandContext) throws {
        let vault = try ctx.openVault(lock: .control, access: .read)   // also beside a running sync, or read-only
        let n = try vault.resolve(path)
        let shownPath = try vault.path(of: n)
        let parentPath = n.isFolder ? shownPath : (shownPath as NSString).deletingLastPathComponent
        // A folder is read a page at a time through the (parent, name) index; each page is
        // printed before the next is read, so a large folder is never held whole.
        func forEachPage(_ body: ([Node]) throws -> Void) throws {
            if n.isFolder { try vault.forEachChildPage(of: n.id) { try body($0); return true } } else { try body([n]) }
        }
        if ctx.out.json {
            var items: [NodeResult] = []
            try forEachPage { items += $0.map { NodeResult($0, path: NodeResult.join(parentPath, $0.name)) } }
            try ctx.out.emit(items)
            return
        }
        try forEachPage { page in
            var text = ""
            for c in page {
                let name = DisplayText.escaped(c.name) + (c.isFolder ? "/" : "")
                if long {
                    let date = Self.dateFormatter.string(from: Date(timeIntervalSince1970: TimeInterval(c.modifiedAt)))
                    let size = c.isFolder ? "-" : ByteCount.format(c.size)
                    text += "\(NodeResult.stateMarks(c)) \(size.padding(toLength: 10, withPad: " ", startingAt: 0)) \(date)  \(name)\(NodeResult.olderNote(c))\n"
                } else {
                    text += name + "\n"
                }
            }
            ctx.out.raw(text)
        }
    }
}

/// `vault tree`: the folder tree with content states.
struct TreeCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "tree", abstract: "show the folder tree with content states",
                             discussion: "Streams: each folder is read a page at a time and printed as it is read (--json builds the whole tree first).")
    }

    @Argument(help: "the vault folder to start at", valueName: "path")
    var path = "/"
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    func run(_ ctx: CommandContext) throws {
        let vault = try ctx.openVault(lock: .control, access: .read)   // also beside a running sync, or read-only
        let root = try vault.resolve(path)
        let rootPath = try vault.path(of: root)
        func build(_ n: Node, _ p: String) throws -> NodeResult {
            var j = NodeResult(n, path: p)
            if n.isFolder { j.children = try vault.children(of: n.id).map { try build($0, NodeResult.join(p, $0.name)) } }
            return j
        }
        if ctx.out.json { try ctx.out.emit(try build(root, rootPath)); return }
        // Streams: each folder is read a page at a time and its lines are printed as they come
        // (one entry is held back to know whether it is the folder's last).
        ctx.out.raw(DisplayText.escaped(rootPath) + "\n")
        func walk(_ n: Node, _ prefix: String) throws {
            func show(_ c: Node, last: Bool) throws {
                let name = DisplayText.escaped(c.name)
                let label = c.isFolder ? name + "/" : "\(name)  \(ctx.out.dim("[\(NodeResult.stateMarks(c).trimmingCharacters(in: .whitespaces)) \(ByteCount.format(c.size))]"))\(NodeResult.olderNote(c))"
                ctx.out.raw(prefix + (last ? "└── " : "├── ") + label + "\n")
                if c.isFolder { try walk(c, prefix + (last ? "    " : "│   ")) }
            }
            var held: Node?
            try vault.forEachChildPage(of: n.id) { page in
                for c in page {
                    if let h = held { try show(h, last: false) }
                    held = c
                }
                return true
            }
            if let h = held { try show(h, last: true) }
        }
        try walk(root, "")
    }
}
