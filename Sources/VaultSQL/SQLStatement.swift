import CSQLCipher

/// A prepared statement. Bind, then `step()` until it returns false; `row()` reads the current row.
public final class SQLStatement {
    private let stmt: OpaquePointer
    public let sql: String

    /// It holds no reference to its `SQLDatabase`, whose cache holds it (a cycle would keep every
    /// connection open for good): its errors come from its own connection, which SQLite keeps
    /// until the last statement is finalized (`sqlite3_close_v2`).
    init(stmt: OpaquePointer, sql: String) {
        self.stmt = stmt; self.sql = sql
    }

    private func lastError(_ rc: Int32) -> SQLError { SQLDatabase.lastError(on: sqlite3_db_handle(stmt), rc, sql: sql) }

    deinit { sqlite3_finalize(stmt) }

    /// Resets the statement and binds `params` to ?1…?n.
    public func bind(_ params: [any SQLBindable]) throws {
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
        // SQLITE_TRANSIENT: SQLite copies the bytes before returning.
        let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
        for (i, p) in params.enumerated() {
            let idx = Int32(i + 1)
            let rc: Int32
            switch p.sqlValue {
            case .null: rc = sqlite3_bind_null(stmt, idx)
            case .integer(let v): rc = sqlite3_bind_int64(stmt, idx, v)
            case .real(let v): rc = sqlite3_bind_double(stmt, idx, v)
            case .text(let v): rc = sqlite3_bind_text(stmt, idx, v, -1, transient)
            case .blob(let v):
                rc = v.withUnsafeBytes { sqlite3_bind_blob(stmt, idx, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count), transient) }
            }
            if rc != SQLITE_OK { throw lastError(rc) }
        }
    }

    /// Resets the statement for another run and clears its bindings.
    public func reset() {
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
    }

    /// Advances; true when a row is available.
    public func step() throws -> Bool {
        let rc = sqlite3_step(stmt)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw lastError(rc)
    }

    /// The result's column names, read once per prepared statement (again only if SQLite
    /// re-prepared it with another column count): every row shares the one array.
    private var columnNames: [String] = []

    /// The current row.
    public func row() -> SQLRow {
        let n = sqlite3_column_count(stmt)
        if columnNames.count != Int(n) {
            columnNames = (0..<n).map { String(cString: sqlite3_column_name(stmt, $0)) }
        }
        let cols = columnNames
        var vals: [SQLValue] = []; vals.reserveCapacity(cols.count)
        for i in 0..<Int32(cols.count) { vals.append(value(at: i)) }
        return SQLRow(columns: cols, values: vals)
    }

    private func value(at i: Int32) -> SQLValue {
        switch sqlite3_column_type(stmt, i) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(stmt, i))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(stmt, i))
        case SQLITE_TEXT: return .text(String(cString: sqlite3_column_text(stmt, i)))
        case SQLITE_BLOB:
            let n = Int(sqlite3_column_bytes(stmt, i))
            guard n > 0, let p = sqlite3_column_blob(stmt, i) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: p, count: n)))
        default: return .null
        }
    }
}
