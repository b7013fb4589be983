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

    public init(id: String, name: String, parentId: String?, type: FileType, mimeType: String,
                size: Int64, version: Int64, sha256: String?, createdAt: Date, modifiedAt: Date,
                trashed: Bool, headRevisionId: String?) {
        self.id = id; self.name = name; self.parentId = parentId; self.type = type
        self.mimeType = mimeType; self.size = size; self.version = version; self.sha256 = sha256
        self.createdAt = createdAt; self.modifiedAt = modifiedAt; self.trashed = trashed
        self.headRevisionId = headRevisionId
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

    public init(name: String, parentId: String? = nil, type: FileType? = nil, mimeType: String? = nil) {
        self.name = name; self.parentId = parentId; self.type = type; self.mimeType = mimeType
    }
}

/// Body of `PATCH /v1/files/{id}`: rename and/or move (and `trashed: false` to restore from trash).
public struct UpdateFileRequest: Codable, Sendable {
    public var name: String?
    public var parentId: String?
    public var mimeType: String?
    public var trashed: Bool?

    public init(name: String? = nil, parentId: String? = nil, mimeType: String? = nil, trashed: Bool? = nil) {
        self.name = name; self.parentId = parentId; self.mimeType = mimeType; self.trashed = trashed
    }
}
