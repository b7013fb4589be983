import VaultSQL

/// The metadata database schema, as ordered migrations keyed by `PRAGMA user_version`.
/// SQLCipher 3.4.1 is SQLite 3.15: no UPSERT, RETURNING, window functions or STRICT tables.
enum MetadataSchema {
    static let migrator = SQLMigrator([
        // 1: the offline-first data model (BRIEF §3).
        SQLMigrator.Migration("offline-first data model", sql: """
        CREATE TABLE nodes(
          id TEXT PRIMARY KEY,
          remote_id TEXT UNIQUE,
          parent_id TEXT REFERENCES nodes(id),
          name TEXT NOT NULL,
          type TEXT NOT NULL CHECK(type IN ('file','folder')),
          size INTEGER NOT NULL DEFAULT 0,
          version INTEGER NOT NULL DEFAULT 0,
          modified_at INTEGER NOT NULL,
          mime_type TEXT,
          content_state TEXT NOT NULL DEFAULT 'NOT_DOWNLOADED'
            CHECK(content_state IN ('NOT_DOWNLOADED','DOWNLOADING','LOCAL','STALE')),
          local_path TEXT,
          pinned INTEGER NOT NULL DEFAULT 0,
          last_accessed INTEGER,
          pending_op TEXT,
          local_version INTEGER NOT NULL DEFAULT 0,
          sha256 TEXT
        );
        CREATE UNIQUE INDEX nodes_parent_name ON nodes(parent_id, name);
        CREATE INDEX nodes_lru ON nodes(content_state, pinned, last_accessed);
        CREATE TABLE blobs(
          id TEXT PRIMARY KEY,
          node_id TEXT,
          area TEXT NOT NULL CHECK(area IN ('cache','staging')),
          size INTEGER NOT NULL,
          sealed_size INTEGER NOT NULL,
          sha256 TEXT NOT NULL,
          key_epoch INTEGER NOT NULL,
          created_at INTEGER NOT NULL
        );
        CREATE INDEX blobs_node ON blobs(node_id);
        CREATE TABLE revisions(
          id TEXT PRIMARY KEY,
          node_id TEXT NOT NULL,
          remote_revision_id TEXT,
          size INTEGER NOT NULL,
          sha256 TEXT,
          modified_at INTEGER NOT NULL,
          blob_id TEXT,
          device TEXT
        );
        CREATE INDEX revisions_node ON revisions(node_id);
        CREATE TABLE transfers(
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          node_id TEXT NOT NULL,
          direction TEXT NOT NULL CHECK(direction IN ('upload','download')),
          state TEXT NOT NULL,
          blob_id TEXT,
          bytes_total INTEGER NOT NULL DEFAULT 0,
          bytes_done INTEGER NOT NULL DEFAULT 0,
          upload_id TEXT,
          upload_url TEXT,
          request_id TEXT,
          attempts INTEGER NOT NULL DEFAULT 0,
          next_attempt_at INTEGER,
          error TEXT,
          created_at INTEGER NOT NULL,
          updated_at INTEGER NOT NULL
        );
        CREATE TABLE outbox(
          seq INTEGER PRIMARY KEY AUTOINCREMENT,
          op TEXT NOT NULL,
          node_id TEXT NOT NULL,
          payload TEXT NOT NULL,
          base_version INTEGER,
          request_id TEXT NOT NULL UNIQUE,
          state TEXT NOT NULL DEFAULT 'pending',
          attempts INTEGER NOT NULL DEFAULT 0,
          last_error TEXT,
          created_at INTEGER NOT NULL
        );
        CREATE TABLE sync_state(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE settings(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        """),
        // 2: a crash-safe, compacted outbox (docs/outbox.md). `sent_at` marks a folder creation
        // sent without a recorded answer (a 409 then means "ours": adopt it); tombstones keep the
        // server id and version of nodes removed locally while entries of theirs still replay.
        SQLMigrator.Migration("crash-safe outbox", sql: """
        ALTER TABLE outbox ADD COLUMN sent_at INTEGER;
        CREATE INDEX outbox_node ON outbox(node_id);
        CREATE TABLE outbox_tombstones(
          node_id TEXT PRIMARY KEY,
          remote_id TEXT,
          type TEXT NOT NULL CHECK(type IN ('file','folder')),
          version INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX transfers_node ON transfers(node_id);
        CREATE INDEX transfers_request ON transfers(request_id);
        """),
        // 3: end to end (SECURITY.md "End to end"). `sealed_sha256` is the SHA-256 of a blob's
        // sealed bytes exactly as on disk (what an upload sends before padding; NULL when unknown:
        // older blobs, downloads, and every blob once a rotation rewrote its header). The seqs are
        // the highest node-record and content-record sequence numbers this device wrote or saw
        // for a node (a lower one from the server is a rollback).
        SQLMigrator.Migration("end to end", sql: """
        ALTER TABLE blobs ADD COLUMN sealed_sha256 TEXT;
        ALTER TABLE nodes ADD COLUMN record_seq INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE nodes ADD COLUMN content_seq INTEGER NOT NULL DEFAULT 0;
        """),
        // 4: two-way sync (docs/sync.md). `remote_base` is what this device last knew of each
        // node on the server (placement, version, sequence numbers, the head's content record as
        // JSON): the planner's base. `sync_messages` holds what a sync said about changes made on
        // both sides until `vault conflicts --clear`. Revisions cache the server's list (decoded
        // content records, as JSON in `content`) so `vault revisions` works offline; `blob_id` is set
        // once a revision's content is on this device.
        SQLMigrator.Migration("two-way sync", sql: """
        CREATE TABLE remote_base(
          remote_id TEXT PRIMARY KEY,
          parent_id TEXT,
          name TEXT NOT NULL,
          type TEXT NOT NULL CHECK(type IN ('file','folder')),
          version INTEGER NOT NULL,
          record_seq INTEGER NOT NULL DEFAULT 0,
          content_seq INTEGER NOT NULL DEFAULT 0,
          content TEXT
        );
        CREATE INDEX remote_base_parent ON remote_base(parent_id);
        CREATE TABLE sync_messages(
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          created_at INTEGER NOT NULL,
          kind TEXT NOT NULL,
          path TEXT NOT NULL,
          text TEXT NOT NULL
        );
        ALTER TABLE revisions ADD COLUMN content TEXT;
        ALTER TABLE revisions ADD COLUMN is_head INTEGER NOT NULL DEFAULT 0;
        """),
        // 5: the sequence-number floor (SECURITY.md "Node record"): per server node, the highest
        // node-record and content-record sequence numbers this device sealed, and those it saw
        // for a node whose row or base has gone since (removed here or on the server). It
        // outlives the node leaving this device's tree, so a record sealed after the node comes
        // back (a move replayed from a tombstone, a folder a delete-vs-edit brought back, a
        // restore) never takes a number another device has seen already.
        SQLMigrator.Migration("sequence-number floor", sql: """
        CREATE TABLE seq_floor(
          remote_id TEXT PRIMARY KEY,
          record_seq INTEGER NOT NULL DEFAULT 0,
          content_seq INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        """),
        // 6: the quarantine (docs/sync.md "Refused nodes"): server nodes a pull refused because
        // their record is missing or does not authenticate, with why and when last seen, until a
        // valid record of the node or a full listing without it clears them.
        SQLMigrator.Migration("quarantine", sql: """
        CREATE TABLE quarantine(
          remote_id TEXT PRIMARY KEY,
          reason TEXT NOT NULL,
          seen_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        """),
        // 7: maintained totals (issue 21, SECURITY.md "Metadata database"): the counters `vault
        // status`, `vault storage` and the browser read instead of scanning, filled from the
        // tables as they are and kept right by triggers in the transaction of every change.
        SQLMigrator.Migration("counters", sql: CountersTable.schemaSQL),
        // 8: compact bases (issue 21, SECURITY.md "Metadata database"): `remote_base` keyed by
        // the server id's 16 bytes in a `WITHOUT ROWID` table (no second index of the key), its
        // content record a compact binary record instead of JSON: 431 of a pulled node's 863
        // bytes were its base. One transaction: a kill leaves schema 7 or 8, never a mix. The old
        // table's pages stay in the file as free pages (reused as it grows): no VACUUM, which
        // SQLCipher (TEMP_STORE=2) builds in memory, the whole database's size.
        rebuild("compact bases", 8, sql: RemoteBaseTable.compactSchemaSQL, copy: RemoteBaseTable.copySchema7Rows, then: RemoteBaseTable.swapSQL),
        // 9: compact nodes (issue 21, SECURITY.md "Metadata database"): node ids stored as keys
        // (16 bytes) once, in `nodes` and in every table that refers to a node, a pulled node's
        // server id not stored again, states as small integers, the SHA-256 as 32 bytes; the
        // `nodes_lru` index (no query used it) gone. One transaction, like migration 8: a kill
        // leaves schema 8 or 9; the old table's pages stay as free pages.
        rebuild("compact nodes", 9, sql: NodesTable.setAsideSQL + NodesTable.compactSchemaSQL + CountersTable.nodesTriggersSQL(schema: 9), copy: NodesTable.copySchema8Rows, then: NodesTable.dropSchema8SQL),
        // 10: bases that do not repeat their node (issue 21, SECURITY.md "Metadata database"): a
        // pulled node's base takes its parent, name, mime, mtime, size and SHA-256 from the node
        // while the node holds them alike (triggers on `nodes` copy them into the base first
        // when the node changes one or goes); the parent index only of the bases that hold
        // theirs. One transaction, like migrations 8 and 9: a kill leaves schema 9 or 10.
        rebuild("bases from their nodes", 10, sql: RemoteBaseTable.schema10SQL, copy: RemoteBaseTable.copySchema9Rows, then: RemoteBaseTable.swap10SQL),
        // 11: a compact outbox (issue 21, SECURITY.md "Metadata database"): the op and state as
        // small integers, the payload a compact binary record instead of JSON, and no unique index
        // of the request id (no query used it); the counters' triggers on the new table. One
        // transaction, like migrations 8 to 10: a kill leaves schema 10 or 11.
        rebuild("compact outbox", 11, sql: OutboxTable.setAsideSQL + OutboxTable.compactSchemaSQL, copy: OutboxTable.copySchema10Rows, then: OutboxTable.dropSchema10SQL),
        // 12: compact blobs (issue 21, SECURITY.md "Metadata database"): a blob id stored as its
        // key (16 bytes) in `blobs` and wherever a row names a blob (`nodes.local_path`,
        // `revisions.blob_id`, `transfers.blob_id`), the area as a small integer, the SHA-256s as
        // their 32 bytes; the counters' triggers that read areas again. One transaction, like
        // migrations 8 to 11: a kill leaves schema 11 or 12.
        rebuild("compact blobs", 12, sql: BlobsTable.setAsideSQL + BlobsTable.compactSchemaSQL, copy: BlobsTable.copySchema11Rows, then: BlobsTable.dropSchema11SQL),
        // 13: the folders of a folder in an index of their own (issue 21, "browsing at scale"): a
        // listing reads folders first, then files; without it the folders' pass read every child's
        // row to find the folders among them, so a folder of 999 files was read twice.
        SQLMigrator.Migration("folders index", sql: NodesTable.foldersIndexSQL),
        // 14: outbox entries that take from their node what they share with it (issue 21,
        // SECURITY.md "Metadata database"): a file's upload entry held its name, parent, blob,
        // size, SHA-256 and mime again; now a mask says which it takes from the node's row, and
        // triggers on `nodes` copy them into the entry before the node changes one or goes. The
        // request ids (outbox and transfers) as 16 bytes. One transaction, like migrations 8 to
        // 12: a kill leaves schema 13 or 14.
        rebuild("outbox from its nodes", 14, sql: OutboxTable.setAside13SQL + OutboxTable.schema14SQL, copy: OutboxTable.copySchema13Rows, then: OutboxTable.dropSchema13SQL),
        // 15: blobs that take their SHA-256 from their node (issue 21, SECURITY.md "Metadata
        // database"): a file's blob held its node's SHA-256 again; now NULL says "the node's",
        // and triggers on `nodes` copy it into the blob before the node changes it or goes. One
        // transaction, like migrations 8 to 14: a kill leaves schema 14 or 15.
        rebuild("blobs from their nodes", 15, sql: BlobsTable.setAside14SQL + BlobsTable.schema15SQL, copy: BlobsTable.copySchema14Rows, then: BlobsTable.dropSchema14SQL),
    ])

    /// A migration that rebuilds a table in its transaction (8 to 12, 14, 15): `sql` sets the old
    /// table aside and creates the new one, `copy` moves the rows (calling the crash points the
    /// kill tests stop at), `finish` drops or swaps the old table; then crash point
    /// `migration-<number>-swapped`.
    private static func rebuild(_ name: String, _ number: Int, sql: String,
                                copy: @escaping @Sendable (SQLDatabase, (String) -> Void) throws -> Void,
                                then finish: String) -> SQLMigrator.Migration {
        SQLMigrator.Migration(name, sql: sql) { connection in
            guard let db = connection as? SQLDatabase else { throw SQLError(kind: .other, code: .misuse, message: "not the client's database") }
            try copy(db, TestHooks.crashPoint)
            try db.execute(finish)
            TestHooks.crashPoint("migration-\(number)-swapped")
        }
    }

    /// True when `db` has the newest schema (nothing to migrate); false for an older or newer one.
    static func isCurrent(_ db: SQLDatabase) throws -> Bool {
        try db.userVersion == migrator.latestVersion
    }

    /// Brings `db` to the newest schema, one transaction per migration.
    static func migrate(_ db: SQLDatabase) throws {
        do { try migrator.migrate(db) } catch let e as SQLError where e.kind == .newerSchema {
            throw VaultError(.integrity, "the metadata database is from a newer vault (schema \(try db.userVersion))",
                             hint: "upgrade vault")
        }
    }
}
