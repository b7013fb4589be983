import Foundation

/// What a sync said about a change made on both sides (a conflict settled by its rule), kept for
/// `vault conflicts` until the user clears it.
public struct ConflictNote: Sendable, Codable, Equatable {
    public var id: Int64
    /// Seconds since the epoch.
    public var time: Int64
    /// `edit-vs-edit`, `delete-vs-edit`, … (`SyncMessage.Kind`).
    public var kind: String
    public var path: String
    public var text: String
}

extension Vault {
    /// Keeps `messages` for `vault conflicts`.
    public func recordConflicts(_ messages: [SyncMessage]) throws {
        guard !messages.isEmpty else { return }
        try db.transaction {
            for m in messages {
                try db.run("INSERT INTO sync_messages(created_at, kind, path, text) VALUES (?, ?, ?, ?)",
                           [Vault.now, m.kind.rawValue, m.path, m.text])
            }
        }
    }

    /// The conflicts kept, oldest first.
    public func conflicts() throws -> [ConflictNote] {
        try db.query("SELECT id, created_at, kind, path, text FROM sync_messages ORDER BY id").map {
            ConflictNote(id: try $0.decode(Int64.self, "id"), time: try $0.decode(Int64.self, "created_at"), kind: try $0.decode(String.self, "kind"),
                         path: try $0.decode(String.self, "path"), text: try $0.decode(String.self, "text"))
        }
    }

    /// How many conflicts are kept.
    public func conflictCount() throws -> Int { try db.scalar(Int.self, "SELECT count(*) FROM sync_messages") ?? 0 }

    /// Forgets every conflict kept. Returns how many.
    @discardableResult
    public func clearConflicts() throws -> Int { try db.run("DELETE FROM sync_messages") }
}
