/// What the server's storage operations need from a database connection, so that one copy of
/// each query runs on SQLite (`SQLDatabase`) and on PostgreSQL (`VaultPostgres.PostgresConnection`).
///
/// Queries are written with `?` placeholders (a PostgreSQL connection numbers them `$1…`) in the
/// SQL both engines share; what differs is asked of `dialect`. Statement errors are `SQLError` on
/// both engines, so a constraint violation is `SQLError.Kind.constraint` whichever engine raised it.
public protocol SQLConnection: AnyObject {
    /// The engine's SQL differences (upserts, aggregates, how change cursors are numbered).
    var dialect: SQLDialect { get }
    /// Runs one or more statements without parameters (schema, pragmas, `BEGIN`).
    func execute(_ sql: String) throws
    /// Runs a statement with parameters and returns the number of rows changed.
    @discardableResult
    func run(_ sql: String, _ params: [any SQLBindable]) throws -> Int
    /// All rows of a query.
    func query(_ sql: String, _ params: [any SQLBindable]) throws -> [SQLRow]
    /// The first row of a query, if any.
    func queryOne(_ sql: String, _ params: [any SQLBindable]) throws -> SQLRow?
    /// Runs `body` in a write transaction: committed if it returns, rolled back if it throws.
    func transaction<R>(_ body: () throws -> R) throws -> R
    /// The schema version the migrations recorded (SQLite: `PRAGMA user_version`).
    var schemaVersion: Int { get throws }
    /// Records the schema version (inside the migration's transaction).
    func setSchemaVersion(_ version: Int) throws
}

extension SQLConnection {
    /// Runs `begin` (`BEGIN IMMEDIATE`, `BEGIN ISOLATION LEVEL …`), then `body`: `COMMIT` if it
    /// returns, `ROLLBACK` (its own failure ignored) and the error rethrown if it throws. The one
    /// transaction shape of every engine's `transaction`.
    public func inTransaction<R>(begin: String, _ body: () throws -> R) throws -> R {
        try execute(begin)
        return try committing(body)
    }

    /// `body` in the transaction just begun: `COMMIT` if it returns, `ROLLBACK` (its own failure
    /// ignored) and the error rethrown if it throws (for an engine whose BEGIN is its own step).
    public func committing<R>(_ body: () throws -> R) throws -> R {
        do {
            let r = try body()
            try execute("COMMIT")
            return r
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// The only column of the first row decoded as `T`, nil when there is no row; see
    /// `SQLDatabase.scalar(_:_:_:)`.
    public func scalar<T: SQLDecodable>(_ type: T.Type, _ sql: String, _ params: [any SQLBindable] = []) throws -> T? {
        guard let row = try queryOne(sql, params) else { return nil }
        guard row.values.count == 1, let name = row.columns.first else {
            throw SQLError(kind: .decoding, code: .mismatch, message: "a scalar query returned \(row.values.count) columns", sql: sql)
        }
        return try row.decode(type, name)
    }

    /// The first column of the first row, if any.
    public func scalar(_ sql: String, _ params: [any SQLBindable] = []) throws -> SQLValue? {
        try queryOne(sql, params)?.values.first
    }
}

extension SQLDatabase: SQLConnection {
    public var dialect: SQLDialect { .sqlite }
    public var schemaVersion: Int { get throws { try userVersion } }
    public func setSchemaVersion(_ version: Int) throws { try setUserVersion(version) }
}
