import Foundation
import VaultSQL
internal import CLinuxShims

/// The local state as the sync planner reads it (`LocalView`), answered by lookups in the
/// metadata database, so a large vault is never loaded whole.
final class SQLLocalView: LocalView {
    /// The database; its statement cache keeps a pull's many small queries and writes prepared
    /// (preparing each one every time took most of a large pull's database time).
    let db: SQLDatabase
    /// During a listing into an empty vault, what it wrote: lookups of anything else are answered
    /// without the database (nil: every lookup queries).
    var written: WrittenKeys?
    /// During a listing, the folders it looked up (nil: every lookup queries).
    var folders: ListingFolders?

    init(db: SQLDatabase) { self.db = db }

    private func rows(_ sql: String, _ params: [any SQLBindable]) throws -> [SQLRow] { try db.query(sql, params) }

    /// True when `key` cannot be in the database (a listing into an empty vault never wrote it).
    private func absent(_ kind: WrittenKeys.Kind, _ key: String, _ second: String = "") -> Bool {
        guard let written else { return false }
        return !written.mayContain(kind, key, second)
    }

    /// Notes a node a listing into an empty vault wrote (inserted, or updated to these keys).
    func noteWritten(_ n: Node) {
        guard written != nil else { return }
        written?.insert(.nodeId, n.id)
        if let r = n.remoteId { written?.insert(.remoteId, r) }
        if let p = n.parentId { written?.insert(.child, p, n.name); written?.insert(.parent, p) }
    }

    /// Notes a base a listing into an empty vault wrote.
    func noteWritten(_ b: RemoteBase) {
        guard written != nil else { return }
        written?.insert(.base, b.remoteId)
        if let p = b.parentId { written?.insert(.baseParent, p) }
    }

    /// True when a node with this id may exist (false: it certainly does not).
    func mayHaveNode(id: String) -> Bool { !absent(.nodeId, id) }

    /// True when a base with this remote id may exist (false: it certainly does not).
    func mayHaveBase(remoteId: String) -> Bool { !absent(.base, remoteId) }

    func node(id: String) throws -> Node? {
        if let n = folders?.node(id: id) { return n }
        if absent(.nodeId, id) { return nil }
        return kept(try rows("SELECT \(Node.columns) FROM nodes WHERE id = ?", [id]).first.map(Node.init(row:)))
    }

    func node(remoteId: String) throws -> Node? {
        if remoteId == Node.rootId { return try node(id: Node.rootId) }
        if let n = folders?.node(remoteId: remoteId) { return n }
        if absent(.remoteId, remoteId) { return nil }
        return kept(try rows("SELECT \(Node.columns) FROM nodes WHERE remote_id = ?", [remoteId]).first.map(Node.init(row:)))
    }

    private func kept(_ n: Node?) -> Node? {
        if let n { folders?.keep(n) }
        return n
    }

    /// A node is being written or removed (`applyPlan`).
    func forget(nodeId: String) { folders?.forget(nodeId: nodeId) }

    /// A base is being written or dropped (`applyPlan`).
    func forget(baseId: String) { folders?.forget(baseId: baseId) }

    func child(of parentId: String, named name: String) throws -> Node? {
        if absent(.child, parentId, name) { return nil }
        return try rows("SELECT \(Node.columns) FROM nodes WHERE parent_id = ? AND name = ?", [parentId, name]).first.map(Node.init(row:))
    }

    func children(of parentId: String) throws -> [Node] {
        if absent(.parent, parentId) { return [] }
        return try rows("SELECT \(Node.columns) FROM nodes WHERE parent_id = ? ORDER BY name", [parentId]).map(Node.init(row:))
    }

    static let baseColumns = "remote_id, parent_id, name, type, version, record_seq, content_seq, content"

    /// The base of a row selecting `baseColumns`; throws `SQLError.Kind.decoding` on a damaged row.
    static func base(_ r: SQLRow) throws -> RemoteBase {
        RemoteBase(remoteId: try r.decode(String.self, "remote_id"), parentId: try r.decode(String?.self, "parent_id"),
                   name: try r.decode(String.self, "name"), isFolder: try r.decode(NodeType.self, "type") == .folder,
                   version: try r.decode(Int64.self, "version"), recordSeq: try r.decode(Int64.self, "record_seq"),
                   contentSeq: try r.decode(Int64.self, "content_seq"),
                   content: try r.decode(String?.self, "content").flatMap(ContentRecord.decode(json:)))
    }

    /// The JSON a base's content record is stored as.
    static func contentJSON(_ c: ContentRecord) throws -> String {
        try ContentRecord.storedJSON(c) ?? String(decoding: try recordEncoder.encode(c), as: UTF8.self)
    }

    private static let recordEncoder: JSONEncoder = {
        let e = JSONEncoder(); e.outputFormatting = [.sortedKeys]; return e
    }()


    func base(remoteId: String) throws -> RemoteBase? {
        if let b = folders?.base(remoteId: remoteId) { return b }
        if absent(.base, remoteId) { return nil }
        let b = try rows("SELECT \(Self.baseColumns) FROM remote_base WHERE remote_id = ?", [remoteId]).first.map(Self.base)
        if let b { folders?.keep(b) }
        return b
    }

    func baseChildren(of remoteId: String) throws -> [RemoteBase] {
        if absent(.baseParent, remoteId) { return [] }
        return try rows("SELECT \(Self.baseColumns) FROM remote_base WHERE parent_id = ?", [remoteId]).map(Self.base)
    }

    func nodeCount() throws -> Int { try rows("SELECT count(*) AS n FROM nodes", []).first?.decode(Int.self, "n") ?? 0 }
}

/// The pull's writes (`PullStore`): a plan's actions in one transaction with the cursor, or a
/// whole listing in one transaction whose foreign keys are checked when it commits.
public final class VaultPullStore: PullStore {
    let vault: Vault
    private var listing = false
    private lazy var view = SQLLocalView(db: vault.db)

    init(vault: Vault) { self.vault = vault }

    public func cursor() throws -> Int64? {
        try vault.changesCursor()
    }

    public func planState() throws -> PlanState {
        let tombstones = try vault.db.query("SELECT node_id, remote_id, type, version FROM outbox_tombstones").map {
            Tombstone(nodeId: try $0.decode(String.self, "node_id"), remoteId: try $0.decode(String?.self, "remote_id"),
                      isFolder: try $0.decode(NodeType.self, "type") == .folder, version: try $0.decode(Int64.self, "version"))
        }
        let sequence = try vault.db.scalar(Int64.self, "SELECT seq FROM sqlite_sequence WHERE name = 'outbox'") ?? 0
        return PlanState(view: view, outbox: try vault.outbox(), tombstones: tombstones, nextSeq: sequence + 1)
    }

    public func apply(_ actions: [PlanAction], cursor: Int64?) throws {
        var doomed: [String] = []
        func write() throws {
            doomed = try vault.applyPlan(actions, view)
            if let cursor { try vault.writeSyncState([(.changesCursor, String(cursor))]) }
        }
        if listing {
            try write()
            // A page's buffers were freed on other threads' malloc arenas (its fetch and opening
            // run ahead): give their pages back, or each arena keeps its largest page resident.
            CLinuxShims_release_free_memory()
        } else {
            try vault.db.transaction { try write() }
            TestHooks.crashPoint("pull-page-applied")
        }
        for id in doomed { vault.blobs.delete(id, area: .cache); vault.blobs.delete(id, area: .staging) }
    }

    public func beginListing() throws {
        // A new device's first pull: nothing but the root, no bases. Its lookups (almost all of
        // nodes the listing has not written) are answered from what it wrote, and its foreign keys
        // are not checked row by row: a node often comes before its folder (the listing is in id
        // order), and SQLite then looked for that node's children at each insert, a random read
        // of an index per node. The tree check at the commit (`nodesOffTree`: every parent a
        // folder leading to the root) covers what they would (a listing writes nothing else that
        // refers to a node). `foreign_keys` cannot change inside a transaction: set before it,
        // and the vault checked again inside (it holds the vault lock, so nothing wrote between).
        var fresh = try isEmptyVault()
        if fresh { try vault.db.execute("PRAGMA foreign_keys = OFF") }
        try vault.db.execute("BEGIN IMMEDIATE")
        if fresh, try !isEmptyVault() {
            try vault.db.execute("ROLLBACK")
            try vault.db.execute("PRAGMA foreign_keys = ON")
            try vault.db.execute("BEGIN IMMEDIATE")
            fresh = false
        }
        try vault.db.execute("PRAGMA defer_foreign_keys = ON")
        // A whole tree in one transaction: pages kept in memory, not spilled (8 MiB).
        try vault.db.execute("PRAGMA cache_size = -8192")
        listing = true
        view.folders = ListingFolders()
        if fresh {
            var written = WrittenKeys()
            written.insert(.nodeId, Node.rootId)
            view.written = written
        }
    }

    /// Nothing but the root node, and no bases (one look at each table, not a count of a large one).
    private func isEmptyVault() throws -> Bool {
        try vault.db.scalar(Bool.self, """
            SELECT EXISTS(SELECT 1 FROM nodes WHERE id = ?) AND NOT EXISTS(SELECT 1 FROM nodes WHERE id != ?)
              AND NOT EXISTS(SELECT 1 FROM remote_base)
            """, [Node.rootId, Node.rootId]) == true
    }

    public func endListing(commit: Bool) throws {
        // A listing into an empty vault (what `written` is kept for) ran without foreign-key checks.
        let uncheckedKeys = view.written != nil
        listing = false
        view.written = nil
        view.folders = nil
        defer {
            try? vault.db.execute("PRAGMA cache_size = -2000")
            if uncheckedKeys { try? vault.db.execute("PRAGMA foreign_keys = ON") }
        }
        guard commit else { try? vault.db.execute("ROLLBACK"); return }
        do {
            // Every node below the root, none inside itself (the listing's parents all arrived).
            let off = try vault.nodesOffTree()
            guard off == 0 else {
                throw SyncPlanError("the listing holds \(off) node(s) whose folder it never shows or that are inside themselves (the server hid or invented a folder)")
            }
            try vault.db.execute("COMMIT")
        } catch {
            try? vault.db.execute("ROLLBACK")
            if let e = error as? SQLError, e.kind == .constraint {
                throw SyncPlanError("the listing names a folder it never shows (the server hid or invented a folder)")
            }
            throw error
        }
    }

    public func quarantined() throws -> Set<String> { try vault.quarantinedIds() }

    public func quarantine(_ refused: [RefusedNode], clearing: Set<String>) throws {
        if listing { return try vault.quarantine(refused, clearing: clearing) }
        try vault.db.transaction { try vault.quarantine(refused, clearing: clearing) }
    }

    public func missing(listed: ListedIds) throws -> [String] {
        // Streamed and checked against the set in memory: copying every listed id into a temporary
        // table (and a NOT IN over it) raised a first pull's peak memory at its end.
        let st = try vault.db.prepare("SELECT id, remote_id FROM nodes WHERE id != 'root' AND remote_id IS NOT NULL")
        var out: [String] = []
        while try st.step() {
            let r = st.row()
            let rid = try r.decode(String.self, "remote_id")
            if !listed.contains(rid) { out.append(try r.decode(String.self, "id")) }
        }
        return out
    }
}

extension Vault {
    /// The store a pull writes to (VaultSync's `PullRunner`).
    public func pullStore() -> VaultPullStore { VaultPullStore(vault: self) }

    /// Applies a plan's actions (inside the caller's transaction) in the order `PlanState.apply`
    /// does: nodes that move are detached first (no name is briefly held twice), blobs change
    /// owner, removed nodes go (children first) with their blobs, revisions and transfers, nodes
    /// are written (parents first), then bases, outbox entries and tombstones. Returns the blobs
    /// whose files to delete once committed.
    func applyPlan(_ actions: [PlanAction], _ view: SQLLocalView) throws -> [String] {
        let sql = view.db
        var doomed: [String] = []
        var exists = Set<String>()
        for case .put(let n) in actions {
            guard view.mayHaveNode(id: n.id), let old = try sql.query("SELECT parent_id, name FROM nodes WHERE id = ?", [n.id]).first else { continue }
            exists.insert(n.id)
            if try old.decode(String?.self, "parent_id") != n.parentId || old.decode(String.self, "name") != n.name {
                try sql.run("UPDATE nodes SET parent_id = NULL WHERE id = ?", [n.id])
            }
        }
        for case let .giveBlob(blob, owner) in actions { try sql.run("UPDATE blobs SET node_id = ? WHERE id = ?", [owner, blob]) }
        for case .remove(let id) in actions {
            view.forget(nodeId: id)
            doomed += try sql.query("SELECT id FROM blobs WHERE node_id = ?", [id]).map { try $0.decode(String.self, "id") }
            try sql.run("DELETE FROM blobs WHERE node_id = ?", [id])
            try sql.run("DELETE FROM revisions WHERE node_id = ?", [id])
            try sql.run("DELETE FROM transfers WHERE node_id = ?", [id])
            try retireSeqs(remoteId: try sql.query("SELECT remote_id FROM nodes WHERE id = ?", [id]).first?.decode(String?.self, "remote_id") ?? nil, nodeId: id)
            try sql.run("DELETE FROM nodes WHERE id = ?", [id])
        }
        // What the bases of this plan say each node has seen, written with a node inserted here
        // (no UPDATE after it: see below).
        var seen: [String: (record: Int64, content: Int64)] = [:]
        for case .setBase(let b) in actions {
            let old = seen[b.remoteId] ?? (0, 0)
            seen[b.remoteId] = (max(old.record, b.recordSeq), max(old.content, b.contentSeq))
        }
        var inserted = Set<String>()
        for case .put(let n) in actions {
            view.forget(nodeId: n.id)
            view.noteWritten(n)
            if exists.contains(n.id) {
                try sql.run("""
                    UPDATE nodes SET remote_id = ?, parent_id = ?, name = ?, type = ?, size = ?, version = ?, modified_at = ?, mime_type = ?,
                      content_state = ?, local_path = ?, pinned = ?, last_accessed = ?, pending_op = ?, local_version = ?, sha256 = ? WHERE id = ?
                    """, Array(n.bindings.dropFirst()) + [n.id])
            } else {
                let seqs = n.remoteId.flatMap { seen[$0] } ?? (0, 0)
                try sql.run("INSERT INTO nodes(\(Node.columns), record_seq, content_seq) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                            n.bindings + [seqs.record, seqs.content])
                if let r = n.remoteId { inserted.insert(r) }
            }
        }
        for a in actions {
            switch a {
            case .setBase(let b):
                // A DELETE and a plain INSERT, not INSERT OR REPLACE: inside the pull's transaction
                // SQLite gives an OR REPLACE (or an UPDATE) a statement journal, into which
                // SQLCipher encrypts every page the statement touches — most of a first pull's
                // time. Neither of these needs one (remote_base has no foreign keys or triggers),
                // and a base a listing into an empty vault never wrote needs no DELETE.
                if view.mayHaveBase(remoteId: b.remoteId) { try sql.run("DELETE FROM remote_base WHERE remote_id = ?", [b.remoteId]) }
                view.forget(baseId: b.remoteId)
                view.noteWritten(b)
                try sql.run("INSERT INTO remote_base(\(SQLLocalView.baseColumns)) VALUES (?,?,?,?,?,?,?,?)",
                           [b.remoteId, b.parentId, b.name, b.isFolder ? "folder" : "file", b.version, b.recordSeq, b.contentSeq,
                            try b.content.map(SQLLocalView.contentJSON)])
                // What this device has seen: its next record of the node takes one more (a node
                // inserted above already holds it).
                if !inserted.contains(b.remoteId) {
                    try sql.run("UPDATE nodes SET record_seq = max(record_seq, ?), content_seq = max(content_seq, ?) WHERE remote_id = ?",
                               [b.recordSeq, b.contentSeq, b.remoteId])
                }
            case .dropBase(let id):
                view.forget(baseId: id)
                try retireSeqs(remoteId: id, nodeId: nil)
                try sql.run("DELETE FROM remote_base WHERE remote_id = ?", [id])
            case .dropEntry(let seq):
                try sql.run("DELETE FROM outbox WHERE seq = ?", [seq])
            case .updateEntry(let e):
                try sql.run("""
                    UPDATE outbox SET op = ?, node_id = ?, payload = ?, base_version = ?, request_id = ?, state = ?, attempts = ?,
                      last_error = ?, sent_at = ? WHERE seq = ?
                    """, [e.op.rawValue, e.nodeId, try Self.encodePayload(e.payload), e.baseVersion, e.requestId, e.state.rawValue,
                          e.attempts, e.lastError, e.sentAt, e.seq])
            case .append(let e):
                try sql.run("""
                    INSERT INTO outbox(seq, op, node_id, payload, base_version, request_id, state, attempts, last_error, sent_at, created_at)
                    VALUES (?,?,?,?,?,?,?,?,?,?,?)
                    """, [e.seq, e.op.rawValue, e.nodeId, try Self.encodePayload(e.payload), e.baseVersion, e.requestId, e.state.rawValue,
                          e.attempts, e.lastError, e.sentAt, Vault.now])
            case .setTombstone(let t):
                try sql.run("INSERT OR REPLACE INTO outbox_tombstones(node_id, remote_id, type, version) VALUES (?, ?, ?, ?)",
                           [t.nodeId, t.remoteId, t.isFolder ? "folder" : "file", t.version])
            case .dropTombstone(let id):
                try sql.run("DELETE FROM outbox_tombstones WHERE node_id = ?", [id])
            case .put, .remove, .giveBlob:
                break
            }
        }
        // Uploads whose entry was rewritten with a new request id (or dropped) are no one's now.
        try db.run("""
            DELETE FROM transfers WHERE direction = 'upload' AND state != 'done' AND request_id IS NOT NULL
              AND request_id NOT IN (SELECT request_id FROM outbox)
            """)
        return doomed
    }
}
