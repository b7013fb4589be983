import Foundation

/// One stored content version of a file (`GET /v1/files/{id}/revisions/{rid}`).
public struct Revision: Codable, Sendable, Equatable {
    public var id: String
    public var fileId: String
    public var mimeType: String
    public var size: Int64
    /// Lowercase hex SHA-256 of this revision's content.
    public var sha256: String
    public var modifiedAt: Date
    /// The device (`X-Device-Id`) that uploaded it, if given.
    public var deviceId: String?
    /// True for the file's current content.
    public var isHead: Bool
    /// Opaque to the server: the client's sealed content record of this revision.
    public var contentMeta: String?

    public init(id: String, fileId: String, mimeType: String, size: Int64, sha256: String,
                modifiedAt: Date, deviceId: String?, isHead: Bool, contentMeta: String? = nil) {
        self.id = id; self.fileId = fileId; self.mimeType = mimeType; self.size = size
        self.sha256 = sha256; self.modifiedAt = modifiedAt; self.deviceId = deviceId; self.isHead = isHead
        self.contentMeta = contentMeta
    }
}

/// `GET /v1/files/{id}/revisions`: newest first.
public struct RevisionList: Codable, Sendable {
    public var revisions: [Revision]
    public init(revisions: [Revision]) { self.revisions = revisions }
}
