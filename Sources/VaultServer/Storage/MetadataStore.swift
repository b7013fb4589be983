import Foundation
import VaultPostgres
import VaultSQL

/// The server's metadata database (users, files, revisions, changes, upload sessions): the
/// embedded SQLite file (unkeyed SQLCipher), one connection reached only under a lock, or a
/// PostgreSQL database that any number of `vault-server` processes share, through a pool of
/// `connections` per process. The operations (`SQLConnection+*.swift`) are the same on both; this
/// type decides what a read and a write transaction are on each engine.
final class MetadataStore: @unchecked Sendable {
    private enum Engine {
        // SAFETY: the SQLite connection is only used inside `withDB`/`write`, under `lock`.
        case sqlite(SQLDatabase, NSLock)
        case postgresql(PostgresPool)
    }
    private let engine: Engine
    /// Where the metadata lives (its `description` masks a PostgreSQL password).
    let location: MetadataLocation

    /// The connections one process holds to PostgreSQL at most unless told (`serve
    /// --metadata-connections`; one more listens for changes).
    static let defaultConnections = ServerConfig().metadataConnections

    /// Opens (creating and migrating) the SQLite database at `path`.
    convenience init(path: String) throws {
        try self.init(.sqlite(path: path))
    }

    /// Opens the store at `location`, bringing its schema to the newest version first (a store
    /// written by a newer server is refused). On PostgreSQL up to `connections` are made, as needed.
    init(_ location: MetadataLocation, connections: Int = MetadataStore.defaultConnections) throws {
        self.location = location
        switch location {
        case .sqlite(let path):
            let db = try SQLDatabase(path: path)
            try db.execute("PRAGMA journal_mode = WAL")
            try db.execute("PRAGMA synchronous = FULL")
            try Self.migrator.migrate(db)
            engine = .sqlite(db, NSLock())
        case .postgresql(let url):
            let pool = try PostgresPool(url: url, capacity: connections)
            try pool.withConnection { try Self.migratePostgres($0) }
            engine = .postgresql(pool)
        }
    }

    /// The engine's spelling of what differs between them.
    var dialect: SQLDialect {
        switch engine {
        case .sqlite(let db, _): return db.dialect
        case .postgresql: return .postgresql
        }
    }

    /// Runs `body` with a connection: on SQLite the one connection, serialised with every other
    /// use. On PostgreSQL a connection of the pool, in one REPEATABLE READ transaction, so its
    /// reads see one snapshot even while other servers commit (a change page and the cursor after
    /// it must agree), run again on a serialization failure, and once more when it met a
    /// connection the database had dropped (a restart).
    func withDB<R>(_ body: (any SQLConnection) throws -> R) throws -> R {
        switch engine {
        case .sqlite(let db, let lock):
            lock.lock(); defer { lock.unlock() }
            return try body(db)
        case .postgresql(let pool):
            return try pool.withConnection { pg in
                do {
                    return try pg.transaction(isolation: .repeatableRead) { try body(pg) }
                } catch let e as PostgresError where e.kind == .connectionLost {
                    return try pg.transaction(isolation: .repeatableRead) { try body(pg) }
                }
            }
        }
    }

    /// What a write transaction may touch, and so which writes it must be ordered with.
    enum WriteScope: Sendable, Equatable {
        /// Rows of one owner (files, revisions, its change feed, upload sessions, key envelope).
        case owner(String)
        /// The login throttle's counts (keyed by user name and client IP, not by owner).
        case logins
        /// Anything: users themselves (add, remove, passwords), sweeps across owners, export and
        /// import. Ordered with every other write.
        case store
    }

    /// Runs `body` in one write transaction. SQLite: an IMMEDIATE transaction, serialised with
    /// every other use. PostgreSQL: a READ COMMITTED transaction that first takes the locks of its
    /// `scope` (`lockStatements`), which order it with every write, on any server, that could
    /// change what it reads: each check the operations make before writing (names, If-Match
    /// versions, quotas, `subtree_changed`) reads what is committed, and the owner's change
    /// sequence is bumped in commit order. Writes of different owners do not wait for each other.
    /// A name clash the check did not see is still a 409 (`nameConflict`).
    func write<R>(_ scope: WriteScope, _ body: (any SQLConnection) throws -> R) throws -> R {
        do {
            switch engine {
            case .sqlite(let db, let lock):
                lock.lock(); defer { lock.unlock() }
                return try db.transaction { try body(db) }
            case .postgresql(let pool):
                return try pool.withConnection { pg in
                    try pg.transaction {
                        for (sql, key) in Self.lockStatements(scope) { try pg.run(sql, [key]) }
                        return try body(pg)
                    }
                }
            }
        } catch let e as SQLError where Self.isNameClash(e) {
            throw APIError.conflict("a file with that name already exists in this folder", code: .nameConflict)
        }
    }

    /// The advisory locks (transaction-scoped) a write of `scope` takes, in this order: the
    /// store's lock (`writeLockKey`), exclusive for `.store` and shared otherwise, then for an
    /// owner its own key (`ownerLockKey`) and for the throttle `loginsLockKey`, exclusive. Every
    /// write takes the store's lock first and at most one more, so no two writes wait in a cycle.
    static func lockStatements(_ scope: WriteScope) -> [(String, Int64)] {
        switch scope {
        case .store: return [("SELECT pg_advisory_xact_lock(?)", writeLockKey)]
        case .owner(let owner):
            return [("SELECT pg_advisory_xact_lock_shared(?)", writeLockKey), ("SELECT pg_advisory_xact_lock(?)", ownerLockKey(owner))]
        case .logins:
            return [("SELECT pg_advisory_xact_lock_shared(?)", writeLockKey), ("SELECT pg_advisory_xact_lock(?)", loginsLockKey)]
        }
    }

    /// The advisory lock key of the store's writes (any constant all servers agree on).
    static let writeLockKey: Int64 = 0x7661_756c_7400   // "vault\0"
    /// The advisory lock key of the login throttle's writes.
    static let loginsLockKey: Int64 = 0x7661_756c_746c   // "vaultl"
    /// The advisory lock key of schema migrations (two servers starting at once migrate once).
    static let migrationLockKey: Int64 = 0x7661_756c_746d   // "vaultm"

    /// The advisory lock key of `owner`'s writes: "vo" in the top 16 bits, then 48 bits of the
    /// FNV-1a hash of its id (two owners that share a key only wait for each other; the
    /// constants above lie outside this range).
    static func ownerLockKey(_ owner: String) -> Int64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in owner.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        return Int64(bitPattern: (0x766f << 48) | (h & 0x0000_ffff_ffff_ffff))
    }

    /// The schema version the store is at (after the migrations `init` ran).
    var schemaVersion: Int {
        get throws { try withDB { db in try db.schemaVersion } }
    }

    /// The schema version the store is at, and the one this server writes (they differ when
    /// another server migrated the shared database further, or nobody migrated it yet).
    func schemaVersions() throws -> (found: Int, wanted: Int) {
        let wanted = dialect == .postgresql ? Self.postgresMigrator.latestVersion : Self.migrator.latestVersion
        return (try schemaVersion, wanted)
    }

    /// Whether `e` is the unique index of live names in a folder (`files_name`) refusing a row.
    static func isNameClash(_ e: SQLError) -> Bool {
        e.kind == .constraint && (e.message.contains("\"files_name\"") || e.message.contains("files.owner, files.parent_id, files.name"))
    }

    private static let migrator = SQLMigrator([
        SQLMigrator.Migration("users, files, revisions, changes, uploads", sql: """
        CREATE TABLE users(
            id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, password_hash TEXT NOT NULL,
            created_at REAL NOT NULL, changes_pruned_through INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE files(
            owner TEXT NOT NULL, id TEXT NOT NULL, parent_id TEXT, name TEXT NOT NULL,
            type TEXT NOT NULL, mime_type TEXT NOT NULL, size INTEGER NOT NULL DEFAULT 0,
            version INTEGER NOT NULL DEFAULT 1, sha256 TEXT, created_at REAL NOT NULL,
            modified_at REAL NOT NULL, trashed INTEGER NOT NULL DEFAULT 0, head_revision_id TEXT,
            PRIMARY KEY(owner, id));
        CREATE UNIQUE INDEX files_name ON files(owner, parent_id, name) WHERE trashed = 0;
        CREATE INDEX files_list ON files(owner, parent_id, trashed, name, id);
        CREATE TABLE revisions(
            owner TEXT NOT NULL, id TEXT NOT NULL, file_id TEXT NOT NULL, mime_type TEXT NOT NULL,
            size INTEGER NOT NULL, sha256 TEXT NOT NULL, created_at REAL NOT NULL, device_id TEXT,
            PRIMARY KEY(owner, id));
        CREATE INDEX revisions_file ON revisions(owner, file_id, created_at);
        CREATE TABLE changes(
            seq INTEGER PRIMARY KEY AUTOINCREMENT, owner TEXT NOT NULL, file_id TEXT NOT NULL,
            kind TEXT NOT NULL, device_id TEXT, file_json TEXT, created_at REAL NOT NULL);
        CREATE INDEX changes_owner ON changes(owner, seq);
        CREATE TABLE uploads(
            id TEXT PRIMARY KEY, owner TEXT NOT NULL, request_id TEXT NOT NULL, state TEXT NOT NULL,
            name TEXT, parent_id TEXT, size INTEGER NOT NULL, mime_type TEXT NOT NULL,
            sha256 TEXT NOT NULL, file_id TEXT, base_version INTEGER, chunk_size INTEGER NOT NULL,
            revision_id TEXT NOT NULL, created_at REAL NOT NULL, expires_at REAL NOT NULL,
            bytes_received INTEGER NOT NULL DEFAULT 0, device_id TEXT, result_file_id TEXT,
            UNIQUE(owner, request_id));
        CREATE TABLE upload_chunks(
            upload_id TEXT NOT NULL REFERENCES uploads(id) ON DELETE CASCADE, idx INTEGER NOT NULL,
            PRIMARY KEY(upload_id, idx));
        """),
        // The fsynced prefix of a chunk whose body was cut off, so a resumed chunk sends only the rest.
        SQLMigrator.Migration("partial chunks", sql: """
        CREATE TABLE upload_partials(
            upload_id TEXT NOT NULL, idx INTEGER NOT NULL, bytes INTEGER NOT NULL,
            PRIMARY KEY(upload_id, idx));
        """),
        // End-to-end encryption: records the server keeps but cannot read, client-chosen ids of new
        // files (uploads.client_id), and each account's key envelope.
        SQLMigrator.Migration("end to end", sql: """
        ALTER TABLE files ADD COLUMN meta TEXT;
        ALTER TABLE files ADD COLUMN content_meta TEXT;
        ALTER TABLE revisions ADD COLUMN content_meta TEXT;
        ALTER TABLE uploads ADD COLUMN client_id TEXT;
        ALTER TABLE uploads ADD COLUMN meta TEXT;
        ALTER TABLE uploads ADD COLUMN content_meta TEXT;
        CREATE TABLE envelopes(
            owner TEXT PRIMARY KEY, body TEXT NOT NULL, version INTEGER NOT NULL, updated_at REAL NOT NULL);
        """),
        // User management: a token names the generation it was issued in (revoking bumps it), and
        // no row can be added for a user that is gone (a request of a removed user that was already
        // past its token check when `user remove` committed fails instead of leaving orphans).
        SQLMigrator.Migration("user management", sql: """
        ALTER TABLE users ADD COLUMN token_generation INTEGER NOT NULL DEFAULT 0;
        \(ownerTriggers)
        """),
        // The login throttle, shared by every server on the store (`StoredLoginLedger`).
        SQLMigrator.Migration("login throttle", sql: loginThrottleTables(text: "TEXT", real: "REAL")),
        objectStoreMigration,
    ])

    /// The login throttle's tables in either engine's type names.
    static func loginThrottleTables(text: String, real: String) -> String {
        """
        CREATE TABLE login_failures(
            kind TEXT NOT NULL, subject \(text) NOT NULL, failures \(real) NOT NULL, last_at \(real) NOT NULL,
            PRIMARY KEY(kind, subject));
        CREATE TABLE login_known(
            user_name \(text) NOT NULL, ip TEXT NOT NULL, seen_at \(real) NOT NULL, PRIMARY KEY(user_name, ip));
        """
    }

    /// Content in an object store (`--content s3://…`): a session's multipart upload id, and
    /// each received chunk's part ETag (both NULL with the content folder). The same on both engines.
    static let objectStoreMigration = SQLMigrator.Migration("object store", sql: """
        ALTER TABLE uploads ADD COLUMN store_upload_id TEXT;
        ALTER TABLE upload_chunks ADD COLUMN tag TEXT;
        """)

    /// The message of the constraint error a write for a removed user (or its session) fails with.
    static let ownerGone = "vault: the user was removed"

    /// One trigger per table with an `owner` (and one for partial chunks, keyed by session) that
    /// refuses a row whose user (session) no longer exists.
    private static var ownerTriggers: String {
        func trigger(_ name: String, on table: String, unless exists: String) -> String {
            "CREATE TRIGGER \(name) BEFORE INSERT ON \(table) WHEN NOT EXISTS (\(exists)) "
                + "BEGIN SELECT RAISE(ABORT, '\(ownerGone)'); END;"
        }
        let owned = ["files", "revisions", "changes", "uploads", "envelopes"].map {
            trigger("\($0)_need_owner", on: $0, unless: "SELECT 1 FROM users WHERE id = NEW.owner")
        }
        let partials = trigger("upload_partials_need_session", on: "upload_partials",
                               unless: "SELECT 1 FROM uploads WHERE id = NEW.upload_id")
        return (owned + [partials]).joined(separator: "\n")
    }
}
