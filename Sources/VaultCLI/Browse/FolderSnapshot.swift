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

    /// What takes whole-table reads to compute (the sums below each folder, the outbox, the
    /// storage report): kept between refreshes and read again only now and then (see
    /// `Browser.summaryInterval`) while the vault keeps changing.
    struct Summary {
        var folderId: String
        var totals: [String: FolderTotals]
        var marks: [String: OutboxMark]
        /// The paths `vault conflicts` lists (open until cleared), and how many it lists.
        var conflictPaths: Set<String>
        var conflictCount: Int
        var storage: StorageReport
        var readAt: Date
    }

    var place: Place
    var entries: [BrowseEntry]
    var transfers: [TransferSummary]
    var summary: Summary

    /// Reads folder `folderId`, reusing `summary` when it is of this folder; nil when the folder
    /// no longer exists (removed from another terminal).
    static func load(_ vault: Vault, folderId: String, reusing old: Summary? = nil) throws -> FolderSnapshot? {
        guard let folder = try vault.node(id: folderId), folder.isFolder else { return nil }
        let summary = try old.flatMap { $0.folderId == folder.id ? $0 : nil } ?? {
            let notes = try vault.conflicts()
            return Summary(folderId: folder.id, totals: try vault.folderTotals(in: folder.id), marks: try vault.outboxMarks(in: folder.id),
                           conflictPaths: Set(notes.map(\.path)), conflictCount: notes.count, storage: try vault.storageReport(), readAt: Date())
        }()
        let live = try TransferInfo.unfinished(in: vault, besideSync: vault.isBesideSync)
        var byNode: [String: LiveTransfer] = [:]
        for t in live where byNode[t.nodeId] == nil { byNode[t.nodeId] = t }   // newest first
        let folderPath = try vault.path(of: folder)
        let entries = try vault.children(of: folder.id).map { n in
            let path = NodeResult.join(folderPath, n.name)
            let conflicted = summary.conflictPaths.contains { $0 == path || (n.isFolder && $0.hasPrefix(path + "/")) }
            return BrowseEntry(node: n, totals: summary.totals[n.id], outbox: summary.marks[n.id], transfer: byNode[n.id].map {
                (upload: $0.direction == .upload, running: $0.state == .running, done: $0.bytesDone, total: $0.bytesTotal)
            }, conflicted: conflicted)
        }
        let summaries = live.map {
            TransferSummary(upload: $0.direction == .upload, running: $0.state == .running,
                            failed: $0.state == .failed || $0.state == .conflict, bytesDone: $0.bytesDone, bytesTotal: $0.bytesTotal)
        }
        return FolderSnapshot(place: Place(id: folder.id, path: folderPath, parentId: folder.parentId),
                              entries: entries, transfers: summaries, summary: summary)
    }
}
