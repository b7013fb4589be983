import Foundation
import VaultCore
import VaultSync

/// `vault restore PATH --revision R`: the server makes an old version the new head (nothing is
/// overwritten: the current one stays a revision); the local node follows.
extension VaultCommandLine {
    static let restoreCommand = Command(
        name: "restore", usage: "vault restore PATH --revision R [--json]",
        summary: "make an older version of a file the current one again (on the server; every version stays a revision)",
        valued: ["revision"], run: runRestore)

    static func runRestore(_ ctx: CommandContext, _ a: Arguments) throws {
        let path = try a.positional(0, "PATH"); try a.expectPositionals(max: 1)
        guard let revision = a.values["revision"], !revision.isEmpty else {
            throw VaultError(.usage, "vault restore needs --revision R", hint: "`vault revisions \(path)` lists them")
        }
        let vault = try ctx.openVault(lock: .sync)
        let node = try vault.resolve(path)
        let client = try ctx.syncClient(vault, say: { if !ctx.out.json { ctx.out.note($0) } })
        let restored = try client.restore(node, revision: revision, policy: try SyncClient.conflictPolicy(vault: vault, policy: ctx.policy))
        let msg = "Restored revision \(revision) of \(try vault.path(of: restored)) (\(ByteCount.format(restored.size))); the previous version stays a revision."
        if ctx.out.json { try ctx.out.emit(OKResult(message: msg)) } else { ctx.out.line(msg) }
    }
}
