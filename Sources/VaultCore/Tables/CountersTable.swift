import VaultSQL

/// The SQL of the `counters` table: totals that `vault status`, `vault storage` and the browser's
/// bar read instead of scanning (issue 21), kept right in the transaction of every change that
/// moves them. Inserts into `nodes`, `blobs` and `outbox` are counted by their table types'
/// insert operations (`countInsertedNode`, `countBlob`, `countInsertedEntry`), and so is a blob
/// given to a node or moved to the cache (`BlobsTable.setNode`, `markCached`): with an
/// `AFTER INSERT` trigger on `nodes` a first pull of 20,000 nodes took 43% more CPU (5.0 s
/// against 3.5 s; most likely the statement journal SQLite keeps for a statement that fires a
/// trigger, whose pages SQLCipher encrypts).
/// Everything else — deletes, pinning, entries changing state, sync messages — is counted by
/// the triggers migration 7 creates (`schemaSQL`), whoever writes.
/// `vault doctor` compares the totals with `recount()` and rewrites a wrong one.
struct CountersTable {
    let db: SQLDatabase

    /// The maintained totals.
    enum Name: String, CaseIterable, Sendable {
        /// Rows of `nodes`, the root included.
        case nodes
        /// Rows of `sync_messages` (what `vault conflicts` lists).
        case conflicts
        /// Sealed bytes of cache blobs whose node is pinned.
        case pinnedBytes = "pinned_bytes"
        /// Sealed bytes of the other cache blobs (no node, or an unpinned one).
        case cachedBytes = "cached_bytes"
        /// Sealed bytes of staging blobs.
        case stagedBytes = "staged_bytes"
        /// Outbox entries by state, as `OutboxCounts` buckets them (an unknown state counts as failed).
        case outboxPending = "outbox_pending"
        case outboxConflict = "outbox_conflict"
        case outboxFailed = "outbox_failed"
        case outboxHeld = "outbox_held"
    }

    // MARK: - Schema (migration 7; frozen: a change is a new migration)

    /// The schema whose stored forms the SQL below is written for: states as text before 11,
    /// the outbox's as codes from 11 (`OutboxTable.Codes`), blob areas as codes from 12
    /// (`BlobsTable.Codes`). What a migration creates is frozen by its number.
    private static let current = 12

    /// The counter an outbox entry whose state is `state` (an SQL expression) counts in.
    private static func outboxBucket(_ state: String, schema: Int = current) -> String {
        func v(_ s: OutboxState) -> String { schema >= 11 ? String(OutboxTable.Codes.code(s)) : "'\(s.rawValue)'" }
        return "CASE \(state) WHEN \(v(.pending)) THEN 'outbox_pending' WHEN \(v(.conflict)) THEN 'outbox_conflict' "
            + "WHEN \(v(.paused)) THEN 'outbox_held' WHEN \(v(.cancelled)) THEN 'outbox_held' ELSE 'outbox_failed' END"
    }

    /// A blob area as an SQL literal of `schema`'s form.
    private static func area(_ a: BlobArea, _ schema: Int) -> String {
        schema >= 12 ? String(BlobsTable.Codes.code(a)) : "'\(a.rawValue)'"
    }

    /// The counter a blob row `b` (`NEW` or `OLD`) counts its sealed size in.
    private static func blobBucket(_ b: String, schema: Int = current) -> String {
        "CASE WHEN \(b).area = \(area(.staging, schema)) THEN 'staged_bytes' "
            + "WHEN EXISTS (SELECT 1 FROM nodes WHERE id = \(b).node_id AND pinned = 1) THEN 'pinned_bytes' ELSE 'cached_bytes' END"
    }

    /// Moves the cache bytes of node `n`'s blobs from cached to pinned `sign` times (-1: back).
    private static func movePinned(_ n: String, _ sign: String, schema: Int) -> String {
        """
        UPDATE counters SET value = value + (CASE name WHEN 'pinned_bytes' THEN 1 ELSE -1 END) * (\(sign))
            * (SELECT COALESCE(SUM(sealed_size), 0) FROM blobs WHERE node_id = \(n).id AND area = \(area(.cache, schema)))
          WHERE name IN ('pinned_bytes', 'cached_bytes');
        """
    }

    /// Every total, counted from the tables now: one row per counter (`name`, `value`).
    static let recountSQL = recountSQL(schema: current)

    /// Every total, counted from the tables of `schema`: one row per counter (`name`, `value`).
    static func recountSQL(schema: Int) -> String {
        let cache = area(.cache, schema), staging = area(.staging, schema)
        return """
        SELECT 'nodes' AS name, (SELECT count(*) FROM nodes) AS value
        UNION ALL SELECT 'conflicts', (SELECT count(*) FROM sync_messages)
        UNION ALL SELECT 'pinned_bytes', (SELECT COALESCE(SUM(b.sealed_size), 0) FROM blobs b JOIN nodes n ON n.id = b.node_id
                                          WHERE b.area = \(cache) AND n.pinned = 1)
        UNION ALL SELECT 'cached_bytes', (SELECT COALESCE(SUM(b.sealed_size), 0) FROM blobs b LEFT JOIN nodes n ON n.id = b.node_id
                                          WHERE b.area = \(cache) AND COALESCE(n.pinned, 0) != 1)
        UNION ALL SELECT 'staged_bytes', (SELECT COALESCE(SUM(sealed_size), 0) FROM blobs WHERE area = \(staging))
        UNION ALL SELECT 'outbox_pending', (SELECT count(*) FROM outbox WHERE \(outboxBucket("state", schema: schema)) = 'outbox_pending')
        UNION ALL SELECT 'outbox_conflict', (SELECT count(*) FROM outbox WHERE \(outboxBucket("state", schema: schema)) = 'outbox_conflict')
        UNION ALL SELECT 'outbox_failed', (SELECT count(*) FROM outbox WHERE \(outboxBucket("state", schema: schema)) = 'outbox_failed')
        UNION ALL SELECT 'outbox_held', (SELECT count(*) FROM outbox WHERE \(outboxBucket("state", schema: schema)) = 'outbox_held')
        """
    }

    /// The counters' triggers on `blobs` (migration 7 creates them on areas as text; migration
    /// 12 again, on the compact table's codes).
    static func blobsTriggersSQL(schema: Int) -> String { """
        CREATE TRIGGER counters_blobs_delete AFTER DELETE ON blobs BEGIN
          UPDATE counters SET value = value - OLD.sealed_size WHERE name = \(blobBucket("OLD", schema: schema));
        END;
        CREATE TRIGGER counters_blobs_update AFTER UPDATE OF sealed_size ON blobs WHEN OLD.sealed_size IS NOT NEW.sealed_size BEGIN
          UPDATE counters SET value = value - OLD.sealed_size WHERE name = \(blobBucket("OLD", schema: schema));
          UPDATE counters SET value = value + NEW.sealed_size WHERE name = \(blobBucket("NEW", schema: schema));
        END;
        """
    }

    /// The counters' triggers on `outbox` (migration 7 creates them on states as text;
    /// migration 11 again, on the compact table's codes).
    static func outboxTriggersSQL(schema: Int) -> String { """
        CREATE TRIGGER counters_outbox_delete AFTER DELETE ON outbox BEGIN
          UPDATE counters SET value = value - 1 WHERE name = \(outboxBucket("OLD.state", schema: schema));
        END;
        CREATE TRIGGER counters_outbox_state AFTER UPDATE OF state ON outbox WHEN OLD.state IS NOT NEW.state BEGIN
          UPDATE counters SET value = value - 1 WHERE name = \(outboxBucket("OLD.state", schema: schema));
          UPDATE counters SET value = value + 1 WHERE name = \(outboxBucket("NEW.state", schema: schema));
        END;
        """
    }

    /// The triggers on `nodes` (migration 7 creates them; migration 9 again, on the compact
    /// table; migration 12 the two on pinning again, on the blob areas' codes).
    static func nodesTriggersSQL(schema: Int) -> String { """

        CREATE TRIGGER counters_nodes_delete AFTER DELETE ON nodes BEGIN
          UPDATE counters SET value = value - 1 WHERE name = 'nodes';
        END;
        \(pinningTriggersSQL(schema: schema))
        """
    }

    /// The two triggers on `nodes` that move a node's cache bytes as its pinning changes.
    static func pinningTriggersSQL(schema: Int) -> String { """
        CREATE TRIGGER counters_nodes_delete_pinned AFTER DELETE ON nodes WHEN OLD.pinned = 1 BEGIN
          \(movePinned("OLD", "-1", schema: schema))
        END;
        CREATE TRIGGER counters_nodes_pinned AFTER UPDATE OF pinned ON nodes WHEN (OLD.pinned = 1) IS NOT (NEW.pinned = 1) BEGIN
          \(movePinned("NEW", "(NEW.pinned = 1) - (OLD.pinned = 1)", schema: schema))
        END;
        """
    }

    /// The table, filled from the tables as they are, and the triggers that keep it right: one
    /// small `UPDATE` per changed row (a node deleted, pinned or unpinned, a blob moved between
    /// areas or nodes or dropped, an outbox entry moved between states or done, a sync message
    /// kept or cleared). Run by the migration, in its transaction.
    static let schemaSQL = """
        CREATE TABLE counters(
          name TEXT PRIMARY KEY,
          value INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        INSERT INTO counters(name, value) \(recountSQL(schema: 7));
        \(nodesTriggersSQL(schema: 7))
        \(blobsTriggersSQL(schema: 7))
        \(outboxTriggersSQL(schema: 7))

        CREATE TRIGGER counters_sync_messages_insert AFTER INSERT ON sync_messages BEGIN
          UPDATE counters SET value = value + 1 WHERE name = 'conflicts';
        END;
        CREATE TRIGGER counters_sync_messages_delete AFTER DELETE ON sync_messages BEGIN
          UPDATE counters SET value = value - 1 WHERE name = 'conflicts';
        END;
        """

    // MARK: - Reads

    /// Every stored total, by name (a counter whose row is missing is absent).
    func values() throws -> [Name: Int64] {
        var out: [Name: Int64] = [:]
        for r in try db.query("SELECT name, value FROM counters") {
            if let name = Name(rawValue: try r.decode(String.self, "name")) { out[name] = try r.decode(Int64.self, "value") }
        }
        return out
    }

    /// The stored total `name` (0 when its row is missing).
    func value(_ name: Name) throws -> Int64 {
        try db.scalar(Int64.self, "SELECT value FROM counters WHERE name = ?", [name.rawValue]) ?? 0
    }

    /// Every total counted from the tables now (a scan of each: for `vault doctor`).
    func recount() throws -> [Name: Int64] {
        var out: [Name: Int64] = [:]
        for r in try db.query(Self.recountSQL) {
            if let name = Name(rawValue: try r.decode(String.self, "name")) { out[name] = try r.decode(Int64.self, "value") }
        }
        return out
    }

    // MARK: - Writes

    /// Counts node `id`, just inserted (`pinned`: its cache blobs, if any, move from cached to pinned).
    func countInsertedNode(id: String, pinned: Bool) throws {
        try countInsertedNodes(1)
        if pinned { try countPinnedBlobs(ofInsertedNode: id) }
    }

    /// Counts `count` nodes just inserted (none of them pinned, or each also `countPinnedBlobs`).
    func countInsertedNodes(_ count: Int) throws {
        try db.run("UPDATE counters SET value = value + ? WHERE name = 'nodes'", [Int64(count)])
    }

    /// Moves the cache blobs of node `id`, just inserted pinned, from cached to pinned.
    func countPinnedBlobs(ofInsertedNode id: String) throws {
        try db.run("""
            UPDATE counters SET value = value + (CASE name WHEN 'pinned_bytes' THEN 1 ELSE -1 END)
                * (SELECT COALESCE(SUM(sealed_size), 0) FROM blobs WHERE node_id = ? AND area = ?)
              WHERE name IN ('pinned_bytes', 'cached_bytes')
            """, [CompactColumns.key(id), BlobArea.cache])
    }

    /// Counts blob `id`'s sealed bytes where its row says they are (`sign` -1: uncounts them,
    /// before a change of its area or node); nothing when it has no row. After an insert, and
    /// around a change of area or node.
    func countBlob(id: String, sign: Int64 = 1) throws {
        try db.run(Self.countBlobSQL, [sign, CompactColumns.key(id)])
    }

    private static let countBlobSQL = """
        UPDATE counters SET value = value + ? * (SELECT sealed_size FROM blobs WHERE id = ?2)
          WHERE name = (SELECT \(blobBucket("b")) FROM blobs b WHERE b.id = ?2)
        """

    /// Counts an outbox entry just inserted in `state`.
    func countInsertedEntry(state: OutboxState) throws {
        try db.run(Self.countInsertedEntrySQL, [state])
    }

    private static let countInsertedEntrySQL = "UPDATE counters SET value = value + 1 WHERE name = \(outboxBucket("?"))"


    /// Sets counter `name` to `value` (a repair; the triggers do the rest).
    func set(_ name: Name, _ value: Int64) throws {
        try db.run("DELETE FROM counters WHERE name = ?", [name.rawValue])
        try db.run("INSERT INTO counters(name, value) VALUES (?, ?)", [name.rawValue, value])
    }
}

extension Vault {
    /// The `counters` table of this vault's database.
    var countersTable: CountersTable { CountersTable(db: db) }
}
