/// An error from SQLite/SQLCipher, with the result code, the library's message and the statement.
public struct SQLError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        /// The file is not a database, or the key is wrong (SQLITE_NOTADB).
        case notADatabase
        /// A constraint (UNIQUE, NOT NULL, FOREIGN KEY) was violated.
        case constraint
        /// Another connection holds the lock.
        case busy
        /// The disk is full.
        case full
        /// A page failed its integrity check (SQLCipher HMAC) or the file is damaged.
        case corrupt
        /// The library is not SQLCipher (no `cipher_version`).
        case notSQLCipher
        /// A write to a database opened read-only, or on a read-only filesystem (SQLITE_READONLY).
        case readOnly
        /// A result column is missing or holds another type than the code reads (a bug in the
        /// query or a damaged row); the message names the column and what was found.
        case decoding
        /// The database's schema is newer than every migration this code knows: upgrade the program.
        case newerSchema
        case other
    }
    public let kind: Kind
    public let code: Int32
    public let message: String
    public let sql: String?
    /// PostgreSQL's five-character SQLSTATE (`23505` unique violation, `40001` serialization
    /// failure); nil for SQLite.
    public let sqlState: String?

    public init(kind: Kind, code: Int32, message: String, sql: String? = nil, sqlState: String? = nil) {
        self.kind = kind; self.code = code; self.message = message; self.sql = sql; self.sqlState = sqlState
    }

    public init(kind: Kind, code: SQLResultCode, message: String, sql: String? = nil) {
        self.init(kind: kind, code: code.rawValue, message: message, sql: sql)
    }

    /// The result code as a named value (`error.resultCode ~= .busy`).
    public var resultCode: SQLResultCode { SQLResultCode(rawValue: code) }

    static func kind(forCode code: Int32) -> Kind {
        switch SQLResultCode(rawValue: code) {
        case .notADatabase: return .notADatabase
        case .constraint: return .constraint
        case .busy, .locked: return .busy
        case .full: return .full
        case .corrupt: return .corrupt
        case .readOnly: return .readOnly
        default: return .other
        }
    }

    public var description: String {
        var s = kind == .decoding ? "database row error: \(message)"
            : sqlState.map { "database error \($0): \(message)" } ?? "database error \(code): \(message)"
        if let sql { s += " (in: \(sql.prefix(120)))" }
        return s
    }
}
