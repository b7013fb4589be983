/// One result row, by column index or name.
public struct SQLRow: Sendable {
    public let columns: [String]
    public let values: [SQLValue]

    public subscript(_ i: Int) -> SQLValue { values[i] }
    public subscript(_ name: String) -> SQLValue {
        guard let i = columns.firstIndex(of: name) else { return .null }
        return values[i]
    }
}
