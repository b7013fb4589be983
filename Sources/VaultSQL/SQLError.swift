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
        case other
    }
    public let kind: Kind
    public let code: Int32
    public let message: String
    public let sql: String?

    public init(kind: Kind, code: Int32, message: String, sql: String? = nil) {
        self.kind = kind; self.code = code; self.message = message; self.sql = sql
    }

    static func kind(forCode code: Int32) -> Kind {
        switch code & 0xff {
        case 26: return .notADatabase      // SQLITE_NOTADB
        case 19: return .constraint        // SQLITE_CONSTRAINT
        case 5, 6: return .busy            // SQLITE_BUSY, SQLITE_LOCKED
        case 13: return .full              // SQLITE_FULL
        case 11: return .corrupt           // SQLITE_CORRUPT
        case 8: return .readOnly           // SQLITE_READONLY
        default: return .other
        }
    }

    public var description: String {
        var s = "database error \(code): \(message)"
        if let sql { s += " (in: \(sql.prefix(120)))" }
        return s
    }
}
