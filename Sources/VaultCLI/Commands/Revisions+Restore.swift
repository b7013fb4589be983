import Foundation
import VaultArguments
import VaultCore
import VaultSync

/// `vault revisions PATH`: every version of a file (the server's, decoded from their content
/// records; cached so it lists offline what it last saw).
struct RevisionsCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "revisions", abstract: "list a file's versions (id, time, size, SHA-256, which device); offline, what was last seen",
                             discussion: "`vault cat --revision ID`, `vault get --revision ID` read a version; `vault restore PATH --revision ID` makes it the current one.")
    }

    @Argument(help: "the vault file", valueName: "path")
    var path: String
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    struct Result: Encodable {
        var path: String
        /// True when the server could not be reached (or the vault is read-only): the versions last seen.
        var offline: Bool
        /// Newest first.
        var revisions: [RevisionInfo]
    }

    func run(_ ctx: CommandContext) throws {
        let vault = try ctx.openVault(lock: .sync, access: .read)
        let node = try vault.resolve(path)
        let (list, offline) = try RevisionAccess.list(vault, node, client: { try ctx.syncClient(vault) })
        let shown = try vault.path(of: node)
        if ctx.out.json { try ctx.out.emit(Result(path: shown, offline: offline, revisions: list)); return }
        if offline { ctx.out.note("the server cannot be reached: these are the revisions last seen") }
        if list.isEmpty { ctx.out.line("No revisions known for \(DisplayText.escaped(shown)) (`vault sync` first?)."); return }
        let me = try SyncAccount.load(from: vault)?.deviceId
        for r in list {
            let when = LsCommand.dateFormatter.string(from: Date(timeIntervalSince1970: TimeInterval(r.time)))
            let who = r.deviceLabel(thisDevice: me)
            ctx.out.line("\(r.id)  \(when)  \(ByteCount.format(UInt64(max(0, r.size))).padding(toLength: 9, withPad: " ", startingAt: 0))  \(r.sha256.prefix(16))…  \(who)"
                         + (r.isHead ? "  (current)" : "") + (r.local ? "  [here]" : ""))
        }
    }
}

/// `vault restore PATH --revision ID`: the server makes an old version the new head (nothing is
/// overwritten: the current one stays a revision); the local node follows.
struct RestoreCommand: VaultCommand, ProducesJSON, ReadsPassword {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "restore", abstract: "make an older version of a file the current one again (on the server; every version stays a revision)")
    }

    @Option(help: "the version to restore (an id from `vault revisions PATH`)", valueName: "id")
    var revision: String
    @Argument(help: "the vault file", valueName: "path")
    var path: String
    @OptionGroup var password: PasswordOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if revision.isEmpty { throw ValidationError("--revision cannot be empty: `vault revisions \(path)` lists them") }
    }

    struct Result: Encodable {
        var ok = true
        var message: String
        var path: String
        var revision: String
        /// The restored content's plaintext bytes.
        var size: UInt64
    }

    func run(_ ctx: CommandContext) throws {
        let vault = try ctx.openVault(lock: .sync)
        let node = try vault.resolve(path)
        let client = try ctx.syncClient(vault, say: { if !ctx.out.json { ctx.out.note($0) } })
        let r = try RevisionAccess.restore(vault, node, revision, policy: ctx.policy, client: client)
        if ctx.out.json { try ctx.out.emit(Result(message: r.message, path: r.path, revision: revision, size: r.node.size)) } else { ctx.out.line(r.message) }
    }
}
