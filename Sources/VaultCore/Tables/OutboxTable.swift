import Foundation
import VaultSQL

/// The SQL of the `outbox` table: local changes waiting for the server, in order
/// (docs/outbox.md). Since schema 11 (issue 21) the op and state are small integers (`Codes`)
/// and the payload a compact binary record (`CompactColumns.payload`); the request id stays
/// its UUID text, which transfers rows share. Typed reads and writes only; the caller
/// (`Vault+Outbox`, the compaction rules, the push and pull stores) holds the transaction and
/// the logic.
struct OutboxTable {
    let db: SQLDatabase

    static let columns = "seq, op, node_id, payload, base_version, request_id, state, attempts, last_error, sent_at"

    /// The entry of a row selecting `columns`; throws `SQLError.Kind.decoding` on a damaged row.
    static func entry(_ r: SQLRow) throws -> OutboxEntry {
        OutboxEntry(seq: try r.decode(Int64.self, "seq"), op: try Codes.op(try r.decode(Int64.self, "op")),
                    nodeId: try NodesTable.nodeId(r["node_id"], column: "node_id"),
                    payload: try CompactColumns.payload(try r.decode([UInt8].self, "payload"), column: "payload"),
                    baseVersion: try r.decode(Int64?.self, "base_version"),
                    requestId: try r.decode(String.self, "request_id"), state: try Codes.state(try r.decode(Int64.self, "state")),
                    attempts: try r.decode(Int.self, "attempts"), lastError: try r.decode(String?.self, "last_error"),
                    sentAt: try r.decode(Int64?.self, "sent_at"))
    }

    /// The stored form of a payload (schema 11).
    static func stored(_ p: OutboxPayload) -> SQLValue { .blob(CompactColumns.payload(p)) }

    // MARK: - Stored forms (schema 11)

    /// The small integers the `op` and `state` columns hold (frozen: stored).
    enum Codes {
        static func code(_ op: OutboxOp) -> Int64 {
            switch op { case .createFolder: 1; case .upload: 2; case .move: 3; case .delete: 4; case .discardUpload: 5 }
        }

        static func op(_ c: Int64) throws -> OutboxOp {
            switch c {
            case 1: return .createFolder
            case 2: return .upload
            case 3: return .move
            case 4: return .delete
            case 5: return .discardUpload
            default: throw SQLError(kind: .decoding, code: .mismatch, message: "column \"op\" holds \(c), no outbox op")
            }
        }

        static func code(_ s: OutboxState) -> Int64 {
            switch s { case .pending: 0; case .conflict: 1; case .failed: 2; case .paused: 3; case .cancelled: 4 }
        }

        static func state(_ c: Int64) throws -> OutboxState {
            switch c {
            case 0: return .pending
            case 1: return .conflict
            case 2: return .failed
            case 3: return .paused
            case 4: return .cancelled
            default: throw SQLError(kind: .decoding, code: .mismatch, message: "column \"state\" holds \(c), no outbox state")
            }
        }
    }

    // MARK: - Migration 11

    /// The schema-10 table set aside (its index and the counters' triggers on it dropped first).
    static let setAsideSQL = """
        DROP TRIGGER counters_outbox_delete;
        DROP TRIGGER counters_outbox_state;
        DROP INDEX outbox_node;
        ALTER TABLE outbox RENAME TO outbox_schema10;
        """

    /// The compact table: integer op and state, the payload as a compact record, the node as
    /// its key; no unique index of the request id (no query looks an entry up by it: it is a
    /// random UUID, 48 B per entry in an index that served nothing). The counters' triggers on it.
    static let compactSchemaSQL = """
        CREATE TABLE outbox(
          seq INTEGER PRIMARY KEY AUTOINCREMENT,
          op INTEGER NOT NULL,
          node_id BLOB NOT NULL,
          payload BLOB NOT NULL,
          base_version INTEGER,
          request_id TEXT NOT NULL,
          state INTEGER NOT NULL DEFAULT 0,
          attempts INTEGER NOT NULL DEFAULT 0,
          last_error TEXT,
          sent_at INTEGER,
          created_at INTEGER NOT NULL
        );
        CREATE INDEX outbox_node ON outbox(node_id);
        \(CountersTable.outboxTriggersSQL(schema: 11))
        """

    /// Migration 11's copy: every entry of the schema-10 table into the compact one, same `seq`,
    /// streamed; then the table's sequence (the highest `seq` ever used, which may be above every
    /// entry left) carried over. `crashPoint` is called after each entry and once the copy is done.
    static func copySchema10Rows(_ db: SQLDatabase, crashPoint: (String) -> Void) throws {
        let st = try db.prepare("SELECT \(columns), created_at FROM outbox_schema10 ORDER BY seq")
        while try st.step() {
            let r = st.row()
            guard let op = OutboxOp(rawValue: try r.decode(String.self, "op")) else {
                throw SQLError(kind: .decoding, code: .mismatch, message: "column \"op\" holds no outbox op")
            }
            // An unknown state counted as failed (`CountersTable.outboxBucket`): it is stored so.
            let state = OutboxState(rawValue: try r.decode(String.self, "state")) ?? .failed
            let payload = try JSONDecoder().decode(OutboxPayload.self, from: Data(try r.decode(String.self, "payload").utf8))
            try db.run("""
                INSERT INTO outbox(seq, op, node_id, payload, base_version, request_id, state, attempts, last_error, sent_at, created_at)
                VALUES (?,?,?,?,?,?,?,?,?,?,?)
                """, [try r.decode(Int64.self, "seq"), Codes.code(op), r["node_id"], stored(payload), r["base_version"], r["request_id"],
                      Codes.code(state), r["attempts"], r["last_error"], r["sent_at"], r["created_at"]])
            crashPoint("migration-11-row")
        }
        try db.run("DELETE FROM sqlite_sequence WHERE name = 'outbox'")
        try db.run("UPDATE sqlite_sequence SET name = 'outbox' WHERE name = 'outbox_schema10'")
        crashPoint("migration-11-copied")
    }

    /// The schema-10 table dropped (with its unique index of the request id).
    static let dropSchema10SQL = "DROP TABLE outbox_schema10;"

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
        try db.scalar(Int64.self, "SELECT state FROM outbox WHERE seq = ?", [seq]).map(Codes.state)
    }

    /// The stored payload of entry `seq`, nil once it is gone.
    func payload(seq: Int64) throws -> OutboxPayload? {
        try db.scalar([UInt8].self, "SELECT payload FROM outbox WHERE seq = ?", [seq]).map { try CompactColumns.payload($0, column: "payload") }
    }

    /// `paused` or `cancelled` when an entry of `nodeId` is held so.
    func hold(nodeId: String) throws -> OutboxState? {
        try db.scalar(Int64.self, "SELECT state FROM outbox WHERE node_id = ? AND state IN (?, ?) LIMIT 1",
                      [CompactColumns.key(nodeId), OutboxState.paused, OutboxState.cancelled]).map(Codes.state)
    }

    /// The state of each entry of the children of folder `folderId`, by child id.
    func statesOfChildren(of folderId: String) throws -> [(nodeId: String, state: OutboxState)] {
        try db.query("SELECT o.node_id AS node_id, o.state AS state FROM outbox o JOIN nodes n ON n.id = o.node_id WHERE n.parent_id = ?",
                     [CompactColumns.key(folderId)]).map {
            (try NodesTable.nodeId($0["node_id"], column: "node_id"), try Codes.state(try $0.decode(Int64.self, "state")))
        }
    }

    /// The sequence number of the last entry ever inserted (0 for none).
    func lastSeq() throws -> Int64 {
        try db.scalar(Int64.self, "SELECT seq FROM sqlite_sequence WHERE name = 'outbox'") ?? 0
    }

    // MARK: - Writes

    /// Appends a pending entry created `now`.
    func append(_ op: OutboxOp, nodeId: String, payload: OutboxPayload, baseVersion: Int64?, requestId: String, now: Int64) throws {
        try db.run("INSERT INTO outbox(op, node_id, payload, base_version, request_id, created_at) VALUES (?,?,?,?,?,?)",
                   [op, CompactColumns.key(nodeId), Self.stored(payload), baseVersion, requestId, now])
        try CountersTable(db: db).countInsertedEntry(state: .pending)
    }

    /// Inserts `e` with its own sequence number and every field (a pull's plan).
    func insert(_ e: OutboxEntry, now: Int64) throws {
        try db.run("""
            INSERT INTO outbox(seq, op, node_id, payload, base_version, request_id, state, attempts, last_error, sent_at, created_at)
            VALUES (?,?,?,?,?,?,?,?,?,?,?)
            """, [e.seq, e.op, CompactColumns.key(e.nodeId), Self.stored(e.payload), e.baseVersion, e.requestId, e.state,
                  e.attempts, e.lastError, e.sentAt, now])
        try CountersTable(db: db).countInsertedEntry(state: e.state)
    }

    /// Writes every field of `e` to the entry of its sequence number.
    func replace(_ e: OutboxEntry) throws {
        try db.run("""
            UPDATE outbox SET op = ?, node_id = ?, payload = ?, base_version = ?, request_id = ?, state = ?, attempts = ?,
              last_error = ?, sent_at = ? WHERE seq = ?
            """, [e.op, CompactColumns.key(e.nodeId), Self.stored(e.payload), e.baseVersion, e.requestId, e.state,
                  e.attempts, e.lastError, e.sentAt, e.seq])
    }

    /// Rewrites entry `seq` as a fresh pending `op` (compaction).
    func rewrite(seq: Int64, op: OutboxOp, payload: OutboxPayload, baseVersion: Int64?) throws {
        try db.run("""
            UPDATE outbox SET op = ?, payload = ?, base_version = ?, state = ?, last_error = NULL, sent_at = NULL WHERE seq = ?
            """, [op, Self.stored(payload), baseVersion, OutboxState.pending, seq])
    }

    /// Sets the payload of entry `seq`, and its request id when given.
    func setPayload(seq: Int64, _ payload: OutboxPayload, requestId: String? = nil) throws {
        if let requestId {
            try db.run("UPDATE outbox SET payload = ?, request_id = ? WHERE seq = ?", [Self.stored(payload), requestId, seq])
        } else {
            try db.run("UPDATE outbox SET payload = ? WHERE seq = ?", [Self.stored(payload), seq])
        }
    }

    /// Gives entry `seq` new content under a new request id; a failed entry goes back to pending.
    func setNewContent(seq: Int64, _ payload: OutboxPayload, requestId: String) throws {
        try db.run("""
            UPDATE outbox SET payload = ?, request_id = ?, last_error = CASE state WHEN ? THEN NULL ELSE last_error END,
              state = CASE state WHEN ? THEN ? ELSE state END WHERE seq = ?
            """, [Self.stored(payload), requestId, OutboxState.failed, OutboxState.failed, OutboxState.pending, seq])
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
