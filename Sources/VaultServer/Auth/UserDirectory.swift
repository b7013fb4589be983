import Foundation
import VaultAPI
import VaultSQL

/// Users: creation (`vault-server user add`) and password checks (Argon2id).
struct UserDirectory: Sendable {
    let store: MetadataStore
    /// Each Argon2id check uses 19 MiB: at most two run at once.
    private let gate = DispatchSemaphore(value: 2)

    init(store: MetadataStore) { self.store = store }

    /// Creates a user with its root folder; returns the new id.
    func add(name: String, password: [UInt8]) throws -> String {
        guard !name.isEmpty, name.utf8.count <= 128, !name.contains("\0") else {
            throw APIError.badRequest("user names are 1–128 bytes")
        }
        guard password.count >= 1 else { throw APIError.badRequest("empty password") }
        guard let hash = Sodium.passwordHash(password) else { throw APIError.internal("password hashing failed") }
        let id = Sodium.randomID()
        let now = Date()
        try store.write { db in
            if try db.queryOne("SELECT id FROM users WHERE name = ?", [name]) != nil {
                throw APIError.conflict("user \(name) exists", code: "user_exists")
            }
            try db.run("INSERT INTO users(id, name, password_hash, created_at) VALUES(?,?,?,?)",
                       [id, name, hash, now.timeIntervalSince1970])
            try db.insertFile(owner: id, FileResource(
                id: "root", name: "", parentId: nil, type: .folder, mimeType: "application/vnd.vault.folder",
                size: 0, version: 1, sha256: nil, createdAt: now, modifiedAt: now, trashed: false,
                headRevisionId: nil))
        }
        return id
    }

    /// The user id if `password` is right for `name`.
    func check(name: String, password: [UInt8]) throws -> String? {
        let row = try store.withDB { db in try db.queryOne("SELECT id, password_hash FROM users WHERE name = ?", [name]) }
        gate.wait(); defer { gate.signal() }
        guard let row, let hash = row["password_hash"].string, let id = row["id"].string else {
            // Same work for unknown users, so timing does not reveal who exists.
            _ = Sodium.passwordVerify(password, hash: Self.dummyHash)
            return nil
        }
        return Sodium.passwordVerify(password, hash: hash) ? id : nil
    }

    func exists(id: String) throws -> Bool {
        try store.withDB { db in try db.queryOne("SELECT 1 FROM users WHERE id = ?", [id]) != nil }
    }

    private static let dummyHash = Sodium.passwordHash(Array("not-a-real-password".utf8)) ?? ""
}
