import VaultSQL

/// The SQL of the `outbox_tombstones` table: the server id and version of nodes removed here
/// while outbox entries of theirs still replay (docs/outbox.md). Typed reads and writes only.
struct TombstonesTable {
    let db: SQLDatabase

    static func tombstone(_ r: SQLRow) throws -> Tombstone {
        Tombstone(nodeId: try NodesTable.nodeId(r["node_id"], column: "node_id"), remoteId: try r.decode(String?.self, "remote_id"),
                  isFolder: try r.decode(NodeType.self, "type") == .folder, version: try r.decode(Int64.self, "version"))
    }

    /// Every tombstone.
    func all() throws -> [Tombstone] {
        try db.query("SELECT node_id, remote_id, type, version FROM outbox_tombstones").map(Self.tombstone)
    }

    /// The tombstone of node `nodeId`, if any.
    func tombstone(nodeId: String) throws -> Tombstone? {
        try db.queryOne("SELECT node_id, remote_id, type, version FROM outbox_tombstones WHERE node_id = ?", [CompactColumns.key(nodeId)]).map(Self.tombstone)
    }

    /// Writes `t` (replacing the node's older tombstone).
    func put(_ t: Tombstone) throws {
        try db.run("INSERT OR REPLACE INTO outbox_tombstones(node_id, remote_id, type, version) VALUES (?, ?, ?, ?)",
                   [CompactColumns.key(t.nodeId), t.remoteId, t.isFolder ? "folder" : "file", t.version])
    }

    /// Records the server id and version of the removed node `nodeId`.
    func setRemote(nodeId: String, remoteId: String, version: Int64) throws {
        try db.run("UPDATE outbox_tombstones SET remote_id = ?, version = ? WHERE node_id = ?", [remoteId, version, CompactColumns.key(nodeId)])
    }

    func delete(nodeId: String) throws {
        try db.run("DELETE FROM outbox_tombstones WHERE node_id = ?", [CompactColumns.key(nodeId)])
    }

    /// Deletes the tombstones no entry needs: none of their own, and none whose payload names them
    /// (a compact payload holds a node id as its key's bytes: `CompactColumns.payload`; the
    /// parent is a column of its own, or the parent of the entry's node: `OutboxTable`).
    func deleteSpent() throws {
        try db.run("""
            DELETE FROM outbox_tombstones WHERE NOT EXISTS (SELECT 1 FROM outbox o WHERE o.node_id = outbox_tombstones.node_id)
              AND NOT EXISTS (SELECT 1 FROM outbox o WHERE instr(o.payload, CAST(outbox_tombstones.node_id AS BLOB)) > 0
                OR o.parent_id = outbox_tombstones.node_id)
              AND NOT EXISTS (SELECT 1 FROM outbox o JOIN nodes n ON n.id = o.node_id
                WHERE o.from_node & \(OutboxTable.SharedField.parentId.bit) AND n.parent_id = outbox_tombstones.node_id)
            """)
    }
}

extension Vault {
    /// The `outbox_tombstones` table of this vault's database.
    var tombstonesTable: TombstonesTable { TombstonesTable(db: db) }
}
