import Foundation
import VaultSQL

/// The SQL of the `outbox` table: local changes waiting for the server, in order
/// (docs/outbox.md), with their payloads as JSON. Typed reads and writes only; the caller
/// (`Vault+Outbox`, the compaction rules, the push and pull stores) holds the transaction and
/// the logic.
struct OutboxTable {
    let db: SQLDatabase

    static let columns = "seq, op, node_id, payload, base_version, request_id, state, attempts, last_error, sent_at"

    /// The entry of a row selecting `columns`; throws `SQLError.Kind.decoding` on a damaged row.
    static func entry(_ r: SQLRow) throws -> OutboxEntry {
        OutboxEntry(seq: try r.decode(Int64.self, "seq"), op: try r.decode(OutboxOp.self, "op"), nodeId: try NodesTable.nodeId(r["node_id"], column: "node_id"),
                    payload: decodePayload(try r.decode(String.self, "payload")), baseVersion: try r.decode(Int64?.self, "base_version"),
                    requestId: try r.decode(String.self, "request_id"), state: try r.decode(OutboxState.self, "state"),
                    attempts: try r.decode(Int.self, "attempts"), lastError: try r.decode(String?.self, "last_error"),
                    sentAt: try r.decode(Int64?.self, "sent_at"))
    }

    /// A payload from its JSON (an unreadable one is empty).
    static func decodePayload(_ json: String?) -> OutboxPayload {
        (try? JSONDecoder().decode(OutboxPayload.self, from: Data((json ?? "{}").utf8))) ?? OutboxPayload()
    }

    static func encodePayload(_ p: OutboxPayload) throws -> String {
        String(decoding: try JSONEncoder().encode(p), as: UTF8.self)
    }

    // MARK: - Reads

    /// Every entry (of `nodeId`, when given), oldest first.
    func entries(nodeId: String? = nil) throws -> [OutboxEntry] {
        if let nodeId {
            return try db.query("SELECT \(Self.columns) FROM outbox WHERE node_id = ? ORDER BY seq", [CompactColumns.key(nodeId)]).map(Self.entry)
        }
        return try db.query("SELECT \(Self.columns) FROM outbox ORDER BY seq").map(Self.entry)
    }

    /// The entries `keep` accepts, oldest first, read row by row (only those kept are held).
    func entries(where keep: (OutboxEntry) -> Bool) throws -> [OutboxEntry] {
        let st = try db.prepare("SELECT \(Self.columns) FROM outbox ORDER BY seq")
        var out: [OutboxEntry] = []
        while try st.step() {
            let e = try Self.entry(st.row())
            if keep(e) { out.append(e) }
        }
        return out
    }

    func entry(seq: Int64) throws -> OutboxEntry? {
        try db.queryOne("SELECT \(Self.columns) FROM outbox WHERE seq = ?", [seq]).map(Self.entry)
    }

    /// Entries in conflict or failed, oldest first, at most `limit`.
    func problems(limit: Int) throws -> [OutboxEntry] {
        try db.query("SELECT \(Self.columns) FROM outbox WHERE state IN (?, ?) ORDER BY seq LIMIT ?",
                     [OutboxState.conflict, OutboxState.failed, limit]).map(Self.entry)
    }

    func state(seq: Int64) throws -> OutboxState? {
        try db.queryOne("SELECT state FROM outbox WHERE seq = ?", [seq])?.decode(OutboxState.self, "state")
    }

    /// The stored payload JSON of entry `seq`, nil once it is gone.
    func payloadJSON(seq: Int64) throws -> String? {
        try db.scalar(String.self, "SELECT payload FROM outbox WHERE seq = ?", [seq])
    }

    /// `paused` or `cancelled` when an entry of `nodeId` is held so.
    func hold(nodeId: String) throws -> OutboxState? {
        try db.queryOne("SELECT state FROM outbox WHERE node_id = ? AND state IN (?, ?) LIMIT 1",
                        [CompactColumns.key(nodeId), OutboxState.paused, OutboxState.cancelled])?
            .decode(OutboxState.self, "state")
    }

    /// The state of each entry of the children of folder `folderId`, by child id.
    func statesOfChildren(of folderId: String) throws -> [(nodeId: String, state: String)] {
        try db.query("SELECT o.node_id AS node_id, o.state AS state FROM outbox o JOIN nodes n ON n.id = o.node_id WHERE n.parent_id = ?",
                     [CompactColumns.key(folderId)]).map { (try NodesTable.nodeId($0["node_id"], column: "node_id"), try $0.decode(String.self, "state")) }
    }

    /// The sequence number of the last entry ever inserted (0 for none).
    func lastSeq() throws -> Int64 {
        try db.scalar(Int64.self, "SELECT seq FROM sqlite_sequence WHERE name = 'outbox'") ?? 0
    }

    // MARK: - Writes

    /// Appends a pending entry created `now`.
    func append(_ op: OutboxOp, nodeId: String, payload: OutboxPayload, baseVersion: Int64?, requestId: String, now: Int64) throws {
        try db.run("INSERT INTO outbox(op, node_id, payload, base_version, request_id, created_at) VALUES (?,?,?,?,?,?)",
                   [op, CompactColumns.key(nodeId), try Self.encodePayload(payload), baseVersion, requestId, now])
        try CountersTable(db: db).countInsertedEntry(state: .pending)
    }

    /// Inserts `e` with its own sequence number and every field (a pull's plan).
    func insert(_ e: OutboxEntry, now: Int64) throws {
        try db.run("""
            INSERT INTO outbox(seq, op, node_id, payload, base_version, request_id, state, attempts, last_error, sent_at, created_at)
            VALUES (?,?,?,?,?,?,?,?,?,?,?)
            """, [e.seq, e.op, CompactColumns.key(e.nodeId), try Self.encodePayload(e.payload), e.baseVersion, e.requestId, e.state,
                  e.attempts, e.lastError, e.sentAt, now])
        try CountersTable(db: db).countInsertedEntry(state: e.state)
    }

    /// Writes every field of `e` to the entry of its sequence number.
    func replace(_ e: OutboxEntry) throws {
        try db.run("""
            UPDATE outbox SET op = ?, node_id = ?, payload = ?, base_version = ?, request_id = ?, state = ?, attempts = ?,
              last_error = ?, sent_at = ? WHERE seq = ?
            """, [e.op, CompactColumns.key(e.nodeId), try Self.encodePayload(e.payload), e.baseVersion, e.requestId, e.state,
                  e.attempts, e.lastError, e.sentAt, e.seq])
    }

    /// Rewrites entry `seq` as a fresh pending `op` (compaction).
    func rewrite(seq: Int64, op: OutboxOp, payload: OutboxPayload, baseVersion: Int64?) throws {
        try db.run("""
            UPDATE outbox SET op = ?, payload = ?, base_version = ?, state = ?, last_error = NULL, sent_at = NULL WHERE seq = ?
            """, [op, try Self.encodePayload(payload), baseVersion, OutboxState.pending, seq])
    }

    /// Sets the payload of entry `seq`, and its request id when given.
    func setPayload(seq: Int64, _ payload: OutboxPayload, requestId: String? = nil) throws {
        if let requestId {
            try db.run("UPDATE outbox SET payload = ?, request_id = ? WHERE seq = ?", [try Self.encodePayload(payload), requestId, seq])
        } else {
            try db.run("UPDATE outbox SET payload = ? WHERE seq = ?", [try Self.encodePayload(payload), seq])
        }
    }

    /// Gives entry `seq` new content under a new request id; a failed entry goes back to pending.
    func setNewContent(seq: Int64, _ payload: OutboxPayload, requestId: String) throws {
        try db.run("""
            UPDATE outbox SET payload = ?, request_id = ?, last_error = CASE state WHEN ? THEN NULL ELSE last_error END,
              state = CASE state WHEN ? THEN ? ELSE state END WHERE seq = ?
            """, [try Self.encodePayload(payload), requestId, OutboxState.failed, OutboxState.failed, OutboxState.pending, seq])
    }

    func markSent(seq: Int64, at time: Int64) throws {
        try db.run("UPDATE outbox SET sent_at = ? WHERE seq = ?", [time, seq])
    }

    /// Records a failed replay: `state` with `reason`, one more attempt, not sent.
    func markFailed(seq: Int64, _ state: OutboxState, reason: String) throws {
        try db.run("UPDATE outbox SET state = ?, last_error = ?, attempts = attempts + 1, sent_at = NULL WHERE seq = ?",
                   [state, reason, seq])
    }

    /// Holds the entries of `nodeId` still to replay as `state`; returns how many.
    func hold(nodeId: String, as state: OutboxState) throws -> Int {
        try db.run("UPDATE outbox SET state = ? WHERE node_id = ? AND state IN (?, ?, ?, ?)",
                   [state, CompactColumns.key(nodeId), OutboxState.pending, OutboxState.failed, OutboxState.paused, OutboxState.cancelled])
    }

    /// Puts the paused or cancelled entries (of `nodeId`, or all) back to pending; returns how many.
    func release(nodeId: String?) throws -> Int {
        let held: [any SQLBindable] = [OutboxState.paused, OutboxState.cancelled]
        if let nodeId {
            return try db.run("UPDATE outbox SET state = ? WHERE node_id = ? AND state IN (?, ?)", [OutboxState.pending, CompactColumns.key(nodeId)] + held)
        }
        return try db.run("UPDATE outbox SET state = ? WHERE state IN (?, ?)", [OutboxState.pending] + held)
    }

    func delete(seq: Int64) throws {
        try db.run("DELETE FROM outbox WHERE seq = ?", [seq])
    }
}

extension Vault {
    /// The `outbox` table of this vault's database.
    var outboxTable: OutboxTable { OutboxTable(db: db) }
}
