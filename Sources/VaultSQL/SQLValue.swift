/// A value bound to or read from a statement.
public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    @inlinable public var int64: Int64? { if case .integer(let v) = self { return v }; return nil }
    public var int: Int? { int64.map { Int($0) } }
    @inlinable public var string: String? { if case .text(let v) = self { return v }; return nil }
    @inlinable public var bytes: [UInt8]? { if case .blob(let v) = self { return v }; return nil }
    @inlinable public var double: Double? {
        switch self { case .real(let v): return v; case .integer(let v): return Double(v); default: return nil }
    }
    @inlinable public var isNull: Bool { self == .null }
}

/// Types that bind as a statement parameter.
public protocol SQLBindable { var sqlValue: SQLValue { get } }
extension Int: SQLBindable { public var sqlValue: SQLValue { .integer(Int64(self)) } }
extension Int64: SQLBindable { public var sqlValue: SQLValue { .integer(self) } }
extension UInt64: SQLBindable { public var sqlValue: SQLValue { .integer(Int64(bitPattern: self)) } }
extension Int32: SQLBindable { public var sqlValue: SQLValue { .integer(Int64(self)) } }
extension Bool: SQLBindable { public var sqlValue: SQLValue { .integer(self ? 1 : 0) } }
extension Double: SQLBindable { public var sqlValue: SQLValue { .real(self) } }
extension String: SQLBindable { public var sqlValue: SQLValue { .text(self) } }
extension Array: SQLBindable where Element == UInt8 { public var sqlValue: SQLValue { .blob(self) } }
extension SQLValue: SQLBindable { public var sqlValue: SQLValue { self } }
extension Optional: SQLBindable where Wrapped: SQLBindable {
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
}
