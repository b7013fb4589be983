import Foundation

/// At most `capacity` connections to one database, shared by the threads of one process: a
/// thread checks one out for a unit of work (a transaction) and gives it back. The pool's lock is
/// held only to take or return a connection, never across a connect: a database that is slow to
/// answer (or a host that drops packets, up to `connect_timeout`) holds back only the threads that
/// need a new connection, not the ones holding an established one.
///
/// On checkout a connection is checked without a round trip (`PostgresConnection.isHealthy`) and
/// connected again when PostgreSQL closed it (a restart); one that still fails is the caller's
/// error (`PostgresError.connectionLost`) and is connected again at its next checkout.
public final class PostgresPool: @unchecked Sendable {
    // SAFETY: `idle` and `open` are only touched with `condition` locked; a connection is used by
    // the one thread that checked it out.
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    /// Connections that exist or are being made (idle, checked out, connecting).
    private var open = 0
    private let url: String
    /// The most connections the pool holds at once.
    public let capacity: Int
    /// The URL without its password.
    public var redactedURL: String { PostgresConnection.redact(url) }

    /// A pool of up to `capacity` (at least 1) connections to `url`; the first is made now, so a
    /// URL that cannot be reached fails here (`PostgresError`).
    public init(url: String, capacity: Int) throws(PostgresError) {
        self.url = url
        self.capacity = max(1, capacity)
        idle = [try PostgresConnection(url: url)]
        open = 1
    }

    /// Runs `body` with a connection of its own (waiting while `capacity` are in use).
    public func withConnection<R>(_ body: (PostgresConnection) throws -> R) throws -> R {
        let conn = try checkOut()
        defer { checkIn(conn) }
        return try body(conn)
    }

    /// Connections made and idle now (for tests).
    public var counts: (open: Int, idle: Int) {
        condition.lock(); defer { condition.unlock() }
        return (open, idle.count)
    }

    private func checkOut() throws -> PostgresConnection {
        condition.lock()
        while idle.isEmpty && open >= capacity { condition.wait() }
        if let conn = idle.popLast() {
            condition.unlock()
            conn.reconnectIfUnhealthy()
            return conn
        }
        open += 1
        condition.unlock()
        do {
            return try PostgresConnection(url: url)
        } catch {
            condition.lock(); open -= 1; condition.signal(); condition.unlock()
            throw error
        }
    }

    private func checkIn(_ conn: PostgresConnection) {
        condition.lock(); defer { condition.unlock() }
        idle.append(conn)
        condition.signal()
    }
}
