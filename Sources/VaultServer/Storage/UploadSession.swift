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
    /// The object store's multipart upload of this session (`--content s3://…`), once started.
    var storeUploadId: String?

    /// The session of an `uploads` row (`SELECT *`); throws `SQLError.Kind.decoding` on a damaged row.
    init(row: SQLRow) throws {
        id = try row.decode(String.self, "id"); owner = try row.decode(String.self, "owner")
        requestId = try row.decode(String.self, "request_id"); state = try row.decode(UploadState.self, "state")
        name = try row.decode(String?.self, "name"); parentId = try row.decode(String?.self, "parent_id")
        size = try row.decode(Int64.self, "size"); mimeType = try row.decode(String.self, "mime_type")
        sha256 = try row.decode(String.self, "sha256"); fileId = try row.decode(String?.self, "file_id")
        baseVersion = try row.decode(Int64?.self, "base_version"); chunkSize = try row.decode(Int64.self, "chunk_size")
        revisionId = try row.decode(String.self, "revision_id")
        expiresAt = Date(timeIntervalSince1970: try row.decode(Double.self, "expires_at"))
        bytesReceived = try row.decode(Int64.self, "bytes_received"); deviceId = try row.decode(String?.self, "device_id")
        resultFileId = try row.decode(String?.self, "result_file_id")
        clientId = try row.decode(String?.self, "client_id"); meta = try row.decode(String?.self, "meta")
        contentMeta = try row.decode(String?.self, "content_meta")
        storeUploadId = try row.decode(String?.self, "store_upload_id")
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
extension SQLConnection {
    func uploadSession(owner: String, id: String) throws -> UploadSession? {
        try queryOne("SELECT * FROM uploads WHERE owner = ? AND id = ?", [owner, id]).map(UploadSession.init)
    }

    func uploadChunks(_ id: String) throws -> [Int] {
        try query("SELECT idx FROM upload_chunks WHERE upload_id = ? ORDER BY idx", [id]).map { try $0.decode(Int.self, "idx") }
    }

    /// Bytes kept of chunk `index` whose body was cut off (0 when none).
    func uploadPartial(_ id: String, index: Int) throws -> Int64 {
        try scalar(Int64.self, "SELECT bytes FROM upload_partials WHERE upload_id = ? AND idx = ?", [id, index]) ?? 0
    }

    /// Index → bytes kept of each chunk whose body was cut off (see `upload_partials`).
    func uploadPartials(_ id: String) throws -> [Int: Int64] {
        var out: [Int: Int64] = [:]
        for row in try query("SELECT idx, bytes FROM upload_partials WHERE upload_id = ?", [id]) {
            out[try row.decode(Int.self, "idx")] = try row.decode(Int64.self, "bytes")
        }
        return out
    }

    func deleteUploadSession(_ id: String) throws {
        try run("DELETE FROM upload_partials WHERE upload_id = ?", [id])
        try run("DELETE FROM upload_chunks WHERE upload_id = ?", [id])
        try run("DELETE FROM uploads WHERE id = ?", [id])
    }
}
