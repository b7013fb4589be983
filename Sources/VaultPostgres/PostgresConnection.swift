internal import CPQ
import VaultSQL
#if canImport(Glibc)
import Glibc
#endif

/// One connection to a PostgreSQL server (libpq), speaking the same `SQLConnection` as
/// `SQLDatabase`: `?` placeholders (numbered `$n` here), rows decoded by column name into
/// `SQLRow`, statement errors as `SQLError`. Not thread-safe: one connection per thread of use.
///
/// A connection that broke while no transaction was open is re-established before the next
/// statement (a restarted server costs one failed statement, not the process); inside a
/// transaction the failure is the transaction's.
public final class PostgresConnection: SQLConnection {
    // SAFETY: the handle is owned by this object and used only through it.
    private var handle: OpaquePointer?
    private var transactionDepth = 0

    /// The URL without its password, for messages and logs.
    public let redactedURL: String

    public var dialect: SQLDialect { .postgresql }

    /// Connects to `url` (`postgresql://user:password@host:port/database?sslmode=…`, anything
    /// libpq accepts). Throws `PostgresError` saying why a connection could not be made.
    public init(url: String) throws(PostgresError) {
        redactedURL = Self.redact(url)
        guard url.hasPrefix("postgresql://") || url.hasPrefix("postgres://") else {
            throw PostgresError(kind: .invalidURL, message: "\(redactedURL) does not start with postgresql://")
        }
        let conn = Self.connect(url)
        handle = conn
        guard let conn, PQstatus(conn) == CONNECTION_OK else {
            let message = conn.map { Self.trimmed(PQerrorMessage($0)) } ?? "out of memory"
            PQfinish(conn); handle = nil
            throw PostgresError(kind: PostgresError.connectKind(message), message: message)
        }
        // NOTICEs (e.g. "relation already exists, skipping") are not errors: keep them off stderr.
        PQsetNoticeProcessor(conn, { _, _ in }, nil)
    }

    deinit { close() }

    /// The bounds every connection gets unless its URL sets them: a connect gives up after
    /// `connect_timeout` seconds (a host that drops packets would otherwise hang it for the
    /// kernel's SYN retries, minutes), and an established connection whose peer vanished fails
    /// within about `tcp_user_timeout` (unacknowledged data) or the keepalive probes (an idle
    /// wait for a result): 15 + 3 × 5 seconds.
    public static let defaultBounds: [(key: String, value: String)] = [
        ("connect_timeout", "5"), ("keepalives", "1"), ("keepalives_idle", "15"),
        ("keepalives_interval", "5"), ("keepalives_count", "3"), ("tcp_user_timeout", "15000"),
    ]

    /// PQconnectdbParams with `defaultBounds` first and `url` expanded last, so the URL's own
    /// parameters override the defaults.
    private static func connect(_ url: String) -> OpaquePointer? {
        let pairs = defaultBounds + [("dbname", url)]
        let keys = pairs.map { strdup($0.key) }, values = pairs.map { strdup($0.value) }
        defer { keys.forEach { free($0) }; values.forEach { free($0) } }
        let k = keys.map { UnsafePointer($0) } + [nil], v = values.map { UnsafePointer($0) } + [nil]
        return PQconnectdbParams(k, v, 1)
    }

    /// Whether the connection is usable for a new transaction, found without a round trip: the
    /// socket has not been closed by the server (a restart's "terminating connection" is read
    /// here) and no transaction is left open.
    public var isHealthy: Bool {
        guard let conn = handle, PQstatus(conn) == CONNECTION_OK else { return false }
        // An idle connection receives only what the server sends unasked (a notification, the
        // FATAL of a shutdown, then end of file); PQconsumeInput stops after the data it read,
        // so it is called while the socket has more: the end of file is what marks it bad.
        var pfd = pollfd(fd: PQsocket(conn), events: Int16(POLLIN), revents: 0)
        for _ in 0..<4 {
            guard poll(&pfd, 1, 0) > 0 else { break }
            guard PQconsumeInput(conn) == 1, PQstatus(conn) == CONNECTION_OK else { return false }
        }
        return PQstatus(conn) == CONNECTION_OK && PQtransactionStatus(conn) == PQTRANS_IDLE
    }

    /// Connects again (same parameters, same bounds), when the connection is not `isHealthy`
    /// and no transaction of this object is open.
    public func reconnectIfUnhealthy() {
        guard transactionDepth == 0, let conn = handle, !isHealthy else { return }
        PQreset(conn)
    }

    /// Closes the connection now (also done on deinit).
    public func close() {
        PQfinish(handle); handle = nil
    }

    /// `url` with the password of its user-info part replaced by `***`.
    public static func redact(_ url: String) -> String {
        guard let scheme = url.range(of: "://"), let at = url[scheme.upperBound...].firstIndex(of: "@") else { return url }
        let userInfo = url[scheme.upperBound..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }

    static func trimmed(_ c: UnsafePointer<CChar>?) -> String {
        guard let c else { return "" }
        var s = String(cString: c)
        while s.last?.isWhitespace == true { s.removeLast() }
        return s
    }

    // MARK: Statements

    /// Runs one or more statements without parameters (schema, `BEGIN`, `LISTEN`).
    public func execute(_ sql: String) throws {
        let result = try connected { PQexec($0, sql) }
        defer { PQclear(result) }
        try check(result, sql: sql)
    }

    /// Runs a statement with `?` parameters and returns the number of rows it changed.
    @discardableResult
    public func run(_ sql: String, _ params: [any SQLBindable] = []) throws -> Int {
        let result = try exec(sql, params)
        defer { PQclear(result) }
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    /// All rows of a query with `?` parameters.
    public func query(_ sql: String, _ params: [any SQLBindable] = []) throws -> [SQLRow] {
        let result = try exec(sql, params)
        defer { PQclear(result) }
        let fields = Int32(PQnfields(result))
        let columns = (0..<fields).map { String(cString: PQfname(result, $0)) }
        let types = (0..<fields).map { UInt32(PQftype(result, $0)) }
        return (0..<PQntuples(result)).map { r in
            SQLRow(columns: columns, values: (0..<fields).map { f in
                if PQgetisnull(result, r, f) != 0 { return .null }
                return PostgresValues.value(oid: types[Int(f)], text: String(cString: PQgetvalue(result, r, f)))
            })
        }
    }

    /// The first row of a query, if any.
    public func queryOne(_ sql: String, _ params: [any SQLBindable] = []) throws -> SQLRow? {
        try query(sql, params).first
    }

    /// Runs `sql` (its `?` numbered) with `params` through PQexecParams; the result is checked.
    private func exec(_ sql: String, _ params: [any SQLBindable]) throws -> OpaquePointer {
        let (numbered, count) = Placeholders.numbered(sql)
        guard count == params.count else {
            throw SQLError(kind: .other, code: 0, message: "the statement has \(count) placeholders but \(params.count) parameters", sql: sql)
        }
        let encoded = params.map { PostgresValues.parameter($0.sqlValue) }
        let values: [UnsafeMutablePointer<CChar>?] = encoded.map { p in
            guard let bytes = p.bytes else { return nil }
            let buf = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            bytes.withUnsafeBufferPointer { src in
                src.withMemoryRebound(to: CChar.self) { buf.initialize(from: $0.baseAddress!, count: bytes.count) }
            }
            buf[bytes.count] = 0
            return buf
        }
        defer { values.forEach { $0?.deallocate() } }
        let types = encoded.map { $0.type }
        let lengths = encoded.map { Int32($0.bytes?.count ?? 0) }
        let formats = encoded.map { Int32($0.binary ? 1 : 0) }
        let result = try connected { conn in
            values.map { UnsafePointer($0) }.withUnsafeBufferPointer { v in
                PQexecParams(conn, numbered, Int32(count), types, v.baseAddress, lengths, formats, 0)
            }
        }
        do { try check(result, sql: sql) } catch { PQclear(result); throw error }
        return result!
    }

    /// Calls `body` with a live handle, reconnecting first when the connection broke outside a
    /// transaction; a nil result (out of memory, connection gone) is thrown.
    private func connected(_ body: (OpaquePointer) -> OpaquePointer?) throws -> OpaquePointer? {
        reviveIfBroken()
        guard let conn = handle else { throw PostgresError(kind: .connectionLost, message: "the connection is closed") }
        guard PQstatus(conn) == CONNECTION_OK else {
            throw PostgresError(kind: .connectionLost, message: Self.trimmed(PQerrorMessage(conn)))
        }
        guard let result = body(conn) else {
            throw PostgresError(kind: .connectionLost, message: Self.trimmed(PQerrorMessage(conn)))
        }
        return result
    }

    /// Re-establishes a broken connection, unless a transaction is open (its work is lost with
    /// the connection, and the failure must be the transaction's).
    private func reviveIfBroken() {
        if let conn = handle, transactionDepth == 0, PQstatus(conn) != CONNECTION_OK { PQreset(conn) }
    }

    /// Throws the `SQLError` of a failed result (or `PostgresError.connectionLost` when the
    /// connection broke under it).
    private func check(_ result: OpaquePointer?, sql: String) throws {
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY: return
        default:
            // PG_DIAG_SQLSTATE is the character 'C' (a macro Swift does not import as such).
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            let primary = PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
            let message = primary ?? Self.trimmed(PQresultErrorMessage(result))
            // A dropped connection (the server restarted: 57P01 "terminating connection", class 08)
            // is the connection's failure, not the statement's.
            let dropped = state == "57P01" || state?.hasPrefix("08") == true
            if dropped || handle.map({ PQstatus($0) != CONNECTION_OK }) == true {
                throw PostgresError(kind: .connectionLost, message: message)
            }
            throw SQLError.postgres(sqlState: state, message: message, sql: sql)
        }
    }

    // MARK: Transactions

    /// How a transaction sees the others (PostgreSQL's isolation levels).
    public enum Isolation: String, Sendable {
        case readCommitted = "READ COMMITTED"
        case repeatableRead = "REPEATABLE READ"
        case serializable = "SERIALIZABLE"
    }

    /// Runs `body` in a READ COMMITTED transaction: committed if it returns, rolled back if it throws.
    public func transaction<R>(_ body: () throws -> R) throws -> R {
        try transaction(isolation: .readCommitted, attempts: 1, body)
    }

    /// Runs `body` in a transaction at `isolation`, running it again (up to `attempts` times in
    /// all, after a short randomised pause) when PostgreSQL aborts it with a serialization failure
    /// or a deadlock; any other error, or the last conflict, is thrown after the rollback. `body`
    /// must be safe to run again: only its database work is undone.
    public func transaction<R>(isolation: Isolation, attempts: Int = 8, _ body: () throws -> R) throws -> R {
        var attempt = 1
        while true {
            do {
                return try onceInTransaction(isolation, body)
            } catch let e as SQLError where e.isRetryableConflict && attempt < attempts {
                usleep(UInt32.random(in: 1_000...(5_000 << min(attempt, 5))))
                attempt += 1
            }
        }
    }

    private func onceInTransaction<R>(_ isolation: Isolation, _ body: () throws -> R) throws -> R {
        try begin(isolation)
        transactionDepth += 1
        defer { transactionDepth -= 1 }
        return try committing(body)
    }

    /// BEGIN, sent once more on a fresh connection when it finds the old one gone (PostgreSQL
    /// closed it while idle, and the end of file had not arrived when it was last looked at):
    /// nothing of the transaction ran, so nothing is lost or done twice.
    private func begin(_ isolation: Isolation) throws {
        let sql = "BEGIN ISOLATION LEVEL \(isolation.rawValue)"
        do {
            try execute(sql)
        } catch let e as PostgresError where e.kind == .connectionLost {
            try execute(sql)   // `connected` connects again first: no transaction is open
        }
    }

    // MARK: Schema version

    /// The version recorded in `vault_schema` (0 when the table does not exist yet).
    public var schemaVersion: Int {
        get throws {
            try execute("CREATE TABLE IF NOT EXISTS vault_schema(version BIGINT NOT NULL)")
            return try scalar(Int.self, "SELECT COALESCE(MAX(version), 0) FROM vault_schema") ?? 0
        }
    }

    public func setSchemaVersion(_ version: Int) throws {
        try run("DELETE FROM vault_schema", [])
        try run("INSERT INTO vault_schema(version) VALUES(?)", [version])
    }

    // MARK: LISTEN / NOTIFY

    /// One notification: the channel it was sent on and its payload.
    public struct Notification: Sendable, Equatable {
        public let channel: String
        public let payload: String
    }

    /// `LISTEN`s on `channel` (any name: it is quoted as an identifier).
    public func listen(_ channel: String) throws {
        try execute("LISTEN \(try identifier(channel))")
    }

    /// Sends `payload` on `channel` (delivered when the surrounding transaction, if any, commits).
    public func notify(_ channel: String, payload: String) throws {
        _ = try query("SELECT pg_notify(?, ?)", [channel, payload])
    }

    /// The notifications that arrived, waiting up to `timeoutMillis` for the first one when none
    /// is pending (0 = do not wait).
    public func notifications(timeoutMillis: Int32) throws -> [Notification] {
        guard let conn = handle else { throw PostgresError(kind: .connectionLost, message: "the connection is closed") }
        var out = drainNotifications(conn)
        if out.isEmpty, timeoutMillis > 0 {
            var pfd = pollfd(fd: PQsocket(conn), events: Int16(POLLIN), revents: 0)
            _ = poll(&pfd, 1, timeoutMillis)
        }
        guard PQconsumeInput(conn) == 1 else {
            throw PostgresError(kind: .connectionLost, message: Self.trimmed(PQerrorMessage(conn)))
        }
        out += drainNotifications(conn)
        return out
    }

    private func drainNotifications(_ conn: OpaquePointer) -> [Notification] {
        var out: [Notification] = []
        while let n = PQnotifies(conn) {
            out.append(Notification(channel: String(cString: n.pointee.relname), payload: String(cString: n.pointee.extra)))
            PQfreemem(n)
        }
        return out
    }

    /// `name` quoted as an SQL identifier by libpq.
    private func identifier(_ name: String) throws -> String {
        guard let conn = handle, let q = PQescapeIdentifier(conn, name, name.utf8.count) else {
            throw SQLError(kind: .other, code: 0, message: "cannot quote identifier")
        }
        defer { PQfreemem(q) }
        return String(cString: q)
    }
}
