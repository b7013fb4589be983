import Foundation
import VaultAPI
import VaultSQL

/// File rows: reads and writes, always scoped by owner (isolation lives in every WHERE clause).
extension SQLConnection {
    static var fileColumns: String { "id, parent_id, name, type, mime_type, size, version, sha256, created_at, modified_at, trashed, head_revision_id, meta, content_meta" }

    /// The file of a row selecting `fileColumns`; throws `SQLError.Kind.decoding` on a damaged row.
    static func fileResource(_ row: SQLRow) throws -> FileResource {
        FileResource(
            id: try row.decode(String.self, "id"), name: try row.decode(String.self, "name"),
            parentId: try row.decode(String?.self, "parent_id"), type: try row.decode(FileType.self, "type"),
            mimeType: try row.decode(String.self, "mime_type"),
            size: try row.decode(Int64.self, "size"), version: try row.decode(Int64.self, "version"),
            sha256: try row.decode(String?.self, "sha256"),
            createdAt: Date(timeIntervalSince1970: try row.decode(Double.self, "created_at")),
            modifiedAt: Date(timeIntervalSince1970: try row.decode(Double.self, "modified_at")),
            trashed: try row.decode(Bool.self, "trashed"), headRevisionId: try row.decode(String?.self, "head_revision_id"),
            meta: try row.decode(String?.self, "meta"), contentMeta: try row.decode(String?.self, "content_meta"))
    }

    /// The file `id` of `owner`, or nil (another user's id is simply absent).
    func file(owner: String, id: String) throws -> FileResource? {
        try queryOne("SELECT \(Self.fileColumns) FROM files WHERE owner = ? AND id = ?", [owner, id])
            .map(Self.fileResource)
    }

    /// Like `file(owner:id:)` but 404 when absent.
    func requireFile(owner: String, id: String) throws -> FileResource {
        guard let f = try file(owner: owner, id: id) else { throw APIError.notFound() }
        return f
    }

    /// 409 `id_taken` when `owner` already has a node (live or trashed) with `id`.
    func checkIdFree(owner: String, id: String) throws {
        if try queryOne("SELECT 1 FROM files WHERE owner = ? AND id = ?", [owner, id]) != nil {
            throw APIError.conflict("a file or folder with id \(id) already exists", code: .idTaken)
        }
    }

    /// A live folder to put things in (neither it nor a folder above it in the trash), or the
    /// matching error.
    func requireParentFolder(owner: String, id: String) throws -> FileResource {
        guard let p = try file(owner: owner, id: id) else { throw APIError.notFound("no such parent folder") }
        guard p.type == .folder else { throw APIError.badRequest("parent \(id) is not a folder", code: .notAFolder) }
        guard try !inTrash(owner: owner, id) else { throw APIError.conflict("parent folder is in the trash", code: .parentTrashed) }
        return p
    }

    /// Whether `id` or a folder above it is in the trash (what is below a trashed folder is
    /// trashed with it: it can be moved out, but not written where it is).
    func inTrash(owner: String, _ id: String) throws -> Bool {
        var current: String? = id
        var hops = 0
        while let c = current, hops < 10_000 {
            guard let row = try queryOne("SELECT parent_id, trashed FROM files WHERE owner = ? AND id = ?", [owner, c]) else { return false }
            if try row.decode(Bool.self, "trashed") { return true }
            current = try row.decode(String?.self, "parent_id")
            hops += 1
        }
        return false
    }

    /// Throws 409 if a live sibling named `name` exists (other than `excluding`).
    func checkNameFree(owner: String, parentId: String, name: String, excluding: String? = nil) throws {
        let row = try queryOne(
            "SELECT id FROM files WHERE owner = ? AND parent_id = ? AND name = ? AND trashed = 0",
            [owner, parentId, name])
        if let id = try row?.decode(String.self, "id"), id != excluding {
            throw APIError.conflict("a file named \"\(name)\" already exists in this folder", code: .nameConflict)
        }
    }

    func insertFile(owner: String, _ f: FileResource) throws {
        try run("""
            INSERT INTO files(owner, id, parent_id, name, type, mime_type, size, version, sha256,
                              created_at, modified_at, trashed, head_revision_id, meta, content_meta)
            VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
            """, [owner, f.id, f.parentId, f.name, f.type.rawValue, f.mimeType, f.size, f.version, f.sha256,
                  f.createdAt.timeIntervalSince1970, f.modifiedAt.timeIntervalSince1970, f.trashed,
                  f.headRevisionId, f.meta, f.contentMeta])
    }

    func updateFile(owner: String, _ f: FileResource) throws {
        try run("""
            UPDATE files SET parent_id = ?, name = ?, mime_type = ?, size = ?, version = ?, sha256 = ?,
                   modified_at = ?, trashed = ?, head_revision_id = ?, meta = ?, content_meta = ?
            WHERE owner = ? AND id = ?
            """, [f.parentId, f.name, f.mimeType, f.size, f.version, f.sha256,
                  f.modifiedAt.timeIntervalSince1970, f.trashed, f.headRevisionId, f.meta, f.contentMeta, owner, f.id])
    }

    /// Live children of `parentId` after the (name, id) position, ordered by name then id.
    func children(owner: String, parentId: String, after: (String, String)?, limit: Int) throws -> [FileResource] {
        if let (name, id) = after {
            return try query("""
                SELECT \(Self.fileColumns) FROM files WHERE owner = ? AND parent_id = ? AND trashed = 0
                AND (name > ? OR (name = ? AND id > ?)) ORDER BY name, id LIMIT ?
                """, [owner, parentId, name, name, id, limit]).map(Self.fileResource)
        }
        return try query("""
            SELECT \(Self.fileColumns) FROM files WHERE owner = ? AND parent_id = ? AND trashed = 0
            ORDER BY name, id LIMIT ?
            """, [owner, parentId, limit]).map(Self.fileResource)
    }

    /// True if `ancestor` is `id` or one of its ancestors (to refuse moving a folder into itself).
    func isAncestor(owner: String, _ ancestor: String, of id: String) throws -> Bool {
        var current: String? = id
        var hops = 0
        while let c = current, hops < 10_000 {
            if c == ancestor { return true }
            current = try queryOne("SELECT parent_id FROM files WHERE owner = ? AND id = ?", [owner, c])?.decode(String?.self, "parent_id") ?? nil
            hops += 1
        }
        return false
    }
}

/// Reads across a user's whole tree, and the test-only lies' reads.
extension SQLConnection {
    /// Nodes of `owner` not themselves trashed (the root left out) with ids after `after`, by id.
    func untrashedFiles(owner: String, after: String, limit: Int) throws -> [FileResource] {
        try query("SELECT \(Self.fileColumns) FROM files WHERE owner = ? AND trashed = 0 AND id != 'root' AND id > ? ORDER BY id LIMIT ?",
                  [owner, after, limit]).map(Self.fileResource)
    }

    /// The head revision id of file `id` of any owner (only the test-only lies read across owners).
    func anyOwnersHeadRevisionId(fileId id: String) throws -> String? {
        try queryOne("SELECT head_revision_id FROM files WHERE id = ?", [id])?["head_revision_id"].string
    }
}
