import Foundation

/// Body of `POST /v1/upload?uploadType=resumable`.
public struct UploadSessionRequest: Codable, Sendable {
    public var name: String?
    public var parentId: String?
    /// Total content size in bytes.
    public var size: Int64
    public var mimeType: String?
    /// Lowercase hex SHA-256 of the whole content, verified before the file is published.
    public var sha256: String
    /// Idempotency key: a repeated `requestId` gets the same session back.
    public var requestId: String
    /// Upload a new revision of this existing file instead of creating one.
    public var fileId: String?
    /// The version the client last saw of `fileId`; stale → 412.
    public var baseVersion: Int64?
    /// For a new file: the id the client chose (32 lowercase hex).
    public var id: String?
    /// For a new file: its opaque sealed node record.
    public var meta: String?
    /// Opaque sealed content record of this revision.
    public var contentMeta: String?

    public init(name: String?, parentId: String?, size: Int64, mimeType: String?, sha256: String,
                requestId: String, fileId: String? = nil, baseVersion: Int64? = nil,
                id: String? = nil, meta: String? = nil, contentMeta: String? = nil) {
        self.name = name; self.parentId = parentId; self.size = size; self.mimeType = mimeType
        self.sha256 = sha256; self.requestId = requestId; self.fileId = fileId; self.baseVersion = baseVersion
        self.id = id; self.meta = meta; self.contentMeta = contentMeta
    }
}

/// The answer to starting a resumable upload.
public struct UploadSessionResponse: Codable, Sendable, Equatable {
    public var uploadId: String
    public var totalChunks: Int
    public var chunksProcessed: Int
    /// Every chunk but the last is exactly this long and starts at a multiple of it.
    public var chunkSize: Int64
    /// Path of the chunk endpoint (`/v1/upload/{id}/chunk`).
    public var uploadUrl: String
    public var uploadExpiresAt: Date

    public init(uploadId: String, totalChunks: Int, chunksProcessed: Int, chunkSize: Int64,
                uploadUrl: String, uploadExpiresAt: Date) {
        self.uploadId = uploadId; self.totalChunks = totalChunks; self.chunksProcessed = chunksProcessed
        self.chunkSize = chunkSize; self.uploadUrl = uploadUrl; self.uploadExpiresAt = uploadExpiresAt
    }
}

/// An inclusive byte range `start...end`.
public struct ByteRange: Codable, Sendable, Equatable {
    public var start: Int64
    public var end: Int64
    public init(start: Int64, end: Int64) { self.start = start; self.end = end }
}

/// `GET /v1/upload/{id}`: what the server holds of a session.
public struct UploadStatus: Codable, Sendable {
    public var uploadId: String
    /// `active` while receiving, `complete` once the file is published.
    public var state: UploadState
    public var size: Int64
    public var chunkSize: Int64
    public var totalChunks: Int
    public var chunksProcessed: Int
    /// Received ranges, merged, ascending.
    public var receivedRanges: [ByteRange]
    /// Every body byte received for this session, re-sent bytes included.
    public var bytesReceivedTotal: Int64
    public var uploadExpiresAt: Date
    /// The published file once `state` is `.complete`.
    public var file: FileResource?

    public init(uploadId: String, state: UploadState, size: Int64, chunkSize: Int64, totalChunks: Int,
                chunksProcessed: Int, receivedRanges: [ByteRange], bytesReceivedTotal: Int64,
                uploadExpiresAt: Date, file: FileResource?) {
        self.uploadId = uploadId; self.state = state; self.size = size; self.chunkSize = chunkSize
        self.totalChunks = totalChunks; self.chunksProcessed = chunksProcessed
        self.receivedRanges = receivedRanges; self.bytesReceivedTotal = bytesReceivedTotal
        self.uploadExpiresAt = uploadExpiresAt; self.file = file
    }
}

/// The metadata part of `uploadType=multipart`.
public struct MultipartMetadata: Codable, Sendable {
    public var name: String
    public var parentId: String?
    public var mimeType: String?
    public var fileId: String?
    public var baseVersion: Int64?
    public var id: String?
    public var meta: String?
    public var contentMeta: String?
    public init(name: String, parentId: String? = nil, mimeType: String? = nil,
                fileId: String? = nil, baseVersion: Int64? = nil, id: String? = nil, meta: String? = nil, contentMeta: String? = nil) {
        self.name = name; self.parentId = parentId; self.mimeType = mimeType
        self.fileId = fileId; self.baseVersion = baseVersion; self.id = id; self.meta = meta; self.contentMeta = contentMeta
    }
}
