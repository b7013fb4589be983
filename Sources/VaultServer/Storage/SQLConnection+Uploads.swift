import Foundation
import VaultAPI
import VaultSQL

/// Upload session bookkeeping: opening a session, its received chunks and kept prefixes, its
/// completion, and the sweeps over every session.
extension SQLConnection {
    /// The session `owner` opened with `requestId`, or nil.
    func uploadSession(owner: String, requestId: String) throws -> UploadSession? {
        try queryOne("SELECT * FROM uploads WHERE owner = ? AND request_id = ?", [owner, requestId])
            .map(UploadSession.init)
    }

    /// How many sessions of `owner` are still receiving chunks.
    func activeUploadCount(owner: String) throws -> Int {
        try scalar("SELECT count(*) FROM uploads WHERE owner = ? AND state = ?", [owner, UploadState.active.rawValue])?.int ?? 0
    }

    /// Opens an active session with nothing received yet.
    func insertUploadSession(id: String, owner: String, requestId: String, name: String?, parentId: String?,
                             size: Int64, mimeType: String, sha256: String, fileId: String?, baseVersion: Int64?,
                             chunkSize: Int64, revisionId: String, createdAt: Date, expiresAt: Date,
                             deviceId: String?, clientId: String?, meta: String?, contentMeta: String?) throws {
        try run("""
            INSERT INTO uploads(id, owner, request_id, state, name, parent_id, size, mime_type, sha256,
                file_id, base_version, chunk_size, revision_id, created_at, expires_at, device_id,
                client_id, meta, content_meta)
            VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
            """, [id, owner, requestId, UploadState.active.rawValue, name, parentId, size, mimeType, sha256, fileId, baseVersion,
                  chunkSize, revisionId, createdAt.timeIntervalSince1970, expiresAt.timeIntervalSince1970,
                  deviceId, clientId, meta, contentMeta])
    }

    /// Whether chunk `index` of session `id` is recorded as fully received.
    func uploadChunkRecorded(_ id: String, index: Int) throws -> Bool {
        try scalar("SELECT count(*) FROM upload_chunks WHERE upload_id = ? AND idx = ?", [id, index])?.int != 0
    }

    /// Whether session `id` exists and is still receiving chunks.
    func uploadIsActive(_ id: String) throws -> Bool {
        try scalar("SELECT count(*) FROM uploads WHERE id = ? AND state = ?", [id, UploadState.active.rawValue])?.int == 1
    }

    /// Keeps `bytes` of chunk `index` of session `id` as received (a cut-off body's prefix).
    func setUploadPartial(_ id: String, index: Int, bytes: Int64) throws {
        try run("DELETE FROM upload_partials WHERE upload_id = ? AND idx = ?", [id, index])
        try run("INSERT INTO upload_partials(upload_id, idx, bytes) VALUES(?, ?, ?)", [id, index, bytes])
    }

    /// Counts `bytes` more received by session `id` (statistics; kept or not).
    func addUploadBytesReceived(_ id: String, _ bytes: Int64) throws {
        try run("UPDATE uploads SET bytes_received = bytes_received + ? WHERE id = ?", [bytes, id])
    }

    /// Records chunk `index` of session `id` as fully received, with its store `tag` (an S3
    /// part's ETag); its kept prefix, if any, goes.
    func recordUploadChunk(_ id: String, index: Int, tag: String? = nil) throws {
        try run(dialect.insertIgnoringDuplicates(into: "upload_chunks", ["upload_id", "idx", "tag"]), [id, index, tag])
        try run("DELETE FROM upload_partials WHERE upload_id = ? AND idx = ?", [id, index])
    }

    /// Marks session `id` complete with the file it published; its chunk bookkeeping goes.
    func completeUploadSession(_ id: String, resultFileId: String) throws {
        try run("UPDATE uploads SET state = ?, result_file_id = ? WHERE id = ?", [UploadState.complete.rawValue, resultFileId, id])
        try run("DELETE FROM upload_chunks WHERE upload_id = ?", [id])
        try run("DELETE FROM upload_partials WHERE upload_id = ?", [id])
    }

    /// Makes every session expire at `date` (the test-only `expireSessionsNow`).
    func expireAllUploadSessions(at date: Date) throws {
        try run("UPDATE uploads SET expires_at = ?", [date.timeIntervalSince1970])
    }

    /// The ids of sessions that expired before `date`.
    func expiredUploadIds(before date: Date) throws -> [String] {
        try query("SELECT id FROM uploads WHERE expires_at < ?", [date.timeIntervalSince1970]).compactMap { $0["id"].string }
    }

    /// Each active session's id, the revision id its file will be published as, and its
    /// object store upload (if any).
    func activeUploadStores() throws -> [(id: String, revisionId: String, storeUploadId: String?)] {
        try query("SELECT id, revision_id, store_upload_id FROM uploads WHERE state = ?", [UploadState.active.rawValue]).compactMap { row in
            guard let id = row["id"].string, let rid = row["revision_id"].string else { return nil }
            return (id, rid, row["store_upload_id"].string)
        }
    }

    /// The sessions that expired before `date`.
    func expiredUploads(before date: Date) throws -> [UploadSession] {
        try query("SELECT * FROM uploads WHERE expires_at < ?", [date.timeIntervalSince1970]).map(UploadSession.init)
    }

    /// Records `storeUploadId` as session `id`'s object store upload unless one is recorded
    /// already; returns the one recorded (nil: no such session).
    func setUploadStoreId(_ id: String, _ storeUploadId: String) throws -> String? {
        try run("UPDATE uploads SET store_upload_id = ? WHERE id = ? AND store_upload_id IS NULL", [storeUploadId, id])
        return try scalar(String.self, "SELECT store_upload_id FROM uploads WHERE id = ?", [id])
    }

    /// Each recorded chunk of session `id` with its store tag, in chunk order.
    func uploadChunkTags(_ id: String) throws -> [(index: Int, tag: String?)] {
        try query("SELECT idx, tag FROM upload_chunks WHERE upload_id = ? ORDER BY idx", [id]).map { row in
            (try row.decode(Int.self, "idx"), row["tag"].string)
        }
    }
}
