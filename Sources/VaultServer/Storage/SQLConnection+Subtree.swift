import VaultSQL

/// What changed below a folder since a cursor: the check behind a folder delete that names the
/// cursor it was decided on (`X-Vault-Decided-At`, docs/server.md "Folder deletes").
extension SQLConnection {
    /// Whether a change after `cursor` touched a node that is live below `folder` now (nothing
    /// trashed between them): created, moved in, renamed, new content, restored.
    ///
    /// Bounded by the changes after `cursor` (at most the retained history) and the folders above
    /// them: the parents of the nodes they name, then each folder's parent, every folder once,
    /// until `folder`, a trashed folder or the root. The folder's own size does not count.
    func changedBelow(owner: String, folder: String, after cursor: Int64) throws -> Bool {
        try queryOne("""
            WITH RECURSIVE up(id) AS (
                SELECT f.parent_id FROM files f
                 WHERE f.owner = ? AND f.trashed = 0 AND f.parent_id IS NOT NULL
                   AND f.id IN (SELECT file_id FROM changes WHERE owner = ? AND seq > ?)
                UNION
                SELECT p.parent_id FROM up JOIN files p ON p.owner = ? AND p.id = up.id
                 WHERE up.id != ? AND p.trashed = 0 AND p.parent_id IS NOT NULL)
            SELECT 1 FROM up WHERE id = ? LIMIT 1
            """, [owner, owner, cursor, owner, folder, folder]) != nil
    }
}
