import Foundation
import VaultAPI
import VaultSQL

/// Revision rows, scoped by owner.
extension SQLDatabase {
    func revision(owner: String, fileId: String, id: String, headId: String?) throws -> Revision? {
        try queryOne("SELECT * FROM revisions WHERE owner = ? AND file_id = ? AND id = ?", [owner, fileId, id])
            .map { Self.revisionValue($0, headId: headId) }
    }

    /// Newest first.
    func revisions(owner: String, fileId: String, headId: String?) throws -> [Revision] {
        try query("SELECT * FROM revisions WHERE owner = ? AND file_id = ? ORDER BY created_at DESC, rowid DESC",
                  [owner, fileId]).map { Self.revisionValue($0, headId: headId) }
    }

    static func revisionValue(_ row: SQLRow, headId: String?) -> Revision {
        let id = row["id"].string ?? ""
        return Revision(id: id, fileId: row["file_id"].string ?? "",
                        mimeType: row["mime_type"].string ?? "application/octet-stream",
                        size: row["size"].int64 ?? 0, sha256: row["sha256"].string ?? "",
                        modifiedAt: Date(timeIntervalSince1970: row["created_at"].double ?? 0),
                        deviceId: row["device_id"].string, isHead: id == headId, contentMeta: row["content_meta"].string)
    }

    func insertRevision(owner: String, _ r: Revision) throws {
        try run("""
            INSERT INTO revisions(owner, id, file_id, mime_type, size, sha256, created_at, device_id, content_meta)
            VALUES(?,?,?,?,?,?,?,?,?)
            """, [owner, r.id, r.fileId, r.mimeType, r.size, r.sha256, r.modifiedAt.timeIntervalSince1970, r.deviceId,
                  r.contentMeta])
    }

    /// Deletes all but the newest `keep` revisions of a file (never the head); returns the
    /// removed ids, whose content files the caller unlinks after commit.
    func pruneRevisions(owner: String, fileId: String, keep: Int, headId: String?) throws -> [String] {
        let all = try query("SELECT id FROM revisions WHERE owner = ? AND file_id = ? ORDER BY created_at DESC, rowid DESC",
                            [owner, fileId]).compactMap { $0["id"].string }
        let doomed = all.dropFirst(max(keep, 1)).filter { $0 != headId }
        for id in doomed { try run("DELETE FROM revisions WHERE owner = ? AND id = ?", [owner, id]) }
        return Array(doomed)
    }

    /// Bytes held for `owner`: all revisions plus the sizes of open upload sessions, saturating
    /// at `Int64.max` (SQLite's `SUM` would fail on overflow; `TOTAL` is exact below 2^53).
    func usage(owner: String) throws -> Int64 {
        let stored = try scalar("SELECT TOTAL(size) FROM revisions WHERE owner = ?", [owner])?.double ?? 0
        let pending = try scalar("SELECT TOTAL(size) FROM uploads WHERE owner = ? AND state = ?",
                                 [owner, UploadState.active.rawValue])?.double ?? 0
        let total = stored + pending
        return total >= 0x1p63 ? .max : Int64(max(total, 0))
    }
}

/// Reads over every owner's revisions: crash recovery and the test-only lies.
extension SQLDatabase {
    /// The id of every revision on the server.
    func revisionIds() throws -> [String] {
        try query("SELECT id FROM revisions").compactMap { $0["id"].string }
    }

    /// Size, SHA-256 and content record of revision `id` of any owner, or nil.
    func anyOwnersRevisionContent(id: String) throws -> (size: Int64?, sha256: String?, contentMeta: String?)? {
        try queryOne("SELECT * FROM revisions WHERE id = ?", [id]).map {
            ($0["size"].int64, $0["sha256"].string, $0["content_meta"].string)
        }
    }
}
