import Foundation
import VaultSQL

/// A server account as `vault-server user list` shows it.
struct UserRecord: Sendable, Equatable {
    let id: String
    let name: String
    let createdAt: Date
}

/// What deleting a user's rows left to delete on disk: its revisions' content files and its
/// sessions' part files.
struct RemovedUserFiles: Sendable, Equatable {
    var revisionIds: [String] = []
    var uploadIds: [String] = []
}

/// User rows: accounts, password hashes, token generations, and a user's whole removal.
extension SQLConnection {
    func insertUser(id: String, name: String, passwordHash: String, createdAt: Date) throws {
        try run("INSERT INTO users(id, name, password_hash, created_at) VALUES(?,?,?,?)",
                [id, name, passwordHash, createdAt.timeIntervalSince1970])
    }

    /// The id of the user called `name`, or nil.
    func userId(name: String) throws -> String? {
        try queryOne("SELECT id FROM users WHERE name = ?", [name])?.decode(String.self, "id")
    }

    /// The id, password hash and token generation of the user called `name`, or nil.
    func credentials(name: String) throws -> (id: String, hash: String, generation: Int64)? {
        guard let row = try queryOne("SELECT id, password_hash, token_generation FROM users WHERE name = ?", [name]) else { return nil }
        return (try row.decode(String.self, "id"), try row.decode(String.self, "password_hash"), try row.decode(Int64.self, "token_generation"))
    }

    /// The current token generation of user `id`, or nil when there is no such user.
    func tokenGeneration(id: String) throws -> Int64? {
        try queryOne("SELECT token_generation FROM users WHERE id = ?", [id])?.decode(Int64.self, "token_generation")
    }

    /// Every user, by name.
    func users() throws -> [UserRecord] {
        try query("SELECT id, name, created_at FROM users ORDER BY name", []).map {
            UserRecord(id: try $0.decode(String.self, "id"), name: try $0.decode(String.self, "name"),
                       createdAt: Date(timeIntervalSince1970: try $0.decode(Double.self, "created_at")))
        }
    }

    /// Ends every token of user `id` issued so far (the next one carries the new generation).
    func bumpTokenGeneration(id: String) throws {
        try run("UPDATE users SET token_generation = token_generation + 1 WHERE id = ?", [id])
    }

    func setPasswordHash(id: String, _ hash: String) throws {
        try run("UPDATE users SET password_hash = ? WHERE id = ?", [hash, id])
    }

    /// Deletes user `id` and every row of theirs (files, revisions, change feed, upload sessions
    /// with their chunks, envelope); returns the files on disk that are now unreferenced.
    func deleteUser(id: String) throws -> RemovedUserFiles {
        var left = RemovedUserFiles()
        left.revisionIds = try query("SELECT id FROM revisions WHERE owner = ?", [id]).map { try $0.decode(String.self, "id") }
        left.uploadIds = try query("SELECT id FROM uploads WHERE owner = ?", [id]).map { try $0.decode(String.self, "id") }
        for upload in left.uploadIds { try deleteUploadSession(upload) }
        for table in ["files", "revisions", "changes", "envelopes"] {
            try run("DELETE FROM \(table) WHERE owner = ?", [id])
        }
        try run("DELETE FROM users WHERE id = ?", [id])
        return left
    }
}
