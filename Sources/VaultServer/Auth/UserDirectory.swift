import Foundation
import VaultAPI
import VaultSQL

/// A user's sign-in: who, and the token generation a new token is issued in.
struct SignIn: Sendable, Equatable {
    let userId: String
    let generation: Int64
}

/// Users: creation and management (`vault-server user …`), password checks (Argon2id) and the
/// per-request check that a token's user and generation are still current.
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
        let hash = try Self.hash(password)
        let id = Sodium.randomID()
        let now = Date()
        try store.write(.store) { db in
            if try db.userId(name: name) != nil {
                throw APIError.conflict("user \(name) exists", code: .userExists)
            }
            try db.insertUser(id: id, name: name, passwordHash: hash, createdAt: now)
            try db.insertFile(owner: id, FileResource(
                id: "root", name: "", parentId: nil, type: .folder, mimeType: "application/vnd.vault.folder",
                size: 0, version: 1, sha256: nil, createdAt: now, modifiedAt: now, trashed: false,
                headRevisionId: nil))
        }
        return id
    }

    /// Every user, by name.
    func list() throws -> [UserRecord] { try store.withDB { db in try db.users() } }

    /// Sets the password of `name` and ends every token issued before (a new password is usually
    /// set because the old one, or a device holding a token, is no longer trusted).
    func setPassword(name: String, password: [UInt8]) throws {
        let hash = try Self.hash(password)
        try store.write(.store) { db in
            let id = try Self.requireUser(db, name)
            try db.setPasswordHash(id: id, hash)
            try db.bumpTokenGeneration(id: id)
        }
    }

    /// Ends every token `name` holds now; logging in again gives a new one.
    func revokeTokens(name: String) throws {
        try store.write(.store) { db in try db.bumpTokenGeneration(id: try Self.requireUser(db, name)) }
    }

    /// Deletes `name` and all its rows in one transaction (its tokens stop with it); returns its
    /// id and the content and part files left to delete.
    func remove(name: String) throws -> (id: String, files: RemovedUserFiles) {
        try store.write(.store) { db in
            let id = try Self.requireUser(db, name)
            return (id, try db.deleteUser(id: id))
        }
    }

    /// The sign-in if `password` is right for `name`.
    func check(name: String, password: [UInt8]) throws -> SignIn? {
        let found = try store.withDB { db in try db.credentials(name: name) }
        gate.wait(); defer { gate.signal() }
        guard let found else {
            // Same work for unknown users, so timing does not reveal who exists.
            _ = Sodium.passwordVerify(password, hash: Self.dummyHash)
            return nil
        }
        return Sodium.passwordVerify(password, hash: found.hash) ? SignIn(userId: found.id, generation: found.generation) : nil
    }

    /// Whether a token of user `id` issued in `generation` is still good: the user exists and
    /// has not had its tokens revoked since (read from the database on every request, so a
    /// `vault-server user …` command takes effect in a running server at once).
    func isCurrent(id: String, generation: Int64) throws -> Bool {
        try self.generation(id: id) == generation
    }

    /// The current token generation of user `id`, nil when there is no such user.
    func generation(id: String) throws -> Int64? { try store.withDB { db in try db.tokenGeneration(id: id) } }

    private static func requireUser(_ db: any SQLConnection, _ name: String) throws -> String {
        guard let id = try db.userId(name: name) else {
            throw APIError.notFound("no user \(name) (vault-server user list shows who exists)")
        }
        return id
    }

    private static func hash(_ password: [UInt8]) throws -> String {
        guard password.count >= 1 else { throw APIError.badRequest("empty password") }
        guard let hash = Sodium.passwordHash(password) else { throw APIError.internal("password hashing failed") }
        return hash
    }

    private static let dummyHash = Sodium.passwordHash(Array("not-a-real-password".utf8)) ?? ""
}
