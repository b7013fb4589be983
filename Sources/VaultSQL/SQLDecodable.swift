/// Types a result column decodes to. A value of another storage class is refused, never
/// converted or defaulted: decode an `Optional` where the column may be NULL.
public protocol SQLDecodable {
    /// The value for `sqlValue`, or nil when it holds another type.
    static func decode(sqlValue: SQLValue) -> Self?
    /// What the type expects, for error messages ("INTEGER", "TEXT or NULL").
    static var sqlExpected: String { get }
}

extension Int64: SQLDecodable {
    @inlinable public static func decode(sqlValue: SQLValue) -> Int64? { sqlValue.int64 }
    public static var sqlExpected: String { "INTEGER" }
}
extension Int: SQLDecodable {
    @inlinable public static func decode(sqlValue: SQLValue) -> Int? { sqlValue.int64.flatMap { Int(exactly: $0) } }
    public static var sqlExpected: String { "INTEGER" }
}
extension Bool: SQLDecodable {
    /// An INTEGER: 0 is false, anything else true.
    @inlinable public static func decode(sqlValue: SQLValue) -> Bool? { sqlValue.int64.map { $0 != 0 } }
    public static var sqlExpected: String { "INTEGER (boolean)" }
}
extension Double: SQLDecodable {
    /// A REAL, or an INTEGER (SQLite stores whole REAL values as integers in expressions).
    @inlinable public static func decode(sqlValue: SQLValue) -> Double? { sqlValue.double }
    public static var sqlExpected: String { "REAL" }
}
extension String: SQLDecodable {
    @inlinable public static func decode(sqlValue: SQLValue) -> String? { sqlValue.string }
    public static var sqlExpected: String { "TEXT" }
}
extension Array: SQLDecodable where Element == UInt8 {
    @inlinable public static func decode(sqlValue: SQLValue) -> [UInt8]? { sqlValue.bytes }
    public static var sqlExpected: String { "BLOB" }
}
extension Optional: SQLDecodable where Wrapped: SQLDecodable {
    /// NULL is `nil`; anything else must decode as `Wrapped`.
    @inlinable public static func decode(sqlValue: SQLValue) -> Wrapped?? {
        if sqlValue.isNull { return .some(nil) }
        return Wrapped.decode(sqlValue: sqlValue).map { .some($0) }
    }
    public static var sqlExpected: String { "\(Wrapped.sqlExpected) or NULL" }
}

extension SQLValue {
    /// The storage class's name, for error messages (which never carry a column's contents).
    var storageClass: String {
        switch self {
        case .null: return "NULL"
        case .integer: return "INTEGER"
        case .real: return "REAL"
        case .text: return "TEXT"
        case .blob: return "BLOB"
        }
    }
}
