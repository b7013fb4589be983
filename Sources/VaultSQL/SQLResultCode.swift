import CSQLCipher

/// A SQLite result code (primary or extended) with named constants, so call sites never compare
/// bare numbers. `primary` drops the extended bits (`SQLITE_CONSTRAINT_UNIQUE` → `.constraint`).
public struct SQLResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code (the low 8 bits).
    public var primary: SQLResultCode { SQLResultCode(rawValue: rawValue & 0xff) }

    public static let ok = SQLResultCode(rawValue: SQLITE_OK)
    public static let error = SQLResultCode(rawValue: SQLITE_ERROR)
    public static let `internal` = SQLResultCode(rawValue: SQLITE_INTERNAL)
    public static let permission = SQLResultCode(rawValue: SQLITE_PERM)
    public static let abort = SQLResultCode(rawValue: SQLITE_ABORT)
    public static let busy = SQLResultCode(rawValue: SQLITE_BUSY)
    public static let locked = SQLResultCode(rawValue: SQLITE_LOCKED)
    public static let noMemory = SQLResultCode(rawValue: SQLITE_NOMEM)
    public static let readOnly = SQLResultCode(rawValue: SQLITE_READONLY)
    public static let interrupt = SQLResultCode(rawValue: SQLITE_INTERRUPT)
    public static let ioError = SQLResultCode(rawValue: SQLITE_IOERR)
    public static let corrupt = SQLResultCode(rawValue: SQLITE_CORRUPT)
    public static let full = SQLResultCode(rawValue: SQLITE_FULL)
    public static let cannotOpen = SQLResultCode(rawValue: SQLITE_CANTOPEN)
    public static let schema = SQLResultCode(rawValue: SQLITE_SCHEMA)
    public static let tooBig = SQLResultCode(rawValue: SQLITE_TOOBIG)
    public static let constraint = SQLResultCode(rawValue: SQLITE_CONSTRAINT)
    public static let mismatch = SQLResultCode(rawValue: SQLITE_MISMATCH)
    public static let misuse = SQLResultCode(rawValue: SQLITE_MISUSE)
    public static let notADatabase = SQLResultCode(rawValue: SQLITE_NOTADB)
    public static let row = SQLResultCode(rawValue: SQLITE_ROW)
    public static let done = SQLResultCode(rawValue: SQLITE_DONE)

    /// Matches an extended code against a primary one in `switch`/`case`: `case .busy:`.
    public static func ~= (pattern: SQLResultCode, code: SQLResultCode) -> Bool {
        pattern == code || (pattern.rawValue <= 0xff && pattern == code.primary)
    }

    public var description: String { "\(rawValue)" }
}
