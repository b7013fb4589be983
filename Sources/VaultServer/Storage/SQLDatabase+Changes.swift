import Foundation
import VaultAPI
import VaultSQL

/// The change feed rows: one per create, update, move, delete and restore.
extension SQLDatabase {
    /// Appends a change with the file as it is now; returns its cursor. Keeps only the newest
    /// `keep` changes of the owner and remembers how far history was pruned.
    @discardableResult
    func recordChange(owner: String, file: FileResource, kind: ChangeKind, deviceId: String?, keep: Int) throws -> Int64 {
        let json = (try? APIJSON.encoder().encode(file)).map { String(decoding: $0, as: UTF8.self) }
        try run("INSERT INTO changes(owner, file_id, kind, device_id, file_json, created_at) VALUES(?,?,?,?,?,?)",
                [owner, file.id, kind.rawValue, deviceId, json, Date().timeIntervalSince1970])
        let seq = lastInsertRowID
        let count = try scalar(Int.self, "SELECT count(*) FROM changes WHERE owner = ?", [owner]) ?? 0
        if count > keep {
            let cutoff = try scalar(Int64.self, "SELECT seq FROM changes WHERE owner = ? ORDER BY seq DESC LIMIT 1 OFFSET ?",
                                    [owner, keep]) ?? 0
            try run("DELETE FROM changes WHERE owner = ? AND seq <= ?", [owner, cutoff])
            try run("UPDATE users SET changes_pruned_through = max(changes_pruned_through, ?) WHERE id = ?", [cutoff, owner])
        }
        return seq
    }

    /// The newest cursor (global, so it only grows).
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
