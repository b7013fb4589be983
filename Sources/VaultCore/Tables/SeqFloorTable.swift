import VaultSQL

/// The SQL of the `seq_floor` table: per server node, the highest node-record and
/// content-record sequence numbers this device sealed or saw (SECURITY.md "Node record"),
/// outliving the node's row and base. Typed reads and writes only.
struct SeqFloorTable {
    let db: SQLDatabase

    /// The highest sequence numbers known for `remoteId` anywhere they are kept: any node with
    /// that server id, local node `nodeId`, the base of `remoteId`, and the floor (zeros for none).
    func highest(remoteId: String, nodeId: String?) throws -> RemoteSeqs {
        let r = try db.queryOne("""
            SELECT max(coalesce(n.r, 0), coalesce(l.r, 0), coalesce(b.r, 0), coalesce(f.r, 0)) AS record_seq,
                   max(coalesce(n.c, 0), coalesce(l.c, 0), coalesce(b.c, 0), coalesce(f.c, 0)) AS content_seq
            FROM (SELECT 1) LEFT JOIN (SELECT max(record_seq) r, max(content_seq) c FROM nodes WHERE \(NodesTable.hasRemoteId("?3"))) n
              LEFT JOIN (SELECT record_seq r, content_seq c FROM nodes WHERE id = ?2) l
              LEFT JOIN (SELECT record_seq r, content_seq c FROM remote_base WHERE remote_id = ?3) b
              LEFT JOIN (SELECT record_seq r, content_seq c FROM seq_floor WHERE remote_id = ?1) f
            """, [remoteId, CompactColumns.key(nodeId), CompactColumns.key(remoteId)])
        return RemoteSeqs(record: try r?.decode(Int64.self, "record_seq") ?? 0, content: try r?.decode(Int64.self, "content_seq") ?? 0)
    }

    /// Raises the floor of `remoteId` to `seqs` (never lowers it).
    func raise(remoteId: String, to seqs: RemoteSeqs) throws {
        try db.run("""
            INSERT OR REPLACE INTO seq_floor(remote_id, record_seq, content_seq)
            SELECT ?1, max(?2, coalesce((SELECT record_seq FROM seq_floor WHERE remote_id = ?1), 0)),
                       max(?3, coalesce((SELECT content_seq FROM seq_floor WHERE remote_id = ?1), 0))
            """, [remoteId, seqs.record, seqs.content])
    }
}
