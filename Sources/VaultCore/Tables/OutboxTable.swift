import Foundation
import VaultSQL

/// The SQL of the `outbox` table: local changes waiting for the server, in order
/// (docs/outbox.md). Since schema 11 (issue 21) the op and state are small integers (`Codes`);
/// since schema 14 an entry takes the fields it shares with its node (name, parent, blob, size,
/// SHA-256, mime) from the node's row while the node holds them alike (`from_node`, a mask; the
/// triggers `nodes_keep_outbox_*` copy them into the entry before the node changes one or goes),
/// keeps those it does not share in columns of their own, and the rest of its payload (server
/// id, upload session, flags, client id) as a compact record (`CompactColumns.payload`); the
/// request id is stored as its 16 bytes (`CompactColumns.requestKey`, as in `transfers`).
/// Typed reads and writes only; the caller (`Vault+Outbox`, the compaction rules, the push and
/// pull stores) holds the transaction and the logic.
struct OutboxTable {
    let db: SQLDatabase

    /// Schema 11's columns (what migration 14 reads).
    static let schema11Columns = "seq, op, node_id, payload, base_version, request_id, state, attempts, last_error, sent_at"

    /// The entry of a schema-11 row selecting `schema11Columns`; throws `SQLError.Kind.decoding` on a damaged row.
    static func schema11Entry(_ r: SQLRow) throws -> OutboxEntry {
        OutboxEntry(seq: try r.decode(Int64.self, "seq"), op: try Codes.op(try r.decode(Int64.self, "op")),
                    nodeId: try NodesTable.nodeId(r["node_id"], column: "node_id"),
                    payload: try CompactColumns.payload(try r.decode([UInt8].self, "payload"), column: "payload"),
                    baseVersion: try r.decode(Int64?.self, "base_version"),
                    requestId: try r.decode(String.self, "request_id"), state: try Codes.state(try r.decode(Int64.self, "state")),
                    attempts: try r.decode(Int.self, "attempts"), lastError: try r.decode(String?.self, "last_error"),
                    sentAt: try r.decode(Int64?.self, "sent_at"))
    }

    /// The stored form of a whole payload (schema 11; what migration 11 writes).
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
        let st = try db.prepare("SELECT \(schema11Columns), created_at FROM outbox_schema10 ORDER BY seq")
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

    // MARK: - Schema (migration 14; frozen: a change is a new migration)

    /// The schema-13 table set aside (its index and the counters' triggers on it dropped first,
    /// so the new table's take their names).
    static let setAside13SQL = """
        DROP TRIGGER counters_outbox_delete;
        DROP TRIGGER counters_outbox_state;
        DROP INDEX outbox_node;
        ALTER TABLE outbox RENAME TO outbox_schema13;
        """

    /// Schema 14's table: `from_node` is a mask of the fields the entry takes from its node's
    /// row (`SharedField`), each field it shares but does not take from the node has a column,
    /// and `payload` holds the rest (format 3, without the shared fields). The counters' triggers,
    /// and the triggers that copy what an entry takes from its node into the entry before the
    /// node changes one of those fields (or its id) or goes.
    static let schema14SQL = """
        CREATE TABLE outbox(
          seq INTEGER PRIMARY KEY AUTOINCREMENT,
          op INTEGER NOT NULL,
          node_id BLOB NOT NULL,
          payload BLOB NOT NULL,
          base_version INTEGER,
          request_id BLOB NOT NULL,
          state INTEGER NOT NULL DEFAULT 0,
          attempts INTEGER NOT NULL DEFAULT 0,
          last_error TEXT,
          sent_at INTEGER,
          created_at INTEGER NOT NULL,
          from_node INTEGER NOT NULL DEFAULT 0,
          name TEXT,
          parent_id BLOB,
          blob_id BLOB,
          size INTEGER,
          sha256 BLOB,
          mime TEXT
        );
        CREATE INDEX outbox_node ON outbox(node_id);
        \(CountersTable.outboxTriggersSQL(schema: 11))
        CREATE TRIGGER nodes_keep_outbox_update BEFORE UPDATE ON nodes
        WHEN NEW.id IS NOT OLD.id OR NEW.parent_id IS NOT OLD.parent_id OR NEW.name IS NOT OLD.name
          OR NEW.local_path IS NOT OLD.local_path OR NEW.size IS NOT OLD.size OR NEW.sha256 IS NOT OLD.sha256
          OR NEW.mime_type IS NOT OLD.mime_type BEGIN
          \(keepEntries)
        END;
        CREATE TRIGGER nodes_keep_outbox_delete BEFORE DELETE ON nodes BEGIN
          \(keepEntries)
        END;
        """

    /// The fields of a payload an entry may take from its node's row: bit, column, node column.
    enum SharedField: Int, CaseIterable {
        case name, parentId, blobId, size, sha256, mimeType
        var bit: Int64 { 1 << Int64(rawValue) }
        var column: String { ["name", "parent_id", "blob_id", "size", "sha256", "mime"][rawValue] }
        var nodeColumn: String { ["name", "parent_id", "local_path", "size", "sha256", "mime_type"][rawValue] }
    }

    /// What the triggers copy into the entries of a node before it changes or goes.
    private static let keepEntries: String = {
        let sets = SharedField.allCases.map { "\($0.column) = CASE WHEN from_node & \($0.bit) THEN OLD.\($0.nodeColumn) ELSE \($0.column) END" }
        return "UPDATE outbox SET from_node = 0, \(sets.joined(separator: ", ")) WHERE node_id = OLD.id AND from_node != 0;"
    }()

    /// Migration 14's copy: every entry of the schema-13 table into schema 14's, same `seq`,
    /// streamed, each taking from its node what the node holds alike; the table's sequence
    /// carried over; the transfers' request ids in their stored form. `crashPoint` is called
    /// after each entry and once the copy is done.
    static func copySchema13Rows(_ db: SQLDatabase, crashPoint: (String) -> Void) throws {
        let table = OutboxTable(db: db)
        let st = try db.prepare("SELECT \(schema11Columns), created_at FROM outbox_schema13 ORDER BY seq")
        while try st.step() {
            let r = st.row()
            try table.insert(try schema11Entry(r), now: try r.decode(Int64.self, "created_at"), counted: false)
            crashPoint("migration-14-row")
        }
        try db.run("DELETE FROM sqlite_sequence WHERE name = 'outbox'")
        try db.run("UPDATE sqlite_sequence SET name = 'outbox' WHERE name = 'outbox_schema13'")
        try CompactColumns.rekey(db, table: "transfers", column: "request_id", as: CompactColumns.requestKey)
        crashPoint("migration-14-copied")
    }

    /// The schema-13 table dropped.
    static let dropSchema13SQL = "DROP TABLE outbox_schema13;"

    // MARK: - Stored forms (schema 14)

    /// The columns an entry is read from (`entry`): the outbox's, and its node's shared fields.
    private static let selection: String = {
        let own = ["seq", "op", "node_id", "payload", "base_version", "request_id", "state", "attempts", "last_error", "sent_at", "from_node"]
            + SharedField.allCases.map(\.column)
        return (own.map { "o.\($0) AS \($0)" } + SharedField.allCases.map { "n.\($0.nodeColumn) AS node_\($0.column)" }).joined(separator: ", ")
    }()

    /// `SELECT` of `selection` from the outbox joined to the nodes its entries take fields from.
    private static let select = "SELECT \(selection) FROM outbox o LEFT JOIN nodes n ON o.from_node != 0 AND n.id = o.node_id"

    /// The entry of a row selecting `selection`; throws `SQLError.Kind.decoding` on a damaged row
    /// (a shared field in the payload, a field taken from a node that is not there).
    static func entry(_ r: SQLRow) throws -> OutboxEntry {
        var p = try CompactColumns.payload(try r.decode([UInt8].self, "payload"), column: "payload")
        guard p.name == nil, p.parentId == nil, p.blobId == nil, p.size == nil, p.sha256 == nil, p.mimeType == nil else {
            throw SQLError(kind: .decoding, code: .mismatch, message: "column \"payload\" holds a field of its own column")
        }
        let mask = try r.decode(Int64.self, "from_node")
        func field(_ f: SharedField) throws -> SQLValue {
            guard mask & f.bit != 0 else { return r[f.column] }
            let v = r["node_" + f.column]
            if v == .null { throw SQLError(kind: .decoding, code: .mismatch, message: "column \"from_node\" takes \(f.column) from a node without it") }
            return v
        }
        p.name = try text(try field(.name), column: "name")
        p.parentId = try CompactColumns.id(try field(.parentId), column: "parent_id")
        p.blobId = try CompactColumns.id(try field(.blobId), column: "blob_id")
        switch try field(.size) {
        case .null: p.size = nil
        case .integer(let n): p.size = UInt64(bitPattern: n)
        default: throw SQLError(kind: .decoding, code: .mismatch, message: "column \"size\" holds no size")
        }
        p.sha256 = try CompactColumns.digest(try field(.sha256), column: "sha256")
        p.mimeType = try text(try field(.mimeType), column: "mime")
        guard let requestId = try CompactColumns.requestId(r["request_id"], column: "request_id") else {
            throw SQLError(kind: .decoding, code: .mismatch, message: "column \"request_id\" holds NULL")
        }
        return OutboxEntry(seq: try r.decode(Int64.self, "seq"), op: try Codes.op(try r.decode(Int64.self, "op")),
                           nodeId: try NodesTable.nodeId(r["node_id"], column: "node_id"), payload: p,
                           baseVersion: try r.decode(Int64?.self, "base_version"), requestId: requestId,
                           state: try Codes.state(try r.decode(Int64.self, "state")),
                           attempts: try r.decode(Int.self, "attempts"), lastError: try r.decode(String?.self, "last_error"),
                           sentAt: try r.decode(Int64?.self, "sent_at"))
    }

    /// The text a column holds (nil for NULL); anything else is damage.
    private static func text(_ v: SQLValue, column: String) throws -> String? {
        switch v {
        case .null: return nil
        case .text(let s): return s
        default: throw SQLError(kind: .decoding, code: .mismatch, message: "column \"\(column)\" holds no text")
        }
    }

    /// How a payload of node `nodeKey` is stored: the compact record of the fields not shared,
    /// the mask of those the node holds alike (compared as stored, so a read gives back exactly
    /// `p`), and the value of each shared field's column (NULL where taken from the node).
    private struct StoredPayload {
        var payload: [UInt8]
        var fromNode: Int64
        var shared: [SQLValue]
        /// The columns it is written to: the payload, the mask and the shared fields' columns.
        private static let names = ["payload", "from_node"] + SharedField.allCases.map(\.column)
        /// `names` and as many `?` (an INSERT's), and `name = ?, ...` (an UPDATE's).
        static let columns = names.joined(separator: ", ")
        static let marks = Array(repeating: "?", count: names.count).joined(separator: ",")
        static let assignments = names.map { "\($0) = ?" }.joined(separator: ", ")
        var values: [any SQLBindable] { [SQLValue.blob(payload), SQLValue.integer(fromNode)] + shared }
    }

    private static let nodeFieldsSQL = "SELECT \(SharedField.allCases.map(\.nodeColumn).joined(separator: ", ")) FROM nodes WHERE id = ?"

    private func stored(_ p: OutboxPayload, nodeKey: SQLValue) throws -> StoredPayload {
        var own: [SQLValue] = [p.name.map { .text($0) } ?? .null, CompactColumns.key(p.parentId), CompactColumns.key(p.blobId),
                               p.size.map { .integer(Int64(bitPattern: $0)) } ?? .null, CompactColumns.digest(p.sha256),
                               p.mimeType.map { .text($0) } ?? .null]
        var rest = p
        rest.name = nil; rest.parentId = nil; rest.blobId = nil; rest.size = nil; rest.sha256 = nil; rest.mimeType = nil
        var mask: Int64 = 0
        if own.contains(where: { $0 != .null }), let node = try db.queryOne(Self.nodeFieldsSQL, [nodeKey]) {
            for f in SharedField.allCases where own[f.rawValue] != .null && node[f.nodeColumn] == own[f.rawValue] {
                mask |= f.bit
                own[f.rawValue] = .null
            }
        }
        return StoredPayload(payload: CompactColumns.payload(rest), fromNode: mask, shared: own)
    }

    /// How a payload of entry `seq` is stored, against the entry's node (nil once it is gone).
    private func stored(_ p: OutboxPayload, seq: Int64) throws -> StoredPayload? {
        guard let node = try db.queryOne("SELECT node_id FROM outbox WHERE seq = ?", [seq]) else { return nil }
        return try stored(p, nodeKey: node["node_id"])
    }

    // MARK: - Reads

    /// Every entry (of `nodeId`, when given), oldest first.
    func entries(nodeId: String? = nil) throws -> [OutboxEntry] {
        if let nodeId {
            return try db.query("\(Self.select) WHERE o.node_id = ? ORDER BY o.seq", [CompactColumns.key(nodeId)]).map(Self.entry)
        }
        return try db.query("\(Self.select) ORDER BY o.seq").map(Self.entry)
    }

    /// The entries `keep` accepts, oldest first, read row by row (only those kept are held).
    func entries(where keep: (OutboxEntry) -> Bool) throws -> [OutboxEntry] {
        let st = try db.prepare("\(Self.select) ORDER BY o.seq")
        var out: [OutboxEntry] = []
        while try st.step() {
            let e = try Self.entry(st.row())
            if keep(e) { out.append(e) }
        }
        return out
    }

    func entry(seq: Int64) throws -> OutboxEntry? {
        try db.queryOne("\(Self.select) WHERE o.seq = ?", [seq]).map(Self.entry)
    }

    /// Entries in conflict or failed, oldest first, at most `limit`.
    func problems(limit: Int) throws -> [OutboxEntry] {
        try db.query("\(Self.select) WHERE o.state IN (?, ?) ORDER BY o.seq LIMIT ?",
                     [OutboxState.conflict, OutboxState.failed, limit]).map(Self.entry)
    }

    func state(seq: Int64) throws -> OutboxState? {
        try db.scalar(Int64.self, "SELECT state FROM outbox WHERE seq = ?", [seq]).map(Codes.state)
    }

    /// The payload of entry `seq`, nil once it is gone.
    func payload(seq: Int64) throws -> OutboxPayload? {
        try entry(seq: seq)?.payload
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
        let node = CompactColumns.key(nodeId), p = try stored(payload, nodeKey: node)
        try db.run("INSERT INTO outbox(op, node_id, base_version, request_id, created_at, \(StoredPayload.columns)) VALUES (?,?,?,?,?,\(StoredPayload.marks))",
                   [op, node, baseVersion, CompactColumns.requestKey(requestId), now] + p.values)
        try CountersTable(db: db).countInsertedEntry(state: .pending)
    }

    /// Inserts `e` with its own sequence number and every field (a pull's plan; migration 14,
    /// whose rows are counted already: `counted: false`).
    func insert(_ e: OutboxEntry, now: Int64, counted: Bool = true) throws {
        let node = CompactColumns.key(e.nodeId), p = try stored(e.payload, nodeKey: node)
        try db.run("""
            INSERT INTO outbox(seq, op, node_id, base_version, request_id, state, attempts, last_error, sent_at, created_at, \(StoredPayload.columns))
            VALUES (?,?,?,?,?,?,?,?,?,?,\(StoredPayload.marks))
            """, [e.seq, e.op, node, e.baseVersion, CompactColumns.requestKey(e.requestId), e.state,
                  e.attempts, e.lastError, e.sentAt, now] + p.values)
        if counted { try CountersTable(db: db).countInsertedEntry(state: e.state) }
    }

    /// Writes every field of `e` to the entry of its sequence number.
    func replace(_ e: OutboxEntry) throws {
        let node = CompactColumns.key(e.nodeId), p = try stored(e.payload, nodeKey: node)
        try db.run("""
            UPDATE outbox SET op = ?, node_id = ?, base_version = ?, request_id = ?, state = ?, attempts = ?,
              last_error = ?, sent_at = ?, \(StoredPayload.assignments) WHERE seq = ?
            """, [e.op, node, e.baseVersion, CompactColumns.requestKey(e.requestId), e.state,
                  e.attempts, e.lastError, e.sentAt] + p.values + [e.seq])
    }

    /// Rewrites entry `seq` as a fresh pending `op` (compaction).
    func rewrite(seq: Int64, op: OutboxOp, payload: OutboxPayload, baseVersion: Int64?) throws {
        guard let p = try stored(payload, seq: seq) else { return }
        try db.run("""
            UPDATE outbox SET op = ?, base_version = ?, state = ?, last_error = NULL, sent_at = NULL, \(StoredPayload.assignments) WHERE seq = ?
            """, [op, baseVersion, OutboxState.pending] + p.values + [seq])
    }

    /// Sets the payload of entry `seq`, and its request id when given.
    func setPayload(seq: Int64, _ payload: OutboxPayload, requestId: String? = nil) throws {
        guard let p = try stored(payload, seq: seq) else { return }
        if let requestId {
            try db.run("UPDATE outbox SET request_id = ?, \(StoredPayload.assignments) WHERE seq = ?",
                       [CompactColumns.requestKey(requestId)] + p.values + [seq])
        } else {
            try db.run("UPDATE outbox SET \(StoredPayload.assignments) WHERE seq = ?", p.values + [seq])
        }
    }

    /// Gives entry `seq` new content under a new request id; a failed entry goes back to pending.
    func setNewContent(seq: Int64, _ payload: OutboxPayload, requestId: String) throws {
        guard let p = try stored(payload, seq: seq) else { return }
        try db.run("""
            UPDATE outbox SET request_id = ?, last_error = CASE state WHEN ? THEN NULL ELSE last_error END,
              state = CASE state WHEN ? THEN ? ELSE state END, \(StoredPayload.assignments) WHERE seq = ?
            """, [CompactColumns.requestKey(requestId), OutboxState.failed, OutboxState.failed, OutboxState.pending] + p.values + [seq])
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
