import VaultSQL

/// What changed below a folder since a cursor: the check behind a folder delete that names the
/// cursor it was decided on (`X-Vault-Decided-At`, docs/server.md "Folder deletes").
extension SQLDatabase {
    /// A node that is live below `folder` now (nothing trashed between them) and that a change
    /// after `cursor` touched (created, moved in, renamed, new content, restored), or nil.
    ///
    /// Bounded by the changes after `cursor` (at most the retained history) times the depth: each
    /// node they name walks up its ancestry until it meets `folder`, a trashed folder or the root.
    func changedBelow(owner: String, folder: String, after cursor: Int64) throws -> String? {
        try queryOne("""
            WITH RECURSIVE up(id, parent) AS (
                SELECT f.id, f.parent_id FROM files f
                 WHERE f.owner = ? AND f.trashed = 0
                   AND f.id IN (SELECT file_id FROM changes WHERE owner = ? AND seq > ?)
                UNION
                SELECT up.id, p.parent_id FROM up JOIN files p ON p.owner = ? AND p.id = up.parent
                 WHERE up.parent != ? AND p.trashed = 0)
            SELECT id FROM up WHERE parent = ? LIMIT 1
            """, [owner, owner, cursor, owner, folder, folder])?["id"].string
    }
}
