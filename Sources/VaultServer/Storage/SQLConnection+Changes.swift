import Foundation
import VaultAPI
import VaultSQL

/// How an engine numbers the change feed's cursors.
enum ChangeNumbering: Sendable {
    /// One sequence for every owner (SQLite's `changes.seq AUTOINCREMENT`): the store's single
    /// writer makes commit order sequence order.
    case global
    /// A counter per owner (`users.change_seq`), bumped inside the writing transaction: the row
    /// lock holds other writers of that owner until commit, so commit order is sequence order on
    /// any number of servers (a global sequence could commit 101 before 100, and a reader at 101
    /// would skip 100 forever).
    case perOwner
}

extension SQLDialect {
    var changeNumbering: ChangeNumbering { self == .sqlite ? .global : .perOwner }
}

/// The PostgreSQL channel a committed change rings (`ChangeDoorbell`), payload `OWNER:CURSOR`.
enum SQLChangeChannel {
    static let name = "vault_changes"
}

/// The change feed rows: one per create, update, move, delete and restore.
extension SQLConnection {
    /// Appends a change with the file as it is now; returns its cursor. Keeps only the newest
    /// `keep` changes of the owner and remembers how far history was pruned.
    @discardableResult
    func recordChange(owner: String, file: FileResource, kind: ChangeKind, deviceId: String?, keep: Int) throws -> Int64 {
        let json = (try? APIJSON.encoder().encode(file)).map { String(decoding: $0, as: UTF8.self) }
        let row: [any SQLBindable] = [owner, file.id, kind.rawValue, deviceId, json, Date().timeIntervalSince1970]
        switch dialect.changeNumbering {
        case .global:
            try run("INSERT INTO changes(owner, file_id, kind, device_id, file_json, created_at) VALUES(?,?,?,?,?,?)", row)
            let seq = try scalar(Int64.self, "SELECT last_insert_rowid()") ?? 0
            let count = try scalar(Int.self, "SELECT count(*) FROM changes WHERE owner = ?", [owner]) ?? 0
            if count > keep {
                let cutoff = try scalar(Int64.self, "SELECT seq FROM changes WHERE owner = ? ORDER BY seq DESC LIMIT 1 OFFSET ?",
                                        [owner, keep]) ?? 0
                try prune(owner: owner, through: cutoff)
            }
            return seq
        case .perOwner:
            guard let next = try queryOne("UPDATE users SET change_seq = change_seq + 1 WHERE id = ? RETURNING change_seq, changes_pruned_through",
                                          [owner]), let seq = next[0].int64 else {
                throw SQLError(kind: .constraint, code: 0, message: MetadataStore.ownerGone)
            }
            try run("INSERT INTO changes(seq, owner, file_id, kind, device_id, file_json, created_at) VALUES(?,?,?,?,?,?,?)",
                    [seq] + row)
            // Delivered at commit to every server's doorbell; never if this rolls back.
            _ = try query("SELECT pg_notify(?, ?)", [SQLChangeChannel.name, "\(owner):\(seq)"])
            // An owner's numbers are consecutive (allocated in the writing transaction), so the
            // `keep` newest are the numbers (seq - keep, seq]: no count of the feed per write,
            // which grew with it (a 100,000-change feed made each write ~10 ms slower).
            let cutoff = seq - Int64(keep)
            if cutoff > (next[1].int64 ?? 0) { try prune(owner: owner, through: cutoff) }
            return seq
        }
    }

    /// Drops `owner`'s changes numbered `cutoff` and below; cursors at or below it expire.
    private func prune(owner: String, through cutoff: Int64) throws {
        try run("DELETE FROM changes WHERE owner = ? AND seq <= ?", [owner, cutoff])
        try run("UPDATE users SET changes_pruned_through = ? WHERE id = ? AND changes_pruned_through < ?", [cutoff, owner, cutoff])
    }

    /// The cursor a new reader of `owner`'s feed starts at, and the floor of a page's
    /// `nextCursor`: the newest cursor overall when cursors are global (as the SQLite store always
    /// answered), the owner's newest when each owner has its own sequence.
    func feedCursor(owner: String) throws -> Int64 {
        switch dialect.changeNumbering {
        case .global: return try latestCursor()
        case .perOwner: return try latestCursor(owner: owner)
        }
    }

    /// The newest cursor of any owner (with global numbering, it only grows).
    func latestCursor() throws -> Int64 {
        try scalar(Int64.self, "SELECT COALESCE(MAX(seq), 0) FROM changes") ?? 0
    }

    func latestCursor(owner: String) throws -> Int64 {
        try scalar(Int64.self, "SELECT COALESCE(MAX(seq), 0) FROM changes WHERE owner = ?", [owner]) ?? 0
    }

    func prunedThrough(owner: String) throws -> Int64 {
        try scalar(Int64.self, "SELECT changes_pruned_through FROM users WHERE id = ?", [owner]) ?? 0
    }

    /// Changes after `cursor`, oldest first, at most `limit`.
    func changes(owner: String, after cursor: Int64, limit: Int) throws -> [Change] {
        try query("SELECT * FROM changes WHERE owner = ? AND seq > ? ORDER BY seq LIMIT ?", [owner, cursor, limit]).map { row in
            let file = try row.decode(String?.self, "file_json").flatMap { try? APIJSON.decoder().decode(FileResource.self, from: Data($0.utf8)) }
            return Change(cursor: try row.decode(Int64.self, "seq"), fileId: try row.decode(String.self, "file_id"),
                          kind: try row.decode(ChangeKind.self, "kind"),
                          file: file, deviceId: try row.decode(String?.self, "device_id"))
        }
    }
}
