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
        let rows = try db.query("""
            WITH RECURSIVE sub(top, id) AS (
              SELECT id, id FROM nodes WHERE parent_id = ? AND type = 'folder'
              UNION ALL SELECT sub.top, n.id FROM nodes n JOIN sub ON n.parent_id = sub.id)
            SELECT sub.top AS top,
                   COALESCE(SUM(CASE WHEN n.type = 'file' THEN n.size ELSE 0 END), 0) AS bytes,
                   COALESCE(SUM(n.type = 'file'), 0) AS files,
                   COALESCE(SUM(n.pending_op IS NOT NULL AND n.id != sub.top), 0) AS awaiting
            FROM sub JOIN nodes n ON n.id = sub.id GROUP BY sub.top
            """, [folderId])
        var out: [String: FolderTotals] = [:]
        for r in rows {
            out[try r.decode(String.self, "top")] = FolderTotals(bytes: UInt64(max(0, try r.decode(Int64.self, "bytes"))),
                                                                  files: try r.decode(Int.self, "files"),
                                                                  awaitingUpload: try r.decode(Int.self, "awaiting"))
        }
        return out
    }

    /// The outbox state of each child of `folderId` that has unsent changes, by the child's id
    /// (the most pressing one when it has several: conflict, then paused, then pending).
    public func outboxMarks(in folderId: String) throws -> [String: OutboxMark] {
        let rows = try db.query("""
            SELECT o.node_id, o.state FROM outbox o JOIN nodes n ON n.id = o.node_id WHERE n.parent_id = ?
            """, [folderId])
        var out: [String: OutboxMark] = [:]
        for r in rows {
            let id = try r.decode(String.self, "node_id")
            let mark: OutboxMark
            switch try r.decode(String.self, "state") {
            case "conflict": mark = .conflict
            case "paused", "cancelled": mark = .paused
            default: mark = .pending
            }
            out[id] = max(out[id] ?? mark, mark)
        }
        return out
    }
}
