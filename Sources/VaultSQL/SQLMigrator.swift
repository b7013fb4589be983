/// Ordered, named schema migrations recorded in the connection's schema version (SQLite:
/// `PRAGMA user_version`): migration *n* (1-based)
/// has run when `user_version >= n`. Each runs in its own IMMEDIATE transaction together with the
/// version bump, so a crash leaves the database at the last complete one. A database whose
/// version is above every known migration is refused (`SQLError.Kind.newerSchema`): it was
/// written by a newer program.
public struct SQLMigrator: Sendable {
    /// One schema step: a name for messages, the statements it runs, and optionally code run
    /// after them in the same transaction (a copy SQL alone cannot write, as a change of encoding).
    public struct Migration: Sendable {
        public let name: String
        public let sql: String
        public let then: (@Sendable (any SQLConnection) throws -> Void)?
        public init(_ name: String, sql: String, then: (@Sendable (any SQLConnection) throws -> Void)? = nil) {
            self.name = name; self.sql = sql; self.then = then
        }
    }

    public let migrations: [Migration]

    public init(_ migrations: [Migration]) { self.migrations = migrations }

    /// The version of a database with every migration applied.
    public var latestVersion: Int { migrations.count }

    /// The database's recorded version; throws `.newerSchema` when no code here knows it.
    public func version(of db: some SQLConnection) throws -> Int {
        let current = try db.schemaVersion
        guard current <= latestVersion else {
            throw SQLError(kind: .newerSchema, code: .error,
                           message: "the database has schema version \(current); this program knows up to \(latestVersion): upgrade it")
        }
        return current
    }

    /// True when `db` has every migration (nothing to do); throws when it is newer.
    public func isCurrent(_ db: some SQLConnection) throws -> Bool {
        try version(of: db) == latestVersion
    }

    /// The names of the migrations `db` has not run yet, in order.
    public func pending(_ db: some SQLConnection) throws -> [String] {
        try migrations[version(of: db)...].map(\.name)
    }

    /// Runs every migration `db` has not run yet, in order, each in its own transaction.
    public func migrate(_ db: some SQLConnection) throws {
        let current = try version(of: db)
        for v in current..<latestVersion {
            try db.transaction {
                // Another connection may have run it since the version was read.
                guard try db.schemaVersion == v else { return }
                try db.execute(migrations[v].sql)
                try migrations[v].then?(db)
                try db.setSchemaVersion(v + 1)
            }
        }
    }
}
