import Foundation
import VaultBrowseModel
import VaultCore
import VaultSync

/// Everything the browser shows of one folder, read in one opening of the vault.
struct FolderSnapshot {
    /// Where the browser is.
    struct Place: Equatable {
        var id: String
        var path: String
        var parentId: String?
    }

    var place: Place
    var entries: [BrowseEntry]
    var storage: StorageReport
    var transfers: [TransferSummary]

    /// Reads folder `folderId`; nil when it no longer exists (removed from another terminal).
    static func load(_ vault: Vault, folderId: String) throws -> FolderSnapshot? {
        guard let folder = try vault.node(id: folderId), folder.isFolder else { return nil }
        let totals = try vault.folderTotals(in: folder.id)
        let marks = try vault.outboxMarks(in: folder.id)
        let live = try TransferInfo.unfinished(in: vault, besideSync: vault.isBesideSync)
        var byNode: [String: LiveTransfer] = [:]
        for t in live where byNode[t.nodeId] == nil { byNode[t.nodeId] = t }   // newest first
        let entries = try vault.children(of: folder.id).map { n in
            BrowseEntry(node: n, totals: totals[n.id], outbox: marks[n.id], transfer: byNode[n.id].map {
                (upload: $0.direction == "upload", running: $0.state == .running, done: $0.bytesDone, total: $0.bytesTotal)
            })
        }
        let summaries = live.map {
            TransferSummary(upload: $0.direction == "upload", running: $0.state == .running,
                            failed: $0.state == .failed || $0.state == .conflict, bytesDone: $0.bytesDone, bytesTotal: $0.bytesTotal)
        }
        return FolderSnapshot(place: Place(id: folder.id, path: try vault.path(of: folder), parentId: folder.parentId),
                              entries: entries, storage: try vault.storageReport(), transfers: summaries)
    }
}
