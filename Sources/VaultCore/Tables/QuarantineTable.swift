import VaultSQL

/// The SQL of the `quarantine` table: server nodes a pull refused (docs/sync.md "Refused
/// nodes"), with why and when last seen. Typed reads and writes only.
struct QuarantineTable {
    let db: SQLDatabase

    /// Every quarantined node, oldest first.
    func all() throws -> [QuarantinedNode] {
        try db.query("SELECT remote_id, reason, seen_at FROM quarantine ORDER BY seen_at, remote_id").map {
            QuarantinedNode(id: try $0.decode(String.self, "remote_id"), reason: try $0.decode(String.self, "reason"),
                            seenAt: try $0.decode(Int64.self, "seen_at"))
        }
    }

    func ids() throws -> Set<String> {
        Set(try db.query("SELECT remote_id FROM quarantine").map { try $0.decode(String.self, "remote_id") })
    }

    /// Puts `remoteId` in (or keeps it in) the quarantine for `reason`, seen at `time`.
    func put(remoteId: String, reason: String, seenAt time: Int64) throws {
        try db.run("INSERT OR REPLACE INTO quarantine(remote_id, reason, seen_at) VALUES (?, ?, ?)", [remoteId, reason, time])
    }

    func delete(remoteId: String) throws {
        try db.run("DELETE FROM quarantine WHERE remote_id = ?", [remoteId])
    }
}
