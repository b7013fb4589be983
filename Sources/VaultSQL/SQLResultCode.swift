/// A SQLite result code (primary or extended) with named constants, so call sites never compare
/// bare numbers. `primary` drops the extended bits (`SQLITE_CONSTRAINT_UNIQUE` → `.constraint`).
public struct SQLResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code (the low 8 bits).
    public var primary: SQLResultCode { SQLResultCode(rawValue: rawValue & 0xff) }

    public static let ok = SQLResultCode(rawValue: 0)            // SQLITE_OK
    public static let error = SQLResultCode(rawValue: 1)         // SQLITE_ERROR
    public static let `internal` = SQLResultCode(rawValue: 2)    // SQLITE_INTERNAL
    public static let permission = SQLResultCode(rawValue: 3)    // SQLITE_PERM
    public static let abort = SQLResultCode(rawValue: 4)         // SQLITE_ABORT
    public static let busy = SQLResultCode(rawValue: 5)          // SQLITE_BUSY
    public static let locked = SQLResultCode(rawValue: 6)        // SQLITE_LOCKED
    public static let noMemory = SQLResultCode(rawValue: 7)      // SQLITE_NOMEM
    public static let readOnly = SQLResultCode(rawValue: 8)      // SQLITE_READONLY
    public static let interrupt = SQLResultCode(rawValue: 9)     // SQLITE_INTERRUPT
    public static let ioError = SQLResultCode(rawValue: 10)      // SQLITE_IOERR
    public static let corrupt = SQLResultCode(rawValue: 11)      // SQLITE_CORRUPT
    public static let full = SQLResultCode(rawValue: 13)         // SQLITE_FULL
    public static let cannotOpen = SQLResultCode(rawValue: 14)   // SQLITE_CANTOPEN
    public static let schema = SQLResultCode(rawValue: 17)       // SQLITE_SCHEMA
    public static let tooBig = SQLResultCode(rawValue: 18)       // SQLITE_TOOBIG
    public static let constraint = SQLResultCode(rawValue: 19)   // SQLITE_CONSTRAINT
    public static let mismatch = SQLResultCode(rawValue: 20)     // SQLITE_MISMATCH
    public static let misuse = SQLResultCode(rawValue: 21)       // SQLITE_MISUSE
    public static let notADatabase = SQLResultCode(rawValue: 26) // SQLITE_NOTADB
    public static let row = SQLResultCode(rawValue: 100)         // SQLITE_ROW
    public static let done = SQLResultCode(rawValue: 101)        // SQLITE_DONE

    /// Matches an extended code against a primary one in `switch`/`case`: `case .busy:`.
    public static func ~= (pattern: SQLResultCode, code: SQLResultCode) -> Bool {
        pattern == code || (pattern.rawValue <= 0xff && pattern == code.primary)
    }

    public var description: String { "\(rawValue)" }
}
