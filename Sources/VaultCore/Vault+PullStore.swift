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

    private var nodes: NodesTable { NodesTable(db: db) }
    private var bases: RemoteBaseTable { RemoteBaseTable(db: db) }


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
        return kept(try nodes.node(id: id))
    }

    func node(remoteId: String) throws -> Node? {
        if remoteId == Node.rootId { return try node(id: Node.rootId) }
        if let n = folders?.node(remoteId: remoteId) { return n }
        if absent(.remoteId, remoteId) { return nil }
        return kept(try nodes.node(remoteId: remoteId))
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
        return try nodes.child(of: parentId, named: name)
    }

    func children(of parentId: String) throws -> [Node] {
        if absent(.parent, parentId) { return [] }
        return try nodes.children(of: parentId, order: .name)
    }

    /// The JSON a content record was stored as in schema 7's bases (`RemoteBaseTable.contentJSON`).
    static func contentJSON(_ c: ContentRecord) throws -> String { try RemoteBaseTable.contentJSON(c) }

    func base(remoteId: String) throws -> RemoteBase? {
        if let b = folders?.base(remoteId: remoteId) { return b }
        if absent(.base, remoteId) { return nil }
        let b = try bases.base(remoteId: remoteId)
        if let b { folders?.keep(b) }
        return b
    }

    func baseChildren(of remoteId: String) throws -> [RemoteBase] {
        if absent(.baseParent, remoteId) { return [] }
        return try bases.children(of: remoteId)
    }

    /// How many nodes there are (the root included): the maintained counter.
    func nodeCount() throws -> Int { Int(try CountersTable(db: db).value(.nodes)) }
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
        let tombstones = try vault.tombstonesTable.all()
        let sequence = try vault.outboxTable.lastSeq()
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

    @discardableResult public func beginListing() throws -> Bool {
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
        return fresh
    }

    /// Nothing but the root node, no bases, no tombstones (one look at each table, not a count of a large one).
    private func isEmptyVault() throws -> Bool {
        try vault.nodesTable.onlyRootNoBasesNoTombstones()
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
        var out: [String] = []
        try vault.nodesTable.forEachSynced { id, remoteId in
            if !listed.contains(remoteId) { out.append(id) }
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
        let nodes = NodesTable(db: sql), bases = RemoteBaseTable(db: sql), tombstones = TombstonesTable(db: sql)
        var doomed: [String] = []
        var exists = Set<String>()
        for case .put(let n) in actions {
            guard view.mayHaveNode(id: n.id), let old = try nodes.placement(id: n.id) else { continue }
            exists.insert(n.id)
            if old.parentId != n.parentId || old.name != n.name { try nodes.detach(id: n.id) }
        }
        let blobRows = BlobsTable(db: sql)
        for case let .giveBlob(blob, owner) in actions { try blobRows.setNode(id: blob, owner) }
        for case .remove(let id) in actions {
            view.forget(nodeId: id)
            doomed += try blobRows.blobs(ofNode: id).map(\.id)
            try blobRows.delete(ofNode: id)
            try RevisionsTable(db: sql).delete(nodeId: id)
            try TransfersTable(db: sql).delete(nodeId: id)
            try retireSeqs(remoteId: try nodes.remoteId(id: id), nodeId: id)
            try nodes.delete(id: id)
        }
        // What the bases of this plan say each node has seen, written with a node inserted here
        // (no UPDATE after it: see below).
        var seen: [String: (record: Int64, content: Int64)] = [:]
        for case .setBase(let b) in actions {
            let old = seen[b.remoteId] ?? (0, 0)
            seen[b.remoteId] = (max(old.record, b.recordSeq), max(old.content, b.contentSeq))
        }
        var inserted = Set<String>()
        var insertedNodes: [Node] = []
        for case .put(let n) in actions {
            view.forget(nodeId: n.id)
            view.noteWritten(n)
            if exists.contains(n.id) {
                try nodes.replace(n)
            } else {
                let seqs = n.remoteId.flatMap { seen[$0] } ?? (0, 0)
                try nodes.insertUncounted(n, recordSeq: seqs.record, contentSeq: seqs.content)
                insertedNodes.append(n)
                if let r = n.remoteId { inserted.insert(r) }
            }
        }
        try nodes.countInserted(insertedNodes)
        for a in actions {
            switch a {
            case .setBase(let b):
                // A DELETE and a plain INSERT, not INSERT OR REPLACE: inside the pull's transaction
                // SQLite gives an OR REPLACE (or an UPDATE) a statement journal, into which
                // SQLCipher encrypts every page the statement touches — most of a first pull's
                // time. Neither of these needs one (remote_base has no foreign keys or triggers),
                // and a base a listing into an empty vault never wrote needs no DELETE.
                if view.mayHaveBase(remoteId: b.remoteId) { try bases.delete(remoteId: b.remoteId) }
                view.forget(baseId: b.remoteId)
                view.noteWritten(b)
                try bases.insert(b)
                // What this device has seen: its next record of the node takes one more (a node
                // inserted above already holds it).
                if !inserted.contains(b.remoteId) {
                    try nodes.raiseSeqs(remoteId: b.remoteId, recordSeq: b.recordSeq, contentSeq: b.contentSeq)
                }
            case .dropBase(let id):
                view.forget(baseId: id)
                try retireSeqs(remoteId: id, nodeId: nil)
                try bases.delete(remoteId: id)
            case .dropEntry(let seq):
                try OutboxTable(db: sql).delete(seq: seq)
            case .updateEntry(let e):
                try OutboxTable(db: sql).replace(e)
            case .append(let e):
                try OutboxTable(db: sql).insert(e, now: Vault.now)
            case .setTombstone(let t):
                try tombstones.put(t)
            case .dropTombstone(let id):
                try tombstones.delete(nodeId: id)
            case .put, .remove, .giveBlob:
                break
            }
        }
        // Uploads whose entry was rewritten with a new request id (or dropped) are no one's now.
        try transfersTable.deleteUploadsWithoutEntry()
        return doomed
    }
}
