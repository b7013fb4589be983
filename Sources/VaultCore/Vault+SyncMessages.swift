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
            for m in messages { try SyncMessagesTable(db: db).insert(m, at: Vault.now) }
        }
    }

    /// The conflicts kept, oldest first.
    public func conflicts() throws -> [ConflictNote] {
        try SyncMessagesTable(db: db).all()
    }

    /// How many conflicts are kept.
    public func conflictCount() throws -> Int { Int(try countersTable.value(.conflicts)) }

    /// Forgets every conflict kept. Returns how many.
    @discardableResult
    public func clearConflicts() throws -> Int { try SyncMessagesTable(db: db).deleteAll() }
}
