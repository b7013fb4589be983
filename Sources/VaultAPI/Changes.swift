import Foundation

/// What happened to a file in the change feed.
public enum ChangeKind: String, Codable, Sendable {
    case created, updated, moved, deleted, restored
}

/// One entry of the change feed.
public struct Change: Codable, Sendable {
    /// Monotonic position of this change; resume after it with `cursor=`.
    public var cursor: Int64
    public var fileId: String
    public var kind: ChangeKind
    /// The file as it was right after the change (for `deleted`, the trashed tombstone).
    public var file: FileResource?
    /// The device (`X-Device-Id`) that made the change, if given.
    public var deviceId: String?

    public init(cursor: Int64, fileId: String, kind: ChangeKind, file: FileResource?, deviceId: String?) {
        self.cursor = cursor; self.fileId = fileId; self.kind = kind; self.file = file; self.deviceId = deviceId
    }
}

/// `GET /v1/changes`.
public struct ChangeList: Codable, Sendable {
    public var changes: [Change]
    /// Pass as `cursor` next time (equal to the input when nothing is new).
    public var nextCursor: Int64
    /// More changes are waiting past `nextCursor`.
    public var hasMore: Bool
    public init(changes: [Change], nextCursor: Int64, hasMore: Bool) {
        self.changes = changes; self.nextCursor = nextCursor; self.hasMore = hasMore
    }
}

/// `GET /v1/changes/start`, and the data of each SSE `changed` event.
public struct CursorResponse: Codable, Sendable {
    public var cursor: Int64
    public init(cursor: Int64) { self.cursor = cursor }
}
