import VaultSQL

/// Why a connection to PostgreSQL could not be made or was lost, with a sentence a person can act
/// on. Errors of a statement are `SQLError` (see `SQLError.postgres`), so that the storage layer
/// handles them the same way on either engine.
public struct PostgresError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The URL is not a `postgresql://` (or `postgres://`) URL libpq can parse.
        case invalidURL
        /// Nothing listens at the address (server down, wrong host or port).
        case connectionRefused
        /// Nothing answered within `connect_timeout` (a host that is down or unreachable, or a
        /// firewall dropping the packets).
        case unreachable
        /// The server refused the user or password (or pg_hba.conf has no entry for it).
        case authenticationFailed
        /// The database named in the URL does not exist.
        case noSuchDatabase
        /// The connection broke (server restarted or stopped).
        case connectionLost
        case other
    }
    public let kind: Kind
    /// libpq's message (the URL's password never appears in it: libpq does not print it).
    public let message: String

    public init(kind: Kind, message: String) { self.kind = kind; self.message = message }

    /// The kind of a failed connection attempt, from libpq's message (libpq has no codes for these).
    static func connectKind(_ message: String) -> Kind {
        let m = message.lowercased()
        if m.contains("invalid uri") || m.contains("invalid connection option") || m.contains("missing \"=\"") { return .invalidURL }
        if m.contains("timeout expired") { return .unreachable }
        if m.contains("connection refused") || m.contains("no such file or directory") { return .connectionRefused }
        if m.contains("password authentication failed") || m.contains("no pg_hba.conf entry")
            || m.contains("authentication failed") || m.contains("no password supplied") { return .authenticationFailed }
        if m.contains("does not exist") && m.contains("database") { return .noSuchDatabase }
        return .other
    }

    public var description: String {
        switch kind {
        case .invalidURL: return "not a PostgreSQL URL libpq understands: \(message)"
        case .connectionRefused: return "PostgreSQL refused the connection (is it running on that host and port?): \(message)"
        case .unreachable: return "PostgreSQL did not answer in time (is the host up and reachable, or does a firewall drop the packets?): \(message)"
        case .authenticationFailed: return "PostgreSQL refused the user or password: \(message)"
        case .noSuchDatabase: return "PostgreSQL has no such database: \(message)"
        case .connectionLost: return "the connection to PostgreSQL was lost: \(message)"
        case .other: return "PostgreSQL: \(message)"
        }
    }
}

extension SQLError {
    /// The error of a failed statement, by SQLSTATE class: 23 (integrity: unique, foreign key, not
    /// null, check, and the triggers' own `23xxx`) is `.constraint` exactly as SQLite's
    /// SQLITE_CONSTRAINT; 40001 (serialization failure) and 40P01 (deadlock) are `.busy`, which
    /// `PostgresConnection.transaction(isolation:attempts:_:)` retries.
    static func postgres(sqlState: String?, message: String, sql: String?) -> SQLError {
        let kind: Kind
        switch sqlState {
        case let s? where s.hasPrefix("23"): kind = .constraint
        case "40001", "40P01": kind = .busy
        case "53100": kind = .full
        case "25006": kind = .readOnly
        default: kind = .other
        }
        return SQLError(kind: kind, code: 0, message: message, sql: sql, sqlState: sqlState)
    }

    /// Whether running the transaction again may succeed (serialization failure, deadlock).
    public var isRetryableConflict: Bool { sqlState == "40001" || sqlState == "40P01" }
}
