/// Operations the outbox records (BRIEF §8); docs/outbox.md says how they are compacted and replayed.
public enum OutboxOp: String, Sendable, Codable {
    case createFolder = "create_folder", upload, move, delete
    /// A file removed locally while its upload may have reached the server (a session was open):
    /// the replay aborts the session, or deletes the file the session made (a new file), or
    /// records the version it made (a new revision, so the later delete matches).
    case discardUpload = "discard_upload"

    /// Whether `payload.parentId` names a folder this entry needs on the server (for a delete it
    /// is only the destination of the move it replaced).
    public var placesInParent: Bool { self == .createFolder || self == .upload || self == .move }
}

/// Where an outbox entry stands.
public enum OutboxState: String, Sendable, Codable, CaseIterable {
    /// Waiting for the next `vault sync`.
    case pending
    /// The server has a newer version (412) or refused the name; nothing was overwritten. The
    /// entry and those that depend on it wait until the conflict is resolved.
    case conflict
    /// Failed for a reason of its own (`last_error`), e.g. unreadable staged content or a name the
    /// server refuses; retried at each `vault sync`. The entries that depend on it wait.
    case failed
    /// Held by `vault transfers pause` until `vault transfers resume`.
    case paused
    /// Held by `vault transfers cancel` (the server's partial copy is freed) until resumed.
    case cancelled

    /// Paused or cancelled by the user.
    public var isHeld: Bool { self == .paused || self == .cancelled }
    /// Tried by the next replay.
    public var isReplayable: Bool { self == .pending || self == .failed }
}

/// One local change waiting to be replayed to the server, in order.
public struct OutboxEntry: Sendable, Codable, Equatable {
    public var seq: Int64
    public var op: OutboxOp
    public var nodeId: String
    public var payload: OutboxPayload
    /// The node's server version when the change was made (informational: the replay sends the
    /// version it last recorded for the node).
    public var baseVersion: Int64?
    /// The idempotency key of an upload session.
    public var requestId: String
    public var state: OutboxState
    public var attempts: Int
    public var lastError: String?
    /// Set while a folder creation was sent and no answer was recorded (seconds since the epoch).
    public var sentAt: Int64?

    public init(seq: Int64, op: OutboxOp, nodeId: String, payload: OutboxPayload, baseVersion: Int64?, requestId: String,
                state: OutboxState = .pending, attempts: Int = 0, lastError: String? = nil, sentAt: Int64? = nil) {
        self.seq = seq; self.op = op; self.nodeId = nodeId; self.payload = payload; self.baseVersion = baseVersion
        self.requestId = requestId; self.state = state; self.attempts = attempts; self.lastError = lastError; self.sentAt = sentAt
    }
}

/// What the server needs to replay an operation. Local ids (`parentId`) are mapped to server
/// ids at replay time.
public struct OutboxPayload: Sendable, Codable, Equatable {
    public var name: String?
    /// The local id of the folder the node goes into (create, upload, move); for a delete that
    /// replaced a move, that move's destination (to recognise it as already done).
    public var parentId: String?
    public var remoteId: String?
    public var blobId: String?
    public var size: UInt64?
    public var sha256: String?
    public var mimeType: String?
    /// The server's upload session (`discard_upload`).
    public var uploadId: String?
    /// A delete that replaced a pending move (rule R2): `name` and `parentId` are that move's
    /// destination, so a 412 showing the file already there is recognised as the move applied.
    public var replacesMove: Bool?
    /// A `move` to where the node already is, queued by `vault key reencrypt`: the replay seals
    /// its name token and node record afresh under the current epoch.
    public var reseal: Bool?
    /// The server id this device chose for a node it creates (`create_folder`, the first
    /// `upload` of a new file): set before the first request is sent, so a retry after a lost
    /// answer asks for the same id and recognises the node as its own.
    public var clientId: String?
    public init(name: String? = nil, parentId: String? = nil, remoteId: String? = nil, blobId: String? = nil,
                size: UInt64? = nil, sha256: String? = nil, mimeType: String? = nil, uploadId: String? = nil,
                replacesMove: Bool? = nil, reseal: Bool? = nil, clientId: String? = nil) {
        self.name = name; self.parentId = parentId; self.remoteId = remoteId; self.blobId = blobId
        self.size = size; self.sha256 = sha256; self.mimeType = mimeType; self.uploadId = uploadId
        self.replacesMove = replacesMove; self.reseal = reseal; self.clientId = clientId
    }
}

/// A node as the replay sees it: still in the tree, or removed locally while entries of its own
/// still replay (a tombstone keeps its server id and version).
public struct OutboxTarget: Sendable, Equatable {
    public var nodeId: String
    /// The node, while it is in the tree; nil once removed locally.
    public var node: Node?
    public var remoteId: String?
    /// The server version last recorded (sent as `If-Match`).
    public var version: Int64
    public var isFolder: Bool
    public var isRemoved: Bool { node == nil }

    public init(nodeId: String, node: Node?, remoteId: String?, version: Int64, isFolder: Bool) {
        self.nodeId = nodeId; self.node = node; self.remoteId = remoteId; self.version = version; self.isFolder = isFolder
    }
}

/// What a replayed entry did on the server, recorded when the entry is completed.
public enum OutboxCompletion: Sendable, Equatable {
    /// Nothing to record (e.g. a delete, or an entry that needed no request).
    case nothing
    /// The node is on the server with this id and version.
    case onServer(remoteId: String, version: Int64)
    /// The content of `blobId` is on the server as this version: the staged blob becomes
    /// cached content (published after the commit; see `completeOutboxEntry`).
    case uploaded(remoteId: String, version: Int64, blobId: String)
}

/// Outbox entries by state, for `vault status`.
public struct OutboxCounts: Sendable, Codable, Equatable {
    public var pending = 0
    public var conflict = 0
    public var failed = 0
    /// Paused or cancelled by the user.
    public var held = 0
    public var total: Int { pending + conflict + failed + held }
    public init() {}
}

/// An entry that needs attention (conflict or failed), for `vault status`.
public struct OutboxProblem: Sendable, Codable, Equatable {
    /// The node's path, or its last name when it was removed.
    public var path: String
    public var op: OutboxOp
    public var state: OutboxState
    public var reason: String?

    public init(path: String, op: OutboxOp, state: OutboxState, reason: String?) {
        self.path = path; self.op = op; self.state = state; self.reason = reason
    }
}
