import Foundation
import VaultSQL

/// A table `vault-server export` writes and `import` reads: the columns both engines have, and
/// the order its rows are read in (the order they are inserted in again).
struct PortableTable: Sendable, Equatable {
    let name: String
    let columns: [String]
    let order: String

    /// Every table a store move carries, parents before the rows their triggers want to exist
    /// (a file needs its user, a partial chunk its session). The object store's columns
    /// (`uploads.store_upload_id`, `upload_chunks.tag`) are NULL with the content folder, the
    /// only content a move takes.
    static let all: [PortableTable] = [
        PortableTable(name: "users", columns: ["id", "name", "password_hash", "created_at", "changes_pruned_through", "token_generation"], order: "id"),
        PortableTable(name: "files", columns: ["owner", "id", "parent_id", "name", "type", "mime_type", "size", "version", "sha256",
                                               "created_at", "modified_at", "trashed", "head_revision_id", "meta", "content_meta"], order: "owner, id"),
        // rowid: SQLite's own, PostgreSQL's identity column; it orders revisions made in the same second.
        PortableTable(name: "revisions", columns: ["owner", "id", "file_id", "mime_type", "size", "sha256", "created_at", "device_id",
                                                   "content_meta"], order: "rowid"),
        changes,
        PortableTable(name: "uploads", columns: ["id", "owner", "request_id", "state", "name", "parent_id", "size", "mime_type", "sha256",
                                                 "file_id", "base_version", "chunk_size", "revision_id", "created_at", "expires_at",
                                                 "bytes_received", "device_id", "result_file_id", "client_id", "meta", "content_meta"], order: "id"),
        PortableTable(name: "upload_chunks", columns: ["upload_id", "idx"], order: "upload_id, idx"),
        PortableTable(name: "upload_partials", columns: ["upload_id", "idx", "bytes"], order: "upload_id, idx"),
        PortableTable(name: "envelopes", columns: ["owner", "body", "version", "updated_at"], order: "owner"),
        PortableTable(name: "login_failures", columns: ["kind", "subject", "failures", "last_at"], order: "kind, subject"),
        PortableTable(name: "login_known", columns: ["user_name", "ip", "seen_at"], order: "user_name, ip"),
    ]

    static let changes = PortableTable(name: "changes", columns: ["seq", "owner", "file_id", "kind", "device_id", "file_json", "created_at"],
                                       order: "owner, seq")

    static func named(_ name: String) -> PortableTable? { all.first { $0.name == name } }
}

/// Reading a whole store out and into another (`StoreMove`).
extension SQLConnection {
    /// Every row of `table`, in its order, as values of its columns.
    func portableRows(_ table: PortableTable) throws -> [[SQLValue]] {
        try query("SELECT \(table.columns.joined(separator: ", ")) FROM \(table.name) ORDER BY \(table.order)", []).map(\.values)
    }

    /// Inserts one row of `table` (`values` in its column order, or without the first column).
    func insertPortableRow(_ table: PortableTable, columns: ArraySlice<String>, _ values: ArraySlice<SQLValue>) throws {
        let marks = Array(repeating: "?", count: columns.count).joined(separator: ",")
        try run("INSERT INTO \(table.name)(\(columns.joined(separator: ", "))) VALUES(\(marks))", Array(values))
    }

    /// Whether the store holds no user (an import goes only into an empty store).
    func hasNoUsers() throws -> Bool {
        (try scalar(Int.self, "SELECT count(*) FROM users") ?? 0) == 0
    }

    /// The highest cursor any client of this store may hold: SQLite's change sequence (which a
    /// removed user's deleted changes may have taken past every row left), or the largest
    /// per-owner counter on PostgreSQL.
    func cursorHighWater() throws -> Int64 {
        switch dialect.changeNumbering {
        case .global:
            let sequence = try scalar(Int64.self, "SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence WHERE name = 'changes'") ?? 0
            return max(sequence, try latestCursor())
        case .perOwner:
            return try scalar(Int64.self, "SELECT COALESCE(MAX(change_seq), 0) FROM users") ?? 0
        }
    }

    /// After an import: the next change of any owner is numbered above `highWater`, so no
    /// client's cursor is ever ahead of a change it has not seen.
    func continueNumbering(after highWater: Int64) throws {
        switch dialect.changeNumbering {
        case .global:
            let changed = try run("UPDATE sqlite_sequence SET seq = ? WHERE name = 'changes' AND seq < ?", [highWater, highWater])
            if changed == 0, try scalar(Int.self, "SELECT count(*) FROM sqlite_sequence WHERE name = 'changes'") == 0 {
                try run("INSERT INTO sqlite_sequence(name, seq) VALUES('changes', ?)", [highWater])
            }
        case .perOwner:
            try run("UPDATE users SET change_seq = ? WHERE change_seq < ?", [highWater, highWater])
        }
    }

    /// Every cursor at or below `cursor` must start over (410 `cursor_expired`, then a listing).
    func expireCursors(through cursor: Int64) throws {
        try run("UPDATE users SET changes_pruned_through = ? WHERE changes_pruned_through < ?", [cursor, cursor])
    }
}
