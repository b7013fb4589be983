import Foundation
import VaultCore

extension VaultCommandLine {
    static let treeCommands: [Command] = [
        Command(name: "ls", usage: "vault ls [PATH] [--long|-l] [--json]", summary: "list a folder (works offline)",
                flags: ["long"], aliases: ["l": "long"], run: runLs),
        Command(name: "tree", usage: "vault tree [PATH] [--json]", summary: "show the folder tree with content states", run: runTree),
        Command(name: "mkdir", usage: "vault mkdir PATH [-p]", summary: "create a folder", flags: ["parents"],
                aliases: ["p": "parents"], run: runMkdir),
        Command(name: "put", usage: "vault put LOCAL [DEST] [--replace] | vault put -r LOCAL_DIR [DEST_FOLDER]",
                summary: "import a file (or with -r a folder tree), sealed, to upload later",
                flags: ["replace", "recursive"], aliases: ["r": "recursive"], run: runPut),
        Command(name: "mv", usage: "vault mv SRC DEST", summary: "rename or move a file or folder", run: runMv),
        Command(name: "rm", usage: "vault rm PATH [-r]", summary: "remove a file, or a folder with -r", flags: ["recursive"],
                aliases: ["r": "recursive"], run: runRm),
    ]

    struct NodeJSON: Encodable {
        var path: String
        var name: String
        var type: String
        var size: UInt64
        var modifiedAt: Int64
        var contentState: String
        var pinned: Bool
        var pendingOp: String?
        var version: Int64
        var mimeType: String?
        var sha256: String?
        var children: [NodeJSON]?

        init(_ n: Node, path: String) {
            self.path = path; name = n.name; type = n.type.rawValue; size = n.size; modifiedAt = n.modifiedAt
            contentState = n.contentState.rawValue; pinned = n.pinned; pendingOp = n.pendingOp; version = n.version
            mimeType = n.mimeType; sha256 = n.sha256
        }
    }

    static func join(_ parent: String, _ name: String) -> String { parent == "/" ? "/" + name : parent + "/" + name }

    /// A short state column: L local, - not downloaded, ↓ downloading, S stale; P pinned; ↑ pending upload.
    static func stateMarks(_ n: Node) -> String {
        if n.isFolder { return n.pinned ? " P " : "   " }
        let s: String
        switch n.contentState {
        case .local: s = "L"
        case .notDownloaded: s = "-"
        case .downloading: s = "v"
        case .stale: s = "S"
        }
        return s + (n.pinned ? "P" : " ") + (n.pendingOp != nil ? "^" : " ")
    }

    /// Said after a file whose local copy is an older version than the server's (STALE).
    static func olderNote(_ n: Node) -> String { n.contentState == .stale ? "  (older version here; the server has a newer one)" : "" }

    static func runLs(_ ctx: CommandContext, _ a: Arguments) throws {
        try a.expectPositionals(max: 1)
        let path = a.positionals.first ?? "/"
        let vault = try ctx.openVault(lock: .control, access: .read)   // also beside a running sync, or read-only
        let n = try vault.resolve(path)
        let shownPath = try vault.path(of: n)
        let items = n.isFolder ? try vault.children(of: n.id) : [n]
        let parentPath = n.isFolder ? shownPath : (shownPath as NSString).deletingLastPathComponent
        if ctx.out.json {
            try ctx.out.emit(items.map { NodeJSON($0, path: join(parentPath, $0.name)) })
            return
        }
        var text = ""
        for c in items {
            let name = DisplayText.escaped(c.name) + (c.isFolder ? "/" : "")
            if a.flag("long") {
                let date = Self.dateFormatter.string(from: Date(timeIntervalSince1970: TimeInterval(c.modifiedAt)))
                let size = c.isFolder ? "-" : ByteCount.format(c.size)
                text += "\(stateMarks(c)) \(size.padding(toLength: 10, withPad: " ", startingAt: 0)) \(date)  \(name)\(olderNote(c))\n"
            } else {
                text += name + "\n"
            }
        }
        ctx.out.raw(text)
    }

    static let dateFormatter: DateFormatter = {
        let f = DateFormatter()
        f.dateFormat = "yyyy-MM-dd HH:mm"
        f.locale = Locale(identifier: "en_US_POSIX")
        return f
    }()

    static func runTree(_ ctx: CommandContext, _ a: Arguments) throws {
        try a.expectPositionals(max: 1)
        let vault = try ctx.openVault(lock: .control, access: .read)   // also beside a running sync, or read-only
        let root = try vault.resolve(a.positionals.first ?? "/")
        let rootPath = try vault.path(of: root)
        func build(_ n: Node, _ p: String) throws -> NodeJSON {
            var j = NodeJSON(n, path: p)
            if n.isFolder { j.children = try vault.children(of: n.id).map { try build($0, join(p, $0.name)) } }
            return j
        }
        if ctx.out.json { try ctx.out.emit(try build(root, rootPath)); return }
        var text = DisplayText.escaped(rootPath) + "\n"
        func walk(_ n: Node, _ prefix: String) throws {
            let kids = try vault.children(of: n.id)
            for (i, c) in kids.enumerated() {
                let last = i == kids.count - 1
                let name = DisplayText.escaped(c.name)
                let label = c.isFolder ? name + "/" : "\(name)  \(ctx.out.dim("[\(stateMarks(c).trimmingCharacters(in: .whitespaces)) \(ByteCount.format(c.size))]"))\(olderNote(c))"
                text += prefix + (last ? "└── " : "├── ") + label + "\n"
                if c.isFolder { try walk(c, prefix + (last ? "    " : "│   ")) }
            }
        }
        try walk(root, "")
        ctx.out.raw(text)
    }

    static func runMkdir(_ ctx: CommandContext, _ a: Arguments) throws {
        let path = try a.positional(0, "PATH"); try a.expectPositionals(max: 1)
        let vault = try ctx.openVault()
        let n = try vault.mkdir(path, parents: a.flag("parents"))
        let p = try vault.path(of: n)
        ctx.queuedChanges(vault)
        if ctx.out.json { try ctx.out.emit(NodeJSON(n, path: p)) } else { ctx.out.line("Created \(p)/") }
    }

    /// The source is opened (a file) or scanned (a folder) before the vault is, so a source that
    /// cannot be read never holds the vault lock.
    static func runPut(_ ctx: CommandContext, _ a: Arguments) throws {
        let local = try a.positional(0, "LOCAL file"); try a.expectPositionals(max: 2)
        let dest = a.positionals.count > 1 ? a.positionals[1] : nil
        if a.flag("recursive") {
            let tree = try LocalTree.scan(local)
            let vault = try ctx.openVault()
            let r = try vault.importFolder(tree, to: dest ?? "/")
            let background = ctx.queuedChanges(vault)
            if ctx.out.json { try ctx.out.emit(r) } else {
                ctx.out.line("Imported \(r.files) file(s) in \(r.folders) folder(s), \(ByteCount.format(r.bytes)), sealed; "
                             + (background ? "the agent uploads them in the background" : "awaiting upload"))
                for s in r.skipped { s.failure == nil ? ctx.out.note("skipped \(s.path): \(s.reason)") : ctx.out.warn("not imported: \(s.path): \(s.reason)") }
            }
            if let first = r.firstFailure {
                let n = r.skipped.filter { $0.failure != nil }.count
                let e = VaultError(VaultError.Kind(rawValue: first.failure ?? "") ?? .io,
                                   "\(n) entr\(n == 1 ? "y" : "ies") could not be imported (listed above); everything else was",
                                   hint: "fix or rename them, then import them on their own")
                throw ctx.out.json ? ReportedFailure(exitCode: e.exitCode) : e
            }
            return
        }
        let source = try SourceFile(local, accepting: .regular, folderHint: "use `vault put -r` to import a folder")
        let vault = try ctx.openVault()
        let n = try vault.put(source, to: dest, replace: a.flag("replace"))
        let p = try vault.path(of: n)
        let background = ctx.queuedChanges(vault)
        if ctx.out.json { try ctx.out.emit(NodeJSON(n, path: p)) } else {
            ctx.out.line("Stored \(p) (\(ByteCount.format(n.size)), sealed; \(background ? "the agent uploads it in the background" : "awaiting upload"))")
        }
    }

    static func runMv(_ ctx: CommandContext, _ a: Arguments) throws {
        let src = try a.positional(0, "SRC"), dst = try a.positional(1, "DEST"); try a.expectPositionals(max: 2)
        let vault = try ctx.openVault()
        let n = try vault.move(src, to: dst)
        let p = try vault.path(of: n)
        ctx.queuedChanges(vault)
        if ctx.out.json { try ctx.out.emit(NodeJSON(n, path: p)) } else { ctx.out.line("Moved to \(p)") }
    }

    static func runRm(_ ctx: CommandContext, _ a: Arguments) throws {
        let path = try a.positional(0, "PATH"); try a.expectPositionals(max: 1)
        let vault = try ctx.openVault()
        let removed = try vault.remove(path, recursive: a.flag("recursive"))
        ctx.queuedChanges(vault)
        if ctx.out.json { try ctx.out.emit(["removed": removed.count]) } else {
            ctx.out.line("Removed \(path)\(removed.count > 1 ? " and \(removed.count - 1) item(s) in it" : "")")
        }
    }
}
