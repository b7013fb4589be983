import Foundation
import VaultArguments
import VaultCore

/// `vault put`: import a file, or with -r a folder tree, sealed, to upload later.
struct PutCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "put", abstract: "import a file (or with -r a folder tree), sealed, to upload later",
                             discussion: """
            A file goes to DEST (an existing folder keeps its name; otherwise DEST is its path), or to / when DEST is left out. \
            It must be a regular file; one that changes while it is read is refused.

            With -r, as cp -r does: DIR goes into an existing folder DEST as DEST/DIR (DEST defaults to /), and a DEST that \
            does not exist yet becomes the copy of DIR. As rsync does, DIR/ with a trailing slash (or .) copies what is in DIR \
            into DEST instead. Symbolic links, special files, names that are not UTF-8 and unreadable files are left out and \
            listed; the command fails (and says so) when anything could not be imported.
            """)
    }

    @Flag(help: "replace an existing file of that name (a new version of it)")
    var replace = false
    @Flag(short: "r", help: "import a folder and everything in it")
    var recursive = false
    @Argument(help: "the local file, or with -r the local folder", valueName: "local", completion: .file)
    var local: String
    @Argument(help: "the vault folder to put it in, or its new path", valueName: "dest")
    var dest: String?
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if replace && recursive { throw ValidationError("--replace is for one file; it does not go with -r") }
    }

    /// What `put -r` did: the folder it filled, and the import's counts and left-out entries.
    struct TreeResult: Encodable {
        var ok: Bool
        /// The vault folder the tree went into.
        var path: String
        var files: Int
        var folders: Int
        var bytes: UInt64
        var skipped: [LocalTree.Skipped]
    }

    /// The source is opened (a file) or scanned (a folder) before the vault is, so a source that
    /// cannot be read never holds the vault lock.
    func run(_ ctx: CommandContext) throws {
        if recursive { return try putTree(ctx) }
        let source = try SourceFile(local, accepting: .regular, folderHint: "use `vault put -r` to import a folder")
        let vault = try ctx.openVault()
        let n = try vault.put(source, to: dest, replace: replace)
        try ctx.reportChanged(n, in: vault) { p, background in
            "Stored \(p) (\(ByteCount.format(n.size)), sealed; \(background ? "the agent uploads it in the background" : "awaiting upload"))"
        }
    }

    func putTree(_ ctx: CommandContext) throws {
        let tree = try LocalTree.scan(local)
        let vault = try ctx.openVault()
        let target = try Self.target(local: local, dest: dest, exists: { p in
            do { return try vault.resolve(p).isFolder } catch let e as VaultError where e.kind == .notFound { return nil }
        })
        let r = try vault.importFolder(tree, to: target)
        let background = ctx.queuedChanges(vault)
        if ctx.out.json {
            try ctx.out.emit(TreeResult(ok: r.firstFailure == nil, path: target, files: r.files, folders: r.folders, bytes: r.bytes, skipped: r.skipped))
        } else {
            ctx.out.line("Imported \(r.files) file(s) in \(r.folders) folder(s) into \(target), \(ByteCount.format(r.bytes)), sealed; "
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
    }

    /// The vault folder `put -r LOCAL DEST` fills, as `cp -r` (and rsync for `LOCAL/`) decide it:
    /// `LOCAL/`, `.` or `/`: DEST itself; DEST an existing folder: DEST/NAME (NAME the last
    /// component of LOCAL); DEST missing: DEST itself (created). `exists` says whether a vault
    /// path is a folder (true), a file (false) or missing (nil).
    static func target(local: String, dest: String?, exists: (String) throws -> Bool?) throws -> String {
        var dest = dest ?? "/"
        while dest.count > 1 && dest.hasSuffix("/") { dest.removeLast() }
        var name = local.hasSuffix("/") ? "" : (local as NSString).lastPathComponent
        if name == ".." {   // names no folder of its own: use the real folder's name
            name = (URL(fileURLWithPath: local).standardizedFileURL.resolvingSymlinksInPath().path as NSString).lastPathComponent
        }
        if name.isEmpty || name == "." || name == "/" { return dest }   // the contents, as rsync does with DIR/
        switch try exists(dest) {
        case true?: return NodeResult.join(dest, name)
        case false?: throw VaultError(.conflict, "\(dest) is a file, not a folder", hint: "name a folder to import \(local) into")
        case nil: return dest   // cp -r DIR NEW: NEW becomes the copy of DIR
        }
    }
}
