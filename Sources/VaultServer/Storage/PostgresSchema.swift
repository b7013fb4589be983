import VaultPostgres
import VaultSQL

/// The PostgreSQL schema of the metadata store: the same tables, columns and constraints as the
/// SQLite schema (`MetadataStore.migrator`) reached in one step, with these engine differences:
///
/// * INTEGER → BIGINT and REAL → DOUBLE PRECISION, so every value reads back as SQLite's would;
/// * ids and names are `COLLATE "C"` (byte order, as SQLite compares them, for `ORDER BY name, id`
///   and the keyset pages of listings);
/// * `changes` is keyed by (owner, seq) and numbered by `users.change_seq`, bumped in the writing
///   transaction (`ChangeNumbering.perOwner`), instead of one AUTOINCREMENT;
/// * `revisions.rowid` is an identity column standing in for SQLite's rowid (the tie-break of
///   revisions made in the same second);
/// * the "removed user" triggers are one PL/pgSQL function raising SQLSTATE 23000 with
///   `MetadataStore.ownerGone`, which the connection reports as `SQLError.Kind.constraint`.
extension MetadataStore {
    static let postgresMigrator = SQLMigrator([
        SQLMigrator.Migration("users, files, revisions, changes, uploads, envelopes", sql: """
        CREATE TABLE users(
            id TEXT COLLATE "C" PRIMARY KEY, name TEXT COLLATE "C" NOT NULL UNIQUE, password_hash TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL, changes_pruned_through BIGINT NOT NULL DEFAULT 0,
            token_generation BIGINT NOT NULL DEFAULT 0, change_seq BIGINT NOT NULL DEFAULT 0);
        CREATE TABLE files(
            owner TEXT COLLATE "C" NOT NULL, id TEXT COLLATE "C" NOT NULL, parent_id TEXT COLLATE "C",
            name TEXT COLLATE "C" NOT NULL, type TEXT NOT NULL, mime_type TEXT NOT NULL,
            size BIGINT NOT NULL DEFAULT 0, version BIGINT NOT NULL DEFAULT 1, sha256 TEXT,
            created_at DOUBLE PRECISION NOT NULL, modified_at DOUBLE PRECISION NOT NULL,
            trashed BIGINT NOT NULL DEFAULT 0, head_revision_id TEXT, meta TEXT, content_meta TEXT,
            PRIMARY KEY(owner, id));
        CREATE UNIQUE INDEX files_name ON files(owner, parent_id, name) WHERE trashed = 0;
        CREATE INDEX files_list ON files(owner, parent_id, trashed, name, id);
        CREATE TABLE revisions(
            rowid BIGINT GENERATED ALWAYS AS IDENTITY,
            owner TEXT COLLATE "C" NOT NULL, id TEXT COLLATE "C" NOT NULL, file_id TEXT COLLATE "C" NOT NULL,
            mime_type TEXT NOT NULL, size BIGINT NOT NULL, sha256 TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL, device_id TEXT, content_meta TEXT,
            PRIMARY KEY(owner, id));
        CREATE INDEX revisions_file ON revisions(owner, file_id, created_at);
        CREATE INDEX revisions_id ON revisions(id);
        CREATE TABLE changes(
            owner TEXT COLLATE "C" NOT NULL, seq BIGINT NOT NULL, file_id TEXT COLLATE "C" NOT NULL,
            kind TEXT NOT NULL, device_id TEXT, file_json TEXT, created_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY(owner, seq));
        CREATE TABLE uploads(
            id TEXT COLLATE "C" PRIMARY KEY, owner TEXT COLLATE "C" NOT NULL, request_id TEXT NOT NULL,
            state TEXT NOT NULL, name TEXT COLLATE "C", parent_id TEXT COLLATE "C", size BIGINT NOT NULL,
            mime_type TEXT NOT NULL, sha256 TEXT NOT NULL, file_id TEXT COLLATE "C", base_version BIGINT,
            chunk_size BIGINT NOT NULL, revision_id TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL, bytes_received BIGINT NOT NULL DEFAULT 0, device_id TEXT,
            result_file_id TEXT, client_id TEXT, meta TEXT, content_meta TEXT,
            UNIQUE(owner, request_id));
        CREATE TABLE upload_chunks(
            upload_id TEXT COLLATE "C" NOT NULL REFERENCES uploads(id) ON DELETE CASCADE, idx BIGINT NOT NULL,
            PRIMARY KEY(upload_id, idx));
        CREATE TABLE upload_partials(
            upload_id TEXT COLLATE "C" NOT NULL, idx BIGINT NOT NULL, bytes BIGINT NOT NULL,
            PRIMARY KEY(upload_id, idx));
        CREATE TABLE envelopes(
            owner TEXT COLLATE "C" PRIMARY KEY, body TEXT NOT NULL, version BIGINT NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL);
        \(postgresOwnerTriggers)
        """),
        SQLMigrator.Migration("login throttle", sql: loginThrottleTables(text: #"TEXT COLLATE "C""#, real: "DOUBLE PRECISION")),
        objectStoreMigration,
    ])

    /// The PostgreSQL form of `ownerTriggers`: a row whose user (partial chunk: whose session) no
    /// longer exists is refused.
    private static var postgresOwnerTriggers: String {
        let function = """
        CREATE FUNCTION vault_need_owner() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_ARGV[0] = 'session' THEN
                IF NOT EXISTS (SELECT 1 FROM uploads WHERE id = NEW.upload_id) THEN
                    RAISE EXCEPTION USING ERRCODE = '23000', MESSAGE = '\(ownerGone)';
                END IF;
            ELSIF NOT EXISTS (SELECT 1 FROM users WHERE id = NEW.owner) THEN
                RAISE EXCEPTION USING ERRCODE = '23000', MESSAGE = '\(ownerGone)';
            END IF;
            RETURN NEW;
        END $$;
        """
        func trigger(_ table: String, _ argument: String) -> String {
            "CREATE TRIGGER \(table)_need_owner BEFORE INSERT ON \(table) FOR EACH ROW EXECUTE FUNCTION vault_need_owner('\(argument)');"
        }
        let owned = ["files", "revisions", "changes", "uploads", "envelopes"].map { trigger($0, "owner") }
        return ([function] + owned + [trigger("upload_partials", "session")]).joined(separator: "\n")
    }

    /// Brings the PostgreSQL schema to the newest version, under a session advisory lock so that
    /// servers starting at once on one database migrate it once.
    static func migratePostgres(_ db: PostgresConnection) throws {
        try db.run("SELECT pg_advisory_lock(?)", [migrationLockKey])
        defer { _ = try? db.run("SELECT pg_advisory_unlock(?)", [migrationLockKey]) }
        try postgresMigrator.migrate(db)
    }
}
