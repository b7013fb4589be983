import Foundation

/// What a folder holds, summed over everything below it.
public struct FolderTotals: Sendable, Equatable {
    /// The plaintext bytes of every file below it.
    public var bytes: UInt64
    /// The files below it.
    public var files: Int
    /// Files and folders below it with a local change not yet on the server.
    public var awaitingUpload: Int

    public init(bytes: UInt64, files: Int, awaitingUpload: Int) {
        self.bytes = bytes; self.files = files; self.awaitingUpload = awaitingUpload
    }
}

/// Where a node's local changes stand on their way to the server (its outbox entries).
public enum OutboxMark: String, Sendable, Comparable {
    /// Waiting for the next `vault sync`.
    case pending
    /// Held by `vault transfers pause` or `cancel` until `vault transfers resume`.
    case paused
    /// The server has a newer version; nothing was overwritten.
    case conflict

    private var rank: Int { self == .pending ? 0 : self == .paused ? 1 : 2 }
    public static func < (a: OutboxMark, b: OutboxMark) -> Bool { a.rank < b.rank }
}

/// Listing helpers for live views (`vault browse`): one query each, for one folder's children.
extension Vault {
    /// The totals below each child folder of `folderId`, by the child's id (folders holding
    /// nothing are absent).
    public func folderTotals(in folderId: String) throws -> [String: FolderTotals] {
        var out: [String: FolderTotals] = [:]
        for t in try nodesTable.folderTotals(in: folderId) {
            out[t.id] = FolderTotals(bytes: UInt64(max(0, t.bytes)), files: t.files, awaitingUpload: t.awaiting)
        }
        return out
    }

    /// The outbox state of each child of `folderId` that has unsent changes, by the child's id
    /// (the most pressing one when it has several: conflict, then paused, then pending).
    public func outboxMarks(in folderId: String) throws -> [String: OutboxMark] {
        var out: [String: OutboxMark] = [:]
        for (id, state) in try outboxTable.statesOfChildren(of: folderId) {
            let mark: OutboxMark
            switch state {
            case .conflict: mark = .conflict
            case .paused, .cancelled: mark = .paused
            case .pending, .failed: mark = .pending
            }
            out[id] = max(out[id] ?? mark, mark)
        }
        return out
    }
}
