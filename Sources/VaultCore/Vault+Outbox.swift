import Foundation
import VaultSQL

/// The outbox: local changes waiting for the server, in order (docs/outbox.md). The tree
/// operations record them (`enqueue`, and the compaction rules in `Vault+OutboxCompaction`); the
/// sync layer reads them, records what the server answered, and holds or releases them.
extension Vault {
    static let outboxColumns = "seq, op, node_id, payload, base_version, request_id, state, attempts, last_error, sent_at"

    /// The entry of a row selecting `outboxColumns`; throws `SQLError.Kind.decoding` on a damaged row.
    static func outboxEntry(_ r: SQLRow) throws -> OutboxEntry {
        OutboxEntry(seq: try r.decode(Int64.self, "seq"), op: try r.decode(OutboxOp.self, "op"), nodeId: try r.decode(String.self, "node_id"),
                    payload: decodePayload(try r.decode(String.self, "payload")), baseVersion: try r.decode(Int64?.self, "base_version"),
                    requestId: try r.decode(String.self, "request_id"), state: try r.decode(OutboxState.self, "state"),
                    attempts: try r.decode(Int.self, "attempts"), lastError: try r.decode(String?.self, "last_error"),
                    sentAt: try r.decode(Int64?.self, "sent_at"))
    }

    static func decodePayload(_ json: String?) -> OutboxPayload {
        (try? JSONDecoder().decode(OutboxPayload.self, from: Data((json ?? "{}").utf8))) ?? OutboxPayload()
    }

    static func encodePayload(_ p: OutboxPayload) throws -> String {
        String(decoding: try JSONEncoder().encode(p), as: UTF8.self)
    }

    /// Records a local change; call inside the transaction that makes the change.
    func enqueue(_ op: OutboxOp, nodeId: String, payload: OutboxPayload, baseVersion: Int64?) throws {
        try db.run("INSERT INTO outbox(op, node_id, payload, base_version, request_id, created_at) VALUES (?,?,?,?,?,?)",
                   [op.rawValue, nodeId, try Self.encodePayload(payload), baseVersion, Self.newRequestId(), Vault.now])
    }

    static func newRequestId() -> String { UUID().uuidString.lowercased() }

    /// Every outbox entry, oldest first (the replay order).
    public func outbox() throws -> [OutboxEntry] {
        try db.query("SELECT \(Self.outboxColumns) FROM outbox ORDER BY seq").map(Self.outboxEntry)
    }

    /// The entries of one node, oldest first.
    func outbox(nodeId: String) throws -> [OutboxEntry] {
        try db.query("SELECT \(Self.outboxColumns) FROM outbox WHERE node_id = ? ORDER BY seq", [nodeId]).map(Self.outboxEntry)
    }

    /// Entry `seq` as it is now, or nil once it is gone.
    public func outboxEntry(seq: Int64) throws -> OutboxEntry? {
        try db.queryOne("SELECT \(Self.outboxColumns) FROM outbox WHERE seq = ?", [seq]).map(Self.outboxEntry)
    }

    /// The state of entry `seq` now, or nil once it is gone (another command may hold it meanwhile).
    public func outboxState(seq: Int64) throws -> OutboxState? {
        try db.queryOne("SELECT state FROM outbox WHERE seq = ?", [seq])?.decode(OutboxState.self, "state")
    }

    /// Notes that entry `seq` is about to be sent: if the process dies before the answer is
    /// recorded, the next replay knows the server may already have applied it.
    public func markOutboxSent(seq: Int64) throws {
        try db.run("UPDATE outbox SET sent_at = ? WHERE seq = ?", [Vault.now, seq])
    }

    /// The server id this device chose for the node entry `e` creates (a folder, or a new file's
    /// first upload): `proposed` (by default a new random id) stored in the entry now when it has
    /// none, so it is on disk before the first request that carries it.
    public func clientId(for e: OutboxEntry, proposing proposed: String = RemoteCodec.newId()) throws -> String {
        try db.transaction {
            let current = try db.scalar(String.self, "SELECT payload FROM outbox WHERE seq = ?", [e.seq])
            var p = Self.decodePayload(current ?? "{}")
            if let id = p.clientId { return id }
            let id = proposed
            p.clientId = id
            try db.run("UPDATE outbox SET payload = ? WHERE seq = ?", [try Self.encodePayload(p), e.seq])
            return id
        }
    }

    /// Records that entry `seq` could not be replayed: `.conflict` or `.failed`, with the reason
    /// people see in `vault status`.
    public func markOutbox(seq: Int64, _ state: OutboxState, reason: String) throws {
        try db.run("UPDATE outbox SET state = ?, last_error = ?, attempts = attempts + 1, sent_at = NULL WHERE seq = ?",
                   [state.rawValue, reason, seq])
    }

    // MARK: - Holds (`vault transfers pause|cancel|resume`)

    /// Pauses (or cancels) the entries of `nodeId` still to replay. Returns how many it marked.
    /// Only bookkeeping: safe beside a running `vault sync`, which notices at its next progress write.
    @discardableResult
    public func holdOutbox(nodeId: String, cancel: Bool) throws -> Int {
        try db.run("UPDATE outbox SET state = ? WHERE node_id = ? AND state IN ('pending', 'failed', 'paused', 'cancelled')",
                   [(cancel ? OutboxState.cancelled : .paused).rawValue, nodeId])
    }

    /// Puts paused or cancelled entries (of one node, or all) back in line, with their transfers.
    @discardableResult
    public func releaseOutbox(nodeId: String?) throws -> Int {
        try db.transaction {
            let held = "('\(TransferState.paused.rawValue)', '\(TransferState.cancelled.rawValue)')"
            if let nodeId {
                try db.run("UPDATE transfers SET state = 'queued' WHERE node_id = ? AND state IN \(held)", [nodeId])
                return try db.run("UPDATE outbox SET state = 'pending' WHERE node_id = ? AND state IN ('paused', 'cancelled')", [nodeId])
            }
            try db.run("UPDATE transfers SET state = 'queued' WHERE state IN \(held)")
            return try db.run("UPDATE outbox SET state = 'pending' WHERE state IN ('paused', 'cancelled')")
        }
    }

    /// `paused` or `cancelled` when the user holds the uploads of `nodeId`, else nil.
    public func outboxHold(nodeId: String) throws -> OutboxState? {
        try db.queryOne("SELECT state FROM outbox WHERE node_id = ? AND state IN ('paused', 'cancelled') LIMIT 1", [nodeId])?
            .decode(OutboxState.self, "state")
    }

    /// Unfinished upload transfers whose entries the user holds: the sync layer aborts a
    /// cancelled one's server session and shows each as paused or cancelled.
    public func heldUploadTransfers() throws -> [(transfer: TransferRow, hold: OutboxState)] {
        try db.query("""
            SELECT DISTINCT \(Self.transferColumns(prefix: "t.")), o.state AS hold FROM transfers t JOIN outbox o ON o.node_id = t.node_id
            WHERE t.direction = 'upload' AND t.state != 'done' AND o.state IN ('paused', 'cancelled')
            """).map { (try Self.transferRow($0), try $0.decode(OutboxState.self, "hold")) }
    }

    // MARK: - For people

    /// Entries by state.
    public func outboxCounts() throws -> OutboxCounts {
        var c = OutboxCounts()
        for r in try db.query("SELECT state, count(*) AS n FROM outbox GROUP BY state") {
            let n = try r.decode(Int.self, "n")
            switch OutboxState(rawValue: try r.decode(String.self, "state")) {
            case .pending?: c.pending += n
            case .conflict?: c.conflict += n
            case .paused?, .cancelled?: c.held += n
            case .failed?, nil: c.failed += n
            }
        }
        return c
    }

    /// Entries in conflict or failed, oldest first (at most `limit`), with their reasons.
    public func outboxProblems(limit: Int = 20) throws -> [OutboxProblem] {
        try db.query("SELECT \(Self.outboxColumns) FROM outbox WHERE state IN ('conflict', 'failed') ORDER BY seq LIMIT ?", [limit])
            .map(Self.outboxEntry).map { e in
                let path = try node(id: e.nodeId).map { try self.path(of: $0) } ?? "(removed) \(e.payload.name ?? e.nodeId)"
                return OutboxProblem(path: path, op: e.op, state: e.state, reason: e.lastError)
            }
    }
}
