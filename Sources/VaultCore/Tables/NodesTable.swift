import VaultSQL

/// The SQL of the `nodes` table: the local tree (BRIEF §3), one row per file or folder. Since
/// schema 9 (issue 21, SECURITY.md "Metadata database") the row is compact: ids stored as keys
/// (`CompactColumns.key`: 16 bytes), a pulled node's server id stored once (an empty `remote_id`
/// says "the node's own id"), states as small integers (`Codes`), the SHA-256 as 32 bytes.
/// Typed reads and writes only; the caller (`Vault+Tree`, the pull's plan, the outbox
/// completion) holds the transaction and the logic.
struct NodesTable {
    let db: SQLDatabase

    // MARK: - Schema (migration 9; frozen: a change is a new migration)

    /// The schema-8 table set aside under another name (its indexes and counters' triggers go
    /// with it when it is dropped; the triggers are dropped first so the new table's take their names).
    static let setAsideSQL = """
        DROP TRIGGER counters_nodes_delete;
        DROP TRIGGER counters_nodes_delete_pinned;
        DROP TRIGGER counters_nodes_pinned;
        ALTER TABLE nodes RENAME TO nodes_schema8;
        """

    /// The compact table: a rowid table (insertion order kept; the rowid is the integer key
    /// inside the database) with the 16-byte id once, in its own unique index; the `(parent_id,
    /// name)` index serves lookups and browsing in name order with paging; server ids of their
    /// own (a node created here) in a partial unique index. No index on states: nothing scans
    /// them by index (schema 8's `nodes_lru` served no query).
    static let compactSchemaSQL = """
        CREATE TABLE nodes(
          id BLOB NOT NULL UNIQUE,
          remote_id BLOB,
          parent_id BLOB REFERENCES nodes(id),
          name TEXT NOT NULL,
          folder INTEGER NOT NULL,
          size INTEGER NOT NULL DEFAULT 0,
          version INTEGER NOT NULL DEFAULT 0,
          modified_at INTEGER NOT NULL,
          mime_type TEXT,
          content_state INTEGER NOT NULL DEFAULT 0,
          local_path TEXT,
          pinned INTEGER NOT NULL DEFAULT 0,
          last_accessed INTEGER,
          pending_op INTEGER,
          local_version INTEGER NOT NULL DEFAULT 0,
          sha256 BLOB,
          record_seq INTEGER NOT NULL DEFAULT 0,
          content_seq INTEGER NOT NULL DEFAULT 0
        );
        CREATE UNIQUE INDEX nodes_folder_name ON nodes(parent_id, name);
        CREATE UNIQUE INDEX nodes_remote ON nodes(remote_id) WHERE length(remote_id) > 0;
        """

    /// The tables that refer to a node by `node_id` (their ids become keys in migration 9).
    static let referringTables = ["blobs", "revisions", "outbox", "transfers", "outbox_tombstones"]

    /// Migration 9's copy: every row of the schema-8 table into the compact one (same rowid),
    /// streamed, then every `node_id` of the tables that refer to nodes as a key; `crashPoint`
    /// is called after each node and once the copy is done (the crash tests kill the process there).
    static func copySchema8Rows(_ db: SQLDatabase, crashPoint: (String) -> Void) throws {
        // A node may come before its folder (rowid order): checked at the commit.
        try db.execute("PRAGMA defer_foreign_keys = ON")
        let st = try db.prepare("SELECT rowid AS r, \(Node.columns.replacingOccurrences(of: "folder", with: "type")), record_seq, content_seq FROM nodes_schema8")
        while try st.step() {
            let r = st.row()
            let n = Node(id: try r.decode(String.self, "id"), remoteId: try r.decode(String?.self, "remote_id"),
                         parentId: try r.decode(String?.self, "parent_id"), name: try r.decode(String.self, "name"),
                         type: try r.decode(NodeType.self, "type"), size: UInt64(max(0, try r.decode(Int64.self, "size"))),
                         version: try r.decode(Int64.self, "version"), modifiedAt: try r.decode(Int64.self, "modified_at"),
                         mimeType: try r.decode(String?.self, "mime_type"), contentState: try r.decode(ContentState.self, "content_state"),
                         localPath: try r.decode(String?.self, "local_path"), pinned: try r.decode(Bool.self, "pinned"),
                         lastAccessed: try r.decode(Int64?.self, "last_accessed"),
                         pendingOp: try r.decode(String?.self, "pending_op").map { PendingOp(rawValue: $0) ?? .sync },
                         localVersion: try r.decode(Int64.self, "local_version"), sha256: try r.decode(String?.self, "sha256"))
            try db.run("INSERT INTO nodes(rowid, \(Node.columns), record_seq, content_seq) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                       [try r.decode(Int64.self, "r")] + n.bindings + [try r.decode(Int64.self, "record_seq"), try r.decode(Int64.self, "content_seq")])
            crashPoint("migration-9-row")
        }
        for table in referringTables { try CompactColumns.rekey(db, table: table, column: "node_id") }
        crashPoint("migration-9-copied")
    }

    /// The schema-8 table dropped (with its indexes and the counters' triggers).
    static let dropSchema8SQL = "DROP TABLE nodes_schema8;"

    // MARK: - Stored forms (schema 9)

    /// The small integers the `content_state` and `pending_op` columns hold (frozen: stored).
    enum Codes {
        static func code(_ s: ContentState) -> Int64 {
            switch s { case .notDownloaded: 0; case .downloading: 1; case .local: 2; case .stale: 3 }
        }

        static func contentState(_ c: Int64) throws -> ContentState {
            switch c {
            case 0: return .notDownloaded
            case 1: return .downloading
            case 2: return .local
            case 3: return .stale
            default: throw SQLError(kind: .decoding, code: .mismatch, message: "column \"content_state\" holds \(c), no content state")
            }
        }

        static func code(_ op: PendingOp) -> Int64 {
            switch op { case .create: 1; case .upload: 2; case .move: 3; case .sync: 4 }
        }

        /// The pending op of code `c` (one this version does not know reads as `.sync`).
        static func pendingOp(_ c: Int64) -> PendingOp {
            switch c { case 1: .create; case 2: .upload; case 3: .move; default: .sync }
        }
    }

    /// The stored `remote_id` of node `id`: NULL for none, an empty blob when it is the node's
    /// own id (a pulled node: its id stored once), else its key.
    static func remoteKey(_ remoteId: String?, ofNode id: String) -> SQLValue {
        guard let r = remoteId else { return .null }
        return r == id ? .blob([]) : CompactColumns.key(r)
    }

    /// The server id a stored `remote_id` of node `id` holds.
    static func remoteId(_ v: SQLValue, ofNode id: String) throws -> String? {
        if case .blob(let b) = v, b.isEmpty { return id }
        return try CompactColumns.id(v, column: "remote_id")
    }

    /// The node id a stored key holds (never NULL).
    static func nodeId(_ v: SQLValue, column: String = "id") throws -> String {
        guard let id = try CompactColumns.id(v, column: column) else {
            throw SQLError(kind: .decoding, code: .mismatch, message: "column \"\(column)\" holds NULL")
        }
        return id
    }

    /// SQL: the text of node id key `column` (a 16-byte key as its 32 lowercase hex digits).
    static func idText(_ column: String) -> String {
        "(CASE typeof(\(column)) WHEN 'blob' THEN lower(hex(\(column))) ELSE \(column) END)"
    }

    /// SQL: the lowercase hex of stored SHA-256 `column` (32 bytes, or text as it is).
    static func sha256Text(_ column: String) -> String {
        "lower(CASE typeof(\(column)) WHEN 'blob' THEN hex(\(column)) ELSE \(column) END)"
    }

    /// The condition "this row's server id is the key bound as `param`": the node's own id with
    /// an empty `remote_id`, or a `remote_id` of its own (the `nodes_remote` partial index: its
    /// condition is spelled out so SQLite uses it).
    static func hasRemoteId(_ param: String) -> String {
        "((id = \(param) AND remote_id = X'') OR (remote_id = \(param) AND length(remote_id) > 0))"
    }

    // MARK: - Reads

    /// The node with `id`, if any.
    func node(id: String) throws -> Node? {
        try db.queryOne("SELECT \(Node.columns) FROM nodes WHERE id = ?", [CompactColumns.key(id)]).map(Node.init(row:))
    }

    /// The node with server id `remoteId`, if any.
    func node(remoteId: String) throws -> Node? {
        try db.queryOne("SELECT \(Node.columns) FROM nodes WHERE \(Self.hasRemoteId("?1"))", [CompactColumns.key(remoteId)]).map(Node.init(row:))
    }

    /// The child of `parentId` called `name`, if any.
    func child(of parentId: String, named name: String) throws -> Node? {
        try db.queryOne("SELECT \(Node.columns) FROM nodes WHERE parent_id = ? AND name = ?", [CompactColumns.key(parentId), name]).map(Node.init(row:))
    }

    /// How children are listed.
    enum Order { case foldersFirst, name }

    /// The children of `parentId`: folders first then by name (the folders, then the files, each
    /// read in the order of the `(parent_id, name)` index: no sort), or by name alone.
    func children(of parentId: String, order: Order = .foldersFirst) throws -> [Node] {
        guard order == .foldersFirst else {
            return try db.query("SELECT \(Node.columns) FROM nodes WHERE parent_id = ? ORDER BY name", [CompactColumns.key(parentId)]).map(Node.init(row:))
        }
        return try children(of: parentId, type: .folder, after: nil, limit: -1) + children(of: parentId, type: .file, after: nil, limit: -1)
    }

    /// One page of the children of `parentId` of type `type`, by name, after `name` (nil: from
    /// the first), at most `limit` (-1: no limit): a range of the `(parent_id, name)` index read in its order,
    /// no sort and no look at the rest of the folder.
    /// Folders come from their own index (`nodes_folders`, schema 13), so a folder of files is not
    /// read twice (once to find it holds no folders).
    func children(of parentId: String, type: NodeType, after name: String?, limit: Int) throws -> [Node] {
        try db.query(Self.childPageSQL(type), [CompactColumns.key(parentId), name ?? "", limit]).map(Node.init(row:))
    }

    /// The statement of `children(of:type:after:limit:)` (its query plans are tested): the type a
    /// literal, so the planner can use the partial index of folders.
    static func childPageSQL(_ type: NodeType) -> String {
        "SELECT \(Node.columns) FROM nodes WHERE parent_id = ? AND name > ? AND folder = \(type == .folder ? 1 : 0) ORDER BY name LIMIT ?"
    }

    /// Migration 13: the folders of each folder by name, in an index of their own (a few bytes per folder).
    static let foldersIndexSQL = "CREATE INDEX nodes_folders ON nodes(parent_id, name) WHERE folder = 1;"

    /// Every descendant of folder `id` (not including it), deepest last.
    func descendants(of id: String) throws -> [Node] {
        let cols = Node.columns.split(separator: ",").map { "n." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
        return try db.query("""
            WITH RECURSIVE sub(id) AS (SELECT id FROM nodes WHERE parent_id = ?
              UNION ALL SELECT nodes.id FROM nodes JOIN sub ON nodes.parent_id = sub.id)
            SELECT \(cols) FROM nodes n JOIN sub ON n.id = sub.id
            """, [CompactColumns.key(id)]).map(Node.init(row:))
    }

    /// Up to `limit` files in storage order after row `row` (0: from the first), and the row of
    /// the last one (where the next page starts; nil when there was none): every file, a page at
    /// a time, with changes to earlier ones made between pages.
    func files(afterRow row: Int64, limit: Int) throws -> (nodes: [Node], lastRow: Int64?) {
        let rows = try db.query("SELECT rowid AS r, \(Node.columns) FROM nodes WHERE folder = 0 AND rowid > ? ORDER BY rowid LIMIT ?", [row, limit])
        return (try rows.map(Node.init(row:)), try rows.last?.decode(Int64.self, "r"))
    }

    /// The most server ids `nodes(remoteIds:)` takes: one statement's parameters (SQLite 3.15
    /// allows 999), each bound once and named twice.
    static let remoteIdsPerQuery = 999

    /// The nodes with any of the server ids `remoteIds` (at most `remoteIdsPerQuery`).
    func nodes(remoteIds: [String]) throws -> [Node] {
        guard !remoteIds.isEmpty else { return [] }
        precondition(remoteIds.count <= Self.remoteIdsPerQuery, "at most \(Self.remoteIdsPerQuery) server ids per query")
        // Numbered parameters: both lists name the same ones (binding them twice would pass the limit).
        let marks = (1...remoteIds.count).map { "?\($0)" }.joined(separator: ",")
        return try db.query("""
            SELECT \(Node.columns) FROM nodes WHERE id IN (\(marks)) AND remote_id = X''
            UNION ALL SELECT \(Node.columns) FROM nodes WHERE remote_id IN (\(marks)) AND length(remote_id) > 0
            """, remoteIds.map { CompactColumns.key($0) as any SQLBindable }).map(Node.init(row:))
    }

    /// The sequence numbers recorded for node `id`, nil when there is no such node.
    func seqs(id: String) throws -> RemoteSeqs? {
        try db.queryOne("SELECT record_seq, content_seq FROM nodes WHERE id = ?", [CompactColumns.key(id)]).map {
            RemoteSeqs(record: try $0.decode(Int64.self, "record_seq"), content: try $0.decode(Int64.self, "content_seq"))
        }
    }

    /// The synced file whose content is blob `blobId`, if any.
    func syncedFile(withBlob blobId: String) throws -> Node? {
        try db.queryOne("SELECT \(Node.columns) FROM nodes WHERE local_path = ? AND remote_id IS NOT NULL AND folder = 0", [CompactColumns.key(blobId)])
            .map(Node.init(row:))
    }

    /// Every node on the server but the root, in the order they were inserted.
    func synced() throws -> [Node] {
        try db.query("SELECT \(Node.columns) FROM nodes WHERE remote_id IS NOT NULL AND id != ? ORDER BY rowid", [CompactColumns.key(Node.rootId)])
            .map(Node.init(row:))
    }

    /// The ids of the files on the server (pinned ones only, with `pinnedOnly`) whose content
    /// is in one of `states`, in a stable order.
    func remoteFileIds(contentStates states: [ContentState], pinnedOnly: Bool) throws -> [String] {
        let marks = Array(repeating: "?", count: states.count).joined(separator: ", ")
        return try db.query("""
            SELECT id FROM nodes WHERE folder = 0\(pinnedOnly ? " AND pinned = 1" : "") AND remote_id IS NOT NULL
              AND content_state IN (\(marks)) ORDER BY id
            """, states.map { Codes.code($0) as any SQLBindable }).map { try Self.nodeId($0["id"]) }
    }

    /// Per folder directly in `folderId`: the bytes and files below it and how many of those
    /// (folders included, not the folder itself) await upload, by folder id.
    func folderTotals(in folderId: String) throws -> [(id: String, bytes: Int64, files: Int, awaiting: Int)] {
        try db.query("""
            WITH RECURSIVE sub(top, id) AS (
              SELECT id, id FROM nodes WHERE parent_id = ? AND folder = 1
              UNION ALL SELECT sub.top, n.id FROM nodes n JOIN sub ON n.parent_id = sub.id)
            SELECT sub.top AS top,
                   COALESCE(SUM(CASE WHEN n.folder = 0 THEN n.size ELSE 0 END), 0) AS bytes,
                   COALESCE(SUM(n.folder = 0), 0) AS files,
                   COALESCE(SUM(n.pending_op IS NOT NULL AND n.id != sub.top), 0) AS awaiting
            FROM sub JOIN nodes n ON n.id = sub.id GROUP BY sub.top
            """, [CompactColumns.key(folderId)]).map {
            (try Self.nodeId($0["top"]), try $0.decode(Int64.self, "bytes"), try $0.decode(Int.self, "files"),
             try $0.decode(Int.self, "awaiting"))
        }
    }

    /// Where node `id` is (its folder and name), nil when there is no such node.
    func placement(id: String) throws -> (parentId: String?, name: String)? {
        try db.queryOne("SELECT parent_id, name FROM nodes WHERE id = ?", [CompactColumns.key(id)]).map {
            (try CompactColumns.id($0["parent_id"], column: "parent_id"), try $0.decode(String.self, "name"))
        }
    }

    /// The server id of node `id` (nil when it has none or there is no such node).
    func remoteId(id: String) throws -> String? {
        guard let r = try db.queryOne("SELECT remote_id FROM nodes WHERE id = ?", [CompactColumns.key(id)]) else { return nil }
        return try Self.remoteId(r["remote_id"], ofNode: id)
    }

    /// How many nodes there are (the root included).
    func count() throws -> Int {
        try db.scalar(Int.self, "SELECT count(*) FROM nodes") ?? 0
    }

    /// The highest content-record sequence number of the nodes with server id `remoteId` (0 for none).
    func highestContentSeq(remoteId: String) throws -> Int64 {
        try db.scalar(Int64.self, "SELECT coalesce(max(content_seq), 0) FROM nodes WHERE \(Self.hasRemoteId("?1"))", [CompactColumns.key(remoteId)]) ?? 0
    }

    /// True when the tree holds the root and nothing else, and there are no bases and no
    /// tombstones (one look at each table, not a count of a large one).
    func onlyRootNoBasesNoTombstones() throws -> Bool {
        try db.scalar(Bool.self, """
            SELECT EXISTS(SELECT 1 FROM nodes WHERE id = ?) AND NOT EXISTS(SELECT 1 FROM nodes WHERE id != ?)
              AND NOT EXISTS(SELECT 1 FROM remote_base) AND NOT EXISTS(SELECT 1 FROM outbox_tombstones)
            """, [CompactColumns.key(Node.rootId), CompactColumns.key(Node.rootId)]) == true
    }

    /// Streams every node but the root that has a server id to `body` (id, server id), without
    /// holding them all in memory.
    func forEachSynced(_ body: (_ id: String, _ remoteId: String) throws -> Void) throws {
        let st = try db.prepare("SELECT id, remote_id FROM nodes WHERE id != ? AND remote_id IS NOT NULL")
        try st.bind([CompactColumns.key(Node.rootId)])
        while try st.step() {
            let r = st.row()
            let id = try Self.nodeId(r["id"])
            guard let remoteId = try Self.remoteId(r["remote_id"], ofNode: id) else { continue }
            try body(id, remoteId)
        }
    }

    /// Streams every node's id, folder and type to `body` until it returns false, without
    /// holding them all in memory.
    func forEachPlacement(_ body: (_ id: String, _ parentId: String?, _ type: NodeType) throws -> Bool) throws {
        let st = try db.prepare("SELECT id, parent_id, folder FROM nodes")
        while try st.step() {
            let r = st.row()
            guard try body(try Self.nodeId(r["id"]), try CompactColumns.id(r["parent_id"], column: "parent_id"),
                           try r.decode(Bool.self, "folder") ? .folder : .file) else { return }
        }
    }

    /// How many nodes there are but the root, and how many of those the root reaches through
    /// folders (a recursive query: no memory).
    func countReachable() throws -> (all: Int, onTree: Int) {
        let all = try db.scalar(Int.self, "SELECT count(*) FROM nodes WHERE id != ?", [CompactColumns.key(Node.rootId)]) ?? 0
        let onTree = try db.scalar(Int.self, """
            WITH RECURSIVE t(id, folder) AS (
              SELECT ?, 1
              UNION ALL SELECT n.id, n.folder FROM nodes n JOIN t ON n.parent_id = t.id WHERE t.folder)
            SELECT count(*) - 1 FROM t
            """, [CompactColumns.key(Node.rootId)]) ?? 0
        return (all, onTree)
    }

    // MARK: - Writes

    /// Inserts `n` (sequence numbers 0).
    func insert(_ n: Node) throws {
        try db.run("INSERT INTO nodes(\(Node.columns)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", n.bindings)
        try CountersTable(db: db).countInsertedNode(id: n.id, pinned: n.pinned)
    }

    /// Inserts `n` with the sequence numbers its server node has seen, not yet counted: the caller
    /// counts what it inserted with one `countInserted(_:)` (a counter update per node was a
    /// statement journal per node in a first pull).
    func insertUncounted(_ n: Node, recordSeq: Int64, contentSeq: Int64) throws {
        try db.run("INSERT INTO nodes(\(Node.columns), record_seq, content_seq) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                   n.bindings + [recordSeq, contentSeq])
    }

    /// Counts `nodes`, inserted by `insertUncounted` in this transaction.
    func countInserted(_ nodes: [Node]) throws {
        guard !nodes.isEmpty else { return }
        let counters = CountersTable(db: db)
        try counters.countInsertedNodes(nodes.count)
        for n in nodes where n.pinned { try counters.countPinnedBlobs(ofInsertedNode: n.id) }
    }

    /// Writes every field of `n` (but the sequence numbers) to the row of its id.
    func replace(_ n: Node) throws {
        try db.run("""
            UPDATE nodes SET remote_id = ?, parent_id = ?, name = ?, folder = ?, size = ?, version = ?, modified_at = ?, mime_type = ?,
              content_state = ?, local_path = ?, pinned = ?, last_accessed = ?, pending_op = ?, local_version = ?, sha256 = ? WHERE id = ?
            """, Array(n.bindings.dropFirst()) + [CompactColumns.key(n.id)])
    }

    /// Records `n`'s new local content (size, SHA-256, blob, state, times, local version, pending op).
    func setNewLocalContent(_ n: Node) throws {
        try db.run("UPDATE nodes SET size=?, sha256=?, local_path=?, content_state=?, modified_at=?, local_version=?, pending_op=?, last_accessed=? WHERE id=?",
                   [Int64(n.size), CompactColumns.digest(n.sha256), CompactColumns.key(n.localPath), Codes.code(n.contentState), n.modifiedAt, n.localVersion,
                    n.pendingOp.map(Codes.code), n.lastAccessed, CompactColumns.key(n.id)])
    }

    /// Sets node `id`'s modification time to `seconds`.
    func setModifiedAt(id: String, _ seconds: Int64) throws {
        try db.run("UPDATE nodes SET modified_at = ? WHERE id = ?", [seconds, CompactColumns.key(id)])
    }

    /// Moves node `id` to `name` in `parentId` at `modifiedAt`, to send as a move (unless it has another pending op).
    func move(id: String, to parentId: String, name: String, modifiedAt: Int64) throws {
        try db.run("UPDATE nodes SET parent_id=?, name=?, modified_at=?, pending_op=COALESCE(pending_op,?) WHERE id=?",
                   [CompactColumns.key(parentId), name, modifiedAt, Codes.code(PendingOp.move), CompactColumns.key(id)])
    }

    /// Inserts the root folder (a new vault), modified `now`.
    func insertRoot(now: Int64) throws {
        try db.run("INSERT INTO nodes(id, parent_id, name, folder, modified_at, content_state) VALUES (?, NULL, '', 1, ?, ?)",
                   [CompactColumns.key(Node.rootId), now, Codes.code(ContentState.local)])
        try CountersTable(db: db).countInsertedNode(id: Node.rootId, pinned: false)
    }

    /// Records that node `id` was read at `time` (LRU order).
    func setLastAccessed(id: String, _ time: Int64) throws {
        try db.run("UPDATE nodes SET last_accessed = ? WHERE id = ?", [time, CompactColumns.key(id)])
    }

    /// Marks node `id`'s content local, in blob `blobId`.
    func setLocalContent(id: String, blobId: String) throws {
        try db.run("UPDATE nodes SET content_state = ?, local_path = ? WHERE id = ?", [Codes.code(ContentState.local), CompactColumns.key(blobId), CompactColumns.key(id)])
    }

    /// Marks node `id`'s content not on this device (and forgets its blob).
    func setNotDownloaded(id: String) throws {
        try db.run("UPDATE nodes SET content_state=?, local_path=NULL WHERE id=?", [Codes.code(ContentState.notDownloaded), CompactColumns.key(id)])
    }

    /// Sets node `id`'s content state alone (its blob stays recorded).
    func setContentState(id: String, _ state: ContentState) throws {
        try db.run("UPDATE nodes SET content_state=? WHERE id=?", [Codes.code(state), CompactColumns.key(id)])
    }

    /// Points the nodes whose content is blob `old` at `new` (a re-sealing).
    func rebindBlob(from old: String, to new: String) throws {
        try db.run("UPDATE nodes SET local_path = ? WHERE local_path = ?", [CompactColumns.key(new), CompactColumns.key(old)])
    }

    /// Marks node `id` as having `op` to send, unless it has another pending op already.
    func notePending(id: String, _ op: PendingOp) throws {
        try db.run("UPDATE nodes SET pending_op = COALESCE(pending_op, ?) WHERE id = ?", [Codes.code(op), CompactColumns.key(id)])
    }

    /// Records node `id` as uploaded: its server id and version, nothing pending.
    func setUploaded(id: String, remoteId: String, version: Int64) throws {
        try db.run("UPDATE nodes SET remote_id = ?, version = ?, pending_op = NULL WHERE id = ?", [Self.remoteKey(remoteId, ofNode: id), version, CompactColumns.key(id)])
    }

    /// Takes node `id` out of its folder for a moment (a plan moving several nodes).
    func detach(id: String) throws {
        try db.run("UPDATE nodes SET parent_id = NULL WHERE id = ?", [CompactColumns.key(id)])
    }

    func setPinned(id: String, _ pinned: Bool) throws {
        try db.run("UPDATE nodes SET pinned = ? WHERE id = ?", [pinned, CompactColumns.key(id)])
    }

    /// Records node `id`'s server id and version; false when there is no such node.
    func setRemote(id: String, remoteId: String, version: Int64) throws -> Bool {
        try db.run("UPDATE nodes SET remote_id = ?, version = ? WHERE id = ?", [Self.remoteKey(remoteId, ofNode: id), version, CompactColumns.key(id)]) > 0
    }

    /// Raises the sequence numbers of the node with server id `remoteId` (never lowers them).
    func raiseSeqs(remoteId: String, recordSeq: Int64, contentSeq: Int64) throws {
        try db.run("UPDATE nodes SET record_seq = max(record_seq, ?1), content_seq = max(content_seq, ?2) WHERE \(Self.hasRemoteId("?3"))",
                   [recordSeq, contentSeq, CompactColumns.key(remoteId)])
    }

    /// Raises the sequence numbers of node `id` to `seqs` (never lowers them).
    func raiseSeqs(id: String, _ seqs: RemoteSeqs) throws {
        try db.run("UPDATE nodes SET record_seq = max(record_seq, ?), content_seq = max(content_seq, ?) WHERE id = ?",
                   [seqs.record, seqs.content, CompactColumns.key(id)])
    }

    /// After an entry of node `id` finished: `sync` pending while other entries of it remain, else nothing.
    func settlePendingOp(id: String) throws {
        try db.run("""
            UPDATE nodes SET pending_op = CASE WHEN EXISTS (SELECT 1 FROM outbox WHERE node_id = ?) THEN COALESCE(pending_op, ?) ELSE NULL END
            WHERE id = ?
            """, [CompactColumns.key(id), Codes.code(PendingOp.sync), CompactColumns.key(id)])
    }

    func delete(id: String) throws {
        try db.run("DELETE FROM nodes WHERE id = ?", [CompactColumns.key(id)])
    }
}

extension Vault {
    /// The `nodes` table of this vault's database.
    var nodesTable: NodesTable { NodesTable(db: db) }
}
