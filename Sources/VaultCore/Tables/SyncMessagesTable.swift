import VaultSQL

/// The SQL of the `sync_messages` table: what syncs said about changes made on both sides,
/// kept for `vault conflicts` until cleared. Typed reads and writes only.
struct SyncMessagesTable {
    let db: SQLDatabase

    /// Every message, oldest first.
    func all() throws -> [ConflictNote] {
        try db.query("SELECT id, created_at, kind, path, text FROM sync_messages ORDER BY id").map {
            ConflictNote(id: try $0.decode(Int64.self, "id"), time: try $0.decode(Int64.self, "created_at"), kind: try $0.decode(String.self, "kind"),
                         path: try $0.decode(String.self, "path"), text: try $0.decode(String.self, "text"))
        }
    }

    /// Keeps message `m`, written at `time`.
    func insert(_ m: SyncMessage, at time: Int64) throws {
        try db.run("INSERT INTO sync_messages(created_at, kind, path, text) VALUES (?, ?, ?, ?)", [time, m.kind.rawValue, m.path, m.text])
    }

    /// Deletes every message; returns how many.
    func deleteAll() throws -> Int {
        try db.run("DELETE FROM sync_messages")
    }
}
