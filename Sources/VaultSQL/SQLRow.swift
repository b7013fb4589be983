/// One result row, by column index or name.
public struct SQLRow: Sendable {
    public let columns: [String]
    public let values: [SQLValue]

    /// A row of `values` under `columns` (one name per value), as another engine's connection
    /// (VaultPostgres) builds it.
    public init(columns: [String], values: [SQLValue]) {
        self.columns = columns; self.values = values
    }

    public subscript(_ i: Int) -> SQLValue { values[i] }
    /// The raw value of a column, `.null` when there is no such column; prefer `decode(_:_:)`.
    public subscript(_ name: String) -> SQLValue {
        guard let i = columns.firstIndex(of: name) else { return .null }
        return values[i]
    }

    /// The column `name` decoded as `T`. Throws `SQLError.Kind.decoding` naming the column when
    /// the row has no such column or it holds another type (NULL included, unless `T` is Optional).
    /// Inlinable so that each caller's `T` is specialised (a generic call looked up `T`'s metadata
    /// at run time, per column of every row).
    @inlinable
    public func decode<T: SQLDecodable>(_ type: T.Type = T.self, _ name: String) throws -> T {
        guard let i = columns.firstIndex(of: name), let v = T.decode(sqlValue: values[i]) else {
            throw decodingError(T.self, name)
        }
        return v
    }

    /// The column `name` as an enum (or other `RawRepresentable`) built from its raw value; a raw
    /// value the type has no case for throws `.decoding` like a wrong type.
    @inlinable
    public func decode<T: RawRepresentable>(_ type: T.Type, _ name: String) throws -> T where T.RawValue: SQLDecodable {
        let raw = try decode(T.RawValue.self, name)
        guard let v = T(rawValue: raw) else { throw unknownCase(T.self, name) }
        return v
    }

    /// The column `name` as an optional enum: NULL is nil, any other value must be a case.
    @inlinable
    public func decode<T: RawRepresentable>(_ type: T?.Type, _ name: String) throws -> T? where T.RawValue: SQLDecodable {
        guard let raw = try decode(T.RawValue?.self, name) else { return nil }
        guard let v = T(rawValue: raw) else { throw unknownCase(T.self, name) }
        return v
    }

    /// Why column `name` does not decode as `T`: absent, or another storage class.
    @usableFromInline
    func decodingError<T: SQLDecodable>(_ type: T.Type, _ name: String) -> SQLError {
        guard let i = columns.firstIndex(of: name) else {
            return SQLError(kind: .decoding, code: .mismatch,
                            message: "no column \"\(name)\" in the result (columns: \(columns.joined(separator: ", ")))")
        }
        return SQLError(kind: .decoding, code: .mismatch,
                        message: "column \"\(name)\" holds \(values[i].storageClass), expected \(T.sqlExpected)")
    }

    @usableFromInline
    func unknownCase<T>(_ type: T.Type, _ name: String) -> SQLError {
        SQLError(kind: .decoding, code: .mismatch, message: "column \"\(name)\" holds a value that is no \(T.self)")
    }

    /// The column `name` decoded as `T`; see `decode(_:_:)`.
    public subscript<T: SQLDecodable>(_ name: String, as type: T.Type) -> T {
        get throws { try decode(type, name) }
    }
}
