import Foundation

/// One local change waiting to be replayed to the server, in order, with the node's version.
public struct OutboxEntry: Sendable, Codable, Equatable {
    public var seq: Int64
    public var op: String
    public var nodeId: String
    public var payload: OutboxPayload
    public var baseVersion: Int64?
    public var requestId: String
    public var state: String
}

/// What the server needs to replay an operation.
public struct OutboxPayload: Sendable, Codable, Equatable {
    public var name: String?
    public var parentId: String?
    public var remoteId: String?
    public var blobId: String?
    public var size: UInt64?
    public var sha256: String?
    public var mimeType: String?
    public init(name: String? = nil, parentId: String? = nil, remoteId: String? = nil, blobId: String? = nil,
                size: UInt64? = nil, sha256: String? = nil, mimeType: String? = nil) {
        self.name = name; self.parentId = parentId; self.remoteId = remoteId; self.blobId = blobId
        self.size = size; self.sha256 = sha256; self.mimeType = mimeType
    }
}

extension Vault {
    /// Operations the outbox records (BRIEF §8).
    public enum OutboxOp: String, Sendable {
        case createFolder = "create_folder", upload, move, delete
    }

    /// Records a local change; call inside the transaction that makes the change.
    func enqueue(_ op: OutboxOp, nodeId: String, payload: OutboxPayload, baseVersion: Int64?) throws {
        let json = String(decoding: try JSONEncoder().encode(payload), as: UTF8.self)
        try db.run("INSERT INTO outbox(op, node_id, payload, base_version, request_id, created_at) VALUES (?,?,?,?,?,?)",
                   [op.rawValue, nodeId, json, baseVersion, UUID().uuidString.lowercased(), Vault.now])
    }

    /// Drops pending entries of a node that never reached the server (nothing to replay).
    func dropPendingOutbox(nodeId: String) throws {
        try db.run("DELETE FROM outbox WHERE node_id = ? AND state = 'pending'", [nodeId])
    }

    /// Pending outbox entries, oldest first.
    public func outbox() throws -> [OutboxEntry] {
        try db.query("SELECT seq, op, node_id, payload, base_version, request_id, state FROM outbox ORDER BY seq").map { r in
            OutboxEntry(seq: r[0].int64 ?? 0, op: r[1].string ?? "", nodeId: r[2].string ?? "",
                        payload: (try? JSONDecoder().decode(OutboxPayload.self, from: Data((r[3].string ?? "{}").utf8))) ?? OutboxPayload(),
                        baseVersion: r[4].int64, requestId: r[5].string ?? "", state: r[6].string ?? "")
        }
    }
}
