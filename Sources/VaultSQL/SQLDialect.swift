/// The SQL that differs between the engines a `SQLConnection` speaks, in one value, so that the
/// queries themselves are written once. SQLite here is 3.15 (SQLCipher 3.4): no UPSERT, no RETURNING.
public struct SQLDialect: Sendable, Equatable, CustomStringConvertible {
    /// The engine's name, for messages.
    public let name: String

    public static let sqlite = SQLDialect(name: "SQLite")
    public static let postgresql = SQLDialect(name: "PostgreSQL")

    public var description: String { name }

    /// An INSERT of `columns` into `table` that does nothing when a row with the same key exists
    /// (`INSERT OR IGNORE` / `ON CONFLICT DO NOTHING`), one `?` per column.
    public func insertIgnoringDuplicates(into table: String, _ columns: [String]) -> String {
        let values = Array(repeating: "?", count: columns.count).joined(separator: ",")
        let insert = "INTO \(table)(\(columns.joined(separator: ", "))) VALUES(\(values))"
        return self == .sqlite ? "INSERT OR IGNORE \(insert)" : "INSERT \(insert) ON CONFLICT DO NOTHING"
    }

    /// The sum of `column` as a floating-point number, 0 over no rows and never an overflow error
    /// (SQLite's `TOTAL`; PostgreSQL sums bigints exactly as numeric).
    public func total(_ column: String) -> String {
        self == .sqlite ? "TOTAL(\(column))" : "COALESCE(SUM(\(column)), 0)::double precision"
    }
}
