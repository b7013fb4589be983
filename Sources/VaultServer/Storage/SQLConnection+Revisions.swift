import Foundation
import VaultAPI
import VaultSQL

/// Revision rows, scoped by owner.
extension SQLConnection {
    func revision(owner: String, fileId: String, id: String, headId: String?) throws -> Revision? {
        try queryOne("SELECT * FROM revisions WHERE owner = ? AND file_id = ? AND id = ?", [owner, fileId, id])
            .map { try Self.revisionValue($0, headId: headId) }
    }

    /// Newest first.
    func revisions(owner: String, fileId: String, headId: String?) throws -> [Revision] {
        try query("SELECT * FROM revisions WHERE owner = ? AND file_id = ? ORDER BY created_at DESC, rowid DESC",
                  [owner, fileId]).map { try Self.revisionValue($0, headId: headId) }
    }

    /// The revision of a `revisions` row; throws `SQLError.Kind.decoding` on a damaged row.
    static func revisionValue(_ row: SQLRow, headId: String?) throws -> Revision {
        let id = try row.decode(String.self, "id")
        return Revision(id: id, fileId: try row.decode(String.self, "file_id"),
                        mimeType: try row.decode(String.self, "mime_type"),
                        size: try row.decode(Int64.self, "size"), sha256: try row.decode(String.self, "sha256"),
                        modifiedAt: Date(timeIntervalSince1970: try row.decode(Double.self, "created_at")),
                        deviceId: try row.decode(String?.self, "device_id"), isHead: id == headId,
                        contentMeta: try row.decode(String?.self, "content_meta"))
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
                            [owner, fileId]).map { try $0.decode(String.self, "id") }
        let doomed = all.dropFirst(max(keep, 1)).filter { $0 != headId }
        for id in doomed { try run("DELETE FROM revisions WHERE owner = ? AND id = ?", [owner, id]) }
        return Array(doomed)
    }

    /// Bytes held for `owner`: all revisions plus the sizes of open upload sessions, saturating
    /// at `Int64.max` (SQLite's `SUM` would fail on overflow; `TOTAL` is exact below 2^53; see
    /// `SQLDialect.total`).
    func usage(owner: String) throws -> Int64 {
        let stored = try scalar(Double.self, "SELECT \(dialect.total("size")) FROM revisions WHERE owner = ?", [owner]) ?? 0
        let pending = try scalar(Double.self, "SELECT \(dialect.total("size")) FROM uploads WHERE owner = ? AND state = ?",
                                 [owner, UploadState.active.rawValue]) ?? 0
        let total = stored + pending
        return total >= 0x1p63 ? .max : Int64(max(total, 0))
    }
}

/// Reads over every owner's revisions: crash recovery and the test-only lies.
extension SQLConnection {
    /// The id of every revision on the server.
    func revisionIds() throws -> [String] {
        try query("SELECT id FROM revisions", []).compactMap { $0["id"].string }
    }

    /// Size, SHA-256 and content record of revision `id` of any owner, or nil.
    func anyOwnersRevisionContent(id: String) throws -> (size: Int64?, sha256: String?, contentMeta: String?)? {
        try queryOne("SELECT * FROM revisions WHERE id = ?", [id]).map {
            ($0["size"].int64, $0["sha256"].string, $0["content_meta"].string)
        }
    }
}
