import CSQLCipher
import VaultPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// A connection to a SQLCipher database file. Not thread-safe: one connection per thread of use.
///
/// The client opens it keyed with a raw 32-byte key (`x'…'`, SQLCipher's own KDF skipped); the
/// server opens it unkeyed. Opening always checks `PRAGMA cipher_version`, so a plain SQLite
/// library can never slip in.
public final class SQLDatabase {
    // SAFETY: the handle is owned by this object and used only through it.
    private var handle: OpaquePointer?
    public let path: String
    /// Prepared statements of `run`/`query`/`queryOne`/`scalar`, by SQL text. A statement is marked
    /// taken while in use (a nested or concurrent use of the same text prepares its own) and given
    /// back reset, its bindings cleared; all are finalized on close.
    private let statements = StatementCache()
    /// How many statements the cache holds at most (the rest are finalized after use).
    static let statementCacheLimit = 256

    /// Opens (creating if needed) the database at `path`. With `rawKey` (32 bytes) the file is
    /// encrypted with that raw key (`PRAGMA key = "x'…'"`, SQLCipher's KDF skipped); a wrong key
    /// fails here with `.notADatabase`. The key's hex form lives only in a buffer zeroed after use.
    /// With `readOnly` the file must exist and is opened `SQLITE_OPEN_READONLY` (for a database on
    /// a read-only filesystem): every write then fails with `SQLError.Kind.readOnly`.
    public init(path: String, rawKey: UnsafeRawBufferPointer?, readOnly: Bool = false, busyTimeoutMillis: Int32 = 5000) throws {
        self.path = path
        var db: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_FULLMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        handle = db
        guard rc == SQLITE_OK, db != nil else {
            let msg = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(db); handle = nil
            throw SQLError(kind: SQLError.kind(forCode: rc), code: rc, message: msg)
        }
        sqlite3_busy_timeout(db, busyTimeoutMillis)
        do {
            if let rawKey {
                let krc = Self.withKeyPragma(rawKey) { sqlite3_key(db, $0.baseAddress, Int32($0.count)) }
                if krc != SQLITE_OK { throw lastError(krc) }
            }
            let version: String = try scalar(String?.self, "PRAGMA cipher_version").flatMap { $0 } ?? ""
            guard !version.isEmpty else {
                throw SQLError(kind: .notSQLCipher, code: 0,
                               message: "the linked SQLite is not SQLCipher; refusing to store metadata unencrypted")
            }
            // Touch the schema: with a wrong key this is where SQLCipher reports NOTADB.
            _ = try scalar("SELECT count(*) FROM sqlite_master")
            try execute("PRAGMA foreign_keys = ON")
        } catch {
            close()
            throw error
        }
    }

    /// Opens with a hex key (64 hex digits) — a convenience for tests and tools; the vault passes raw bytes.
    public convenience init(path: String, rawKeyHex: String? = nil, busyTimeoutMillis: Int32 = 5000) throws {
        guard let hex = rawKeyHex else {
            try self.init(path: path, rawKey: nil, busyTimeoutMillis: busyTimeoutMillis); return
        }
        let digits = Array(hex.utf8)
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: digits.count / 2, alignment: 1)
        defer { buf.initializeMemory(as: UInt8.self, repeating: 0); buf.deallocate() }
        guard digits.withUnsafeBytes({ Hex.decode($0, into: buf) }) else {
            throw SQLError(kind: .other, code: .misuse, message: "the raw key is not an even number of hex digits")
        }
        try self.init(path: path, rawKey: UnsafeRawBufferPointer(buf), busyTimeoutMillis: busyTimeoutMillis)
    }

    /// Calls `body` with the bytes `x'<hex>'` for `key`, zeroed afterwards.
    static func withKeyPragma<R>(_ key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        var pragma = [UInt8](repeating: 0, count: key.count * 2 + 3)
        pragma[0] = UInt8(ascii: "x"); pragma[1] = UInt8(ascii: "'"); pragma[pragma.count - 1] = UInt8(ascii: "'")
        pragma.withUnsafeMutableBytes { Hex.encode(key, into: UnsafeMutableRawBufferPointer(rebasing: $0[2..<($0.count - 1)])) }
        defer { pragma.wipe() }
        return pragma.withUnsafeBytes(body)
    }

    deinit { close() }

    /// Closes the connection now (also done on deinit), finalizing the cached statements first.
    public func close() {
        statements.removeAll()
        sqlite3_close_v2(handle); handle = nil
    }

    /// How many prepared statements the cache holds (for tests).
    var cachedStatementCount: Int { statements.count }

    /// Runs `body` with a prepared statement for `sql`, from the cache when one is free, and puts
    /// it back reset with its bindings cleared.
    func withCachedStatement<R>(_ sql: String, _ body: (SQLStatement) throws -> R) throws -> R {
        if let slot = statements.take(sql) {
            defer { slot.statement.reset(); statements.release(slot) }
            return try body(slot.statement)
        }
        let st = try prepare(sql)
        defer {
            st.reset()
            if handle != nil { statements.keep(sql, st, limit: Self.statementCacheLimit) }
        }
        return try body(st)
    }

    func lastError(_ rc: Int32, sql: String? = nil) -> SQLError { Self.lastError(on: handle, rc, sql: sql) }

    /// The error of connection `handle` after `rc` (nil: closed).
    static func lastError(on handle: OpaquePointer?, _ rc: Int32, sql: String?) -> SQLError {
        let msg = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "closed"
        let ext = handle.map { sqlite3_extended_errcode($0) } ?? rc
        return SQLError(kind: SQLError.kind(forCode: ext), code: ext, message: msg, sql: sql)
    }

    /// Runs one or more statements without parameters.
    public func execute(_ sql: String) throws {
        var err: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &err)
        if rc != SQLITE_OK {
            let msg = err.map { String(cString: $0) } ?? "error"
            sqlite3_free(err)
            let ext = handle.map { sqlite3_extended_errcode($0) } ?? rc
            throw SQLError(kind: SQLError.kind(forCode: ext), code: ext, message: msg, sql: sql)
        }
    }

    /// Prepares a statement for repeated use.
    public func prepare(_ sql: String) throws -> SQLStatement {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(handle, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw lastError(rc, sql: sql) }
        return SQLStatement(stmt: stmt, sql: sql)
    }

    /// Runs a statement with parameters and returns the number of rows changed.
    @discardableResult
    public func run(_ sql: String, _ params: [any SQLBindable] = []) throws -> Int {
        try withCachedStatement(sql) { st in
            try st.bind(params)
            while try st.step() {}
            return Int(sqlite3_changes(handle))
        }
    }

    /// All rows of a query.
    public func query(_ sql: String, _ params: [any SQLBindable] = []) throws -> [SQLRow] {
        try withCachedStatement(sql) { st in
            try st.bind(params)
            var rows: [SQLRow] = []
            while try st.step() { rows.append(st.row()) }
            return rows
        }
    }

    /// The first row of a query, if any.
    public func queryOne(_ sql: String, _ params: [any SQLBindable] = []) throws -> SQLRow? {
        try withCachedStatement(sql) { st in
            try st.bind(params)
            return try st.step() ? st.row() : nil
        }
    }

    /// The first column of the first row, if any.
    public func scalar(_ sql: String, _ params: [any SQLBindable] = []) throws -> SQLValue? {
        try queryOne(sql, params)?.values.first
    }

    /// The only column of the first row decoded as `T`, nil when there is no row. A NULL throws
    /// `.decoding` unless `T` is Optional (prefer `coalesce(max(x), 0)` for aggregates).
    public func scalar<T: SQLDecodable>(_ type: T.Type, _ sql: String, _ params: [any SQLBindable] = []) throws -> T? {
        guard let row = try queryOne(sql, params) else { return nil }
        guard row.values.count == 1, let name = row.columns.first else {
            throw SQLError(kind: .decoding, code: .mismatch, message: "a scalar query returned \(row.values.count) columns", sql: sql)
        }
        return try row.decode(type, name)
    }

    /// The rowid of the last insert on this connection.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Runs `body` in an IMMEDIATE transaction: committed if it returns, rolled back if it throws.
    public func transaction<R>(_ body: () throws -> R) throws -> R {
        try inTransaction(begin: "BEGIN IMMEDIATE", body)
    }

    /// `PRAGMA user_version`, used for schema migrations.
    public var userVersion: Int {
        get throws { try scalar(Int.self, "PRAGMA user_version") ?? 0 }
    }

    /// Sets `PRAGMA user_version` (the pragma takes no parameters; `version` is an integer).
    public func setUserVersion(_ version: Int) throws {
        try execute("PRAGMA user_version = \(version)")
    }

    /// Writes a complete copy of this database, encrypted under `rawKey`, to a new file at `path`
    /// (SQLCipher `sqlcipher_export`), including `user_version`. The copy is written once, without
    /// a rollback journal, and fsynced; the caller renames it into place. Faster than an in-place
    /// rekey, which journals every page, and crash-safe with the rename.
    public func exportCopy(to path: String, rawKey: UnsafeRawBufferPointer) throws {
        let version = try userVersion
        unlink(path)
        let attach = "ATTACH DATABASE ?1 AS rekeyed KEY ?2"
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v2(handle, attach, -1, &stmt, nil) == SQLITE_OK, let stmt else { throw lastError(SQLITE_ERROR, sql: attach) }
        defer { sqlite3_finalize(stmt) }
        let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
        sqlite3_bind_text(stmt, 1, path, -1, transient)
        let rc = Self.withKeyPragma(rawKey) { key -> Int32 in
            sqlite3_bind_text(stmt, 2, key.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(key.count), transient)
            return sqlite3_step(stmt)
        }
        sqlite3_clear_bindings(stmt)
        guard rc == SQLITE_DONE else { throw lastError(rc, sql: attach) }
        do {
            try execute("PRAGMA rekeyed.synchronous = OFF")
            try execute("PRAGMA rekeyed.journal_mode = OFF")
            _ = try scalar("SELECT sqlcipher_export('rekeyed')")
            try execute("PRAGMA rekeyed.user_version = \(version)")
            try execute("DETACH DATABASE rekeyed")
        } catch {
            try? execute("DETACH DATABASE rekeyed")
            unlink(path)
            throw error
        }
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw SQLError(kind: .other, code: 0, message: "cannot reopen \(path)") }
        defer { Glibc.close(fd) }
        guard fsync(fd) == 0 else { throw SQLError(kind: .full, code: .full, message: "fsync of \(path) failed") }
    }

    /// Re-encrypts the whole file under a new raw key (SQLCipher `PRAGMA rekey`).
    public func rekey(rawKey: UnsafeRawBufferPointer) throws {
        let rc = Self.withKeyPragma(rawKey) { sqlite3_rekey(handle, $0.baseAddress, Int32($0.count)) }
        if rc != SQLITE_OK { throw lastError(rc) }
    }
}
