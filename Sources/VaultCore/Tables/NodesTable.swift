import VaultSQL

/// The SQL of the `nodes` table: the local tree (BRIEF §3), one row per file or folder. Typed
/// reads and writes only; the caller (`Vault+Tree`, the pull's plan, the outbox completion)
/// holds the transaction and the logic.
struct NodesTable {
    let db: SQLDatabase

    // MARK: - Reads

    /// The node with `id`, if any.
    func node(id: String) throws -> Node? {
        try db.queryOne("SELECT \(Node.columns) FROM nodes WHERE id = ?", [id]).map(Node.init(row:))
    }

    /// The node with server id `remoteId`, if any.
    func node(remoteId: String) throws -> Node? {
        try db.queryOne("SELECT \(Node.columns) FROM nodes WHERE remote_id = ?", [remoteId]).map(Node.init(row:))
    }

    /// The child of `parentId` called `name`, if any.
    func child(of parentId: String, named name: String) throws -> Node? {
        try db.queryOne("SELECT \(Node.columns) FROM nodes WHERE parent_id = ? AND name = ?", [parentId, name]).map(Node.init(row:))
    }

    /// How children are listed.
    enum Order { case foldersFirst, name }

    /// The children of `parentId`: folders first then by name (the folders, then the files, each
    /// read in the order of the `(parent_id, name)` index: no sort), or by name alone.
    func children(of parentId: String, order: Order = .foldersFirst) throws -> [Node] {
        guard order == .foldersFirst else {
            return try db.query("SELECT \(Node.columns) FROM nodes WHERE parent_id = ? ORDER BY name", [parentId]).map(Node.init(row:))
        }
        return try children(of: parentId, type: .folder, after: nil, limit: -1) + children(of: parentId, type: .file, after: nil, limit: -1)
    }

    /// One page of the children of `parentId` of type `type`, by name, after `name` (nil: from
    /// the first), at most `limit` (-1: no limit): a range of the `(parent_id, name)` index read in its order,
    /// no sort and no look at the rest of the folder.
    func children(of parentId: String, type: NodeType, after name: String?, limit: Int) throws -> [Node] {
        try db.query(Self.childPageSQL, [parentId, name ?? "", type, limit]).map(Node.init(row:))
    }

    /// The statement of `children(of:type:after:limit:)` (its query plan is tested).
    static let childPageSQL = "SELECT \(Node.columns) FROM nodes WHERE parent_id = ? AND name > ? AND type = ? ORDER BY name LIMIT ?"

    /// Every descendant of folder `id` (not including it), deepest last.
    func descendants(of id: String) throws -> [Node] {
        let cols = Node.columns.split(separator: ",").map { "n." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
        return try db.query("""
            WITH RECURSIVE sub(id) AS (SELECT id FROM nodes WHERE parent_id = ?
              UNION ALL SELECT nodes.id FROM nodes JOIN sub ON nodes.parent_id = sub.id)
            SELECT \(cols) FROM nodes n JOIN sub ON n.id = sub.id
            """, [id]).map(Node.init(row:))
    }

    /// Every file node.
    func files() throws -> [Node] {
        try db.query("SELECT \(Node.columns) FROM nodes WHERE type=?", [NodeType.file]).map(Node.init(row:))
    }

    /// The nodes with any of the server ids `remoteIds` (at most 500: one statement's parameters).
    func nodes(remoteIds: [String]) throws -> [Node] {
        guard !remoteIds.isEmpty else { return [] }
        let marks = Array(repeating: "?", count: remoteIds.count).joined(separator: ",")
        return try db.query("SELECT \(Node.columns) FROM nodes WHERE remote_id IN (\(marks))", remoteIds).map(Node.init(row:))
    }

    /// The sequence numbers recorded for node `id`, nil when there is no such node.
    func seqs(id: String) throws -> RemoteSeqs? {
        try db.queryOne("SELECT record_seq, content_seq FROM nodes WHERE id = ?", [id]).map {
            RemoteSeqs(record: try $0.decode(Int64.self, "record_seq"), content: try $0.decode(Int64.self, "content_seq"))
        }
    }

    /// The synced file whose content is blob `blobId`, if any.
    func syncedFile(withBlob blobId: String) throws -> Node? {
        try db.queryOne("SELECT \(Node.columns) FROM nodes WHERE local_path = ? AND remote_id IS NOT NULL AND type = ?", [blobId, NodeType.file])
            .map(Node.init(row:))
    }

    /// Every node on the server but the root, in the order they were inserted.
    func synced() throws -> [Node] {
        try db.query("SELECT \(Node.columns) FROM nodes WHERE remote_id IS NOT NULL AND id != ? ORDER BY rowid", [Node.rootId])
            .map(Node.init(row:))
    }

    /// The ids of the files on the server (pinned ones only, with `pinnedOnly`) whose content
    /// is in one of `states`, in a stable order.
    func remoteFileIds(contentStates states: [ContentState], pinnedOnly: Bool) throws -> [String] {
        let marks = Array(repeating: "?", count: states.count).joined(separator: ", ")
        return try db.query("""
            SELECT id FROM nodes WHERE type = ?\(pinnedOnly ? " AND pinned = 1" : "") AND remote_id IS NOT NULL
              AND content_state IN (\(marks)) ORDER BY id
            """, [NodeType.file] + states.map { $0 as any SQLBindable }).map { try $0.decode(String.self, "id") }
    }

    /// Per folder directly in `folderId`: the bytes and files below it and how many of those
    /// (folders included, not the folder itself) await upload, by folder id.
    func folderTotals(in folderId: String) throws -> [(id: String, bytes: Int64, files: Int, awaiting: Int)] {
        try db.query("""
            WITH RECURSIVE sub(top, id) AS (
              SELECT id, id FROM nodes WHERE parent_id = ? AND type = ?
              UNION ALL SELECT sub.top, n.id FROM nodes n JOIN sub ON n.parent_id = sub.id)
            SELECT sub.top AS top,
                   COALESCE(SUM(CASE WHEN n.type = ? THEN n.size ELSE 0 END), 0) AS bytes,
                   COALESCE(SUM(n.type = ?), 0) AS files,
                   COALESCE(SUM(n.pending_op IS NOT NULL AND n.id != sub.top), 0) AS awaiting
            FROM sub JOIN nodes n ON n.id = sub.id GROUP BY sub.top
            """, [folderId, NodeType.folder, NodeType.file, NodeType.file]).map {
            (try $0.decode(String.self, "top"), try $0.decode(Int64.self, "bytes"), try $0.decode(Int.self, "files"),
             try $0.decode(Int.self, "awaiting"))
        }
    }

    /// Where node `id` is (its folder and name), nil when there is no such node.
    func placement(id: String) throws -> (parentId: String?, name: String)? {
        try db.queryOne("SELECT parent_id, name FROM nodes WHERE id = ?", [id]).map {
            (try $0.decode(String?.self, "parent_id"), try $0.decode(String.self, "name"))
        }
    }

    /// The server id of node `id` (nil when it has none or there is no such node).
    func remoteId(id: String) throws -> String? {
        try db.queryOne("SELECT remote_id FROM nodes WHERE id = ?", [id])?.decode(String?.self, "remote_id") ?? nil
    }

    /// How many nodes there are (the root included).
    func count() throws -> Int {
        try db.scalar(Int.self, "SELECT count(*) FROM nodes") ?? 0
    }

    /// The highest content-record sequence number of the nodes with server id `remoteId` (0 for none).
    func highestContentSeq(remoteId: String) throws -> Int64 {
        try db.scalar(Int64.self, "SELECT coalesce(max(content_seq), 0) FROM nodes WHERE remote_id = ?", [remoteId]) ?? 0
    }

    /// True when the tree holds the root and nothing else, and there are no bases (one look at
    /// each table, not a count of a large one).
    func onlyRootAndNoBases() throws -> Bool {
        try db.scalar(Bool.self, """
            SELECT EXISTS(SELECT 1 FROM nodes WHERE id = ?) AND NOT EXISTS(SELECT 1 FROM nodes WHERE id != ?)
              AND NOT EXISTS(SELECT 1 FROM remote_base)
            """, [Node.rootId, Node.rootId]) == true
    }

    /// Streams every node but the root that has a server id to `body` (id, server id), without
    /// holding them all in memory.
    func forEachSynced(_ body: (_ id: String, _ remoteId: String) throws -> Void) throws {
        let st = try db.prepare("SELECT id, remote_id FROM nodes WHERE id != ? AND remote_id IS NOT NULL")
        try st.bind([Node.rootId])
        while try st.step() {
            let r = st.row()
            try body(try r.decode(String.self, "id"), try r.decode(String.self, "remote_id"))
        }
    }

    /// Streams every node's id, folder and type to `body` until it returns false, without
    /// holding them all in memory.
    func forEachPlacement(_ body: (_ id: String, _ parentId: String?, _ type: NodeType) throws -> Bool) throws {
        let st = try db.prepare("SELECT id, parent_id, type FROM nodes")
        while try st.step() {
            let r = st.row()
            guard try body(try r.decode(String.self, "id"), try r.decode(String?.self, "parent_id"), try r.decode(NodeType.self, "type")) else { return }
        }
    }

    /// How many nodes there are but the root, and how many of those the root reaches through
    /// folders (a recursive query: no memory).
    func countReachable() throws -> (all: Int, onTree: Int) {
        let all = try db.scalar(Int.self, "SELECT count(*) FROM nodes WHERE id != ?", [Node.rootId]) ?? 0
        let onTree = try db.scalar(Int.self, """
            WITH RECURSIVE t(id, folder) AS (
              SELECT ?, 1
              UNION ALL SELECT n.id, n.type = ? FROM nodes n JOIN t ON n.parent_id = t.id WHERE t.folder)
            SELECT count(*) - 1 FROM t
            """, [Node.rootId, NodeType.folder]) ?? 0
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
            UPDATE nodes SET remote_id = ?, parent_id = ?, name = ?, type = ?, size = ?, version = ?, modified_at = ?, mime_type = ?,
              content_state = ?, local_path = ?, pinned = ?, last_accessed = ?, pending_op = ?, local_version = ?, sha256 = ? WHERE id = ?
            """, Array(n.bindings.dropFirst()) + [n.id])
    }

    /// Records `n`'s new local content (size, SHA-256, blob, state, times, local version, pending op).
    func setNewLocalContent(_ n: Node) throws {
        try db.run("UPDATE nodes SET size=?, sha256=?, local_path=?, content_state=?, modified_at=?, local_version=?, pending_op=?, last_accessed=? WHERE id=?",
                   [Int64(n.size), n.sha256, n.localPath, n.contentState, n.modifiedAt, n.localVersion, n.pendingOp,
                    n.lastAccessed, n.id])
    }

    /// Sets node `id`'s modification time to `seconds`.
    func setModifiedAt(id: String, _ seconds: Int64) throws {
        try db.run("UPDATE nodes SET modified_at = ? WHERE id = ?", [seconds, id])
    }

    /// Moves node `id` to `name` in `parentId` at `modifiedAt`, to send as a move (unless it has another pending op).
    func move(id: String, to parentId: String, name: String, modifiedAt: Int64) throws {
        try db.run("UPDATE nodes SET parent_id=?, name=?, modified_at=?, pending_op=COALESCE(pending_op,?) WHERE id=?",
                   [parentId, name, modifiedAt, PendingOp.move, id])
    }

    /// Inserts the root folder (a new vault), modified `now`.
    func insertRoot(now: Int64) throws {
        try db.run("INSERT INTO nodes(id, parent_id, name, type, modified_at, content_state) VALUES (?, NULL, '', ?, ?, ?)",
                   [Node.rootId, NodeType.folder, now, ContentState.local])
        try CountersTable(db: db).countInsertedNode(id: Node.rootId, pinned: false)
    }

    /// Records that node `id` was read at `time` (LRU order).
    func setLastAccessed(id: String, _ time: Int64) throws {
        try db.run("UPDATE nodes SET last_accessed = ? WHERE id = ?", [time, id])
    }

    /// Marks node `id`'s content local, in blob `blobId`.
    func setLocalContent(id: String, blobId: String) throws {
        try db.run("UPDATE nodes SET content_state = ?, local_path = ? WHERE id = ?", [ContentState.local, blobId, id])
    }

    /// Marks node `id`'s content not on this device (and forgets its blob).
    func setNotDownloaded(id: String) throws {
        try db.run("UPDATE nodes SET content_state=?, local_path=NULL WHERE id=?", [ContentState.notDownloaded, id])
    }

    /// Sets node `id`'s content state alone (its blob stays recorded).
    func setContentState(id: String, _ state: ContentState) throws {
        try db.run("UPDATE nodes SET content_state=? WHERE id=?", [state, id])
    }

    /// Points the nodes whose content is blob `old` at `new` (a re-sealing).
    func rebindBlob(from old: String, to new: String) throws {
        try db.run("UPDATE nodes SET local_path = ? WHERE local_path = ?", [new, old])
    }

    /// Marks node `id` as having `op` to send, unless it has another pending op already.
    func notePending(id: String, _ op: PendingOp) throws {
        try db.run("UPDATE nodes SET pending_op = COALESCE(pending_op, ?) WHERE id = ?", [op, id])
    }

    /// Records node `id` as uploaded: its server id and version, nothing pending.
    func setUploaded(id: String, remoteId: String, version: Int64) throws {
        try db.run("UPDATE nodes SET remote_id = ?, version = ?, pending_op = NULL WHERE id = ?", [remoteId, version, id])
    }

    /// Takes node `id` out of its folder for a moment (a plan moving several nodes).
    func detach(id: String) throws {
        try db.run("UPDATE nodes SET parent_id = NULL WHERE id = ?", [id])
    }

    func setPinned(id: String, _ pinned: Bool) throws {
        try db.run("UPDATE nodes SET pinned = ? WHERE id = ?", [pinned, id])
    }

    /// Records node `id`'s server id and version; false when there is no such node.
    func setRemote(id: String, remoteId: String, version: Int64) throws -> Bool {
        try db.run("UPDATE nodes SET remote_id = ?, version = ? WHERE id = ?", [remoteId, version, id]) > 0
    }

    /// Raises the sequence numbers of the node with server id `remoteId` (never lowers them).
    func raiseSeqs(remoteId: String, recordSeq: Int64, contentSeq: Int64) throws {
        try db.run("UPDATE nodes SET record_seq = max(record_seq, ?), content_seq = max(content_seq, ?) WHERE remote_id = ?",
                   [recordSeq, contentSeq, remoteId])
    }

    /// Raises the sequence numbers of node `id` to `seqs` (never lowers them).
    func raiseSeqs(id: String, _ seqs: RemoteSeqs) throws {
        try db.run("UPDATE nodes SET record_seq = max(record_seq, ?), content_seq = max(content_seq, ?) WHERE id = ?",
                   [seqs.record, seqs.content, id])
    }

    /// After an entry of node `id` finished: `sync` pending while other entries of it remain, else nothing.
    func settlePendingOp(id: String) throws {
        try db.run("""
            UPDATE nodes SET pending_op = CASE WHEN EXISTS (SELECT 1 FROM outbox WHERE node_id = ?) THEN COALESCE(pending_op, ?) ELSE NULL END
            WHERE id = ?
            """, [id, PendingOp.sync, id])
    }

    func delete(id: String) throws {
        try db.run("DELETE FROM nodes WHERE id = ?", [id])
    }
}

extension Vault {
    /// The `nodes` table of this vault's database.
    var nodesTable: NodesTable { NodesTable(db: db) }
}
