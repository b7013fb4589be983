import Foundation
import VaultCore
import VaultSync

/// `vault revisions PATH`: every version of a file (the server's, decoded from their content
/// records; cached so it lists offline what it last saw).
extension VaultCommandLine {
    static let revisionsCommand = Command(
        name: "revisions", usage: "vault revisions PATH [--json]",
        summary: "list a file's versions (id, time, size, SHA-256, which device); offline, what was last seen", run: runRevisions)

    static func runRevisions(_ ctx: CommandContext, _ a: Arguments) throws {
        let path = try a.positional(0, "PATH"); try a.expectPositionals(max: 1)
        let vault = try ctx.openVault(lock: .sync, access: .read)
        let node = try vault.resolve(path)
        var list: [RevisionInfo]
        var offline = false
        if node.remoteId != nil, !vault.isReadOnly, try SyncAccount.load(from: vault) != nil {
            (list, offline) = try ctx.syncClient(vault).revisions(of: node)
        } else {
            list = try vault.revisions(nodeId: node.id)
            offline = node.remoteId != nil
        }
        if ctx.out.json {
            struct Out: Encodable { var path: String; var offline: Bool; var revisions: [RevisionInfo] }
            try ctx.out.emit(Out(path: try vault.path(of: node), offline: offline, revisions: list))
            return
        }
        if offline { ctx.out.note("the server cannot be reached: these are the revisions last seen") }
        if list.isEmpty { ctx.out.line("No revisions known for \(try vault.path(of: node)) (`vault sync` first?)."); return }
        let me = try SyncAccount.load(from: vault)?.deviceId
        for r in list {
            let when = dateFormatter.string(from: Date(timeIntervalSince1970: TimeInterval(r.time)))
            let who = r.device == me ? "this device" : r.device == "local" ? "here, not uploaded" : "device " + String(r.device.prefix(8))
            ctx.out.line("\(r.id)  \(when)  \(ByteCount.format(UInt64(max(0, r.size))).padding(toLength: 9, withPad: " ", startingAt: 0))  \(r.sha256.prefix(16))…  \(who)"
                         + (r.isHead ? "  (current)" : "") + (r.local ? "  [here]" : ""))
        }
    }
}
