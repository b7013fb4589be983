import Foundation
import VaultAPI
import VaultSQL

/// One resumable upload session row.
struct UploadSession {
    var id: String
    var owner: String
    var requestId: String
    var state: UploadState
    var name: String?
    var parentId: String?
    var size: Int64
    var mimeType: String
    var sha256: String
    var fileId: String?
    var baseVersion: Int64?
    var chunkSize: Int64
    var revisionId: String
    var expiresAt: Date
    var bytesReceived: Int64
    var deviceId: String?
    var resultFileId: String?
    /// End-to-end fields: the new file's client-chosen id and node record, this revision's content record.
    var clientId: String?
    var meta: String?
    var contentMeta: String?

    init(row: SQLRow) {
        id = row["id"].string ?? ""; owner = row["owner"].string ?? ""
        requestId = row["request_id"].string ?? ""; state = row["state"].string.flatMap(UploadState.init) ?? .active
        name = row["name"].string; parentId = row["parent_id"].string
        size = row["size"].int64 ?? 0; mimeType = row["mime_type"].string ?? "application/octet-stream"
        sha256 = row["sha256"].string ?? ""; fileId = row["file_id"].string
        baseVersion = row["base_version"].int64; chunkSize = row["chunk_size"].int64 ?? 1
        revisionId = row["revision_id"].string ?? ""
        expiresAt = Date(timeIntervalSince1970: row["expires_at"].double ?? 0)
        bytesReceived = row["bytes_received"].int64 ?? 0; deviceId = row["device_id"].string
        resultFileId = row["result_file_id"].string
        clientId = row["client_id"].string; meta = row["meta"].string; contentMeta = row["content_meta"].string
    }

    /// An empty file still has one (empty) chunk. (Rounded up without `size + chunkSize - 1`,
    /// which overflows for a size near `Int64.max`.)
    var totalChunks: Int { size == 0 ? 1 : Int(size / chunkSize + (size % chunkSize == 0 ? 0 : 1)) }

    /// Expected byte length of chunk `index`.
    func chunkLength(_ index: Int) -> Int64 { min(chunkSize, size - Int64(index) * chunkSize) }

    var target: UploadTarget {
        fileId.map { .existing(fileId: $0, baseVersion: baseVersion) }
            ?? .new(name: name ?? "", parentId: parentId ?? "root", id: clientId, meta: meta)
    }

    var isExpired: Bool { expiresAt < Date() }

    /// Received chunk indexes, plus the kept prefixes of cut-off chunks (index → bytes), as
    /// merged inclusive byte ranges.
    func ranges(chunks: [Int], partials: [Int: Int64] = [:]) -> [ByteRange] {
        var pieces: [(Int64, Int64)] = chunks.map { (Int64($0) * chunkSize, chunkLength($0)) }
        let whole = Set(chunks)
        for (i, bytes) in partials where !whole.contains(i) && bytes > 0 {
            pieces.append((Int64(i) * chunkSize, min(bytes, chunkLength(i))))
        }
        var out: [ByteRange] = []
        for (start, length) in pieces.sorted(by: { $0.0 < $1.0 }) where size > 0 {
            let end = start + length - 1
            if let last = out.last, last.end + 1 == start { out[out.count - 1].end = end } else {
                out.append(ByteRange(start: start, end: end))
            }
        }
        return out
    }
}

/// Upload session rows, scoped by owner.
extension SQLDatabase {
    func uploadSession(owner: String, id: String) throws -> UploadSession? {
        try queryOne("SELECT * FROM uploads WHERE owner = ? AND id = ?", [owner, id]).map(UploadSession.init)
    }

    func uploadChunks(_ id: String) throws -> [Int] {
        try query("SELECT idx FROM upload_chunks WHERE upload_id = ? ORDER BY idx", [id]).compactMap { $0[0].int }
    }

    /// Bytes kept of chunk `index` whose body was cut off (0 when none).
    func uploadPartial(_ id: String, index: Int) throws -> Int64 {
        try scalar("SELECT bytes FROM upload_partials WHERE upload_id = ? AND idx = ?", [id, index])?.int64 ?? 0
    }

    /// Index → bytes kept of each chunk whose body was cut off (see `upload_partials`).
    func uploadPartials(_ id: String) throws -> [Int: Int64] {
        var out: [Int: Int64] = [:]
        for row in try query("SELECT idx, bytes FROM upload_partials WHERE upload_id = ?", [id]) {
            if let i = row[0].int, let b = row[1].int64 { out[i] = b }
        }
        return out
    }

    func deleteUploadSession(_ id: String) throws {
        try run("DELETE FROM upload_partials WHERE upload_id = ?", [id])
        try run("DELETE FROM upload_chunks WHERE upload_id = ?", [id])
        try run("DELETE FROM uploads WHERE id = ?", [id])
    }
}
