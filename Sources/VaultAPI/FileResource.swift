import Foundation

/// Whether a node is a regular file or a folder. A folder is a file with `type == .folder`.
public enum FileType: String, Codable, Sendable {
    case file
    case folder
}

/// A file or folder as the server describes it (`GET /v1/files/{id}`).
public struct FileResource: Codable, Sendable, Equatable {
    /// Server id; each user's root folder has the id `"root"`.
    public var id: String
    public var name: String
    /// The containing folder's id; `nil` only for the root.
    public var parentId: String?
    public var type: FileType
    public var mimeType: String
    /// Content size in bytes (0 for folders).
    public var size: Int64
    /// Increments on every change (content, rename, move, trash, restore); sent back in `If-Match`.
    public var version: Int64
    /// Lowercase hex SHA-256 of the head content (`nil` for folders).
    public var sha256: String?
    public var createdAt: Date
    public var modifiedAt: Date
    /// True once deleted: the file sits in the trash, its revisions kept.
    public var trashed: Bool
    /// The revision holding the current content (`nil` for folders and empty metadata-only files).
    public var headRevisionId: String?
    /// Opaque to the server: the client's sealed node record (end-to-end encryption).
    public var meta: String?
    /// Opaque to the server: the client's sealed content record of the head revision.
    public var contentMeta: String?

    public init(id: String, name: String, parentId: String?, type: FileType, mimeType: String,
                size: Int64, version: Int64, sha256: String?, createdAt: Date, modifiedAt: Date,
                trashed: Bool, headRevisionId: String?, meta: String? = nil, contentMeta: String? = nil) {
        self.id = id; self.name = name; self.parentId = parentId; self.type = type
        self.mimeType = mimeType; self.size = size; self.version = version; self.sha256 = sha256
        self.createdAt = createdAt; self.modifiedAt = modifiedAt; self.trashed = trashed
        self.headRevisionId = headRevisionId
        self.meta = meta; self.contentMeta = contentMeta
    }
}

/// One page of a folder listing (`GET /v1/files`).
public struct FileList: Codable, Sendable {
    public var files: [FileResource]
    /// Pass back as `pageToken` for the next page; absent on the last page.
    public var nextPageToken: String?

    public init(files: [FileResource], nextPageToken: String?) {
        self.files = files; self.nextPageToken = nextPageToken
    }
}

/// Body of `POST /v1/files`: a folder, or an empty file with metadata only.
public struct CreateFileRequest: Codable, Sendable {
    public var name: String
    public var parentId: String?
    public var type: FileType?
    public var mimeType: String?
    /// The id the client chose (32 lowercase hex); the server makes one when absent.
    public var id: String?
    /// Opaque sealed node record.
    public var meta: String?

    public init(name: String, parentId: String? = nil, type: FileType? = nil, mimeType: String? = nil,
                id: String? = nil, meta: String? = nil) {
        self.name = name; self.parentId = parentId; self.type = type; self.mimeType = mimeType
        self.id = id; self.meta = meta
    }
}

/// Body of `PATCH /v1/files/{id}`: rename and/or move (and `trashed: false` to restore from trash).
public struct UpdateFileRequest: Codable, Sendable {
    public var name: String?
    public var parentId: String?
    public var mimeType: String?
    public var trashed: Bool?
    /// Opaque sealed node record (replaces the stored one).
    public var meta: String?

    public init(name: String? = nil, parentId: String? = nil, mimeType: String? = nil, trashed: Bool? = nil, meta: String? = nil) {
        self.name = name; self.parentId = parentId; self.mimeType = mimeType; self.trashed = trashed; self.meta = meta
    }
}

/// Body of `POST /v1/files/{id}/revisions/{rid}/restore` (optional).
public struct RestoreRequest: Codable, Sendable {
    /// Opaque sealed content record of the new head (else the restored revision's is copied).
    public var contentMeta: String?
    public init(contentMeta: String? = nil) { self.contentMeta = contentMeta }
}

/// `GET`/`PUT /v1/keys/envelope`: the account's key envelope, opaque to the server.
public struct KeyEnvelope: Codable, Sendable, Equatable {
    public var envelope: String
    /// The server's version of the envelope, sent back in `If-Match` to replace it.
    public var version: Int64
    public init(envelope: String, version: Int64) { self.envelope = envelope; self.version = version }
}

/// Body of `PUT /v1/keys/envelope`.
public struct PutKeyEnvelope: Codable, Sendable {
    public var envelope: String
    public init(envelope: String) { self.envelope = envelope }
}
